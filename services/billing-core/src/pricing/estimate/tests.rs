//! Worked numbers for [`super::estimate`].

use super::*;
fn dec(s: &str) -> Decimal {
    s.parse().unwrap()
}

const BOOK: &str = r#"
currency = "CNY"
timezone = "UTC"

[skus."gpu.flat"]
rate_per_hour = "24.00"
spot_rate_per_hour = "9.60"

[skus."gpu.inc"]
rate_per_hour = "6.00"
increment_seconds = 3600

[skus."gpu.od"]
rate_per_hour = "10.00"

[[offpeak]]
from = "22:00"
to = "06:00"
multiplier = "0.50"

[tax]
rate = "0.06"

[[discounts]]
account = "beta"
percent = "10"

[[credits]]
account = "beta"
amount = "5.00"

[regions."eu"]
currency = "EUR"
timezone = "UTC"
[regions."eu".skus."gpu.flat"]
rate_per_hour = "3.00"
"#;

fn book() -> PriceBook {
    PriceBook::from_toml(BOOK).unwrap()
}

fn lease(sku: &str, start: &str, seconds: i64) -> Lease {
    Lease {
        sku: sku.into(),
        quantity: Decimal::ONE,
        class: Class::OnDemand,
        region: None,
        start: start.into(),
        duration_seconds: seconds,
    }
}

#[test]
fn two_hours_at_24_is_48_plus_6_percent_tax() {
    let e = estimate(
        &book(),
        "acme",
        &lease("gpu.flat", "2026-11-03T10:00:00Z", 7200),
    )
    .unwrap();
    assert_eq!(e.currency, "CNY");
    assert_eq!(e.periods.len(), 1);
    assert_eq!(e.periods[0].lines.len(), 1);
    assert_eq!(e.periods[0].lines[0].component, Component::OnDemand);
    assert_eq!(e.periods[0].lines[0].quantity, dec("7200"));
    assert_eq!(e.subtotal, dec("48.00"));
    assert_eq!(e.discount, dec("0"));
    assert_eq!(e.tax, dec("2.88"));
    assert_eq!(e.total, dec("50.88"));
    assert_eq!(e.end, "2026-11-03T12:00:00Z");
    assert_eq!(e.basis, BASIS);
}

#[test]
fn quantity_multiplies() {
    let mut l = lease("gpu.flat", "2026-11-03T10:00:00Z", 3600);
    l.quantity = dec("4");
    let e = estimate(&book(), "acme", &l).unwrap();
    assert_eq!(e.subtotal, dec("96.00"));
}

#[test]
fn crossing_the_offpeak_boundary_prices_each_side() {
    // 21:00 to 23:00: one hour at 10.00, one at 10.00 x 0.50.
    let e = estimate(
        &book(),
        "acme",
        &lease("gpu.od", "2026-11-03T21:00:00Z", 7200),
    )
    .unwrap();
    let lines = &e.periods[0].lines;
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(e.subtotal, dec("15.00"));
    assert_eq!(e.tax, dec("0.90"));
    assert_eq!(e.total, dec("15.90"));
}

#[test]
fn hourly_increment_bills_an_hour_for_ten_minutes() {
    let e = estimate(
        &book(),
        "acme",
        &lease("gpu.inc", "2026-11-03T10:00:00Z", 600),
    )
    .unwrap();
    let lines = &e.periods[0].lines;
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.component == Component::Increment && l.quantity == dec("3000"))
    );
    assert_eq!(e.subtotal, dec("6.00"));
    assert_eq!(e.total, dec("6.36"));
}

#[test]
fn discounts_apply_and_credits_do_not() {
    let e = estimate(
        &book(),
        "beta",
        &lease("gpu.flat", "2026-11-03T10:00:00Z", 7200),
    )
    .unwrap();
    assert_eq!(e.subtotal, dec("48.00"));
    assert_eq!(e.discount, dec("4.80"));
    assert_eq!(e.tax, dec("2.59"));
    assert_eq!(e.total, dec("45.79"));
}

#[test]
fn spot_uses_the_spot_rate() {
    let mut l = lease("gpu.flat", "2026-11-03T10:00:00Z", 3600);
    l.class = Class::Spot;
    let e = estimate(&book(), "acme", &l).unwrap();
    assert_eq!(e.subtotal, dec("9.60"));
}

#[test]
fn a_region_prices_in_its_currency_and_tax() {
    let mut l = lease("gpu.flat", "2026-11-03T10:00:00Z", 7200);
    l.region = Some("eu".into());
    let e = estimate(&book(), "acme", &l).unwrap();
    assert_eq!(e.currency, "EUR");
    assert_eq!(e.subtotal, dec("6.00"));
    assert_eq!(e.tax, dec("0"));
    assert_eq!(e.region.as_deref(), Some("eu"));
}

#[test]
fn a_lease_over_a_month_end_and_longer_than_a_day_is_one_run_in_two_periods() {
    // 2026-11-30T12:00Z for 2 days at 24.00/h, off-peak (22:00 to 06:00) at half: November
    // has 10 h peak and 2 h off-peak (264.00), December 22 h peak and 14 h off-peak (696.00).
    let e = estimate(
        &book(),
        "acme",
        &lease("gpu.flat", "2026-11-30T12:00:00Z", 172_800),
    )
    .unwrap();
    assert_eq!(e.periods.len(), 2);
    assert_eq!(e.periods[0].subtotal, dec("264.00"));
    assert_eq!(e.periods[1].subtotal, dec("696.00"));
    assert_eq!(e.subtotal, dec("960.00"));
    assert_eq!(e.total, e.periods[0].total + e.periods[1].total);
}

#[test]
fn each_bad_field_is_named() {
    let b = book();
    let ok = lease("gpu.flat", "2026-11-03T10:00:00Z", 3600);
    let field = |l: Lease| estimate(&b, "acme", &l).unwrap_err().field();
    assert_eq!(
        field(Lease {
            duration_seconds: 0,
            ..ok.clone()
        }),
        "duration_seconds"
    );
    assert_eq!(
        field(Lease {
            duration_seconds: 31 * 86_400 + 1,
            ..ok.clone()
        }),
        "duration_seconds"
    );
    assert_eq!(
        field(Lease {
            quantity: Decimal::ZERO,
            ..ok.clone()
        }),
        "quantity"
    );
    assert_eq!(
        field(Lease {
            quantity: dec("10001"),
            ..ok.clone()
        }),
        "quantity"
    );
    assert_eq!(
        field(Lease {
            sku: "gpu.nope".into(),
            ..ok.clone()
        }),
        "sku"
    );
    assert_eq!(
        field(Lease {
            sku: "gpu.od".into(),
            class: Class::Spot,
            ..ok.clone()
        }),
        "class"
    );
    assert_eq!(
        field(Lease {
            region: Some("mars".into()),
            ..ok.clone()
        }),
        "region"
    );
    assert_eq!(
        field(Lease {
            start: "yesterday".into(),
            ..ok.clone()
        }),
        "start"
    );
    assert_eq!(
        field(Lease {
            start: "1999-01-01T00:00:00Z".into(),
            ..ok.clone()
        }),
        "start"
    );
    assert_eq!(
        estimate(&b, "not an account", &ok).unwrap_err().field(),
        "account"
    );
    assert!(
        estimate(
            &b,
            "acme",
            &Lease {
                duration_seconds: 31 * 86_400,
                ..ok
            }
        )
        .is_ok()
    );
}
