//! The lines of an account's period, rule by rule, that [`crate::pricing::rating`] assembles:
//! on-demand usage per sku with its minimum charge, billing increments and unpriced usage
//! (sections 4.1 to 4.6, 12, 13, 15), the account terms' own lines (reservation commitments,
//! subscription cycles and refunds, package prices, one-off charges) and egress (4.7, 11).

use crate::common::money::{round_amount, show_quantity, usage_amount};
use crate::events::event::Class;
use crate::ledger::AccountLedger;
use crate::ledger::Runs;
use crate::ledger::profile::Profiles;
use crate::pricing::account_index::TermsOfAccount;
use crate::pricing::allocation::Allocator;
use crate::pricing::egress::{bytes_in, egress_lines, gigabytes};
use crate::pricing::invoice::{Component, Line, Unit};
use crate::pricing::ondemand::{SkuInputs, SkuUsage, rate_sku};
use crate::pricing::pricebook::{Package, Subscription};
use crate::pricing::rating_context::{RatingContext, RatingError, Unpriced};
use crate::pricing::reservations::commitment_line;
use crate::pricing::subscriptions::{cycle_lines, refund_line, reserved_span};
use crate::rental::states::KeyView;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};

/// The account being rated, its terms and its subscriptions' started bounds.
pub(crate) struct Mine<'m, 'a> {
    pub(crate) account: &'m str,
    pub(crate) terms: &'m TermsOfAccount<'a>,
    pub(crate) subscriptions: &'m [(&'a Subscription, Vec<i64>)],
    /// The ledger's profiles when the period is rated from the keys' sum
    /// ([`crate::pricing::summed`]).
    pub(crate) summed: Option<&'m Profiles>,
}

