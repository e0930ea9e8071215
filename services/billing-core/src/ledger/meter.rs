//! Metering: records in, ledger out. Decode, validate, dedupe and fold into the per-second
//! ledger (billing-semantics.md sections 1 and 2). Pure and deterministic: the resulting
//! [`AccountLedger`]s depend only on the set of accepted events, whatever their order.

use crate::events::dedupe::{Dedupe, Seen};
use crate::events::event::{self, AnyData, AnyEvent, Event, EventData, RejectReason, Rejection};
use crate::ledger::{AccountLedger, CounterKey, EgressRecord};
use crate::rental::RentalData;
use crate::rental::platform::Platform;
use hashbrown::HashMap;
use std::collections::BTreeMap;

/// What became of one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// New event, folded into the ledger.
    Accepted,
    /// Same identity and content as an accepted event: nothing changed.
    Duplicate,
    /// Invalid or conflicting: goes to the dead-letter output with its reason.
    Rejected(Rejection),
}

/// The metering state of a set of events: dedupe identities and each account's ledger.
#[derive(Debug, Default, Clone)]
pub struct Meter {
    dedupe: Dedupe,
    /// Reused for fingerprints: no allocation per event.
    scratch: Vec<u8>,
    accounts: HashMap<String, AccountLedger>,
    /// Spot curves and node faults (sections 9 and 10): every account's.
    platform: Platform,
    /// Section 19: per region, each account's usage, egress and counters there (lease
    /// timelines stay in the home ledger: they apply in every region).
    regional: BTreeMap<String, HashMap<String, AccountLedger>>,
}

impl Meter {
    pub fn new() -> Self {
        Self::default()
    }

    /// A meter sized for about `events` distinct events.
    pub fn with_capacity(events: usize) -> Self {
        Meter {
            dedupe: Dedupe::with_capacity(events),
            ..Self::default()
        }
    }

    /// Decodes one record (a JSONL line or a Kafka record value) of any type and admits it.
    pub fn ingest(&mut self, record: &[u8]) -> Admission {
        match event::decode_any(record) {
            Ok(e) => self.admit_any(&e),
            Err(r) => Admission::Rejected(r),
        }
    }

