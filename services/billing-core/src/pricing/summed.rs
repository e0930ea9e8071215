//! Rating on-demand usage from the keys' sum (issue 29, part 2): when no rule of the account's
//! period reads its keys one by one, rating reads the ledger's per-sku profiles (kept as the
//! ledger changes, [`crate::ledger::profile`]) instead of every key's runs, so that re-rating
//! an account after a batch costs the steps of its usage and its short keys, not its key
//! count.
//!
//! Why the invoice is the same: the on-demand walk (sections 4.1 to 4.4, 12, 13) reads only
//! `U(t)`, the sum over keys of their left runs, and cuts its segments where `U` changes; the
//! sum's steps are those changes (an instant where keys' changes cancel out is no cut, which
//! splits no amount: covered seconds and package draws add up, tiers fill by cumulated
//! overflow). The minimum charge (4.6) reads each key's covered seconds, first second and
//! largest quantity: the profile counts keys by those three. The magnitude bound's usage term
//! is `Σ U(t)` over the period plus each sku's minimum times its keys' largest quantities.
//! Every other rule that reads keys is excluded by [`summed`]: a sku with a lease-state rate
//! (section 8: left runs differ from runs) or a billing increment (15) in use, spot usage (9),
//! SLA compensation with faults (10: every key's largest quantity over the period) and the
//! allocation of a payer's invoice (18). `tests/properties.rs` checks the equality on random
//! workloads against [`RatingContext::by_keys`].
//!
//! The two ways add the same numbers in different groupings (a segment rated whole or in two
//! pieces; unit-seconds summed by segment or by run), which is the same only while every sum
//! is exact. It is up to [`EXACT_UNIT_SECONDS`] of usage (and minimum charges) in the period:
//! quantities and book terms carry at most 15 decimals, so every value the walk adds or
//! subtracts fits a `Decimal`'s 28 digits exactly; a tier bound or package balance beyond
//! that is never reached, so its rounding takes nothing. An account past it is rated key by
//! key.

use crate::events::event::Class;
use crate::ledger::AccountLedger;
use crate::ledger::profile::Profiles;
use crate::pricing::rating_context::RatingContext;
use rust_decimal::Decimal;

/// An account's period rated from its keys' sum.
#[derive(Debug, Clone, Copy)]
pub struct Summed<'l> {
    pub profiles: &'l Profiles,
    /// The magnitude bound's usage term ([`usage_bound`]), which the gate computes anyway.
    pub usage_bound: Decimal,
}

/// The ledger's profiles when the account's period can be rated from them: see the module.
/// `traced`: the invoice is allocated (section 18), which reads keys.
pub fn summed<'l>(
    ctx: &RatingContext<'_>,
    ledger: &'l AccountLedger,
    traced: bool,
) -> Option<Summed<'l>> {
    let profiles = ledger.profiles();
    let sla = ctx.book.sla.compensation_multiplier.is_some() && !ctx.faults.is_empty();
    if ctx.by_keys || traced || sla || !profiles.of(Class::Spot).is_empty() {
        return None;
    }
    let plain = |sku: &str| {
        ctx.book
            .skus
            .get(sku)
            .is_none_or(|s| s.increment_seconds.is_none() && s.state_rates.is_empty())
    };
    if !profiles.of(Class::OnDemand).keys().all(|sku| plain(sku)) {
        return None;
    }
    let usage_bound = usage_bound(ctx, profiles).filter(|b| *b <= EXACT_UNIT_SECONDS)?;
    Some(Summed {
        profiles,
        usage_bound,
    })
}

/// 10^12 unit-seconds (~280 million unit-hours) in a period: below it, every sum of rating
/// from the keys' sum is exact (see the module).
pub const EXACT_UNIT_SECONDS: Decimal = Decimal::from_parts(0xD4A5_1000, 0xE8, 0, false, 0);

