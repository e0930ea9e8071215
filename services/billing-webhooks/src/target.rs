//! Endpoint URLs and event filters, checked when the customer registers an endpoint and again
//! at every attempt (see [`crate::guard`]): http or https only, no userinfo, and every address
//! the host resolves to public, unless the operator allows it ([`AddressPolicy`]). An address
//! refused names its range, so that the 4xx tells the customer what to fix.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use url::{Host, Url};

use crate::limits;

/// Ranges that are not the public internet, with the name a refusal gives. Order matters only
/// for the name: the metadata address before link-local, broadcast before reserved.
const NON_PUBLIC_V4: [(Ipv4Net, &str); 16] = [
    (v4(0, 0, 0, 0, 8), "unspecified (0.0.0.0/8)"),
    (v4(10, 0, 0, 0, 8), "private (10.0.0.0/8)"),
    (v4(100, 64, 0, 0, 10), "carrier-grade NAT (100.64.0.0/10)"),
    (v4(127, 0, 0, 0, 8), "loopback (127.0.0.0/8)"),
    (
        v4(169, 254, 169, 254, 32),
        "cloud metadata (169.254.169.254)",
    ),
    (v4(169, 254, 0, 0, 16), "link-local (169.254.0.0/16)"),
    (v4(172, 16, 0, 0, 12), "private (172.16.0.0/12)"),
    (
        v4(192, 0, 0, 0, 24),
        "IETF protocol assignments (192.0.0.0/24)",
    ),
    (v4(192, 0, 2, 0, 24), "documentation (192.0.2.0/24)"),
    (v4(192, 168, 0, 0, 16), "private (192.168.0.0/16)"),
    (v4(198, 18, 0, 0, 15), "benchmarking (198.18.0.0/15)"),
    (v4(198, 51, 100, 0, 24), "documentation (198.51.100.0/24)"),
    (v4(203, 0, 113, 0, 24), "documentation (203.0.113.0/24)"),
    (v4(224, 0, 0, 0, 4), "multicast (224.0.0.0/4)"),
    (v4(255, 255, 255, 255, 32), "broadcast (255.255.255.255)"),
    (v4(240, 0, 0, 0, 4), "reserved (240.0.0.0/4)"),
];

const NON_PUBLIC_V6: [(Ipv6Net, &str); 8] = [
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 128), "unspecified (::)"),
    (v6([0, 0, 0, 0, 0, 0, 0, 1], 128), "loopback (::1)"),
    (v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64), "discard (100::/64)"),
    (
        v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32),
        "documentation (2001:db8::/32)",
    ),
    (
        v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7),
        "unique local, private (fc00::/7)",
    ),
    (
        v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10),
        "link-local (fe80::/10)",
    ),
    (
        v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10),
        "site-local (fec0::/10)",
    ),
    (v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8), "multicast (ff00::/8)"),
];

/// NAT64's well-known prefix: the IPv4 address in its last 32 bits is what is reached.
const NAT64: Ipv6Net = v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96);

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8) -> Ipv4Net {
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), len)
}

const fn v6(s: [u16; 8], len: u8) -> Ipv6Net {
    let ip = Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
    Ipv6Net::new_assert(ip, len)
}

/// The IPv4 address an IPv6 address stands for (IPv4-mapped or NAT64), if any.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    NAT64.contains(&ip).then(|| {
        let [.., a, b, c, d] = ip.octets();
        Ipv4Addr::new(a, b, c, d)
    })
}

/// Why `ip` is not a public address, `None` if it is.
pub fn non_public_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => NON_PUBLIC_V4
            .iter()
            .find(|(net, _)| net.contains(&v4))
            .map(|(_, reason)| *reason),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => non_public_reason(IpAddr::V4(v4)),
            None => NON_PUBLIC_V6
                .iter()
                .find(|(net, _)| net.contains(&v6))
                .map(|(_, reason)| *reason),
        },
    }
}

/// The operator's exceptions to "public addresses only" (e.g. `127.0.0.1/32` for tests, or a
/// private network where the rental backends listen).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    allowed: Vec<IpNet>,
}

impl AddressPolicy {
    /// Public addresses only.
    pub fn public_only() -> AddressPolicy {
        AddressPolicy::default()
    }

    /// Public addresses and those in `allowed`.
    pub fn allowing(allowed: Vec<IpNet>) -> AddressPolicy {
        AddressPolicy { allowed }
    }

    /// `Err(reason)` if `ip` is neither public nor allowed.
    pub fn check(&self, ip: IpAddr) -> Result<(), &'static str> {
        let in_allowed = |ip: IpAddr| self.allowed.iter().any(|net| net.contains(&ip));
        let embedded = match ip {
            IpAddr::V6(v6) => embedded_v4(v6).map(IpAddr::V4),
            IpAddr::V4(_) => None,
        };
        if in_allowed(ip) || embedded.is_some_and(in_allowed) {
            return Ok(());
        }
        non_public_reason(ip).map_or(Ok(()), Err)
    }
}

