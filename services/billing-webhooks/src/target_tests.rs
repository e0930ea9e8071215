use super::*;

fn ip(text: &str) -> IpAddr {
    text.parse().expect("an address")
}

#[test]
fn every_non_public_range_is_refused_with_its_name() {
    let cases = [
        ("127.0.0.1", "loopback (127.0.0.0/8)"),
        ("10.1.2.3", "private (10.0.0.0/8)"),
        ("172.31.255.255", "private (172.16.0.0/12)"),
        ("192.168.0.1", "private (192.168.0.0/16)"),
        ("169.254.169.254", "cloud metadata (169.254.169.254)"),
        ("169.254.1.1", "link-local (169.254.0.0/16)"),
        ("0.0.0.0", "unspecified (0.0.0.0/8)"),
        ("100.64.0.1", "carrier-grade NAT (100.64.0.0/10)"),
        ("224.0.0.1", "multicast (224.0.0.0/4)"),
        ("255.255.255.255", "broadcast (255.255.255.255)"),
        ("::1", "loopback (::1)"),
        ("::", "unspecified (::)"),
        ("fd00::1", "unique local, private (fc00::/7)"),
        ("fe80::1", "link-local (fe80::/10)"),
        ("ff02::1", "multicast (ff00::/8)"),
        ("::ffff:127.0.0.1", "loopback (127.0.0.0/8)"),
        ("::ffff:169.254.169.254", "cloud metadata (169.254.169.254)"),
        ("64:ff9b::10.0.0.1", "private (10.0.0.0/8)"),
    ];
    let policy = AddressPolicy::public_only();
    for (addr, reason) in cases {
        assert_eq!(non_public_reason(ip(addr)), Some(reason), "{addr}");
        assert_eq!(policy.check(ip(addr)), Err(reason), "{addr}");
    }
    for public in [
        "1.1.1.1",
        "8.8.8.8",
        "100.128.0.1",
        "2606:4700:4700::1111",
        "::ffff:8.8.8.8",
    ] {
        assert_eq!(policy.check(ip(public)), Ok(()), "{public}");
    }
}

#[test]
fn the_operator_allows_ranges_also_through_ipv4_mapped_addresses() {
    let policy = AddressPolicy::allowing(vec!["127.0.0.1/32".parse().expect("a net")]);
    assert_eq!(policy.check(ip("127.0.0.1")), Ok(()));
    assert_eq!(policy.check(ip("::ffff:127.0.0.1")), Ok(()));
    assert_eq!(policy.check(ip("127.0.0.2")), Err("loopback (127.0.0.0/8)"));
    assert_eq!(policy.check(ip("::1")), Err("loopback (::1)"));
}

#[test]
fn urls_must_be_http_or_https_without_userinfo() {
    let policy = AddressPolicy::public_only();
    let message = |text: &str| {
        check_url(text, &policy)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert_eq!(
        message("ftp://example.com/hook"),
        Err("endpoint url ftp://example.com/hook must use http or https, not ftp".into())
    );
    assert_eq!(
        message("https://user:pw@example.com/"),
        Err(
            "endpoint url https://user:pw@example.com/ must not contain a user name or password"
                .into()
        )
    );
    assert_eq!(
        message("http://169.254.169.254/latest/meta-data"),
        Err("endpoint host 169.254.169.254 is 169.254.169.254, a cloud metadata (169.254.169.254) address: only public addresses are allowed".into())
    );
    assert!(matches!(
        check_url("not a url", &policy),
        Err(TargetError::Unparsable { .. })
    ));
    assert!(matches!(
        check_url("http://[::1]:8080/", &policy),
        Err(TargetError::Refused { .. })
    ));
    let long = format!("https://example.com/{}", "a".repeat(limits::URL_BYTES_MAX));
    assert!(matches!(
        check_url(&long, &policy),
        Err(TargetError::TooLong { .. })
    ));
    assert!(check_url("https://example.com:8443/hooks?x=1", &policy).is_ok());
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_unless_allowed() {
    let refused =
        validate_endpoint_url("http://localhost:9/hook", &AddressPolicy::public_only()).await;
    match refused {
        Err(TargetError::Refused { host, addr, .. }) => {
            assert_eq!(host, "localhost");
            assert!(addr.is_loopback());
        }
        other => panic!("localhost was not refused: {other:?}"),
    }
    let policy = AddressPolicy::allowing(vec![
        "127.0.0.0/8".parse().expect("a net"),
        "::1/128".parse().expect("a net"),
    ]);
    let (url, addrs) = validate_endpoint_url("http://localhost:9/hook", &policy)
        .await
        .expect("allowed by the operator");
    assert_eq!(url.as_str(), "http://localhost:9/hook");
    assert!(!addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback() && a.port() == 9));
}
