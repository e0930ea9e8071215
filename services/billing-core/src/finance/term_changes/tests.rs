//! The term change rules and the closed-period re-rating, with worked dates.

use crate::finance::term_changes::{
    Consumed, check_change, dated_into, ended_subscription_cycles, terms_for_closed_period,
};
use crate::pricing::pricebook::{
    AccountTerm, Charge, Cycle, ParsedTerm, PriceBook, Subscription, TermKind,
};
use chrono_tz::Tz;
use rust_decimal::Decimal;

const BOOK: &str =
    "currency = \"CNY\"\ntimezone = \"UTC\"\n[skus.\"gpu\"]\nrate_per_hour = \"24.00\"\n";
/// 2026-11-01T00:00:00Z and 2026-12-01T00:00:00Z.
const NOV: (i64, i64) = (1_793_491_200, 1_796_083_200);

fn term(kind: TermKind, id: &str, body: serde_json::Value) -> AccountTerm {
    AccountTerm {
        account: "acme".into(),
        kind,
        term_id: id.into(),
        fields: body.as_object().unwrap().clone(),
    }
}

#[test]
fn a_closed_period_keeps_its_terms_unless_a_change_is_dated_into_it() {
    let book = PriceBook::from_toml(BOOK).unwrap();
    let discount = term(
        TermKind::Discounts,
        "d",
        serde_json::json!({"percent": "10"}),
    );
    let undated = term(
        TermKind::Credits,
        "c0",
        serde_json::json!({"amount": "5.00"}),
    );
    let only_to = term(
        TermKind::Credits,
        "c1",
        serde_json::json!({"amount": "5.00", "to": "2027-01-01T00:00:00Z"}),
    );
    let nov = term(
        TermKind::Credits,
        "c2",
        serde_json::json!({"amount": "5.00", "from": "2026-11-01T00:00:00Z"}),
    );
    let dec = term(
        TermKind::Credits,
        "c3",
        serde_json::json!({"amount": "5.00", "from": "2026-12-01T00:00:00Z"}),
    );
    // Set after the close: only the credit dated into November reaches it.
    // Sorted by (account, kind, term id): discounts before credits.
    let current = vec![
        discount.clone(),
        undated.clone(),
        only_to.clone(),
        nov.clone(),
        dec.clone(),
    ];
    assert_eq!(
        terms_for_closed_period(&book, NOV, &[], &current),
        vec![nov.clone()]
    );
    // Nothing changed since the close: the terms it was closed with.
    assert_eq!(
        terms_for_closed_period(&book, NOV, &current, &current),
        current
    );
    // Ended after the close: an undated discount stays, a November credit goes.
    assert_eq!(
        terms_for_closed_period(&book, NOV, &[nov.clone(), discount.clone()], &[]),
        vec![discount.clone()]
    );
    // Changed after the close: the undated discount keeps its old percent.
    let more = term(
        TermKind::Discounts,
        "d",
        serde_json::json!({"percent": "30"}),
    );
    assert_eq!(
        terms_for_closed_period(&book, NOV, std::slice::from_ref(&discount), &[more]),
        vec![discount]
    );
    // A reservation from mid-November reaches it; one from December does not.
    let res = |from: &str| {
        term(
            TermKind::Reservations,
            "r",
            serde_json::json!({"sku": "gpu", "quantity": "1", "from": from,
                "to": "2027-01-01T00:00:00Z", "rate_per_hour": "10.00"}),
        )
    };
    let mid = res("2026-11-15T00:00:00Z");
    assert_eq!(
        terms_for_closed_period(&book, NOV, &[], std::slice::from_ref(&mid)),
        vec![mid]
    );
    assert!(terms_for_closed_period(&book, NOV, &[], &[res("2026-12-01T00:00:00Z")]).is_empty());
}

fn charge(at: i64, amount: i64) -> ParsedTerm {
    ParsedTerm::Charge(Charge {
        index: 0,
        account: "acme".into(),
        id: "migration".into(),
        description: None,
        amount: Decimal::from(amount),
        at,
        region: None,
    })
}

/// A charge dated 2026-11-20 in a closed November was invoiced: it may neither change nor
/// be ended, whatever the clock says; the same charge again is no change. While November
/// is open (only October closed) anything goes, even after its `at`.
#[test]
fn a_charge_in_a_closed_period_stays_as_it_was_invoiced() {
    let at = NOV.0 + 19 * 86_400;
    let now = NOV.1 + 86_400;
    let tz = Tz::UTC;
    let oct = (NOV.0 - 31 * 86_400, NOV.0);
    let closed = [oct, NOV];
    let facts = Consumed {
        drawn: Decimal::ZERO,
        closed: &closed,
        invoiced: false,
    };
    let old = charge(at, 800);
    let refused = check_change(Some(&old), Some(&charge(at, 900)), now, tz, facts);
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.0.contains("2026-11-01T00:00:00Z")),
        "{refused:?}"
    );
    assert!(check_change(Some(&old), Some(&charge(NOV.1 + 5, 800)), now, tz, facts).is_err());
    assert!(check_change(Some(&old), None, now, tz, facts).is_err());
    let mut again = charge(at, 800);
    if let ParsedTerm::Charge(c) = &mut again {
        c.index = 7;
    }
    assert!(check_change(Some(&old), Some(&again), now, tz, facts).is_ok());
    let open = Consumed {
        drawn: Decimal::ZERO,
        closed: &[oct],
        invoiced: false,
    };
    assert!(check_change(Some(&old), Some(&charge(at, 900)), now, tz, open).is_ok());
    assert!(check_change(Some(&old), None, now, tz, open).is_ok());
    // A new charge may be dated into a closed period: it reaches it as an adjustment.
    assert!(check_change(None, Some(&old), now, tz, facts).is_ok());
    let book = PriceBook::from_toml(BOOK).unwrap();
    let term = term(
        TermKind::Charges,
        "migration",
        serde_json::json!({"amount": "800.00", "at": "2026-11-20T00:00:00Z"}),
    );
    assert!(dated_into(&book, &term, NOV));
    assert!(!dated_into(&book, &term, oct));
}