/// What is wrong with an endpoint URL or where it leads.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("endpoint url has {len} bytes, at most {max} are allowed", max = limits::URL_BYTES_MAX)]
    TooLong { len: usize },
    #[error("endpoint url {url:?} is not a URL: {source}")]
    Unparsable {
        url: String,
        #[source]
        source: url::ParseError,
    },
    #[error("endpoint url {url} must use http or https, not {scheme}")]
    Scheme { url: String, scheme: String },
    #[error("endpoint url {url} must not contain a user name or password")]
    Userinfo { url: String },
    #[error("endpoint url {url} has no host")]
    NoHost { url: String },
    #[error("endpoint host {host} does not resolve: {source}")]
    Resolve {
        host: String,
        #[source]
        source: std::io::Error,
    },
    #[error("endpoint host {host} resolves to no address")]
    NoAddress { host: String },
    #[error("endpoint host {host} resolves to {count} addresses, at most {max} are allowed", max = limits::RESOLVED_ADDRESSES_MAX)]
    TooManyAddresses { host: String, count: usize },
    #[error(
        "endpoint host {host} is {addr}, a {reason} address: only public addresses are allowed"
    )]
    Refused {
        host: String,
        addr: IpAddr,
        reason: &'static str,
    },
}

/// A URL whose form is checked and, for an IP literal, whose address is allowed; a domain still
/// needs [`resolve_checked`] (or the [`crate::guard::GuardedResolver`] at delivery).
pub fn check_url(text: &str, policy: &AddressPolicy) -> Result<Url, TargetError> {
    if text.len() > limits::URL_BYTES_MAX {
        return Err(TargetError::TooLong { len: text.len() });
    }
    let url = Url::parse(text).map_err(|source| TargetError::Unparsable {
        url: text.to_owned(),
        source,
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        let scheme = url.scheme().to_owned();
        return Err(TargetError::Scheme {
            url: url.into(),
            scheme,
        });
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(TargetError::Userinfo { url: url.into() });
    }
    let literal = match url.host() {
        None => return Err(TargetError::NoHost { url: url.into() }),
        Some(Host::Domain(_)) => None,
        Some(Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
        Some(Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
    };
    if let Some(addr) = literal {
        policy.check(addr).map_err(|reason| TargetError::Refused {
            host: addr.to_string(),
            addr,
            reason,
        })?;
    }
    Ok(url)
}

/// Resolves `host` and checks every address: one refused address refuses the host (a name
/// with a public and a private address would otherwise reach the private one some of the time).
pub async fn resolve_checked(
    host: &str,
    port: u16,
    policy: &AddressPolicy,
) -> Result<Vec<SocketAddr>, TargetError> {
    let found = tokio::net::lookup_host((host, port))
        .await
        .map_err(|source| TargetError::Resolve {
            host: host.to_owned(),
            source,
        })?;
    let addrs: Vec<SocketAddr> = found.take(limits::RESOLVED_ADDRESSES_MAX + 1).collect();
    if addrs.is_empty() {
        return Err(TargetError::NoAddress {
            host: host.to_owned(),
        });
    }
    if addrs.len() > limits::RESOLVED_ADDRESSES_MAX {
        let count = addrs.len();
        return Err(TargetError::TooManyAddresses {
            host: host.to_owned(),
            count,
        });
    }
    for addr in &addrs {
        policy
            .check(addr.ip())
            .map_err(|reason| TargetError::Refused {
                host: host.to_owned(),
                addr: addr.ip(),
                reason,
            })?;
    }
    Ok(addrs)
}

/// The checks of a new or changed endpoint: [`check_url`], then its host resolved and every
/// address allowed. Returns the URL and the addresses it resolved to.
pub async fn validate_endpoint_url(
    text: &str,
    policy: &AddressPolicy,
) -> Result<(Url, Vec<SocketAddr>), TargetError> {
    let url = check_url(text, policy)?;
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs = match url.host() {
        Some(Host::Domain(domain)) => resolve_checked(domain, port, policy).await?,
        Some(Host::Ipv4(v4)) => vec![SocketAddr::new(IpAddr::V4(v4), port)],
        Some(Host::Ipv6(v6)) => vec![SocketAddr::new(IpAddr::V6(v6), port)],
        None => return Err(TargetError::NoHost { url: url.into() }),
    };
    Ok((url, addrs))
}

#[cfg(test)]
#[path = "target_tests.rs"]
mod tests;
