//! Signing per Standard Webhooks (<https://www.standardwebhooks.com>), symmetric scheme `v1`.
//!
//! The signed content is `{webhook-id}.{webhook-timestamp}.{body}`, the signature
//! `v1,<base64 of HMAC-SHA256 over it, keyed by the secret's bytes>`. A secret is 24 to 64
//! random bytes shown to the customer as `whsec_<base64>`. During a rotation each message
//! carries one signature per active secret, space-separated, so that a receiver holding either
//! secret verifies it.

use base64::Engine;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::{DecodePaddingMode, general_purpose};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::limits;

type HmacSha256 = Hmac<Sha256>;

/// The prefix that marks a symmetric Standard Webhooks secret.
pub const SECRET_PREFIX: &str = "whsec_";
/// The version tag of a symmetric signature.
pub const SIGNATURE_VERSION: &str = "v1";

/// Standard base64 that accepts the secret with or without its padding (as the reference
/// libraries do).
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// What is wrong with a secret.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SecretError {
    #[error("a webhook secret starts with `{SECRET_PREFIX}`")]
    MissingPrefix,
    #[error("the webhook secret after `{SECRET_PREFIX}` is not base64")]
    NotBase64,
    #[error(
        "a webhook secret has {min} to {max} bytes, this one has {len}",
        min = limits::SECRET_BYTES_MIN,
        max = limits::SECRET_BYTES_MAX
    )]
    Length { len: usize },
    #[error("the operating system's random generator failed: {0}")]
    Random(String),
}

/// A symmetric signing secret. Its `Debug` never prints the key.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    bytes: Vec<u8>,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Secret({SECRET_PREFIX}<{} bytes redacted>)",
            self.bytes.len()
        )
    }
}

impl Secret {
    /// A secret from caller-provided random bytes (24 to 64 of them).
    pub fn from_bytes(bytes: &[u8]) -> Result<Secret, SecretError> {
        if !(limits::SECRET_BYTES_MIN..=limits::SECRET_BYTES_MAX).contains(&bytes.len()) {
            return Err(SecretError::Length { len: bytes.len() });
        }
        Ok(Secret {
            bytes: bytes.to_vec(),
        })
    }

    /// A new secret of [`limits::SECRET_BYTES_GENERATED`] bytes from the operating system.
    pub fn generate() -> Result<Secret, SecretError> {
        let mut bytes = [0u8; limits::SECRET_BYTES_GENERATED];
        getrandom::fill(&mut bytes).map_err(|error| SecretError::Random(error.to_string()))?;
        Secret::from_bytes(&bytes)
    }

    /// Parses `whsec_<base64>`.
    pub fn parse(text: &str) -> Result<Secret, SecretError> {
        let encoded = text
            .strip_prefix(SECRET_PREFIX)
            .ok_or(SecretError::MissingPrefix)?;
        let bytes = LENIENT
            .decode(encoded)
            .map_err(|_| SecretError::NotBase64)?;
        Secret::from_bytes(&bytes)
    }

    /// The secret as shown to the customer and stored: `whsec_<base64>`.
    pub fn expose_whsec(&self) -> String {
        format!("{SECRET_PREFIX}{}", STANDARD.encode(&self.bytes))
    }

    fn mac(&self, id: &MessageId, timestamp_seconds: i64, body: &[u8]) -> HmacSha256 {
        // HMAC takes keys of any length; `new_from_slice` fails for none.
        let mut mac = match HmacSha256::new_from_slice(&self.bytes) {
            Ok(mac) => mac,
            Err(_) => unreachable!("HMAC-SHA256 accepts keys of every length"),
        };
        mac.update(id.as_str().as_bytes());
        mac.update(b".");
        mac.update(timestamp_seconds.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        mac
    }
}

/// What is wrong with a message id.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MessageIdError {
    #[error(
        "a message id has 1 to {max} characters of [A-Za-z0-9_-], {id:?} does not",
        max = limits::MESSAGE_ID_BYTES_MAX
    )]
    Invalid { id: String },
}

/// The `webhook-id`: the same for every attempt of a message, the receiver's idempotency key.
/// Never contains `.`, which delimits the signed content.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MessageId(String);

impl MessageId {
    /// Checks `id` (1 to 64 characters of `[A-Za-z0-9_-]`).
    pub fn new(id: &str) -> Result<MessageId, MessageIdError> {
        let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        if id.is_empty() || id.len() > limits::MESSAGE_ID_BYTES_MAX || !id.chars().all(allowed) {
            return Err(MessageIdError::Invalid { id: id.to_owned() });
        }
        Ok(MessageId(id.to_owned()))
    }