/// The magnitude bound's usage term (`magnitude::usage_bound` without increments or SLA,
/// which [`summed`] excludes): every on-demand unit-second of the period, and each sku's
/// minimum charge at every key's largest quantity.
pub(crate) fn usage_bound(ctx: &RatingContext<'_>, profiles: &Profiles) -> Option<Decimal> {
    let (start, end) = (ctx.period.start, ctx.period.end);
    let mut bound = Decimal::ZERO;
    for (sku, p) in profiles.of(Class::OnDemand) {
        bound = bound.checked_add(p.steps().unit_seconds(start, end)?)?;
        let minimum = ctx.book.skus.get(&**sku).and_then(|s| s.minimum_seconds);
        if let Some(m) = minimum.filter(|m| *m > 0) {
            bound = bound.checked_add(p.max_sum().checked_mul(Decimal::from(m))?)?;
        }
    }
    Some(bound)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pricing::period::Period;
    use crate::pricing::pricebook::PriceBook;

    /// The magnitude bound's usage term from the sum is the one from the keys: two keys of
    /// a sku with a 60 s minimum (10 s at 3 units, then 20 s at 0.5 and 40 s at 1.5 units)
    /// and one of a sku the book does not know (100 s at 2): 10 x 3 + 20 x 0.5 + 40 x 1.5 +
    /// 100 x 2 = 300 unit-seconds of usage, and 60 s at each key's largest quantity (3 and
    /// 1.5) = 270 for the minimum: 570 both ways.
    #[test]
    fn the_magnitude_bound_from_the_sum_is_the_one_from_the_keys() {
        let book = PriceBook::from_toml(
            "currency = \"CNY\"\ntimezone = \"UTC\"\n[skus.gpu]\nrate_per_hour = \"10\"\nminimum_seconds = 60\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let period = Period::month("2026-11", chrono_tz::Tz::UTC).unwrap_or_else(|e| panic!("{e}"));
        let ctx = RatingContext::new(&book, period.clone());
        let t = period.start;
        let mut ledger = AccountLedger::new();
        let d = |s: &str| s.parse::<Decimal>().unwrap_or_else(|e| panic!("{e}"));
        ledger.insert_usage("L", "g0", "gpu", Class::OnDemand, t, t + 10, d("3"));
        ledger.insert_usage("L", "g1", "gpu", Class::OnDemand, t, t + 20, d("0.5"));
        ledger.insert_usage("L", "g1", "gpu", Class::OnDemand, t + 20, t + 60, d("1.5"));
        ledger.insert_usage("L", "x", "unknown", Class::OnDemand, t, t + 100, d("2"));
        let s = summed(&ctx, &ledger, false).unwrap_or_else(|| panic!("not summed"));
        assert_eq!(s.usage_bound, d("570"));
        let profiles = s.profiles;
        let from_keys = crate::pricing::magnitude::usage_bound(&ctx, &ledger, false);
        assert_eq!(usage_bound(&ctx, profiles), Some(d("570")));
        assert_eq!(from_keys, Some(d("570")));
    }
}

#[cfg(test)]
mod exact_tests {
    use super::*;
    use crate::pricing::period::Period;
    use crate::pricing::pricebook::PriceBook;

    /// 10^12 is the constant; an account with exactly that many unit-seconds in the period
    /// (10^6 units over 10^6 s) is rated from the sum, one unit more is rated key by key.
    #[test]
    fn an_account_past_the_exact_range_is_rated_key_by_key() {
        assert_eq!(EXACT_UNIT_SECONDS, Decimal::from(1_000_000_000_000i64));
        let book = PriceBook::from_toml(
            "currency = \"CNY\"\ntimezone = \"UTC\"\n[skus.gpu]\nrate_per_hour = \"1\"\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let period = Period::month("2026-11", chrono_tz::Tz::UTC).unwrap_or_else(|e| panic!("{e}"));
        let ctx = RatingContext::new(&book, period.clone());
        let mut ledger = AccountLedger::new();
        let (a, b) = (period.start, period.start + 1_000_000);
        ledger.insert_usage(
            "L",
            "g0",
            "gpu",
            Class::OnDemand,
            a,
            b,
            Decimal::from(1_000_000),
        );
        assert!(summed(&ctx, &ledger, false).is_some());
        ledger.insert_usage("L", "g1", "gpu", Class::OnDemand, a, a + 1, Decimal::ONE);
        assert!(summed(&ctx, &ledger, false).is_none());
    }
}
