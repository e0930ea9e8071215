use super::*;

// The vector of the reference libraries' `TestWebhookSign` (standard-webhooks repository,
// libraries/go/webhook_test.go, the same in the JavaScript, Java, C# and PHP tests).
const VECTOR_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const VECTOR_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const VECTOR_TIMESTAMP_SECONDS: i64 = 1_614_265_330;
const VECTOR_BODY: &str = r#"{"test": 2432232314}"#;
const VECTOR_SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

fn vector() -> (Secret, MessageId) {
    let secret = Secret::parse(VECTOR_SECRET).expect("the reference secret parses");
    let id = MessageId::new(VECTOR_ID).expect("the reference id is valid");
    (secret, id)
}

#[test]
fn signs_the_reference_libraries_vector() {
    let (secret, id) = vector();
    let signature = sign(
        &secret,
        &id,
        VECTOR_TIMESTAMP_SECONDS,
        VECTOR_BODY.as_bytes(),
    );
    assert_eq!(signature, VECTOR_SIGNATURE);
}

#[test]
fn headers_of_an_attempt_carry_id_seconds_and_signature() {
    let (secret, id) = vector();
    let now_ms = VECTOR_TIMESTAMP_SECONDS * 1_000 + 999;
    let headers = sign_headers(
        &SigningSecrets::new(secret),
        &id,
        now_ms,
        VECTOR_BODY.as_bytes(),
    );
    assert_eq!(headers.id, VECTOR_ID);
    assert_eq!(headers.timestamp, "1614265330");
    assert_eq!(headers.signature, VECTOR_SIGNATURE);
}

#[test]
fn verifies_the_vector_and_refuses_any_change() {
    let (secret, _) = vector();
    let headers = SignedHeaders {
        id: VECTOR_ID.to_owned(),
        timestamp: VECTOR_TIMESTAMP_SECONDS.to_string(),
        signature: VECTOR_SIGNATURE.to_owned(),
    };
    let body = VECTOR_BODY.as_bytes();
    let now = VECTOR_TIMESTAMP_SECONDS + 60;
    assert_eq!(verify(&secret, &headers, body, now), Ok(()));
    assert_eq!(
        verify(&secret, &headers, br#"{"test": 2432232315}"#, now),
        Err(VerifyError::NoMatch)
    );
    let other_id = SignedHeaders {
        id: "msg_other".to_owned(),
        ..headers.clone()
    };
    assert_eq!(
        verify(&secret, &other_id, body, now),
        Err(VerifyError::NoMatch)
    );
    let too_late = VECTOR_TIMESTAMP_SECONDS + limits::TIMESTAMP_TOLERANCE_SECONDS + 1;
    assert!(matches!(
        verify(&secret, &headers, body, too_late),
        Err(VerifyError::OutsideTolerance { .. })
    ));
    let v2 = SignedHeaders {
        signature: VECTOR_SIGNATURE.replace("v1,", "v2,"),
        ..headers
    };
    assert_eq!(verify(&secret, &v2, body, now), Err(VerifyError::NoMatch));
}

#[test]
fn rotation_signs_with_both_secrets_until_the_previous_expires() {
    let old = Secret::from_bytes(&[1u8; 24]).expect("24 bytes");
    let new = Secret::from_bytes(&[2u8; 32]).expect("32 bytes");
    let id = MessageId::new("msg_1").expect("valid");
    let mut secrets = SigningSecrets::new(old.clone());
    secrets.rotate(new.clone(), 1_000_000, 3_600_000);

    let during = sign_headers(&secrets, &id, 1_000_000, b"{}");
    let parts: Vec<&str> = during.signature.split(' ').collect();
    assert_eq!(
        parts,
        [sign(&new, &id, 1_000, b"{}"), sign(&old, &id, 1_000, b"{}")]
    );
    assert_eq!(verify(&old, &during, b"{}", 1_000), Ok(()));
    assert_eq!(verify(&new, &during, b"{}", 1_000), Ok(()));

    let after = sign_headers(&secrets, &id, 4_600_000, b"{}");
    assert_eq!(after.signature, sign(&new, &id, 4_600, b"{}"));
    assert_eq!(
        verify(&old, &after, b"{}", 4_600),
        Err(VerifyError::NoMatch)
    );
}

#[test]
fn secrets_round_trip_and_are_checked() {
    let generated = Secret::generate().expect("the OS generator works");
    let text = generated.expose_whsec();
    assert!(text.starts_with("whsec_"));
    assert_eq!(Secret::parse(&text), Ok(generated.clone()));
    assert_ne!(Secret::generate().expect("works"), generated);
    assert!(!format!("{generated:?}").contains(&text[6..]));

    assert_eq!(
        Secret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
        Err(SecretError::MissingPrefix)
    );
    assert_eq!(
        Secret::parse("whsec_not base64!"),
        Err(SecretError::NotBase64)
    );
    assert_eq!(
        Secret::from_bytes(&[0; 23]),
        Err(SecretError::Length { len: 23 })
    );
    assert_eq!(
        Secret::from_bytes(&[0; 65]),
        Err(SecretError::Length { len: 65 })
    );
    // Without its padding (as some libraries print it) the secret parses all the same.
    let padded = Secret::from_bytes(&[7; 32])
        .expect("32 bytes")
        .expose_whsec();
    assert!(padded.ends_with('='));
    assert!(Secret::parse(padded.trim_end_matches('=')).is_ok());
}

#[test]
fn message_ids_never_contain_a_dot() {
    assert!(MessageId::new("msg_2KWPBgLlAfxdpx2AI54pPJ85f4W").is_ok());
    for bad in ["", "msg.1", "msg 1", &"a".repeat(65)] {
        assert!(MessageId::new(bad).is_err(), "{bad:?} was accepted");
    }
}
