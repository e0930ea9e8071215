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

use crate::events::event::Class;
use crate::ledger::AccountLedger;
use crate::ledger::profile::Profiles;
use crate::pricing::rating_context::RatingContext;
use rust_decimal::Decimal;

/// The ledger's profiles when the account's period can be rated from them: see the module.
/// `traced`: the invoice is allocated (section 18), which reads keys.
pub fn summed<'l>(
    ctx: &RatingContext<'_>,
    ledger: &'l AccountLedger,
    traced: bool,
) -> Option<&'l Profiles> {
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
    profiles
        .of(Class::OnDemand)
        .keys()
        .all(|sku| plain(sku))
        .then_some(profiles)
}

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
    use crate::pricing::rating::rate_account;

    fn book(minimum: i64) -> PriceBook {
        PriceBook::from_toml(&format!(
            "currency = \"CNY\"\ntimezone = \"UTC\"\n[skus.gpu]\nrate_per_hour = \"1000000\"\nminimum_seconds = {minimum}\n"
        ))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The magnitude bound from the sum is the bound from the keys: 10 s at 10^12 units and a
    /// minimum of 3,600 s bound the period at (10 + 3,600) x 10^12 x 10^6 / 3,600 ≈ 1.0028 x
    /// 10^18, past the 10^18 an invoice may carry; without the minimum's term it would be
    /// 2.8 x 10^15. Both ways refuse with the same bound; with a 60 s minimum both rate.
    #[test]
    fn the_magnitude_bound_counts_the_minimum_at_every_key_largest_quantity() {
        let period = Period::month("2026-11", chrono_tz::Tz::UTC).unwrap_or_else(|e| panic!("{e}"));
        let mut ledger = AccountLedger::new();
        let q = Decimal::from(1_000_000_000_000i64);
        ledger.insert_usage(
            "L",
            "g0",
            "gpu",
            Class::OnDemand,
            period.start,
            period.start + 10,
            q,
        );
        for (minimum, refused) in [(3600, true), (60, false)] {
            let book = book(minimum);
            let ctx = RatingContext::new(&book, period.clone());
            assert!(summed(&ctx, &ledger, false).is_some());
            let from_sum = rate_account(&ctx, "a", Some(&ledger), Decimal::ZERO);
            let by_keys = RatingContext::new(&book, period.clone()).by_keys();
            let from_keys = rate_account(&by_keys, "a", Some(&ledger), Decimal::ZERO);
            assert_eq!(from_sum.is_err(), refused, "{from_sum:?}");
            assert_eq!(format!("{from_sum:?}"), format!("{from_keys:?}"));
        }
    }
}