    /// Decodes and admits a block of records, in order, with the same outcome as calling
    /// [`Meter::ingest`] on each; faster, because the dedupe table's cache misses of the whole
    /// block overlap (see [`Dedupe::warm`]).
    pub fn ingest_block(&mut self, records: &[&[u8]]) -> Vec<Admission> {
        let decoded: Vec<Result<(AnyEvent<'_>, u128, u128), Rejection>> = records
            .iter()
            .map(|r| {
                event::decode_any(r).map(|e| {
                    let digest = crate::events::dedupe::identity_digest(&e.source, &e.id);
                    let fingerprint = e.fingerprint_with(&mut self.scratch);
                    (e, digest, fingerprint)
                })
            })
            .collect();
        let digests: Vec<u128> = decoded
            .iter()
            .filter_map(|d| d.as_ref().ok().map(|x| x.1))
            .collect();
        std::hint::black_box(self.dedupe.warm(&digests));
        decoded
            .into_iter()
            .map(|d| match d {
                Ok((e, digest, fingerprint)) => self.admit_digested(&e, digest, fingerprint),
                Err(r) => Admission::Rejected(r),
            })
            .collect()
    }

    /// Admits a decoded, valid part-1 event.
    pub fn admit(&mut self, e: &Event<'_>) -> Admission {
        let fingerprint = e.fingerprint_with(&mut self.scratch);
        let digest = crate::events::dedupe::identity_digest(&e.source, &e.id);
        if let Some(refused) = self.offer(e.source.as_ref(), e.id.as_ref(), digest, fingerprint) {
            return refused;
        }
        self.fold_part1(&e.subject, &e.source, &e.data);
        Admission::Accepted
    }

    /// Admits a decoded, valid event of any type.
    pub fn admit_any(&mut self, e: &AnyEvent<'_>) -> Admission {
        let fingerprint = e.fingerprint_with(&mut self.scratch);
        self.admit_digested(
            e,
            crate::events::dedupe::identity_digest(&e.source, &e.id),
            fingerprint,
        )
    }

    fn admit_digested(&mut self, e: &AnyEvent<'_>, digest: u128, fingerprint: u128) -> Admission {
        if let Some(refused) = self.offer(e.source.as_ref(), e.id.as_ref(), digest, fingerprint) {
            return refused;
        }
        match &e.data {
            AnyData::Part1(d) => self.fold_part1(&e.subject, &e.source, d),
            AnyData::Rental(r) => self.fold_rental(&e.subject, r),
        }
        Admission::Accepted
    }

    /// Dedupe (section 1): `None` for a new identity, else what became of the record.
    fn offer(
        &mut self,
        source: &str,
        id: &str,
        digest: u128,
        fingerprint: u128,
    ) -> Option<Admission> {
        match self.dedupe.offer_digest(digest, fingerprint) {
            Seen::Duplicate => Some(Admission::Duplicate),
            Seen::Conflict => {
                let mut r = Rejection::new(
                    RejectReason::Conflict,
                    format!(
                        "(source {source:?}, id {id:?}) was seen before with different content; the first one stands"
                    ),
                );
                r.source = Some(source.to_string());
                r.id = Some(id.to_string());
                Some(Admission::Rejected(r))
            }
            Seen::New => None,
        }
    }

    /// The account's ledger: one hash lookup, an owned name only for a new account.
    fn ledger(&mut self, account: &str) -> &mut AccountLedger {
        self.accounts.entry_ref(account).or_default()
    }

    /// The account's ledger in `region` (`None`: home).
    fn ledger_in(&mut self, account: &str, region: Option<&str>) -> &mut AccountLedger {
        match region {
            None => self.ledger(account),
            Some(r) => {
                let accounts = self.regional.entry(r.to_string()).or_default();
                accounts.entry_ref(account).or_default()
            }
        }
    }

    fn fold_part1(&mut self, account: &str, source: &str, data: &EventData<'_>) {
        let region = match data {
            EventData::Usage(u) => u.region.as_deref(),
            EventData::Egress(x) => x.region.as_deref(),
        };
        let ledger = self.ledger_in(account, region);
        match data {
            EventData::Usage(u) => {
                let (from, to) = u.seconds();
                ledger.insert_usage_from(
                    source,
                    &u.lease,
                    &u.resource,
                    &u.sku,
                    u.class,
                    from,
                    to,
                    u.quantity,
                );
            }
            EventData::Egress(x) => {
                let record = EgressRecord {
                    time: x.time,
                    bytes: x.bytes,
                };
                match x.lease.as_deref() {
                    Some(lease) => ledger.add_egress_of_lease(&x.dest, record, lease),
                    None => ledger.add_egress(&x.dest, record),
                }
            }
        }
    }

    /// Sections 8 to 11: instants floored (`at`, `from`, `start`) or ceiled (`end`).
    fn fold_rental(&mut self, subject: &str, data: &RentalData<'_>) {
        match data {
            RentalData::LeaseState(x) => {
                self.ledger(subject)
                    .add_lease_state(&x.lease, x.at.floor_secs(), x.state)
            }
            RentalData::NetCounter(x) => self
                .ledger_in(subject, x.region.as_deref())
                .add_counter_sample(
                    CounterKey {
                        lease: x.lease.to_string(),
                        interface: x.interface.to_string(),
                        dest: x.dest.to_string(),
                    },
                    x.at.floor_secs(),
                    x.bytes_total,
                ),
            RentalData::SpotPrice(x) => self.platform.add_spot_price_in(
                x.region.as_deref(),
                &x.sku,
                x.from.floor_secs(),
                x.price_per_hour,
            ),
            RentalData::NodeFault(x) => {
                self.platform
                    .add_fault(&x.node, x.start.floor_secs(), x.end.ceil_secs())
            }
            RentalData::LeaseTags(t) => {
                let tags = t
                    .tags
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                self.ledger(subject)
                    .add_lease_tags(&t.lease, t.at.floor_secs(), tags)
            }
        }
    }

    /// Spot curves and node faults.
    pub fn platform(&self) -> &Platform {
        &self.platform
    }

    /// Accounts named by an accepted event, sorted.
    pub fn accounts(&self) -> impl Iterator<Item = (&str, &AccountLedger)> {
        let mut v: Vec<(&str, &AccountLedger)> =
            self.accounts.iter().map(|(a, l)| (a.as_str(), l)).collect();
        v.sort_unstable_by_key(|(a, _)| *a);
        v.into_iter()
    }

    pub fn account(&self, account: &str) -> Option<&AccountLedger> {
        self.accounts.get(account)
    }

    /// Section 19: the regions named by accepted usage, egress or counter events, sorted.
    pub fn regions(&self) -> impl Iterator<Item = &str> {
        self.regional.keys().map(String::as_str)
    }

    /// Section 19: the accounts with a usage, egress or counter event in `region`, sorted.
    pub fn accounts_in(&self, region: &str) -> Vec<&str> {
        let mut v: Vec<&str> = self
            .regional
            .get(region)
            .map(|a| a.keys().map(String::as_str).collect())
            .unwrap_or_default();
        v.sort_unstable();
        v
    }

    /// Section 19: the account's ledger in `region` (`None`: home, as [`Meter::account`]); a
    /// region's carries the account's lease timelines (they apply in every region).
    pub fn account_in(
        &self,
        account: &str,
        region: Option<&str>,
    ) -> Option<std::borrow::Cow<'_, AccountLedger>> {
        let Some(r) = region else {
            return self.account(account).map(std::borrow::Cow::Borrowed);
        };
        let ledger = self.regional.get(r)?.get(account)?;
        match self.account(account) {
            Some(home) if !home.leases().is_empty() || !home.tags().is_empty() => {
                let mut merged = ledger.clone();
                merged.merge_leases(home);
                Some(std::borrow::Cow::Owned(merged))
            }
            _ => Some(std::borrow::Cow::Borrowed(ledger)),
        }
    }

    /// Distinct identities admitted.
    pub fn events(&self) -> usize {
        self.dedupe.len()
    }

    /// Usage keys across all accounts.
    pub fn usage_keys(&self) -> usize {
        let regional: usize = self
            .regional
            .values()
            .flat_map(|a| a.values())
            .map(|l| l.usage_keys())
            .sum();
        self.accounts
            .values()
            .map(|l| l.usage_keys())
            .sum::<usize>()
            + regional
    }
}
