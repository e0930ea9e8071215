//! Rating on-demand usage from the keys' sum (issue 29, part 2): when no rule of the account's
//! period reads its keys one by one, rating reads the ledger's per-sku [`Steps`] (kept as the
//! ledger changes, [`crate::ledger::profile`]) instead of every key's runs, so that re-rating
//! an account after a batch costs the steps of its usage, not its key count.
//!
//! Why the invoice is the same: the on-demand walk (sections 4.1 to 4.4, 12, 13) reads only
//! `U(t)`, the sum over keys of their left runs, and cuts its segments where `U` changes; the
//! sum's steps are those changes (an instant where keys' changes cancel out is no cut, which
//! splits no amount: covered seconds and package draws add up, tiers fill by cumulated
//! overflow). The magnitude bound's usage term is `Σ U(t)` over the period. Every other rule
//! that reads keys is excluded by [`summed`]: a sku with a lease-state rate (section 8: left
//! runs differ from runs), a minimum charge (4.6) or a billing increment (15) in use, spot
//! usage (9), SLA compensation with faults (10: every key's largest quantity) and the
//! allocation of a payer's invoice (18). `tests/properties.rs` checks the equality on random
//! workloads against [`RatingContext::by_keys`].

use crate::events::event::Class;
use crate::ledger::AccountLedger;
use crate::ledger::profile::{Profiles, Steps};
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
        ctx.book.skus.get(sku).is_none_or(|s| {
            s.minimum_seconds.is_none() && s.increment_seconds.is_none() && s.state_rates.is_empty()
        })
    };
    profiles
        .of(Class::OnDemand)
        .keys()
        .all(|sku| plain(sku))
        .then_some(profiles)
}

/// The magnitude bound's usage term (`magnitude::usage_bound` without minimum charges,
/// increments or SLA, which [`summed`] excludes): every on-demand unit-second of the period.
pub(crate) fn usage_bound(ctx: &RatingContext<'_>, profiles: &Profiles) -> Option<Decimal> {
    let (start, end) = (ctx.period.start, ctx.period.end);
    profiles
        .of(Class::OnDemand)
        .values()
        .try_fold(Decimal::ZERO, |sum, steps: &Steps| {
            sum.checked_add(steps.unit_seconds(start, end)?)
        })
}
