//! One account's ledger ([`AccountLedger`]): usage runs per key with their coverage by
//! source, egress records per dest, lease timelines and tags, byte-counter samples; how it is
//! filled, merged (a region's with home's lease timelines, a payer's with its members') and
//! restricted to what rating a period reads.

use crate::events::event::Class;
use crate::ledger::key_runs::{KeyRuns, Sources};
use crate::ledger::keys::{CounterKey, EgressRecord, ResourceKey, ResourceKeyRef, member_lease};
use crate::ledger::profile::{KeyPart, Profiles};
use crate::ledger::runs::Runs;
use crate::rental::lease::{LeaseState, Timeline};
use crate::rental::tags::{TagTimeline, Tags};
use hashbrown::HashMap;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};

/// Everything metered for one account: usage runs per key (with their coverage by source),
/// egress records per dest, lease timelines and byte-counter samples.
/// Iteration order of `usage` is unspecified; everything derived from it must not depend on
/// it (rating sorts or sums).
#[derive(Debug, Clone, Default)]
pub struct AccountLedger {
    usage: HashMap<ResourceKey, KeyRuns>,
    egress: BTreeMap<String, Vec<EgressRecord>>,
    /// Section 8: per lease, its (at, state) points.
    leases: BTreeMap<String, Timeline>,
    /// Section 11: per counter, its distinct (at, bytes_total) samples.
    counters: BTreeMap<CounterKey, BTreeSet<(i64, u64)>>,
    /// Section 18: per lease, its `lease.tags` points.
    tags: BTreeMap<String, TagTimeline>,
    /// Section 18: per dest, the egress records that name a lease, with it (the allocation
    /// reads the lease's tag at the record's time); also in `egress`.
    egress_leases: BTreeMap<String, Vec<(EgressRecord, Box<str>)>>,
    /// Issue 29: the usage summed over keys per (class, sku), kept with every change of a
    /// key's runs ([`AccountLedger::profiles`]).
    profiles: Profiles,
}

impl AccountLedger {
    pub fn new() -> Self {
        Self::default()
    }

    /// Union-with-max of `[from, to)` at `quantity` into the key's runs.
    #[allow(clippy::too_many_arguments)]
    pub fn insert_usage(
        &mut self,
        lease: &str,
        resource: &str,
        sku: &str,
        class: Class,
        from: i64,
        to: i64,
        quantity: Decimal,
    ) -> bool {
        let probe = ResourceKeyRef(lease, resource, sku, class);
        if let Some(k) = self.usage.get_mut(&probe) {
            // An event of unknown source: the one source's coverage is no longer the ledger.
            if matches!(k.sources, Sources::One(_)) {
                k.materialize();
            }
            let before = KeyPart::of(&k.runs, from, to);
            let changed = k.runs.insert(from, to, quantity);
            if changed {
                let after = KeyPart::of(&k.runs, from, to);
                self.profiles.replace(sku, class, &before, &after);
            }
            return changed;
        }
        let mut runs = Runs::new();
        runs.insert(from, to, quantity);
        self.profiles.add_key(sku, class, &runs);
        self.usage.insert(
            ResourceKey {
                lease: lease.into(),
                resource: resource.into(),
                sku: sku.into(),
                class,
            },
            KeyRuns {
                runs,
                sources: Sources::Unknown,
            },
        );
        true
    }

    /// [`AccountLedger::insert_usage`] of an event from `source`, also kept in the key's
    /// coverage by source (section 10).
    #[allow(clippy::too_many_arguments)]
    pub fn insert_usage_from(
        &mut self,
        source: &str,
        lease: &str,
        resource: &str,
        sku: &str,
        class: Class,
        from: i64,
        to: i64,
        quantity: Decimal,
    ) -> bool {
        let probe = ResourceKeyRef(lease, resource, sku, class);
        if let Some(k) = self.usage.get_mut(&probe) {
            let before = KeyPart::of(&k.runs, from, to);
            let changed = k.insert_from(source, from, to, quantity);
            if changed {
                let after = KeyPart::of(&k.runs, from, to);
                self.profiles.replace(sku, class, &before, &after);
            }
            return changed;
        }
        let mut k = KeyRuns::default();
        k.insert_from(source, from, to, quantity);
        self.profiles.add_key(sku, class, &k.runs);
        self.usage.insert(
            ResourceKey {
                lease: lease.into(),
                resource: resource.into(),
                sku: sku.into(),
                class,
            },
            k,
        );
        true
    }

