//! A fold's middle stage: dedupe against the authoritative `events` table (one statement per
//! batch) and the sorting of each record into its outcome and rows (`batch::Sorted`).

use crate::admin::keys::key_id;
use crate::conn::backend::Backend;
use crate::conn::db::Conn;
use crate::conn::error::Result;
use crate::conn::sql::Val;
use crate::events::batch::{KeyInsert, Outcome, Sorted};
use crate::events::dead_letters::dead_row;
use crate::events::identities::{NewIdentity, identity};
use crate::events::records::{Part, Records};
use billing_core::dedupe::{Seen, classify};
use billing_core::event::{AnyData, AnyEvent, EventData, RejectReason, Rejection};
use billing_core::rental::RentalData;
use std::collections::HashMap;

/// What dedupe knows of a batch: each record's identity and fingerprint, and the identities
/// the table held before the batch (with their stored fingerprints).
pub(crate) struct Known {
    idents: Vec<[u8; 16]>,
    fps: Vec<u128>,
    held: HashMap<[u8; 16], u128>,
}

/// Dedupe. The first occurrence of each identity in the batch is written to the
/// authoritative events table straight away; the identities the table held already come back
/// with their fingerprints, to tell a duplicate from a conflict (`identities::insert`: one
/// `COPY` per batch on PostgreSQL, one index descent per new event).
pub(crate) async fn dedupe(
    conn: &mut dyn Conn,
    backend: Backend,
    path: &crate::events::identities::Path,
    batch: &Records<'_>,
    decoded: &[Result<AnyEvent<'_>, Rejection>],
) -> Result<Known> {
    let mut scratch = Vec::new();
    let fps: Vec<u128> = decoded
        .iter()
        .map(|d| d.as_ref().map_or(0, |e| e.fingerprint_with(&mut scratch)))
        .collect();
    let idents: Vec<[u8; 16]> = decoded
        .iter()
        .map(|d| d.as_ref().map_or([0; 16], |e| identity(&e.source, &e.id)))
        .collect();
    let mut firsts: HashMap<[u8; 16], usize> = HashMap::new();
    for (i, d) in decoded.iter().enumerate() {
        if d.is_ok() {
            firsts.entry(idents[i]).or_insert(i);
        }
    }
    let mut candidates: Vec<usize> = firsts.into_values().collect();
    candidates.sort_unstable();
    let rows: Vec<NewIdentity<'_>> = candidates
        .iter()
        .filter_map(|&i| {
            let e = decoded[i].as_ref().ok()?;
            Some(NewIdentity {
                ident: idents[i],
                source: &e.source,
                id: &e.id,
                fingerprint: fps[i],
                account: &e.subject,
                log_seq: batch[i].1,
                end_s: e.end_secs(),
            })
        })
        .collect();
    let held = crate::events::identities::insert(conn, backend, path, &rows).await?;
    Ok(Known { idents, fps, held })
}

/// Sorts each record: rejected (dead letter), duplicate, conflict (dead letter), or accepted
/// (its usage spans or egress row, and a late-usage note per closed period it falls in).
pub(crate) fn sort_records<'a>(
    parts: &[Part<'a>],
    batch: &Records<'a>,
    decoded: &'a [Result<AnyEvent<'a>, Rejection>],
    mut known: Known,
    closed: &[(String, i64, i64)],
    now_ms: i64,
) -> Sorted<'a> {
    let mut out = Sorted {
        outcomes: parts
            .iter()
            .map(|(_, b)| Vec::with_capacity(b.len()))
            .collect(),
        dead: Vec::new(),
        egress: Vec::new(),
        late: Vec::new(),
        usage: HashMap::new(),
        rental: Vec::new(),
        platform_late: Vec::new(),
    };
    for (n, ((part, seq, raw), d)) in batch.iter().zip(decoded).enumerate() {
        let dead_topic = parts[*part].0.dead_letter_topic;
        let outcome = match d {
            Err(r) => Err(r.clone()),
            // The core's dedupe rule (`billing_core::dedupe::classify`).
            Ok(e) => match classify(known.held.get(&known.idents[n]).copied(), known.fps[n]) {
                Seen::Duplicate => Ok(false),
                Seen::Conflict => Err(conflict(e)),
                Seen::New => {
                    known.held.insert(known.idents[n], known.fps[n]);
                    Ok(true)
                }
            },
        };
        match outcome {
            Err(r) => {
                out.dead.push((dead_row(*seq, &r, raw, now_ms), dead_topic));
                out.outcomes[*part].push(Outcome::Rejected {
                    reason: r.reason,
                    detail: r.detail,
                });
            }
            Ok(false) => out.outcomes[*part].push(Outcome::Duplicate),
            Ok(true) => {
                out.outcomes[*part].push(Outcome::Accepted);
                if let Ok(e) = d {
                    out.accept(e, *seq, closed);
                }
            }
        }
    }
    out
}