/// Sections 4.1 to 4.4, 4.6, 12 and 13 for every on-demand sku of the account.
pub(crate) fn on_demand_lines(
    ctx: &RatingContext<'_>,
    mine: &Mine<'_, '_>,
    keys: &[KeyView<'_>],
    lines: &mut Vec<Line>,
    unpriced: &mut Vec<Unpriced>,
    mut alloc: Option<&mut Allocator>,
) {
    let (book, account, subscriptions) = (ctx.book, mine.account, mine.subscriptions);
    let mut by_sku: BTreeMap<&str, SkuUsage<'_>> = BTreeMap::new();
    match mine.summed {
        Some(profiles) => by_sku.extend(
            profiles
                .of(Class::OnDemand)
                .iter()
                .map(|(sku, p)| (&**sku, SkuUsage::Summed(p))),
        ),
        None => {
            let mut runs: BTreeMap<&str, Vec<&Runs>> = BTreeMap::new();
            for k in keys.iter().filter(|k| k.key.class == Class::OnDemand) {
                runs.entry(&k.key.sku).or_default().push(&k.left);
            }
            by_sku.extend(runs.into_iter().map(|(s, r)| (s, SkuUsage::Keys(r))));
        }
    }
    let reservations = mine.terms.reservations.iter().copied();
    let packages: &[&Package] = &mine.terms.packages;
    let mut skus: BTreeSet<&str> = by_sku.keys().copied().collect();
    skus.extend(reservations.clone().map(|r| r.sku.as_str()));
    skus.extend(subscriptions.iter().map(|(s, _)| s.sku.as_str()));
    skus.extend(packages.iter().map(|p| p.sku.as_str()));
    for name in skus {
        let usage = by_sku.remove(name).unwrap_or_default();
        let sku = book.skus.get(name);
        let Some((sku, tiers)) = sku.and_then(|s| s.on_demand_tiers().map(|t| (s, t))) else {
            let why = if sku.is_none() {
                "sku not in the price book"
            } else {
                "sku has no on-demand rate"
            };
            push_unpriced(ctx, account, name, &usage, why, unpriced);
            continue;
        };
        let mut capacity: Vec<(i64, i64, Decimal)> = reservations
            .clone()
            .filter(|r| r.sku == name)
            .map(|r| (r.from, r.to, r.quantity))
            .collect();
        capacity.extend(
            subscriptions
                .iter()
                .filter(|(s, _)| s.sku == name)
                .map(|(s, b)| {
                    let (from, to) = reserved_span(s, b);
                    (from, to, s.quantity)
                }),
        );
        let mut pkgs: Vec<&Package> = packages.iter().copied().filter(|p| p.sku == name).collect();
        // Section 18: packages tied on `to` and `id` (of two members) draw in account order.
        pkgs.sort_by(|a, b| {
            (a.to, a.id.as_bytes(), a.account.as_bytes()).cmp(&(
                b.to,
                b.id.as_bytes(),
                b.account.as_bytes(),
            ))
        });
        let sku_keys = crate::pricing::allocation::on_demand_keys(keys, name);
        let cuts = match &alloc {
            Some(a) => sku_keys
                .iter()
                .flat_map(|k| a.tag_cuts(&k.key.lease, i64::MIN, ctx.period.end))
                .collect(),
            None => Vec::new(),
        };
        let inputs = SkuInputs {
            name,
            sku,
            tiers,
            usage,
            capacity,
            packages: pkgs,
            cuts,
            trace: alloc.is_some(),
        };
        let trace = rate_sku(ctx, &inputs, lines);
        minimum_line(ctx, &inputs, lines);
        increment_line(ctx, &inputs, lines);
        if let Some(a) = alloc.as_deref_mut() {
            if let Some(trace) = &trace {
                a.on_demand(name, &sku_keys, trace);
            }
            if let (Some(minimum), Some(_)) = (sku.minimum_seconds, sku.first_rate()) {
                a.minimum(name, &sku_keys, minimum, &ctx.period);
            }
            if let (Some(increment), Some(_)) = (sku.increment_seconds, sku.first_rate()) {
                a.increment(name, &sku_keys, increment, &ctx.period);
            }
        }
    }
}

/// Section 4.6 over the left runs (section 8); packages never cover it.
fn minimum_line(ctx: &RatingContext<'_>, inputs: &SkuInputs<'_>, lines: &mut Vec<Line>) {
    let (Some(minimum), Some(rate)) = (inputs.sku.minimum_seconds, inputs.sku.first_rate()) else {
        return;
    };
    let owed = inputs.usage.minimum_owed(minimum, &ctx.period);
    lines.push(Line::usage(
        Component::Minimum,
        inputs.name,
        0,
        owed,
        usage_amount(owed, rate, Decimal::ONE),
    ));
}

/// Section 15 over the left runs (section 8): the padding of every run whose last second is
/// in the period, at the first-tier (or plain) rate; nothing that covers usage covers it.
fn increment_line(ctx: &RatingContext<'_>, inputs: &SkuInputs<'_>, lines: &mut Vec<Line>) {
    let (Some(increment), Some(rate)) = (inputs.sku.increment_seconds, inputs.sku.first_rate())
    else {
        return;
    };
    let owed: Decimal = inputs
        .usage
        .keys()
        .iter()
        .map(|r| crate::pricing::increment::owed_unit_seconds(r, increment, &ctx.period))
        .sum();
    lines.push(Line::usage(
        Component::Increment,
        inputs.name,
        0,
        owed,
        usage_amount(owed, rate, Decimal::ONE),
    ));
}

fn push_unpriced(
    ctx: &RatingContext<'_>,
    account: &str,
    sku: &str,
    usage: &SkuUsage<'_>,
    why: &str,
    unpriced: &mut Vec<Unpriced>,
) {
    let used = usage.unit_seconds(ctx.period.start, ctx.period.end);
    if !used.is_zero() {
        unpriced.push(Unpriced {
            account: account.to_string(),
            sku: Some(sku.to_string()),
            class: Some(Class::OnDemand),
            dest: None,
            quantity: show_quantity(used),
            unit: Unit::UnitSeconds,
            why: why.into(),
            region: None,
        });
    }
}

/// The account terms' own lines: reservation commitments (4.2), subscription cycles (13)
/// and refunds (17), package prices (12) and one-off charges (20). Returns the refunds
/// credited in the period, by subscription id.
pub(crate) fn term_lines(
    ctx: &RatingContext<'_>,
    mine: &Mine<'_, '_>,
    lines: &mut Vec<Line>,
    mut alloc: Option<&mut Allocator>,
) -> Vec<(String, Decimal)> {
    let mut refunds = Vec::new();
    let period = &ctx.period;
    let mut held = |line: &Line, holder: &str| {
        if let Some(a) = alloc.as_deref_mut() {
            a.term_line(line, holder);
        }
    };
    for r in &mine.terms.reservations {
        if let Some(line) = commitment_line(r, period) {
            held(&line, &r.account);
            lines.push(line);
        }
    }
    for (s, bounds) in mine.subscriptions {
        for line in cycle_lines(s, bounds, period) {
            held(&line, &s.account);
            lines.push(line);
        }
        if let Some(line) = refund_line(s, bounds, period) {
            refunds.push((s.id.clone(), line.refund.unwrap_or_default()));
            lines.push(line);
        }
    }
    refunds.sort();
    for p in &mine.terms.packages {
        if period.contains(p.from) {
            let mut line = Line::usage(
                Component::Package,
                &p.sku,
                0,
                Decimal::ONE,
                round_amount(p.price),
            );
            line.unit = Unit::Package;
            line.package = Some(p.id.clone());
            line.seq = p.index;
            held(&line, &p.account);
            lines.push(line);
        }
    }
    for c in &mine.terms.charges {
        if period.contains(c.at) {
            let line = c.line();
            held(&line, &c.account);
            lines.push(line);
        }
    }
    refunds
}

/// Sections 4.7 and 11: per dest, the `net.egress` bytes timed in the period and the counter
/// steps whose later sample is in it.
pub(crate) fn egress_lines_of(
    ctx: &RatingContext<'_>,
    account: &str,
    ledger: &AccountLedger,
    lines: &mut Vec<Line>,
    unpriced: &mut Vec<Unpriced>,
) -> Result<(), RatingError> {
    let period = &ctx.period;
    let counters = crate::rental::counters::counter_bytes(ledger, period);
    let mut dests: BTreeSet<&str> = ledger.egress().keys().map(String::as_str).collect();
    dests.extend(counters.keys().copied());
    for dest in dests {
        let records = ledger.egress().get(dest).map_or(&[][..], Vec::as_slice);
        let bytes = bytes_in(records, period) + counters.get(dest).copied().unwrap_or(0);
        if bytes == 0 {
            continue;
        }
        let gb = gigabytes(bytes).ok_or_else(|| RatingError::EgressOverflow {
            account: account.to_string(),
            dest: dest.to_string(),
            bytes,
        })?;
        match ctx.book.egress.get(dest) {
            Some(tiers) => lines.extend(egress_lines(dest, tiers, gb)),
            None => unpriced.push(Unpriced {
                account: account.to_string(),
                sku: None,
                class: None,
                dest: Some(dest.to_string()),
                quantity: show_quantity(gb),
                unit: Unit::Gb,
                why: "no egress table for this dest".into(),
                region: None,
            }),
        }
    }
    Ok(())
}
