//! Identity dedupe by (source, id): billing-semantics.md section 1.
//!
//! A second delivery with the same identity and the same content (same
//! [`fingerprint`](crate::events::event::Event::fingerprint)) is a duplicate and changes nothing;
//! the same identity with different content is a conflict: the first one stands.
//!
//! In memory an identity is kept as the 128-bit XXH3 digest of its length-prefixed
//! (source, id), not as the strings: 32 bytes an event with no heap allocation, which is what
//! keeps metering above a million events a second on one core. Two different identities
//! collide with odds around 10^-21 at a billion events. The persistent store keeps the full
//! strings under a unique key and stays the authority.

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

/// The dedupe rule: an identity not held yet is new; held with the same fingerprint, a
/// duplicate; held with another, a conflict (the first stands). `held` is the fingerprint
/// of the identity's first content, if any. [`Dedupe`] and the store's batch sorting use it.
#[inline]
pub fn classify(held: Option<u128>, fingerprint: u128) -> Seen {
    match held {
        None => Seen::New,
        Some(first) if first == fingerprint => Seen::Duplicate,
        Some(_) => Seen::Conflict,
    }
}

/// The 128-bit digest of an identity.
pub fn identity_digest(source: &str, id: &str) -> u128 {
    let mut buf = [0u8; 2 * crate::common::limits::MAX_STRING_BYTES + 8];
    let n = 8 + source.len() + id.len();
    if n > buf.len() {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(&(source.len() as u64).to_le_bytes());
        h.update(source.as_bytes());
        h.update(id.as_bytes());
        return h.digest128();
    }
    buf[..8].copy_from_slice(&(source.len() as u64).to_le_bytes());
    buf[8..8 + source.len()].copy_from_slice(source.as_bytes());
    buf[8 + source.len()..n].copy_from_slice(id.as_bytes());
    xxhash_rust::xxh3::xxh3_128(&buf[..n])
}

/// Every identity seen, with the fingerprint of its first content.
///
/// An open-addressing table with linear probing over one array of (digest, fingerprint)
/// slots: a lookup touches one cache line, where a general hash map touches two (control
/// bytes and bucket). With millions of identities every lookup is a cache miss, so this is
/// what metering speed depends on. Digest 0 marks an empty slot (a real 0 is stored as 1).
#[derive(Debug, Default, Clone)]
pub struct Dedupe {
    slots: Vec<(u128, u128)>,
    len: usize,
}

impl Dedupe {
    pub fn new() -> Self {
        Self::default()
    }

    /// Room for `identities` without growing (growing rehashes everything).
    pub fn with_capacity(identities: usize) -> Self {
        Dedupe {
            slots: vec![(0, 0); Self::slots_for(identities)],
            len: 0,
        }
    }

    /// Slots for `n` identities at a load factor of at most 1/2.
    fn slots_for(n: usize) -> usize {
        (n.max(8) * 2).next_power_of_two()
    }

    fn find(slots: &[(u128, u128)], key: u128) -> usize {
        let mask = slots.len() - 1;
        let mut i = key as usize & mask;
        loop {
            let k = slots[i].0;
            if k == key || k == 0 {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let mut slots = vec![(0u128, 0u128); Self::slots_for(self.len + 1) * 2];
        for &(k, v) in self.slots.iter().filter(|s| s.0 != 0) {
            let i = Self::find(&slots, k);
            slots[i] = (k, v);
        }
        self.slots = slots;
    }

    /// Classifies (source, id, fingerprint) and remembers it when new.
    pub fn offer(&mut self, source: &str, id: &str, fingerprint: u128) -> Seen {
        self.offer_digest(identity_digest(source, id), fingerprint)
    }

    /// [`Dedupe::offer`] for an identity already digested with [`identity_digest`].
    pub fn offer_digest(&mut self, digest: u128, fingerprint: u128) -> Seen {
        let key = digest.max(1);
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let i = Self::find(&self.slots, key);
        let slot = &mut self.slots[i];
        let seen = classify((slot.0 != 0).then_some(slot.1), fingerprint);
        if seen == Seen::New {
            *slot = (key, fingerprint);
            self.len += 1;
        }
        seen
    }

    /// Reads the home slot of each digest, all at once, so that the cache misses of a block
    /// of events overlap instead of queueing one after another (memory-level parallelism);
    /// the offers that follow then hit the cache. Returns a value only so the reads happen.
    pub fn warm(&self, digests: &[u128]) -> u128 {
        if self.slots.is_empty() {
            return 0;
        }
        let mask = self.slots.len() - 1;
        digests
            .iter()
            .fold(0, |acc, d| acc ^ self.slots[(*d.max(&1) as usize) & mask].0)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
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
    fn classify_is_new_without_a_held_fingerprint_else_duplicate_or_conflict() {
        // Nothing held for the identity: new. Held 7: 7 again is a duplicate, 8 a conflict.
        assert_eq!(classify(None, 7), Seen::New);
        assert_eq!(classify(Some(7), 7), Seen::Duplicate);
        assert_eq!(classify(Some(7), 8), Seen::Conflict);
        assert_eq!(classify(Some(0), 0), Seen::Duplicate);
    }

    #[test]
    fn identity_is_not_confused_by_where_the_pair_splits() {
        let mut d = Dedupe::new();
        assert_eq!(d.offer("ab", "c", 1), Seen::New);
        assert_eq!(d.offer("a", "bc", 2), Seen::New);
        assert_ne!(identity_digest("ab", "c"), identity_digest("a", "bc"));
    }

    #[test]
    fn grows_without_forgetting() {
        let mut d = Dedupe::new();
        for i in 0..10_000u32 {
            assert_eq!(d.offer("n", &i.to_string(), i as u128), Seen::New);
        }
        for i in 0..10_000u32 {
            assert_eq!(d.offer("n", &i.to_string(), i as u128), Seen::Duplicate);
            assert_eq!(d.offer("n", &i.to_string(), i as u128 + 1), Seen::Conflict);
        }
        assert_eq!(d.len(), 10_000);
    }
}
