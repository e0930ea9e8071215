//! What the ledger is keyed by: usage keys ([`UsageKey`], [`ResourceKey`] within an account),
//! byte counters ([`CounterKey`]), egress records, and the member prefix of a lease in the
//! ledger of a payer's members ([`member_lease`], section 18).

use crate::common::timestamp::Timestamp;
use crate::events::event::Class;
use hashbrown::Equivalent;
use serde::{Deserialize, Serialize};
use std::hash::{Hash, Hasher};

/// (account, lease, resource, sku, class): section 2.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct UsageKey {
    pub account: String,
    pub lease: String,
    pub resource: String,
    pub sku: String,
    pub class: Class,
}

/// A usage key within one account: (lease, resource, sku, class).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ResourceKey {
    pub lease: Box<str>,
    pub resource: Box<str>,
    pub sku: Box<str>,
    pub class: Class,
}

impl Hash for ResourceKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        ResourceKeyRef(&self.lease, &self.resource, &self.sku, self.class).hash(state)
    }
}

/// A [`ResourceKey`] by its parts, to look one up without building it.
#[derive(Hash)]
pub(super) struct ResourceKeyRef<'a>(
    pub(super) &'a str,
    pub(super) &'a str,
    pub(super) &'a str,
    pub(super) Class,
);

impl Equivalent<ResourceKey> for ResourceKeyRef<'_> {
    fn equivalent(&self, k: &ResourceKey) -> bool {
        *k.lease == *self.0 && *k.resource == *self.1 && *k.sku == *self.2 && k.class == self.3
    }
}

/// One egress event's contribution: `bytes` at `time`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EgressRecord {
    pub time: Timestamp,
    pub bytes: u64,
}

/// What separates a member from its lease in the ledger of a payer's members (section 18):
/// events never hold a NUL (`control_character`), and account ids never do.
pub const MEMBER_SEPARATOR: char = '\u{0}';

/// A lease of `member` in the ledger of a payer's members: `member`, NUL, `lease`.
pub fn member_lease(member: &str, lease: &str) -> String {
    format!("{member}{MEMBER_SEPARATOR}{lease}")
}

/// The member and lease of a lease of the ledger of a payer's members (`None`: a ledger of
/// one account, whose leases carry no member).
pub fn split_member_lease(lease: &str) -> (Option<&str>, &str) {
    match lease.split_once(MEMBER_SEPARATOR) {
        Some((member, lease)) => (Some(member), lease),
        None => (None, lease),
    }
}

/// The (lease, interface, dest) of a byte counter (section 11).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CounterKey {
    pub lease: String,
    pub interface: String,
    pub dest: String,
}