    /// The id as sent in `webhook-id`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One signature, `v1,<base64>`.
pub fn sign(secret: &Secret, id: &MessageId, timestamp_seconds: i64, body: &[u8]) -> String {
    let tag = secret
        .mac(id, timestamp_seconds, body)
        .finalize()
        .into_bytes();
    format!("{SIGNATURE_VERSION},{}", STANDARD.encode(tag))
}

/// An endpoint's secrets: the current one, and during a rotation the previous one until it
/// expires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningSecrets {
    pub current: Secret,
    pub previous: Option<PreviousSecret>,
}

/// The secret a rotation replaced, still signing until `expires_at_ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviousSecret {
    pub secret: Secret,
    pub expires_at_ms: i64,
}

impl SigningSecrets {
    /// Secrets without a rotation in progress.
    pub fn new(current: Secret) -> SigningSecrets {
        SigningSecrets {
            current,
            previous: None,
        }
    }

    /// Makes `next` the current secret; the old one keeps signing for `overlap_ms`.
    pub fn rotate(&mut self, next: Secret, now_ms: i64, overlap_ms: i64) {
        let old = std::mem::replace(&mut self.current, next);
        self.previous = Some(PreviousSecret {
            secret: old,
            expires_at_ms: now_ms.saturating_add(overlap_ms),
        });
    }

    /// The secrets that sign at `now_ms`: the current one first.
    pub fn active(&self, now_ms: i64) -> impl Iterator<Item = &Secret> {
        let previous = self
            .previous
            .as_ref()
            .filter(|previous| now_ms < previous.expires_at_ms)
            .map(|previous| &previous.secret);
        std::iter::once(&self.current).chain(previous)
    }
}

/// The three Standard Webhooks headers of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedHeaders {
    /// `webhook-id`
    pub id: String,
    /// `webhook-timestamp`: unix seconds of the attempt
    pub timestamp: String,
    /// `webhook-signature`: space-separated `v1,<base64>`
    pub signature: String,
}

/// Signs `body` for an attempt at `now_ms` with every active secret.
pub fn sign_headers(
    secrets: &SigningSecrets,
    id: &MessageId,
    now_ms: i64,
    body: &[u8],
) -> SignedHeaders {
    let timestamp_seconds = now_ms.div_euclid(1_000);
    let signatures: Vec<String> = secrets
        .active(now_ms)
        .take(limits::SIGNATURES_MAX)
        .map(|secret| sign(secret, id, timestamp_seconds, body))
        .collect();
    SignedHeaders {
        id: id.as_str().to_owned(),
        timestamp: timestamp_seconds.to_string(),
        signature: signatures.join(" "),
    }
}

/// Why a delivery does not verify.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VerifyError {
    #[error("webhook-id {0:?} is not a valid message id")]
    BadId(String),
    #[error("webhook-timestamp {0:?} is not unix seconds")]
    BadTimestamp(String),
    #[error("webhook-timestamp {timestamp} is more than {tolerance} s from now ({now})", tolerance = limits::TIMESTAMP_TOLERANCE_SECONDS)]
    OutsideTolerance { timestamp: i64, now: i64 },
    #[error("no v1 signature in webhook-signature matches")]
    NoMatch,
}

/// Verifies a delivery as a receiver would: the timestamp within 5 minutes of `now_seconds`
/// and one `v1` signature matching (compared in constant time).
pub fn verify(
    secret: &Secret,
    headers: &SignedHeaders,
    body: &[u8],
    now_seconds: i64,
) -> Result<(), VerifyError> {
    let id = MessageId::new(&headers.id).map_err(|_| VerifyError::BadId(headers.id.clone()))?;
    let timestamp: i64 = headers
        .timestamp
        .parse()
        .map_err(|_| VerifyError::BadTimestamp(headers.timestamp.clone()))?;
    if (now_seconds - timestamp).abs() > limits::TIMESTAMP_TOLERANCE_SECONDS {
        return Err(VerifyError::OutsideTolerance {
            timestamp,
            now: now_seconds,
        });
    }
    let matches = |candidate: &str| {
        let Some((version, encoded)) = candidate.split_once(',') else {
            return false;
        };
        let Ok(tag) = general_purpose::STANDARD.decode(encoded) else {
            return false;
        };
        version == SIGNATURE_VERSION && secret.mac(&id, timestamp, body).verify_slice(&tag).is_ok()
    };
    if headers.signature.split(' ').any(matches) {
        Ok(())
    } else {
        Err(VerifyError::NoMatch)
    }
}

#[cfg(test)]
#[path = "sign_tests.rs"]
mod tests;
