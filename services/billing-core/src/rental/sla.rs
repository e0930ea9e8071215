//! SLA compensation from node faults (单节点故障补偿): billing-semantics.md section 10.
//!
//! For a merged fault `[a, b)` of node `n`, a usage key is affected when events from source
//! `n` covered it at some second of `[a - attach_seconds, a)` and its lease is not
//! `terminated` at `a`. Its quantity is the largest quantity those events of `n` gave it in
//! that window; its downtime is the seconds of `[a, b)` inside the period that its ledger does
//! not cover. Per (account, sku): `round(Σ multiplier x quantity x downtime x r / 3600, 2)`,
//! `r` the sku's first-tier rate (or `rate_per_hour`), added to the credit balance; one
//! `sla_compensation` line per sku shows the downtime unit-seconds, amount 0, and the amount
//! credited in its `compensation` field.
//!
//! Choices: every class counts (a spot key is compensated at the sku's on-demand rate); an
//! sku without an on-demand rate (or not in the price book) earns nothing and shows no line;
//! the key's ledger is read whole (section 8 does not remove seconds from this rule).

use crate::common::money::round_amount;
use crate::ledger::AccountLedger;
use crate::pricing::invoice::{Component, Line};
use crate::pricing::rating_context::RatingContext;
use crate::rental::lease::LeaseState;
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// Per sku: (downtime unit-seconds, unrounded compensation).
type PerSku<'a> = BTreeMap<&'a str, (Decimal, Decimal)>;

/// The `sla_compensation` lines of the account; returns the compensation credited.
pub fn sla_lines(
    ctx: &RatingContext<'_>,
    ledger: &AccountLedger,
    lines: &mut Vec<Line>,
) -> Decimal {
    let Some(multiplier) = ctx.book.sla.compensation_multiplier else {
        return Decimal::ZERO;
    };
    if ctx.faults.is_empty() {
        return Decimal::ZERO;
    }
    let per_sku = affected(ctx, ledger, multiplier);
    let mut total = Decimal::ZERO;
    for (sku, (us, raw)) in per_sku {
        let amount = round_amount(raw);
        let mut line = Line::usage(Component::SlaCompensation, sku, 0, us, Decimal::ZERO);
        line.compensation = Some(amount);
        lines.push(line);
        if !us.is_zero() {
            total += amount;
        }
    }
    total
}

fn affected<'l>(
    ctx: &RatingContext<'_>,
    ledger: &'l AccountLedger,
    multiplier: Decimal,
) -> PerSku<'l> {
    let period = &ctx.period;
    let attach = ctx.book.sla.attach_seconds;
    let mut per_sku: PerSku<'l> = BTreeMap::new();
    for (key, runs) in ledger.usage_sorted() {
        let Some(rate) = ctx.book.skus.get(&*key.sku).and_then(|s| s.first_rate()) else {
            continue;
        };
        let timeline = ledger.timeline(&key.lease);
        for (source, by_source) in ledger.sources(key) {
            let Some(faults) = ctx.faults.get(source) else {
                continue;
            };
            for &(a, b) in faults {
                let (from, to) = (a.max(period.start), b.min(period.end));
                if from >= to {
                    continue;
                }
                let Some(q) = by_source.clipped(a - attach, a).map(|r| r.quantity).max() else {
                    continue;
                };
                if timeline.is_some_and(|t| t.state_at(a) == LeaseState::Terminated) {
                    continue;
                }
                let covered: i64 = runs.clipped(from, to).map(|r| r.seconds()).sum();
                let downtime = Decimal::from(to - from - covered);
                let e = per_sku.entry(&key.sku).or_default();
                e.0 += q * downtime;
                e.1 += multiplier * q * downtime * rate / Decimal::from(3600);
            }
        }
    }
    per_sku
}