/// Section 16's dates make a discount set by command dated like a credit: one from
/// 2026-11-05 to 2026-12-01 reaches a closed November, not October or December; one with
/// only `to`, or scoped to skus without dates, stands for no period.
#[test]
fn a_discount_with_from_is_dated_into_the_periods_it_overlaps() {
    let book = PriceBook::from_toml(BOOK).unwrap();
    let oct = (NOV.0 - 31 * 86_400, NOV.0);
    let dec = (NOV.1, NOV.1 + 31 * 86_400);
    let dated = term(
        TermKind::Discounts,
        "nov",
        serde_json::json!({"percent": "10", "from": "2026-11-05T00:00:00Z",
            "to": "2026-12-01T00:00:00Z"}),
    );
    assert!(dated_into(&book, &dated, NOV));
    assert!(!dated_into(&book, &dated, oct) && !dated_into(&book, &dated, dec));
    for body in [
        serde_json::json!({"percent": "10", "to": "2026-12-01T00:00:00Z"}),
        serde_json::json!({"percent": "10", "skus": ["gpu"]}),
    ] {
        assert!(!dated_into(
            &book,
            &term(TermKind::Discounts, "d", body),
            NOV
        ));
    }
}

fn weekly(cycles: u32) -> ParsedTerm {
    ParsedTerm::Subscription(Subscription {
        index: 0,
        account: "acme".into(),
        id: "s".into(),
        sku: "gpu".into(),
        quantity: Decimal::ONE,
        cycle: Cycle::Week,
        start: 1_000_000,
        cycles,
        price: Decimal::from(100),
        auto_renew: false,
        end: None,
        refund: crate::pricing::pricebook::Refund::None,
        region: None,
    })
}

#[test]
fn a_started_weekly_subscription_loses_only_cycles_not_started() {
    // Day 9 of the subscription: cycles 0 and 1 have started.
    let now = 1_000_000 + 9 * 86_400;
    let tz = Tz::UTC;
    let z = Consumed::default();
    assert!(check_change(Some(&weekly(4)), Some(&weekly(2)), now, tz, z).is_ok());
    assert!(check_change(Some(&weekly(4)), Some(&weekly(6)), now, tz, z).is_ok());
    assert!(check_change(Some(&weekly(4)), Some(&weekly(1)), now, tz, z).is_err());
    let ParsedTerm::Subscription(s) = weekly(4) else {
        unreachable!()
    };
    assert_eq!(ended_subscription_cycles(&s, tz, now), Some(2));
    assert_eq!(ended_subscription_cycles(&s, tz, 999_999), None);
    // Before the start anything goes.
    assert!(check_change(Some(&weekly(4)), None, 999_999, tz, z).is_ok());
}

/// Section 17 by command: a started subscription (day 9 of a weekly one here) keeps what
/// it sold (sku, quantity, cycle, start, price, region), but may be ended early with its
/// refund, its end moved or dropped, and its renewal turned on or off, until its end has
/// passed; an `end` before now is refused (elapsed seconds stay billed).
#[test]
fn a_started_subscription_may_be_ended_early_with_a_refund() {
    let now = 1_000_000 + 9 * 86_400;
    let (tz, z) = (Tz::UTC, Consumed::default());
    let changed = |from: &ParsedTerm, f: &dyn Fn(&mut Subscription)| {
        let ParsedTerm::Subscription(mut s) = from.clone() else {
            unreachable!()
        };
        f(&mut s);
        ParsedTerm::Subscription(s)
    };
    let plan = weekly(4);
    let refused = |new: &ParsedTerm, old: &ParsedTerm| {
        check_change(Some(old), Some(new), now, tz, z).map_err(|e| e.0)
    };
    for sold in [
        changed(&plan, &|s| s.region = Some("us-east".into())),
        changed(&plan, &|s| s.price = Decimal::from(90)),
        changed(&plan, &|s| s.start += 1),
    ] {
        assert_eq!(
            refused(&sold, &plan),
            Err("the subscription has started: only `cycles`, `end`, `refund` and `auto_renew` may change".to_string())
        );
        assert!(check_change(Some(&plan), Some(&sold), 999_999, tz, z).is_ok());
    }
    let ended_now = changed(&plan, &|s| {
        s.end = Some(now);
        s.refund = crate::pricing::pricebook::Refund::Prorata;
    });
    assert_eq!(refused(&ended_now, &plan), Ok(()));
    assert_eq!(
        refused(&changed(&plan, &|s| s.auto_renew = true), &plan),
        Ok(())
    );
    let before_now = changed(&plan, &|s| s.end = Some(now - 1));
    assert_eq!(
        refused(&before_now, &plan),
        Err("`end` = 1970-01-21T13:46:39Z is before now (1970-01-21T13:46:40Z): a started subscription ends now or later (elapsed seconds stay billed)".to_string())
    );
    // Once its end has passed, the refund was given: only `cycles` may change.
    let ended = changed(&plan, &|s| s.end = Some(now - 86_400));
    let resumed = changed(&ended, &|s| s.end = None);
    assert_eq!(
        refused(&resumed, &ended),
        Err("the subscription ended at 1970-01-20T13:46:40Z: only `cycles` may change".to_string())
    );
    assert_eq!(refused(&changed(&ended, &|s| s.cycles = 3), &ended), Ok(()));
}
