//! On-demand usage of one sku: billing-semantics.md sections 4.1 to 4.4, with packages
//! (section 12) drawn after reservations and subscriptions (section 13) counting in `R(s)`.
//!
//! Works on segments rather than seconds: the time line is cut wherever usage, reserved
//! capacity, a package's validity or an off-peak window changes, so `U`, `R`, the valid
//! packages and `m` are constant over each segment and the walk in time order costs one step
//! per change, not per second. Within a segment each second's overflow is the same, so
//! drawing packages "second by second, earliest `to` first, each while its balance lasts"
//! comes to: the first valid package takes `min(balance, overflow)` of the segment's overflow,
//! the next takes from what is left, and so on; the rest goes on to off-peak and tiers.
//!
//! Packages carry their balances across periods: when a package of the sku starts before the
//! period, the walk starts at the earliest such `from` and draws (without billing) the
//! earlier seconds first, so the balance at the period's start is what they left.

use crate::common::money::usage_amount;
use crate::ledger::Runs;
use crate::ledger::profile::SkuProfile;
use crate::pricing::invoice::{Component, Line};
use crate::pricing::pricebook::{Package, Sku};
use crate::pricing::rating_context::RatingContext;
use crate::pricing::tiers::{Tier, TierMode, split_graduated, volume_tier};
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// What rating one on-demand sku of an account reads.
#[derive(Debug, Clone)]
pub struct SkuInputs<'a> {
    pub name: &'a str,
    pub sku: &'a Sku,
    pub tiers: Vec<Tier>,
    /// The account's `on_demand` usage of the sku.
    pub usage: SkuUsage<'a>,
    /// Reserved capacity `[from, to)` x quantity: reservations and subscriptions.
    pub capacity: Vec<(i64, i64, Decimal)>,
    /// The account's packages of the sku, in drawing order: earliest `to`, then smaller `id`
    /// (then account order, section 18).
    pub packages: Vec<&'a Package>,
    /// More instants to cut the walk at (section 18: where a key's tag changes, so that each
    /// segment's usage belongs to one cell); cutting never changes an amount.
    pub cuts: Vec<i64>,
    /// Whether to record where each segment's overflow went ([`OnDemandTrace`]).
    pub trace: bool,
}

/// What rating reads of an account's `on_demand` usage of one sku.
#[derive(Debug, Clone)]
pub enum SkuUsage<'a> {
    /// The left runs (section 8) of each key.
    Keys(Vec<&'a Runs>),
    /// Their sum, when no rule reads the keys one by one ([`crate::pricing::summed`]): the
    /// sku prices no lease state, so left runs are whole runs.
    Summed(&'a SkuProfile),
}

impl Default for SkuUsage<'_> {
    fn default() -> Self {
        SkuUsage::Keys(Vec::new())
    }
}

impl<'a> SkuUsage<'a> {
    /// The keys' left runs one by one; none for a sum, which is rated only for a sku whose
    /// billing increment is unset ([`crate::pricing::summed`]).
    pub fn keys(&self) -> &[&'a Runs] {
        match self {
            SkuUsage::Keys(k) => k,
            SkuUsage::Summed(_) => &[],
        }
    }

    /// Section 4.6: the unit-seconds the keys owe in `period` for a minimum of `minimum`
    /// seconds.
    pub fn minimum_owed(&self, minimum: i64, period: &crate::pricing::period::Period) -> Decimal {
        match self {
            SkuUsage::Keys(keys) => keys
                .iter()
                .filter_map(|r| crate::pricing::minimum::owed_unit_seconds(r, minimum, period))
                .sum(),
            SkuUsage::Summed(p) => p.minimum_owed(minimum, period.start, period.end),
        }
    }

    /// Unit-seconds inside `[from, to)`.
    pub fn unit_seconds(&self, from: i64, to: i64) -> Decimal {
        match self {
            SkuUsage::Keys(keys) => keys
                .iter()
                .flat_map(|r| r.clipped(from, to))
                .map(|r| r.unit_seconds())
                .sum(),
            // The magnitude bound held: no sum of the rating overflows.
            SkuUsage::Summed(p) => p.steps().unit_seconds(from, to).unwrap_or(Decimal::MAX),
        }
    }