    /// A key's coverage by source, sorted by source (empty for a ledger loaded without it).
    pub fn sources(&self, key: &ResourceKey) -> Vec<(&str, &Runs)> {
        self.usage.get(key).map_or_else(Vec::new, |k| k.sources())
    }

    /// Replaces a key's coverage by one source (loading a ledger from storage; call it after
    /// [`AccountLedger::set_runs`] of the key).
    pub fn set_source_runs(&mut self, key: ResourceKey, source: &str, runs: Runs) {
        let k = self.usage.entry(key).or_default();
        k.materialize();
        if let Sources::Many(v) = &mut k.sources {
            v.retain(|(s, _)| **s != *source);
            if !runs.is_empty() {
                let at = v.partition_point(|(s, _)| **s < *source);
                v.insert(at, (source.into(), runs));
            }
        }
    }

    /// Section 8: a point of a lease's timeline (`at` floored to the second).
    pub fn add_lease_state(&mut self, lease: &str, at: i64, state: LeaseState) {
        match self.leases.get_mut(lease) {
            Some(t) => t.insert(at, state),
            None => {
                let mut t = Timeline::new();
                t.insert(at, state);
                self.leases.insert(lease.to_string(), t);
            }
        }
    }

    /// Section 19: the lease timelines of `other` (an account's home ledger) added to this one
    /// (its ledger in a region): lease states (and section 18's tags) apply to the keys of
    /// their lease in every region.
    pub fn merge_leases(&mut self, other: &AccountLedger) {
        for (lease, timeline) in &other.leases {
            for (at, state) in timeline.points() {
                self.add_lease_state(lease, at, state);
            }
        }
        for (lease, timeline) in &other.tags {
            for (at, tags) in timeline.points() {
                self.add_lease_tags(lease, *at, tags.clone());
            }
        }
    }

    /// Section 18: a `lease.tags` point (`at` floored to the second, tags sorted by name).
    pub fn add_lease_tags(&mut self, lease: &str, at: i64, tags: Tags) {
        match self.tags.get_mut(lease) {
            Some(t) => t.insert(at, tags),
            None => {
                let mut t = TagTimeline::new();
                t.insert(at, tags);
                self.tags.insert(lease.to_string(), t);
            }
        }
    }

    /// Section 18: the lease's tag points, if it has any.
    pub fn tag_timeline(&self, lease: &str) -> Option<&TagTimeline> {
        self.tags.get(lease)
    }

    /// Section 18: every lease's tag points.
    pub fn tags(&self) -> &BTreeMap<String, TagTimeline> {
        &self.tags
    }

    /// Section 18: per dest, the egress records that name a lease, with the lease.
    pub fn egress_leases(&self) -> &BTreeMap<String, Vec<(EgressRecord, Box<str>)>> {
        &self.egress_leases
    }

    /// [`AccountLedger::add_egress`] of a record naming `lease` (section 18 reads its tag).
    pub fn add_egress_of_lease(&mut self, dest: &str, record: EgressRecord, lease: &str) {
        self.add_egress(dest, record);
        self.egress_leases
            .entry(dest.to_string())
            .or_default()
            .push((record, lease.into()));
    }

    /// Section 18: `member`'s ledger added to this one (a payer's members rated as one
    /// account): every usage key with its coverage by source, lease timeline, tag points and
    /// counter keeps the member as the prefix of its lease ([`member_lease`]), so the keys of
    /// two members never merge; egress records join their dest.
    pub fn absorb_member(&mut self, member: &str, other: &AccountLedger) {
        for (key, k) in &other.usage {
            let mut key = key.clone();
            key.lease = member_lease(member, &key.lease).into();
            let before = self.usage.get(&key).map(|old| KeyPart::whole(&old.runs));
            let after = KeyPart::whole(&k.runs);
            (self.profiles).replace(&key.sku, key.class, &before.unwrap_or_default(), &after);
            self.usage.insert(key, k.clone());
        }
        for (dest, records) in &other.egress {
            self.egress
                .entry(dest.clone())
                .or_default()
                .extend_from_slice(records);
        }
        for (dest, records) in &other.egress_leases {
            self.egress_leases.entry(dest.clone()).or_default().extend(
                records
                    .iter()
                    .map(|(r, lease)| (*r, member_lease(member, lease).into())),
            );
        }
        for (lease, timeline) in &other.leases {
            self.leases
                .insert(member_lease(member, lease), timeline.clone());
        }
        for (lease, timeline) in &other.tags {
            self.tags
                .insert(member_lease(member, lease), timeline.clone());
        }
        for (key, samples) in &other.counters {
            let mut key = key.clone();
            key.lease = member_lease(member, &key.lease);
            self.counters.insert(key, samples.clone());
        }
    }

