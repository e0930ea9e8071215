//! One example notice per event type, for the README and the API's documentation: each is
//! produced by the rule that emits it (not written by hand), so it shows the real payload.

use crate::notify::arrears::{ArrearsPolicy, ArrearsState, Observed, step};
use crate::notify::balance::{BalanceAlert, BalanceObservation, BalanceState};
use crate::notify::budget::{Budget, BudgetAction, BudgetObservation, BudgetScope, BudgetState};
use crate::notify::expiry::{Dated, ExpiryState, ReminderPolicy, TermKind, reminders};
use crate::notify::notice::{Notice, NoticeKind};
use crate::pricing::period::Period;
use rust_decimal::Decimal;

/// 2026-11-16T00:00:00Z, the examples' `now`.
const NOW: i64 = 1_794_787_200;
const DAY: i64 = 86_400;

/// The example of `kind`: account `acme`, November 2026 (UTC).
pub fn example(kind: NoticeKind) -> Notice {
    let picked = match kind {
        NoticeKind::BudgetCrossed | NoticeKind::BudgetResolved => budget_examples(),
        NoticeKind::BalanceLow | NoticeKind::BalanceResolved => balance_examples(),
        NoticeKind::TermExpiring | NoticeKind::SubscriptionRenewing => reminder_examples(),
        NoticeKind::ArrearsStarted
        | NoticeKind::ArrearsStopped
        | NoticeKind::ArrearsReleased
        | NoticeKind::ArrearsCleared => arrears_examples(),
        NoticeKind::Test => vec![Notice::test("acme", NOW, "req_01JEXAMPLE")],
    };
    let found = picked.into_iter().find(|n| n.kind == kind);
    // Every branch above emits its kinds (a test holds them to it).
    found.unwrap_or_else(|| Notice::test("acme", NOW, "missing-example"))
}

fn budget_examples() -> Vec<Notice> {
    let b = Budget {
        id: "b1".into(),
        account: "acme".into(),
        scope: BudgetScope::Account("acme".into()),
        amount: Decimal::from(1000),
        thresholds: [50, 80, 100].map(Decimal::from).to_vec(),
        forecast: true,
        action: BudgetAction::Stop,
    };
    let Ok(period) = Period::month("2026-11", chrono_tz::UTC) else {
        return Vec::new();
    };
    let obs = |cost: i64, now: i64| BudgetObservation {
        period: &period,
        cost: Decimal::from(cost),
        burn_rate_per_second: Decimal::ZERO,
        now,
    };
    let first = crate::notify::budget_eval::evaluate(&b, &BudgetState::default(), &obs(820, NOW));
    let second = crate::notify::budget_eval::evaluate(&b, &first.state, &obs(700, NOW + DAY));
    let mut out = first.notices;
    out.retain(|n| n.payload["measure"] == "actual" && n.payload["threshold_percent"] == "80");
    out.extend(second.notices);
    out
}

fn balance_examples() -> Vec<Notice> {
    let alert = BalanceAlert {
        low_amount: None,
        low_hours: Some(Decimal::from(2)),
    };
    let obs = |balance: i64, now: i64| BalanceObservation {
        balance: Decimal::from(balance),
        burn_rate_per_second: Decimal::new(1, 2),
        now,
    };
    let ev = crate::notify::balance::evaluate;
    let (st, mut out) = ev("acme", &alert, &BalanceState::default(), &obs(50, NOW));
    out.extend(ev("acme", &alert, &st, &obs(500, NOW + 3600)).1);
    out
}

fn reminder_examples() -> Vec<Notice> {
    let terms = [
        Dated {
            kind: TermKind::Package,
            id: "pk-2026-11".into(),
            account: "acme".into(),
            at: NOW + 3 * DAY,
            price: None,
            remaining: Some(Decimal::from(36_000)),
        },
        Dated {
            kind: TermKind::Renewal,
            id: "sub-a100-x8".into(),
            account: "acme".into(),
            at: NOW + 7 * DAY,
            price: Some(Decimal::from(30_000)),
            remaining: None,
        },
    ];
    let policy = ReminderPolicy::default();
    let wallet = Decimal::from(12_000);
    reminders(&policy, &terms, wallet, &ExpiryState::default(), NOW).1
}

fn arrears_examples() -> Vec<Notice> {
    let policy = ArrearsPolicy::default();
    let owes = Observed {
        balance: Decimal::new(-4_250, 2),
        overdue: false,
    };
    let (st, mut out) = step(&ArrearsState::new("acme"), &policy, &owes, NOW);
    let (st, more) = step(&st, &policy, &owes, NOW + 16 * DAY);
    out.extend(more);
    let paid = Observed {
        balance: Decimal::from(100),
        overdue: false,
    };
    out.extend(step(&st, &policy, &paid, NOW + 17 * DAY).1);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_an_example_of_its_own_kind() {
        for kind in NoticeKind::ALL {
            let n = example(kind);
            assert_eq!(n.kind, kind, "{kind}");
            assert_eq!(n.account, "acme");
        }
        let crossed = example(NoticeKind::BudgetCrossed);
        assert_eq!(crossed.key, "budget:b1:2026-11:80:actual:crossed#1");
        assert_eq!(crossed.payload["cost"], "820.00");
        let resolved = example(NoticeKind::BudgetResolved);
        assert_eq!(resolved.key, "budget:b1:2026-11:80:actual:resolved#1");
        let released = example(NoticeKind::ArrearsReleased);
        assert_eq!(
            released.at,
            NOW + 16 * DAY,
            "a day of grace, 15 days stopped"
        );
        assert_eq!(
            example(NoticeKind::SubscriptionRenewing).payload["wallet_covers"],
            false
        );
        assert_eq!(
            example(NoticeKind::BalanceLow).payload["message"],
            "余额可用约 1.3 小时"
        );
    }

    #[test]
    fn the_examples_instant_is_2026_11_16() {
        assert_eq!(
            crate::common::timestamp::format_secs(NOW),
            "2026-11-16T00:00:00Z"
        );
    }
}