    /// The changes of the summed usage `U` over `[from, to)`, as `(instant, dU, 0)`.
    fn changes(&self, from: i64, to: i64, out: &mut Vec<(i64, Decimal, Decimal)>) {
        match self {
            SkuUsage::Keys(keys) => {
                for run in keys.iter().flat_map(|r| r.clipped(from, to)) {
                    out.push((run.from, run.quantity, Decimal::ZERO));
                    out.push((run.to, -run.quantity, Decimal::ZERO));
                }
            }
            SkuUsage::Summed(p) => {
                out.extend(
                    p.steps()
                        .changes(from, to)
                        .map(|(t, d)| (t, d, Decimal::ZERO)),
                );
            }
        }
    }
}

/// Section 18: where the overflow of each segment of the period went, for the allocation of
/// the `on_demand` lines over the keys in use at that segment.
#[derive(Debug, Clone, Default)]
pub struct OnDemandTrace {
    pub parts: Vec<TracePart>,
    /// With volume tiers: the tier the period's total chose (parts have `tier` `None`).
    pub volume_tier: Option<usize>,
}

/// Overflow unit-seconds of the segment starting at `t` that went to the `on_demand` line of
/// (`tier`, `multiplier`).
#[derive(Debug, Clone)]
pub struct TracePart {
    pub t: i64,
    /// `None`: volume tiers (the tier is [`OnDemandTrace::volume_tier`]).
    pub tier: Option<usize>,
    pub multiplier: Decimal,
    pub unit_seconds: Decimal,
}

/// Sums of the walk over the period.
struct Acc<'c, 'a> {
    ctx: &'c RatingContext<'a>,
    name: &'c str,
    sku: &'c Sku,
    tiers: &'c [Tier],
    packages: &'c [&'c Package],
    /// Balance of each package (unit-seconds), falling in time order.
    balance: Vec<Decimal>,
    /// Unit-seconds each package covered in the period.
    drawn: Vec<Decimal>,
    covered: Decimal,
    /// `A`: overflow unit-seconds that reached the tiers so far.
    filled: Decimal,
    /// (tier, multiplier) -> unit-seconds. Multipliers compare as numbers.
    buckets: BTreeMap<(usize, Decimal), Decimal>,
    volume: BTreeMap<Decimal, Decimal>,
    trace: Option<OnDemandTrace>,
}

impl Acc<'_, '_> {
    /// One segment `[t, next)` with usage `u` and reserved capacity `r`.
    fn segment(&mut self, t: i64, next: i64, u: Decimal, r: Decimal) {
        let period = &self.ctx.period;
        let in_period = t >= period.start;
        let seconds = Decimal::from(next - t);
        let c = u.min(r);
        if in_period {
            self.covered += c * seconds;
        }
        let mut overflow = (u - c) * seconds;
        for (i, p) in self.packages.iter().enumerate() {
            if overflow.is_zero() {
                break;
            }
            if p.from <= t && t < p.to && self.balance[i] > Decimal::ZERO {
                let take = self.balance[i].min(overflow);
                self.balance[i] -= take;
                overflow -= take;
                if in_period {
                    self.drawn[i] += take;
                }
            }
        }
        if !in_period || overflow.is_zero() {
            return;
        }
        let segment = self.ctx.schedule.segment_of(t);
        let m = self
            .ctx
            .schedule
            .multiplier(&self.ctx.book.offpeak, self.name, segment);
        match self.sku.tier_mode {
            TierMode::Volume if self.sku.tiers.len() > 1 => {
                *self.volume.entry(m).or_default() += overflow;
                if let Some(trace) = &mut self.trace {
                    trace.parts.push(TracePart {
                        t,
                        tier: None,
                        multiplier: m,
                        unit_seconds: overflow,
                    });
                }
            }
            _ => split_graduated(self.tiers, self.filled, overflow, |tier, part| {
                *self.buckets.entry((tier, m)).or_default() += part;
                if let Some(trace) = &mut self.trace {
                    trace.parts.push(TracePart {
                        t,
                        tier: Some(tier),
                        multiplier: m,
                        unit_seconds: part,
                    });
                }
            }),
        }
        self.filled += overflow;
    }