    pub fn timeline(&self, lease: &str) -> Option<&Timeline> {
        self.leases.get(lease)
    }

    pub fn leases(&self) -> &BTreeMap<String, Timeline> {
        &self.leases
    }

    /// Section 11: a counter sample (`at` floored to the second).
    pub fn add_counter_sample(&mut self, key: CounterKey, at: i64, bytes_total: u64) {
        self.counters
            .entry(key)
            .or_default()
            .insert((at, bytes_total));
    }

    pub fn counters(&self) -> &BTreeMap<CounterKey, BTreeSet<(i64, u64)>> {
        &self.counters
    }

    /// Replaces a key's runs wholesale (loading a ledger from storage).
    pub fn set_runs(&mut self, key: ResourceKey, runs: Runs) {
        let before = self
            .usage
            .get(&key)
            .map(|k| KeyPart::whole(&k.runs))
            .unwrap_or_default();
        self.profiles
            .replace(&key.sku, key.class, &before, &KeyPart::whole(&runs));
        if runs.is_empty() {
            self.usage.remove(&key);
        } else {
            self.usage.entry(key).or_default().runs = runs;
        }
    }

    /// Issue 29: per (class, sku), the steps of the keys' summed quantity, always those of
    /// the keys the ledger holds.
    pub fn profiles(&self) -> &Profiles {
        &self.profiles
    }

    pub fn add_egress(&mut self, dest: &str, record: EgressRecord) {
        match self.egress.get_mut(dest) {
            Some(v) => v.push(record),
            None => {
                self.egress.insert(dest.to_string(), vec![record]);
            }
        }
    }

    /// A key's runs and coverage by source (sorted by source), looked up by its parts.
    pub fn key_runs(
        &self,
        lease: &str,
        resource: &str,
        sku: &str,
        class: Class,
    ) -> Option<(&Runs, Vec<(&str, &Runs)>)> {
        let k = self
            .usage
            .get(&ResourceKeyRef(lease, resource, sku, class))?;
        Some((&k.runs, k.sources()))
    }

    /// How many usage keys the ledger holds.
    pub fn key_count(&self) -> usize {
        self.usage.len()
    }

    pub fn usage(&self) -> impl Iterator<Item = (&ResourceKey, &Runs)> {
        self.usage.iter().map(|(k, v)| (k, &v.runs))
    }

    /// Exactly what rating the period `[start, end)` reads of this ledger: every usage key
    /// with a run overlapping the period, *whole* (the minimum charge of section 4.6 counts
    /// a key's covered seconds over all its runs, and bills in the period of its first
    /// second, which such a key then holds), and the egress records timed inside it. Keys
    /// without a second in the period add nothing to any line of it. The store loads only
    /// this (`first_s < end and end_s > start`, egress by time) to re-rate a period; a
    /// property test checks that rating the restriction equals rating the whole ledger.
    pub fn restricted_to(&self, start: i64, end: i64) -> AccountLedger {
        let usage: HashMap<ResourceKey, KeyRuns> = self
            .usage
            .iter()
            .filter(|(_, k)| k.runs.clipped(start, end).next().is_some())
            .map(|(k, r)| (k.clone(), r.clone()))
            .collect();
        let mut profiles = Profiles::default();
        for (key, k) in &usage {
            profiles.add_key(&key.sku, key.class, &k.runs);
        }
        let egress = self
            .egress
            .iter()
            .map(|(dest, records)| {
                let inside: Vec<EgressRecord> = records
                    .iter()
                    .filter(|r| start <= r.time.secs && r.time.secs < end)
                    .copied()
                    .collect();
                (dest.clone(), inside)
            })
            .filter(|(_, records)| !records.is_empty())
            .collect();
        let egress_leases = self
            .egress_leases
            .iter()
            .map(|(dest, records)| {
                let inside: Vec<(EgressRecord, Box<str>)> = records
                    .iter()
                    .filter(|(r, _)| start <= r.time.secs && r.time.secs < end)
                    .cloned()
                    .collect();
                (dest.clone(), inside)
            })
            .filter(|(_, records)| !records.is_empty())
            .collect();
        // Part 2: timelines and counters are small and read whole (a state or a counter's
        // baseline may lie before the period); so are section 18's tags.
        AccountLedger {
            usage,
            egress,
            leases: self.leases.clone(),
            counters: self.counters.clone(),
            tags: self.tags.clone(),
            egress_leases,
            profiles,
        }
    }

