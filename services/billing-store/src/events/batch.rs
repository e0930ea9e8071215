//! What a batch's records are sorted into (`fold` sorts them, `writes` saves the rows): the
//! outcome of each record, the usage spans per key, and the side rows. Shared types only, so
//! that the fold and the module that saves its rows depend on this and not on each other.

use crate::conn::sql::Val;
use billing_core::event::RejectReason;
use serde::Serialize;
use std::collections::HashMap;

/// What became of one record of a batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    Accepted,
    Duplicate,
    Rejected {
        reason: RejectReason,
        detail: String,
    },
}

/// The new intervals of one usage key in a batch: `[from, to)` at a quantity.
/// A key's new intervals: `[from, to)`, quantity, and the source that reported it.
pub(crate) type Spans<'a> = Vec<(i64, i64, rust_decimal::Decimal, &'a str)>;

/// A usage key touched by a batch.
pub(crate) struct KeyInsert<'a> {
    /// The billing domain's id (`billing_core::domain`): the account, or `account@region`.
    pub(crate) account: std::borrow::Cow<'a, str>,
    pub(crate) lease: &'a str,
    pub(crate) resource: &'a str,
    pub(crate) sku: &'a str,
    pub(crate) class: billing_core::Class,
}

/// Every record of a batch sorted into its outcome and the rows it adds.
pub(crate) struct Sorted<'a> {
    pub(crate) outcomes: Vec<Vec<Outcome>>,
    /// Dead-letter rows (see `dead_row`) with the dead-letter topic of their part.
    pub(crate) dead: Vec<(Vec<Val>, Option<&'a str>)>,
    pub(crate) egress: Vec<Vec<Val>>,
    pub(crate) late: Vec<Vec<Val>>,
    pub(crate) usage: HashMap<String, (KeyInsert<'a>, Spans<'a>)>,
    /// `rental_events` rows (billing-semantics part 2; see migration 0012).
    pub(crate) rental: Vec<Vec<Val>>,
    /// Platform events in closed periods: (source, id, period, log_seq), noted as late for
    /// every account invoiced in the period.
    pub(crate) platform_late: Vec<Vec<Val>>,
}

impl Sorted<'_> {
    /// The accounts whose ledger the batch moves: usage, egress or account rental facts.
    pub(crate) fn accounts(&self) -> std::collections::BTreeSet<&str> {
        let mut out: std::collections::BTreeSet<&str> =
            self.usage.values().map(|(k, _)| &*k.account).collect();
        for (rows, col) in [(&self.egress, 2), (&self.rental, 1)] {
            for row in rows {
                if let Some(Val::Text(account)) = row.get(col)
                    && !account.is_empty()
                {
                    out.insert(account.as_str());
                }
            }
        }
        out
    }
}
