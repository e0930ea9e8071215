//! Identifiers derived from content: ledger key ids and API key hashes.

use billing_core::Class;
use sha2::{Digest, Sha256};

/// The primary key of a usage key's ledger row: its parts, length-prefixed so that no two
/// different keys can spell the same id.
pub fn key_id(account: &str, lease: &str, resource: &str, sku: &str, class: Class) -> String {
    let mut s =
        String::with_capacity(account.len() + lease.len() + resource.len() + sku.len() + 24);
    for part in [account, lease, resource, sku] {
        s.push_str(&part.len().to_string());
        s.push(':');
        s.push_str(part);
        s.push('|');
    }
    s.push_str(class.as_str());
    s
}

/// SHA-256 hex of an API key or token: what the store keeps instead of the secret.
pub fn hash_key(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

crate::conn::words::stored_id! {
    /// An API key's id: the first 16 hex digits of its hash (`key_id_of`), as the key list
    /// names it and a revocation takes it.
    ApiKeyId
}

crate::conn::words::stored_words! {
    /// What an API key may do (issue 27, roles and scopes), stored with the key. The keys made
    /// before roles are owners. What each role may do is the API's table (`billing-api`,
    /// `auth.rs`); the store only keeps the word.
    pub enum KeyRole {
        /// Everything of its account's subtree, its keys included.
        Owner = "owner",
        /// Invoices, allocation, wallet and exports of its subtree.
        Finance = "finance",
        /// Usage and cost of its subtree, read only.
        Viewer = "viewer",
        /// Its own account only.
        Member = "member",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_ids_are_injective() {
        assert_ne!(
            key_id("a|1", "b", "c", "d", Class::OnDemand),
            key_id("a", "1|b", "c", "d", Class::OnDemand)
        );
        assert_ne!(
            key_id("a", "b", "c", "d", Class::OnDemand),
            key_id("a", "b", "c", "d", Class::Spot)
        );
        assert_eq!(hash_key("k").len(), 64);
    }
}

/// A key being stored: its hash, role and the actor making it (None: not known, as in a
/// replayed command recorded before issue 27).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewKey<'a> {
    pub key_hash: &'a str,
    pub role: KeyRole,
    pub by: Option<&'a str>,
}
