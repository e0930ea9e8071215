//! Allocation of a payer's invoice to (member, tag value) cells: billing-semantics.md
//! section 18.
//!
//! With the price book's `allocation_tag`, every amount of a payer's invoice is split over
//! *cells* (member, value of the tag), to the cent, so that the cells add up to the invoice
//! exactly. Rating records each line's weights per cell while it rates ([`Allocator`]):
//!
//! - `on_demand`: at each segment of the walk (cut where a key's tag changes), the overflow
//!   unit-seconds it gave a line are split over the sku's `on_demand` keys in proportion to
//!   their ledger quantities (`q_key / U`);
//! - `spot` and `state:*`: the cell's unit-seconds in the line;
//! - `minimum`: the resource's account and its tag at its first covered second; `increment`:
//!   the run's account and tag at its last second;
//! - `egress` of a dest: each cell's bytes to it in the period (a `net.egress` by its lease's
//!   tag at `floor(time)`, `""` without a lease; a counter step by its later sample's `at`),
//!   the same weights for every tier line of the dest;
//! - `reserved_commitment`, `package`, `subscription`, `charge`: the member holding the term,
//!   tag `""`.
//!
//! Weights are exact rationals (a share `q / U` need not be a decimal), so a split is exact:
//! each cell gets `A x w / Σw` rounded toward zero to the cent, and the cents left go one each
//! to the largest remainders (ties: smaller account, then smaller tag, byte by byte). Lines are
//! split first; then the discount part by part (the plain part over the cells' line totals,
//! each other discount over the cells' parts of the lines it matched; over the line totals
//! instead when the discount was held to the subtotal or a cell would get more discount than
//! its line total), the credit over line totals less discount, and the tax over the net.

use crate::common::money::round_amount;
use crate::events::event_fields::Class;
use crate::ledger::{AccountLedger, split_member_lease};
use crate::pricing::egress::bytes_in;
use crate::pricing::invoice::{
    AllocatedLine, AllocationRow, Component, Invoice, Line, LineDiscount, LineId,
};
use crate::pricing::ondemand::OnDemandTrace;
use crate::pricing::period::Period;
use crate::pricing::pricebook::Discount;
use crate::pricing::rating_context::RatingContext;
use crate::pricing::spot::{INTERRUPTION_WAIVER_SECONDS, price_pieces, show_price};
use crate::rental::states::{KeyView, split_runs};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};
use rust_decimal::Decimal;
use std::collections::{BTreeMap, HashMap};

/// (member, tag value).
pub type Cell = (String, String);

/// Weights per cell.
type Weights = BTreeMap<Cell, BigRational>;

/// Decimal places of a member's share of a line's unit-seconds ([`Allocator::usage_shares`]).
pub const SHARE_DECIMALS: u32 = 6;

/// `r` rounded toward zero to `places` decimals.
fn truncated(r: &BigRational, places: u32) -> Decimal {
    let scale = BigInt::from(10u8).pow(places);
    let n = (r * BigRational::from_integer(scale)).trunc().to_integer();
    n.to_i128()
        .map_or(Decimal::ZERO, |n| Decimal::from_i128_with_scale(n, places))
}

/// A decimal as an exact rational.
fn rational(d: Decimal) -> BigRational {
    let scale = BigInt::from(10u8).pow(d.scale());
    BigRational::new(BigInt::from(d.mantissa()), scale)
}

/// The weights of a payer's invoice lines, recorded while rating it.
#[derive(Debug, Clone, Default)]
pub struct Allocator {
    payer: String,
    /// (member, lease) -> the allocation tag's steps.
    steps: HashMap<(String, String), Vec<(i64, String)>>,
    /// Per line identity.
    lines: BTreeMap<LineId, Weights>,
    /// Per egress dest: the weights of every tier line of it.
    egress: BTreeMap<String, Weights>,
}

/// The identity of a usage line: `component`, `sku`, `tier`, and `multiplier` or `price`.
fn usage_id(
    component: Component,
    sku: &str,
    tier: usize,
    multiplier: Option<Decimal>,
    price: Option<Decimal>,
) -> LineId {
    let mut line = Line::usage(component, sku, tier, Decimal::ONE, Decimal::ZERO);
    line.multiplier = multiplier;
    line.price = price;
    line.identity()
}

