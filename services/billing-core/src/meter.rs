//! Metering: records in, ledger out. Decode, validate, dedupe and fold into the per-second
//! ledger (billing-semantics.md sections 1 and 2). Pure and deterministic: the resulting
//! [`AccountLedger`]s depend only on the set of accepted events, whatever their order.

use crate::dedupe::{Dedupe, Seen};
use crate::event::{self, Event, EventData, RejectReason, Rejection};
use crate::ledger::{AccountLedger, EgressRecord};
use hashbrown::HashMap;

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

    /// Decodes one record (a JSONL line or a Kafka record value) and admits it.
    pub fn ingest(&mut self, record: &[u8]) -> Admission {
        match event::decode(record) {
            Ok(e) => self.admit(&e),
            Err(r) => Admission::Rejected(r),
        }
    }

    /// Decodes and admits a block of records, in order, with the same outcome as calling
    /// [`Meter::ingest`] on each; faster, because the dedupe table's cache misses of the whole
    /// block overlap (see [`Dedupe::warm`]).
    pub fn ingest_block(&mut self, records: &[&[u8]]) -> Vec<Admission> {
        let decoded: Vec<Result<(Event<'_>, u128, u128), Rejection>> = records
            .iter()
            .map(|r| {
                event::decode(r).map(|e| {
                    let digest = crate::dedupe::identity_digest(&e.source, &e.id);
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

    /// Admits a decoded, valid event.
    pub fn admit(&mut self, e: &Event<'_>) -> Admission {
        let fingerprint = e.fingerprint_with(&mut self.scratch);
        self.admit_digested(
            e,
            crate::dedupe::identity_digest(&e.source, &e.id),
            fingerprint,
        )
    }

    fn admit_digested(&mut self, e: &Event<'_>, digest: u128, fingerprint: u128) -> Admission {
        match self.dedupe.offer_digest(digest, fingerprint) {
            Seen::Duplicate => return Admission::Duplicate,
            Seen::Conflict => {
                let mut r = Rejection::new(
                    RejectReason::Conflict,
                    format!(
                        "(source {:?}, id {:?}) was seen before with different content; the first one stands",
                        e.source, e.id
                    ),
                );
                r.source = Some(e.source.to_string());
                r.id = Some(e.id.to_string());
                return Admission::Rejected(r);
            }
            Seen::New => {}
        }
        let ledger = match self.accounts.get_mut(&*e.subject) {
            Some(l) => l,
            None => self.accounts.entry(e.subject.to_string()).or_default(),
        };
        match &e.data {
            EventData::Usage(u) => {
                let (from, to) = u.seconds();
                ledger.insert_usage(&u.lease, &u.resource, &u.sku, u.class, from, to, u.quantity);
            }
            EventData::Egress(x) => ledger.add_egress(
                &x.dest,
                EgressRecord {
                    time: x.time,
                    bytes: x.bytes,
                },
            ),
        }
        Admission::Accepted
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

    /// Distinct identities admitted.
    pub fn events(&self) -> usize {
        self.dedupe.len()
    }

    /// Usage keys across all accounts.
    pub fn usage_keys(&self) -> usize {
        self.accounts.values().map(|l| l.usage_keys()).sum()
    }
}