    fn into_lines(mut self, lines: &mut Vec<Line>) -> Option<OnDemandTrace> {
        if !self.volume.is_empty() {
            let tier = volume_tier(self.tiers, self.filled);
            if let Some(trace) = &mut self.trace {
                trace.volume_tier = Some(tier);
            }
            for (m, q) in std::mem::take(&mut self.volume) {
                *self.buckets.entry((tier, m)).or_default() += q;
            }
        }
        for ((tier, m), q) in &self.buckets {
            let mut line = Line::usage(
                Component::OnDemand,
                self.name,
                *tier,
                *q,
                usage_amount(*q, self.tiers[*tier].rate, *m),
            );
            line.multiplier = Some(*m);
            lines.push(line);
        }
        lines.push(Line::usage(
            Component::ReservedUsage,
            self.name,
            0,
            self.covered,
            Decimal::ZERO,
        ));
        for (p, drawn) in self.packages.iter().zip(&self.drawn) {
            let mut line =
                Line::usage(Component::PackageUsage, self.name, 0, *drawn, Decimal::ZERO);
            line.package = Some(p.id.clone());
            lines.push(line);
        }
        self.trace
    }
}

/// Sections 4.1 to 4.4 and 12 for one sku: its `on_demand`, `reserved_usage` and
/// `package_usage` lines; with `inputs.trace`, where the overflow went (section 18).
pub fn rate_sku(
    ctx: &RatingContext<'_>,
    inputs: &SkuInputs<'_>,
    lines: &mut Vec<Line>,
) -> Option<OnDemandTrace> {
    let period = &ctx.period;
    let walk_start = inputs
        .packages
        .iter()
        .map(|p| p.from)
        .fold(period.start, i64::min);
    // Changes of U and R over time: (instant, dU, dR).
    let mut deltas: Vec<(i64, Decimal, Decimal)> = Vec::new();
    inputs.usage.changes(walk_start, period.end, &mut deltas);
    for &(from, to, q) in &inputs.capacity {
        let (a, b) = (from.max(walk_start), to.min(period.end));
        if a < b {
            deltas.push((a, Decimal::ZERO, q));
            deltas.push((b, Decimal::ZERO, -q));
        }
    }
    deltas.sort_unstable_by_key(|d| d.0);
    let mut cuts: Vec<i64> = ctx.schedule.cuts().to_vec();
    cuts.push(period.start);
    for p in &inputs.packages {
        cuts.extend([p.from, p.to]);
    }
    cuts.extend(inputs.cuts.iter().copied());
    cuts.sort_unstable();
    cuts.dedup();
    let mut acc = Acc {
        ctx,
        name: inputs.name,
        sku: inputs.sku,
        tiers: &inputs.tiers,
        packages: &inputs.packages,
        balance: inputs.packages.iter().map(|p| p.unit_seconds).collect(),
        drawn: vec![Decimal::ZERO; inputs.packages.len()],
        covered: Decimal::ZERO,
        filled: Decimal::ZERO,
        buckets: BTreeMap::new(),
        volume: BTreeMap::new(),
        trace: inputs.trace.then(OnDemandTrace::default),
    };
    segments(&deltas, &cuts, walk_start, period.end, |t, next, u, r| {
        acc.segment(t, next, u, r)
    });
    acc.into_lines(lines)
}

/// Calls `f(t, next, u, r)` for every segment of `[from, to)` with usage, cut at every delta
/// and every cut; `u` and `r` are the running sums of the deltas (sorted by instant).
fn segments(
    deltas: &[(i64, Decimal, Decimal)],
    cuts: &[i64],
    from: i64,
    to: i64,
    mut f: impl FnMut(i64, i64, Decimal, Decimal),
) {
    let (mut u, mut r) = (Decimal::ZERO, Decimal::ZERO);
    let (mut di, mut ci) = (0, 0);
    let mut t = from;
    while t < to {
        while di < deltas.len() && deltas[di].0 <= t {
            u += deltas[di].1;
            r += deltas[di].2;
            di += 1;
        }
        if di >= deltas.len() && u.is_zero() {
            break;
        }
        while ci < cuts.len() && cuts[ci] <= t {
            ci += 1;
        }
        let next_delta = deltas.get(di).map_or(to, |d| d.0);
        let next_cut = cuts.get(ci).copied().unwrap_or(to);
        let next = next_delta.min(next_cut).min(to);
        if u > Decimal::ZERO {
            f(t, next, u, r);
        }
        t = next;
    }
}