    /// Usage keys in sorted order (for stable output).
    pub fn usage_sorted(&self) -> Vec<(&ResourceKey, &Runs)> {
        let mut v: Vec<_> = self.usage().collect();
        v.sort_by(|a, b| a.0.cmp(b.0));
        v
    }

    pub fn runs(&self, lease: &str, resource: &str, sku: &str, class: Class) -> Option<&Runs> {
        self.usage
            .get(&ResourceKeyRef(lease, resource, sku, class))
            .map(|k| &k.runs)
    }

    pub fn egress(&self) -> &BTreeMap<String, Vec<EgressRecord>> {
        &self.egress
    }

    pub fn usage_keys(&self) -> usize {
        self.usage.len()
    }

    /// Approximate bytes held per usage key: key strings, runs and map slots.
    pub fn heap_bytes(&self) -> usize {
        let slot = std::mem::size_of::<(ResourceKey, KeyRuns)>() + 1;
        self.usage.capacity() * slot
            + self
                .usage
                .iter()
                .map(|(k, r)| k.lease.len() + k.resource.len() + k.sku.len() + r.heap_bytes())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod source_tests {
    use crate::events::event::Class;
    use crate::ledger::{AccountLedger, ResourceKey, Runs};
    use rust_decimal::Decimal;

    fn key() -> ResourceKey {
        ResourceKey {
            lease: "L".into(),
            resource: "r".into(),
            sku: "g".into(),
            class: Class::OnDemand,
        }
    }

    fn spans(r: &Runs) -> Vec<(i64, i64, String)> {
        r.as_slice()
            .iter()
            .map(|x| (x.from, x.to, x.quantity.to_string()))
            .collect()
    }

    #[test]
    fn one_source_is_the_ledger_and_a_second_one_splits_the_coverage() {
        let mut l = AccountLedger::new();
        l.insert_usage_from("n1", "L", "r", "g", Class::OnDemand, 0, 10, Decimal::ONE);
        l.insert_usage_from("n1", "L", "r", "g", Class::OnDemand, 10, 20, Decimal::TWO);
        let s = l.sources(&key());
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].0, "n1");
        assert_eq!(
            spans(s[0].1),
            vec![(0, 10, "1".into()), (10, 20, "2".into())]
        );
        // The lease moves to n0: n1 keeps what it reported, n0 gets its own runs.
        l.insert_usage_from("n0", "L", "r", "g", Class::OnDemand, 15, 30, Decimal::ONE);
        let s = l.sources(&key());
        let names: Vec<&str> = s.iter().map(|x| x.0).collect();
        assert_eq!(names, ["n0", "n1"]);
        assert_eq!(spans(s[0].1), vec![(15, 30, "1".into())]);
        assert_eq!(
            spans(s[1].1),
            vec![(0, 10, "1".into()), (10, 20, "2".into())]
        );
        assert_eq!(
            spans(l.runs("L", "r", "g", Class::OnDemand).unwrap()),
            vec![
                (0, 10, "1".into()),
                (10, 20, "2".into()),
                (20, 30, "1".into())
            ]
        );
    }

    #[test]
    fn an_event_of_unknown_source_keeps_the_known_coverage_apart() {
        let mut l = AccountLedger::new();
        l.insert_usage_from("n1", "L", "r", "g", Class::OnDemand, 0, 10, Decimal::ONE);
        l.insert_usage("L", "r", "g", Class::OnDemand, 10, 20, Decimal::ONE);
        let s = l.sources(&key());
        assert_eq!(s.len(), 1);
        assert_eq!(spans(s[0].1), vec![(0, 10, "1".into())]);
    }
}