impl Allocator {
    /// The allocator of `payer`'s invoice by `tag` (None: by member alone, every tag `""`),
    /// over its members' ledgers.
    pub fn new(
        payer: &str,
        tag: Option<&str>,
        members: &[(&str, Option<&AccountLedger>)],
    ) -> Allocator {
        let mut steps = HashMap::new();
        let tagged = members.iter().filter_map(|(m, l)| Some((m, (*l)?, tag?)));
        for (member, ledger, tag) in tagged {
            for (lease, timeline) in ledger.tags() {
                let s: Vec<(i64, String)> = timeline
                    .steps(tag)
                    .into_iter()
                    .map(|(at, v)| (at, v.to_string()))
                    .collect();
                steps.insert((member.to_string(), lease.clone()), s);
            }
        }
        Allocator {
            payer: payer.to_string(),
            steps,
            lines: BTreeMap::new(),
            egress: BTreeMap::new(),
        }
    }

    /// The member and lease of a lease of the rated ledger.
    fn member_of<'x>(&'x self, lease: &'x str) -> (&'x str, &'x str) {
        let (member, lease) = split_member_lease(lease);
        (member.unwrap_or(&self.payer), lease)
    }

    fn steps_of(&self, member: &str, lease: &str) -> &[(i64, String)] {
        self.steps
            .get(&(member.to_string(), lease.to_string()))
            .map_or(&[][..], Vec::as_slice)
    }

    fn tag_at(&self, member: &str, lease: &str, s: i64) -> String {
        let steps = self.steps_of(member, lease);
        let i = steps.partition_point(|(at, _)| *at <= s);
        if i == 0 {
            String::new()
        } else {
            steps[i - 1].1.clone()
        }
    }

    /// The cell of a key's lease (of the rated ledger) at second `s`.
    fn cell(&self, lease: &str, s: i64) -> Cell {
        let (member, lease) = self.member_of(lease);
        (member.to_string(), self.tag_at(member, lease, s))
    }

    /// Where the tag of a lease (of the rated ledger) changes, inside `(from, to)`.
    pub fn tag_cuts(&self, lease: &str, from: i64, to: i64) -> Vec<i64> {
        let (member, lease) = self.member_of(lease);
        self.steps_of(member, lease)
            .iter()
            .map(|(at, _)| *at)
            .filter(|at| from < *at && *at < to)
            .collect()
    }

    fn add(&mut self, id: LineId, cell: Cell, w: BigRational) {
        if w.is_zero() {
            return;
        }
        let e = self
            .lines
            .entry(id)
            .or_default()
            .entry(cell)
            .or_insert_with(BigRational::zero);
        *e += w;
    }

    /// `q` unit-seconds a second over `[from, to)` of a key of `lease`, split where its tag
    /// changes.
    fn add_run(&mut self, id: &LineId, lease: &str, from: i64, to: i64, q: Decimal) {
        let mut t = from;
        let mut cuts = self.tag_cuts(lease, from, to);
        cuts.push(to);
        for next in cuts {
            let cell = self.cell(lease, t);
            self.add(id.clone(), cell, rational(q * Decimal::from(next - t)));
            t = next;
        }
    }

    /// Section 8's `state:*` lines: the cell's unit-seconds in each.
    pub fn states(
        &mut self,
        ctx: &RatingContext<'_>,
        ledger: &AccountLedger,
        keys: &[KeyView<'_>],
    ) {
        let period = &ctx.period;
        for k in keys {
            let Some(sku) = ctx.book.skus.get(&*k.key.sku) else {
                continue;
            };
            if sku.state_rates.is_empty() {
                continue;
            }
            let mut pieces = Vec::new();
            let timeline = ledger.timeline(&k.key.lease);
            split_runs(k.runs, timeline, &sku.state_rates, |state, run| {
                let (a, b) = (run.from.max(period.start), run.to.min(period.end));
                if a < b {
                    pieces.push((state, a, b, run.quantity));
                }
            });
            for (state, a, b, q) in pieces {
                let id = usage_id(Component::State(state), &k.key.sku, 0, None, None);
                self.add_run(&id, &k.key.lease, a, b, q);
            }
        }
    }

    /// The `on_demand` lines of one sku from the walk's trace: each part over the keys in use
    /// at its segment, in proportion to their quantities.
    pub fn on_demand(&mut self, sku: &str, keys: &[&KeyView<'_>], trace: &OnDemandTrace) {
        for part in &trace.parts {
            let Some(tier) = part.tier.or(trace.volume_tier) else {
                continue;
            };
            let id = usage_id(Component::OnDemand, sku, tier, Some(part.multiplier), None);
            let in_use: Vec<(Cell, Decimal)> = keys
                .iter()
                .map(|k| (k, k.left.quantity_at(part.t)))
                .filter(|(_, q)| !q.is_zero())
                .map(|(k, q)| (self.cell(&k.key.lease, part.t), q))
                .collect();
            let u: Decimal = in_use.iter().map(|(_, q)| *q).sum();
            if u.is_zero() {
                continue;
            }
            let (us, u) = (rational(part.unit_seconds), rational(u));
            for (cell, q) in in_use {
                self.add(id.clone(), cell, &us * rational(q) / &u);
            }
        }
    }

    /// Section 4.6: each resource's owed unit-seconds to its account and its tag at its first
    /// covered second.
    pub fn minimum(&mut self, sku: &str, keys: &[&KeyView<'_>], minimum: i64, period: &Period) {
        let id = usage_id(Component::Minimum, sku, 0, None, None);
        for k in keys {
            let (Some(owed), Some(first)) = (
                crate::pricing::minimum::owed_unit_seconds(&k.left, minimum, period),
                k.left.first_second(),
            ) else {
                continue;
            };
            let cell = self.cell(&k.key.lease, first);
            self.add(id.clone(), cell, rational(owed));
        }
    }

    /// Section 15: each run's padding to its account and its tag at its last second.
    pub fn increment(&mut self, sku: &str, keys: &[&KeyView<'_>], increment: i64, period: &Period) {
        let id = usage_id(Component::Increment, sku, 0, None, None);
        for k in keys {
            let runs: Vec<(i64, i64, Decimal)> =
                crate::pricing::increment::consecutive_runs(&k.left)
                    .filter(|&(_, to, _)| period.contains(to - 1))
                    .collect();
            for (from, to, q) in runs {
                let length = to - from;
                let padding = (length + increment - 1) / increment * increment - length;
                if padding > 0 {
                    let cell = self.cell(&k.key.lease, to - 1);
                    self.add(id.clone(), cell, rational(q * Decimal::from(padding)));
                }
            }
        }
    }

    /// Sections 4.5 and 9: the cell's unit-seconds in each `spot` line (waived keys bill
    /// nothing, unpriced seconds are in no line).
    pub fn spot(&mut self, ctx: &RatingContext<'_>, ledger: &AccountLedger, keys: &[KeyView<'_>]) {
        let period = &ctx.period;
        for k in keys.iter().filter(|k| k.key.class == Class::Spot) {
            let preempted = ledger
                .timeline(&k.key.lease)
                .is_some_and(|t| t.was_preempted());
            if preempted && k.left.covered_seconds() < INTERRUPTION_WAIVER_SECONDS {
                continue;
            }
            let base = ctx
                .book
                .skus
                .get(&*k.key.sku)
                .and_then(|s| s.spot_rate_per_hour)
                .map(|r| r.normalize());
            let curve = ctx.platform.curve(&k.key.sku);
            let mut pieces = Vec::new();
            for run in k.left.clipped(period.start, period.end) {
                let mut t = run.from;
                price_pieces(curve, base, run.from, run.to, |price, seconds| {
                    if let Some(p) = price {
                        pieces.push((p, t, t + seconds, run.quantity));
                    }
                    t += seconds;
                });
            }
            for (p, a, b, q) in pieces {
                let shown = curve.is_some().then(|| show_price(p));
                let id = usage_id(Component::Spot, &k.key.sku, 0, None, shown);
                self.add_run(&id, &k.key.lease, a, b, q);
            }
        }
    }

    /// Sections 4.7 and 11: per dest, each cell's bytes in the period, from the members' own
    /// ledgers (a `net.egress` without a lease is its member's, tag `""`).
    pub fn egress(&mut self, members: &[(&str, Option<&AccountLedger>)], period: &Period) {
        for (member, ledger) in members {
            let Some(ledger) = ledger else { continue };
            for (dest, records) in ledger.egress() {
                let total = bytes_in(records, period);
                let mut leased: u128 = 0;
                let mut parts: Vec<(String, u128)> = Vec::new();
                for (r, lease) in ledger.egress_leases().get(dest).into_iter().flatten() {
                    if period.contains(r.time.secs) {
                        leased += u128::from(r.bytes);
                        parts.push((self.tag_at(member, lease, r.time.secs), u128::from(r.bytes)));
                    }
                }
                if total > leased {
                    parts.push((String::new(), total - leased));
                }
                for (tag, bytes) in parts {
                    self.add_egress(dest, (member.to_string(), tag), bytes);
                }
            }
            for (key, samples) in ledger.counters() {
                let mut prev: Option<u64> = None;
                let mut parts = Vec::new();
                for &(at, bytes) in samples {
                    if let Some(p) = prev
                        && period.contains(at)
                    {
                        let step = if bytes < p { bytes } else { bytes - p };
                        parts.push((self.tag_at(member, &key.lease, at), u128::from(step)));
                    }
                    prev = Some(bytes);
                }
                for (tag, bytes) in parts {
                    self.add_egress(&key.dest, (member.to_string(), tag), bytes);
                }
            }
        }
    }

    fn add_egress(&mut self, dest: &str, cell: Cell, bytes: u128) {
        if bytes == 0 {
            return;
        }
        let e = self
            .egress
            .entry(dest.to_string())
            .or_default()
            .entry(cell)
            .or_insert_with(BigRational::zero);
        *e += BigRational::from_integer(BigInt::from(bytes));
    }

    /// A term's own line (`reserved_commitment`, `package`, `subscription`, `charge`): the
    /// member holding the term, tag `""`.
    pub fn term_line(&mut self, line: &Line, holder: &str) {
        self.add(
            line.identity(),
            (holder.to_string(), String::new()),
            BigRational::from_integer(BigInt::from(1)),
        );
    }

    /// Per member, per sku: its share of the unit-seconds of the `on_demand`,
    /// `reserved_usage` and `spot` lines among `lines` (what `gpu_hours` quotas measure,
    /// [`crate::quota::unit_seconds`]), by the lines' weights: each share exact, rounded
    /// toward zero to [`SHARE_DECIMALS`] places.
    pub fn usage_shares(&self, lines: &[Line]) -> BTreeMap<String, BTreeMap<String, Decimal>> {
        let mut out: BTreeMap<String, BTreeMap<String, Decimal>> = BTreeMap::new();
        for line in lines {
            let Some(sku) = &line.sku else { continue };
            if !matches!(
                line.component,
                Component::OnDemand | Component::ReservedUsage | Component::Spot
            ) {
                continue;
            }
            let Some(weights) = self.lines.get(&line.identity()) else {
                continue;
            };
            let total: BigRational = weights.values().filter(|w| w.is_positive()).sum();
            if total.is_zero() {
                continue;
            }
            let mut per_member: BTreeMap<&str, BigRational> = BTreeMap::new();
            for ((member, _), w) in weights.iter().filter(|(_, w)| w.is_positive()) {
                *per_member.entry(member).or_insert_with(BigRational::zero) += w;
            }
            let quantity = rational(line.quantity);
            for (member, w) in per_member {
                let share = truncated(&(&quantity * w / &total), SHARE_DECIMALS);
                *out.entry(member.to_string())
                    .or_default()
                    .entry(sku.clone())
                    .or_default() += share;
            }
        }
        out
    }

    /// The allocation of `invoice` (its lines sorted, its totals computed) with the plain
    /// discount percent `plain_percent` and the other discounts `scoped` that applied.
    pub fn finish(
        self,
        invoice: &Invoice,
        plain_percent: Decimal,
        scoped: &[&Discount],
    ) -> Vec<AllocationRow> {
        let fallback: Weights = BTreeMap::from([(
            (self.payer.clone(), String::new()),
            BigRational::from_integer(BigInt::from(1)),
        )]);
        // Per cell, its part of each line (in invoice order; zero parts left out later).
        let mut cells: BTreeMap<Cell, Vec<(usize, Decimal)>> = BTreeMap::new();
        for (i, line) in invoice.lines.iter().enumerate() {
            if line.amount.is_zero() {
                continue;
            }
            let weights = match (line.component, &line.dest) {
                (Component::Egress, Some(dest)) => self.egress.get(dest),
                _ => self.lines.get(&line.identity()),
            }
            .filter(|w| w.values().any(|x| x.is_positive()))
            // Every line of non-zero amount has weights; the payer's own cell keeps the
            // invoice exact should one not.
            .unwrap_or(&fallback);
            for (cell, amount) in split(line.amount, weights) {
                cells.entry(cell).or_default().push((i, amount));
            }
        }
        let totals: Weights = cells
            .iter()
            .map(|(c, parts)| (c.clone(), rational(parts.iter().map(|p| p.1).sum())))
            .collect();
        let line_total = |c: &Cell| -> Decimal { cells[c].iter().map(|p| p.1).sum() };
        // The discount, part by part.
        let plain = round_amount(invoice.subtotal * plain_percent / Decimal::ONE_HUNDRED);
        let mut parts: Vec<(Decimal, Weights)> = vec![(plain, totals.clone())];
        for d in scoped {
            let taken = d.taken(&invoice.lines);
            let matched: Weights = cells
                .iter()
                .map(|(c, ps)| {
                    let amount: Decimal = ps
                        .iter()
                        .filter(|(i, _)| d.matches(&invoice.lines[*i]))
                        .map(|p| p.1)
                        .sum();
                    (c.clone(), rational(amount))
                })
                .collect();
            parts.push((taken, matched));
        }
        let held = parts.iter().map(|p| p.0).sum::<Decimal>() > invoice.subtotal;
        let mut discount: BTreeMap<Cell, Decimal> = BTreeMap::new();
        if !held {
            for (amount, weights) in &parts {
                for (c, a) in split(*amount, weights) {
                    *discount.entry(c).or_default() += a;
                }
            }
        }
        if held || discount.iter().any(|(c, d)| *d > line_total(c)) {
            discount = split(invoice.discount, &totals).into_iter().collect();
        }
        let of = |m: &BTreeMap<Cell, Decimal>, c: &Cell| m.get(c).copied().unwrap_or_default();
        let after_discount: Weights = cells
            .keys()
            .map(|c| (c.clone(), rational(line_total(c) - of(&discount, c))))
            .collect();
        let credit: BTreeMap<Cell, Decimal> =
            split(invoice.credit, &after_discount).into_iter().collect();
        let net: Weights = cells
            .keys()
            .map(|c| {
                let n = line_total(c) - of(&discount, c) - of(&credit, c);
                (c.clone(), rational(n))
            })
            .collect();
        let tax: BTreeMap<Cell, Decimal> = split(invoice.tax, &net).into_iter().collect();
        cells
            .iter()
            .map(|(cell, ps)| {
                let lines: Vec<AllocatedLine> = ps
                    .iter()
                    .filter(|(_, a)| !a.is_zero())
                    .map(|(i, a)| AllocatedLine::part_of(&invoice.lines[*i], *a))
                    .collect();
                let subtotal = round_amount(ps.iter().map(|p| p.1).sum());
                let (d, c, t) = (
                    round_amount(of(&discount, cell)),
                    round_amount(of(&credit, cell)),
                    round_amount(of(&tax, cell)),
                );
                AllocationRow {
                    account: cell.0.clone(),
                    tag: cell.1.clone(),
                    lines,
                    subtotal,
                    discount: d,
                    credit: c,
                    tax: t,
                    total: round_amount(subtotal - d - c + t),
                }
            })
            .collect()
    }
}

/// Splits `amount` (2 decimals) over the cells of positive weight: each gets `amount x w /
/// Σw` rounded toward zero to the cent, and the cents left go one each to the largest
/// remainders (ties: smaller account, then smaller tag). Exact: the parts add up to
/// `amount`. Cells of zero weight get nothing (and are left out).
pub fn split(amount: Decimal, weights: &Weights) -> Vec<(Cell, Decimal)> {
    let positive: Vec<(&Cell, &BigRational)> =
        weights.iter().filter(|(_, w)| w.is_positive()).collect();
    let total: BigRational = positive.iter().map(|(_, w)| (*w).clone()).sum();
    let cents = (amount * Decimal::ONE_HUNDRED).trunc();
    let Some(cents) = cents.to_i128() else {
        return Vec::new();
    };
    if positive.is_empty() || total.is_zero() {
        return Vec::new();
    }
    let negative = cents < 0;
    let whole = BigRational::from_integer(BigInt::from(cents.abs()));
    let mut parts: Vec<(&Cell, BigInt, BigRational)> = positive
        .iter()
        .map(|(c, w)| {
            let exact = &whole * *w / &total;
            let floor = exact.trunc();
            let rem = &exact - &floor;
            (*c, floor.to_integer(), rem)
        })
        .collect();
    let given: BigInt = parts.iter().map(|p| p.1.clone()).sum();
    let mut left = (BigInt::from(cents.abs()) - given).to_i128().unwrap_or(0);
    // Largest remainder first; the order of `weights` (account, then tag) breaks ties.
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by(|a, b| parts[*b].2.cmp(&parts[*a].2));
    for i in order {
        if left <= 0 {
            break;
        }
        parts[i].1 += 1;
        left -= 1;
    }
    parts
        .into_iter()
        .map(|(c, n, _)| {
            let n = n.to_i128().unwrap_or(0);
            let n = if negative { -n } else { n };
            (c.clone(), Decimal::from_i128_with_scale(n, 2))
        })
        .collect()
}

/// Every key of `sku` among `keys` of class on-demand.
pub fn on_demand_keys<'k, 'a>(keys: &'k [KeyView<'a>], sku: &str) -> Vec<&'k KeyView<'a>> {
    keys.iter()
        .filter(|k| k.key.class == Class::OnDemand && &*k.key.sku == sku)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(a: &str, t: &str) -> Cell {
        (a.to_string(), t.to_string())
    }

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn largest_remainders_take_the_cents_left_and_ties_go_to_the_smaller_cell() {
        // 0.25 over two equal weights: 12.5 cents each, floor 12 + 12, one cent left; the
        // remainders tie (.5, .5): the smaller tag, p-x, takes it (worked example 3-org).
        let w: Weights = BTreeMap::from([
            (cell("acme-ml", "p-y"), rational(d("1"))),
            (cell("acme-ml", "p-x"), rational(d("1"))),
        ]);
        let got = split(d("0.25"), &w);
        assert_eq!(
            got,
            vec![
                (cell("acme-ml", "p-x"), d("0.13")),
                (cell("acme-ml", "p-y"), d("0.12"))
            ]
        );
        // 1.00 over thirds: 33 each and the cent to the smallest cell; exact 1/3 weights.
        let third = BigRational::new(BigInt::from(1), BigInt::from(3));
        let w: Weights = BTreeMap::from([
            (cell("b", ""), third.clone()),
            (cell("a", "z"), third.clone()),
            (cell("a", "y"), third),
        ]);
        let got: Vec<String> = split(d("1.00"), &w)
            .into_iter()
            .map(|(c, a)| format!("{}/{} {a}", c.0, c.1))
            .collect();
        assert_eq!(got, ["a/y 0.34", "a/z 0.33", "b/ 0.33"]);
        // Exact thirds of 3.00: no cent left to give.
        let w: Weights = BTreeMap::from([
            (cell("a", ""), rational(d("7200"))),
            (cell("b", ""), rational(d("7200"))),
            (cell("c", ""), rational(d("7200"))),
        ]);
        assert!(split(d("3.00"), &w).iter().all(|(_, a)| *a == d("1.00")));
    }
}
