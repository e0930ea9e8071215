//! Identity dedupe by (source, id): billing-semantics.md section 1.
//!
//! A second delivery with the same identity and the same content (same
//! [`fingerprint`](crate::event::Event::fingerprint)) is a duplicate and changes nothing; the
//! same identity with different content is a conflict: the first one stands.

use hashbrown::{Equivalent, HashMap};
use std::hash::{Hash, Hasher};

/// Outcome of offering an identity to the dedupe set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// First time: the event is admitted.
    New,
    /// Same identity, same content: a redelivery.
    Duplicate,
    /// Same identity, other content: the first one stands, this one is rejected.
    Conflict,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    source: Box<str>,
    id: Box<str>,
}

impl Hash for Identity {
    fn hash<H: Hasher>(&self, state: &mut H) {
        IdentityRef(&self.source, &self.id).hash(state)
    }
}

#[derive(Hash)]
struct IdentityRef<'a>(&'a str, &'a str);

impl Equivalent<Identity> for IdentityRef<'_> {
    fn equivalent(&self, key: &Identity) -> bool {
        *key.source == *self.0 && *key.id == *self.1
    }
}

/// Every identity seen, with the fingerprint of its first content.
#[derive(Debug, Default, Clone)]
pub struct Dedupe {
    seen: HashMap<Identity, u128>,
}

impl Dedupe {
    pub fn new() -> Self {
        Self::default()
    }

    /// Classifies (source, id, fingerprint) and remembers it when new.
    pub fn offer(&mut self, source: &str, id: &str, fingerprint: u128) -> Seen {
        match self.seen.get(&IdentityRef(source, id)) {
            Some(&first) if first == fingerprint => Seen::Duplicate,
            Some(_) => Seen::Conflict,
            None => {
                self.seen.insert(
                    Identity {
                        source: source.into(),
                        id: id.into(),
                    },
                    fingerprint,
                );
                Seen::New
            }
        }
    }

    pub fn len(&self) -> usize {
        self.seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_identity_same_content_is_a_duplicate_other_content_a_conflict() {
        let mut d = Dedupe::new();
        assert_eq!(d.offer("node/1", "a1", 7), Seen::New);
        assert_eq!(d.offer("node/1", "a1", 7), Seen::Duplicate);
        assert_eq!(d.offer("node/1", "a1", 8), Seen::Conflict);
        // The first content stands: its redelivery is still a duplicate.
        assert_eq!(d.offer("node/1", "a1", 7), Seen::Duplicate);
        // Identity is the pair: the same id from another source is another event.
        assert_eq!(d.offer("node/2", "a1", 8), Seen::New);
        assert_eq!(d.len(), 2);
    }

    #[test]
    fn identity_is_not_confused_by_where_the_pair_splits() {
        let mut d = Dedupe::new();
        assert_eq!(d.offer("ab", "c", 1), Seen::New);
        assert_eq!(d.offer("a", "bc", 2), Seen::New);
    }
}
