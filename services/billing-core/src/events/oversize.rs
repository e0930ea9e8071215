//! Records over the size limit: what gpubill keeps of them (their length, SHA-256 and first
//! KiB) and how a kept stand-in is rejected exactly like the record it stands for.

use crate::common::limits::MAX_RECORD_BYTES;
use crate::events::reject::{RejectReason, Rejection};

/// Bytes of a record rejected for its size that gpubill keeps (in the log and the dead
/// letter), with its length and SHA-256: ten 10 MiB records once grew the database by 200 MiB.
pub const OVERSIZE_KEPT_BYTES: usize = 1024;

/// Starts a stand-in for an oversize record; JSON never starts with a NUL byte.
const OVERSIZE_MAGIC: &[u8] = b"\0gpubill-oversize\0";

/// What is stored of a record in place of the record: the record itself, or for one over
/// [`MAX_RECORD_BYTES`] a stand-in of at most ~1.1 KiB (its length, its SHA-256 and its first
/// [`OVERSIZE_KEPT_BYTES`] bytes) that [`decode`] rejects exactly as it rejects the record.
pub fn stored_form(record: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    use sha2::Digest;
    if record.len() <= MAX_RECORD_BYTES {
        return std::borrow::Cow::Borrowed(record);
    }
    let digest = hex::encode(sha2::Sha256::digest(record));
    std::borrow::Cow::Owned(oversize_stand_in(
        record.len() as u64,
        &digest,
        &record[..OVERSIZE_KEPT_BYTES],
    ))
}

/// The stand-in of an oversize record of `len` bytes with SHA-256 `sha256_hex` whose first
/// bytes are `prefix` (at most [`OVERSIZE_KEPT_BYTES`] are kept), for readers that stream a
/// record instead of holding it (`gpubill rate` reading a multi-GB line).
pub fn oversize_stand_in(len: u64, sha256_hex: &str, prefix: &[u8]) -> Vec<u8> {
    let prefix = &prefix[..prefix.len().min(OVERSIZE_KEPT_BYTES)];
    let mut out = OVERSIZE_MAGIC.to_vec();
    out.extend_from_slice(format!("{len} {sha256_hex}\n").as_bytes());
    out.extend_from_slice(prefix);
    out
}

/// The bytes of a record a dead letter keeps: the record, or the first
/// [`OVERSIZE_KEPT_BYTES`] of one over the limit (its length and digest are in the detail).
pub fn kept_payload(record: &[u8]) -> &[u8] {
    match oversize_header(record) {
        Some((_, _, prefix)) => prefix,
        None if record.len() > MAX_RECORD_BYTES => &record[..OVERSIZE_KEPT_BYTES],
        None => record,
    }
}

/// A stand-in's length, digest and kept prefix.
pub(crate) fn oversize_header(record: &[u8]) -> Option<(u64, &str, &[u8])> {
    let rest = record.strip_prefix(OVERSIZE_MAGIC)?;
    let nl = rest.iter().position(|&b| b == b'\n')?;
    let head = std::str::from_utf8(&rest[..nl]).ok()?;
    let (len, digest) = head.split_once(' ')?;
    Some((len.parse().ok()?, digest, &rest[nl + 1..]))
}

pub(crate) fn too_large(len: u64, digest: &str) -> Rejection {
    Rejection::new(
        RejectReason::RecordTooLarge,
        format!(
            "record is {len} bytes, over the limit of {MAX_RECORD_BYTES} (sha256 {digest}; its first {OVERSIZE_KEPT_BYTES} bytes are kept)"
        ),
    )
}