/// The dead letter of a redelivery whose content differs from the first one's.
fn conflict(e: &AnyEvent<'_>) -> Rejection {
    let mut r = Rejection::new(
        RejectReason::Conflict,
        format!(
            "(source {:?}, id {:?}) was seen before with different content; the first one stands",
            e.source, e.id
        ),
    );
    r.source = Some(e.source.to_string());
    r.id = Some(e.id.to_string());
    r
}

impl<'a> Sorted<'a> {
    /// An accepted event's rows: usage spans of its key, an egress row or a rental row, and a
    /// late note for each closed period it falls in (a platform event's for every account
    /// invoiced in that period: it may change any of them).
    fn accept(&mut self, e: &'a AnyEvent<'a>, seq: i64, closed: &[(String, i64, i64)]) {
        let (from, to) = match &e.data {
            AnyData::Part1(EventData::Usage(u)) => {
                let (from, to) = u.seconds();
                let account = domain_id(&e.subject, u.region.as_deref());
                let id = key_id(&account, &u.lease, &u.resource, &u.sku, u.class);
                let entry = self.usage.entry(id).or_insert_with(|| {
                    let key = KeyInsert {
                        account,
                        lease: &u.lease,
                        resource: &u.resource,
                        sku: &u.sku,
                        class: u.class,
                    };
                    (key, Vec::new())
                });
                entry.1.push((from, to, u.quantity, &e.source));
                (from, to)
            }
            AnyData::Part1(EventData::Egress(x)) => {
                self.egress.push(vec![
                    Val::Text(e.source.to_string()),
                    Val::Text(e.id.to_string()),
                    Val::Text(domain_id(&e.subject, x.region.as_deref()).into_owned()),
                    Val::Text(x.dest.to_string()),
                    Val::I64(x.time.secs),
                    Val::I64(x.time.nanos as i64),
                    // u64 in a signed 64-bit column, bit for bit (read back `as u64`): counts
                    // above i64::MAX stay exact, as the offline rater keeps them.
                    Val::I64(x.bytes as i64),
                    Val::OptText(x.lease.as_ref().map(|l| l.to_string())),
                ]);
                (x.time.secs, x.time.secs + 1)
            }
            AnyData::Rental(r) => {
                let row = crate::ledger::rental::row(&e.subject, r);
                let (at, until) = match (&row[3], &row[4]) {
                    (Val::I64(a), Val::I64(b)) => (*a, (*b).max(*a + 1)),
                    _ => (0, 1),
                };
                self.rental.push(row);
                if r.is_platform() {
                    for (period, start, end) in closed {
                        if at < *end && *start < until {
                            self.platform_late.push(vec![
                                Val::Text(e.source.to_string()),
                                Val::Text(e.id.to_string()),
                                Val::Text(period.clone()),
                                Val::I64(seq),
                            ]);
                        }
                    }
                    return;
                }
                (at, until)
            }
        };
        let domain = match &e.data {
            AnyData::Part1(EventData::Usage(u)) => domain_id(&e.subject, u.region.as_deref()),
            AnyData::Part1(EventData::Egress(x)) => domain_id(&e.subject, x.region.as_deref()),
            AnyData::Rental(RentalData::NetCounter(x)) => {
                domain_id(&e.subject, x.region.as_deref())
            }
            AnyData::Rental(_) => std::borrow::Cow::Borrowed(&*e.subject),
        };
        for (period, start, end) in closed {
            if from < *end && *start < to {
                self.late.push(vec![
                    Val::Text(e.source.to_string()),
                    Val::Text(e.id.to_string()),
                    Val::Text(domain.to_string()),
                    Val::Text(period.clone()),
                    Val::I64(seq),
                ]);
            }
        }
    }
}

/// The billing domain an event of `account` in `region` is ledgered under (section 19,
/// `billing_core::domain`): the account at home, `account@region` in a region.
fn domain_id<'a>(account: &'a str, region: Option<&'a str>) -> std::borrow::Cow<'a, str> {
    billing_core::domain::Domain { account, region }.id()
}
