//! `gpubill-bench bench --part3`: what part-3 terms cost in rating time (issue 26: at most
//! 20% more than part 2 on the benchmark fleet).
//!
//! The fleet is the rating benchmark's (`bench.rs`): `--accounts` accounts, each an 8-GPU
//! lease a day for 20 h over November 2026, here as one `gpu.usage` event per GPU and day
//! (with `--early-stops`, each GPU stops 0 to 3,599 s before the 20 h, so that billing
//! increments owe padding). It is metered into two meters and rated through
//! `billing_core::rating::rate_month`, what `gpubill rate` calls, alternately:
//!
//! - part 2: the rating benchmark's price book as it is (3 graduated tiers, 2 off-peak
//!   windows, `minimum_seconds = 60`, a reservation of 4 GPUs per account), no event names
//!   a region;
//! - part 3: the same skus and terms, plus per sku `increment_seconds` (60 at home, where it
//!   replaces `minimum_seconds`, since an sku never sets both; 3600 in the region), per
//!   account a plain discount beside a scoped, dated and capped one, a yearly subscription
//!   ended inside its cycle with `refund = "prorata"`, a yearly one with `auto_renew`, and a
//!   `[[charges]]` entry; and a region `ap-singapore` (USD, Asia/Singapore, its own tiers,
//!   off-peak window and tax) in which the same events of one day in five
//!   (`day % 5 == 4`, 20% of them) are named.

use crate::bench::{BenchArgs, LEASE_HOURS, RATING_BOOK, lease_start, reservations};
use billing_core::meter::{Admission, Meter};
use billing_core::period::Period;
use billing_core::pricebook::PriceBook;
use billing_core::rating::{MonthRating, rate_month};
use billing_core::timestamp::format_secs;
use gpubill_fleet::SKU_GPU;
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::time::Instant;

const MONTH: &str = "2026-11";
const REGION: &str = "ap-singapore";
/// One day in this many names [`REGION`] in the part-3 fleet.
const REGION_EVERY_DAYS: i64 = 5;

/// Section 19: the region's own pricing (nothing is inherited from the top level).
const REGION_TOML: &str = r#"
[regions."ap-singapore"]
currency = "USD"
timezone = "Asia/Singapore"

[regions."ap-singapore".skus."gpu.h100-80g"]
increment_seconds = 3600
tiers = [ { up_to_hours = 500, rate_per_hour = "3.40" }, { up_to_hours = 2000, rate_per_hour = "3.00" }, { rate_per_hour = "2.60" } ]

[[regions."ap-singapore".offpeak]]
from = "22:00"
to = "06:00"
multiplier = "0.70"

[regions."ap-singapore".tax]
rate = "0"
"#;

/// Sections 16, 17 and 20: the part-3 terms of one account (`{a}` its name), shared with
/// billing-core's `benches/core.rs`.
const ACCOUNT_TERMS: &str = include_str!("../../../tests/fixtures/part3-bench/account-terms.toml");

/// The rating benchmark's price book (part 2).
pub fn part2_book(accounts: u32) -> String {
    format!("{RATING_BOOK}{}", reservations(accounts))
}

/// The part-3 price book: the part-2 one with increments, a region and part-3 terms.
pub fn part3_book(accounts: u32) -> anyhow::Result<String> {
    let skus = RATING_BOOK.replace("minimum_seconds = 60", "increment_seconds = 60");
    anyhow::ensure!(
        skus != RATING_BOOK,
        "the rating book has no minimum_seconds"
    );
    let mut text = format!("{skus}{REGION_TOML}{}", reservations(accounts));
    for a in 0..accounts {
        text.push_str(&ACCOUNT_TERMS.replace("{a}", &format!("acct-{a}")));
    }
    Ok(text)
}

/// The fleet as `gpu.usage` events, one per GPU and day; with `regional`, the events of one
/// day in [`REGION_EVERY_DAYS`] name [`REGION`]; with `early_stops`, each GPU stops up to an
/// hour before the lease's 20 h ([`early_stop_seconds`]), so that billing increments pad
/// almost every run (the fleet's runs are whole hours otherwise, which owe no padding).
pub fn fleet_events(
    accounts: u32,
    period: &Period,
    regional: bool,
    early_stops: bool,
) -> Vec<String> {
    let mut out = Vec::with_capacity(accounts as usize * 30 * 8);
    for a in 0..accounts {
        for day in 0..30i64 {
            let from = lease_start(period.start, a, day);
            let start = format_secs(from);
            let region = if regional && day % REGION_EVERY_DAYS == REGION_EVERY_DAYS - 1 {
                format!(r#","region":"{REGION}""#)
            } else {
                String::new()
            };
            for g in 0..8 {
                let early = if early_stops {
                    early_stop_seconds(a, day, g)
                } else {
                    0
                };
                let to = from + LEASE_HOURS * 3600 - early;
                let end = format_secs(to);
                out.push(format!(
                    r#"{{"specversion":"1.0","id":"u-{a}-{day}-{g}","source":"node/bench","type":"gpu.usage","subject":"acct-{a}","data":{{"lease":"l-{a}-{day}","resource":"GPU-{g}","sku":"{SKU_GPU}","class":"on_demand","start":"{start}","end":"{end}","quantity":"1"{region}}}}}"#
                ));
            }
        }
    }
    out
}

/// Seconds GPU `g` of account `a`'s lease of day `day` stops early: 0 to 3,599, spread.
fn early_stop_seconds(a: u32, day: i64, g: i64) -> i64 {
    (i64::from(a) * 7_919 + day * 104_729 + g * 1_213) % 3600
}

/// Meters `events` in blocks of 64, as `gpubill rate` does; every one must be accepted.
pub fn meter(events: &[String]) -> anyhow::Result<Meter> {
    let mut meter = Meter::with_capacity(events.len());
    for block in events.chunks(64) {
        let records: Vec<&[u8]> = block.iter().map(|e| e.as_bytes()).collect();
        for admission in meter.ingest_block(&records) {
            anyhow::ensure!(
                admission == Admission::Accepted,
                "a fleet event was not accepted: {admission:?}"
            );
        }
    }
    Ok(meter)
}

/// One side of the comparison: a price book and the meter it rates.
struct Side {
    /// `part2` or `part3` (the values of `--only`).
    name: &'static str,
    book: PriceBook,
    meter: Meter,
    runs_secs: Vec<f64>,
}

impl Side {
    /// Rates the month once, timed; nothing may be unpriced.
    fn rate(&mut self) -> anyhow::Result<MonthRating> {
        let t0 = Instant::now();
        let month = rate_month(&self.book, MONTH, &self.meter, None)?;
        self.runs_secs.push(t0.elapsed().as_secs_f64());
        let unpriced =
            month.unpriced.len() + month.rated.iter().map(|r| r.unpriced.len()).sum::<usize>();
        anyhow::ensure!(unpriced == 0, "{}: {unpriced} unpriced items", self.name);
        Ok(month)
    }

    fn best(&self) -> f64 {
        self.runs_secs.iter().copied().fold(f64::MAX, f64::min)
    }

    fn median(&self) -> f64 {
        let mut v = self.runs_secs.clone();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or_default()
    }
}

/// Invoices and the sum of their totals per currency.
fn summary(month: &MonthRating) -> String {
    let mut totals: BTreeMap<&str, Decimal> = BTreeMap::new();
    for r in &month.rated {
        *totals.entry(&r.invoice.currency).or_default() += r.invoice.total;
    }
    let sums: Vec<String> = totals.iter().map(|(c, t)| format!("{t} {c}")).collect();
    format!(
        "{} invoices, totals {}",
        month.rated.len(),
        sums.join(" + ")
    )
}

impl Side {
    /// The side's book and the fleet metered, the region named only on the part-3 side.
    fn new(name: &'static str, text: &str, args: &BenchArgs) -> anyhow::Result<Side> {
        let book = PriceBook::from_toml(text)?;
        let period = Period::month(MONTH, book.timezone)?;
        let part3 = name == "part3";
        let events = fleet_events(args.accounts, &period, part3, args.early_stops);
        Ok(Side {
            name,
            meter: meter(&events)?,
            book,
            runs_secs: Vec::new(),
        })
    }
}

pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    let mut sides = [
        Side::new("part2", &part2_book(args.accounts), args)?,
        Side::new("part3", &part3_book(args.accounts)?, args)?,
    ];
    let early = if args.early_stops {
        ", early stops"
    } else {
        ""
    };
    println!(
        "rating, part 2 vs part 3 terms (issue 26): {} accounts x 8 GPUs, daily churn{early}, {MONTH}: {} events each, rated by rate_month, alternately",
        args.accounts,
        sides[0].meter.events()
    );
    let wanted = |side: &Side| args.only.as_deref().is_none_or(|o| o == side.name);
    for _ in 0..args.repeat.max(1) {
        for side in sides.iter_mut().filter(|s| wanted(s)) {
            let month = side.rate()?;
            let secs = side.runs_secs.last().copied().unwrap_or_default();
            println!("  {}: {secs:.3} s ({})", side.name, summary(&month));
        }
    }
    for side in sides.iter().filter(|s| wanted(s)) {
        println!(
            "  {}: best {:.3} s, median {:.3} s for {} accounts",
            side.name,
            side.best(),
            side.median(),
            args.accounts
        );
    }
    if args.only.is_none() {
        let best = sides[1].best() / sides[0].best();
        let median = sides[1].median() / sides[0].median();
        println!(
            "  part3 / part2 = {best:.2} best against best, {median:.2} median against median (issue 26: at most 1.20)"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The part-3 fleet with early stops exercises what it claims: per account, at home, an
    /// increment line, the renewing plan's cycle, the ended plan's refund, the charge and both
    /// discounts; and an invoice in ap-singapore, in USD, with its own increment line.
    #[test]
    fn the_part3_fleet_bills_every_part3_term() {
        let book = PriceBook::from_toml(&part3_book(2).unwrap()).unwrap();
        let period = Period::month(MONTH, book.timezone).unwrap();
        let meter = meter(&fleet_events(2, &period, true, true)).unwrap();
        let month = rate_month(&book, MONTH, &meter, Some("acct-1")).unwrap();
        let [home, sg] = &month.rated[..] else {
            panic!("{month:?}")
        };
        let components = |r: &billing_core::rating::Rated| -> Vec<String> {
            let v = serde_json::to_value(&r.invoice.lines).unwrap();
            let lines = v.as_array().unwrap().iter();
            lines
                .map(|l| l["component"].as_str().unwrap().to_string())
                .collect()
        };
        let home_components = components(home);
        for c in ["increment", "subscription", "subscription_refund", "charge"] {
            assert!(
                home_components.iter().any(|x| x == c),
                "{c}: {home_components:?}"
            );
        }
        assert_eq!(home.invoice.currency, "CNY");
        // 5% of the subtotal plus the capped subsidy.
        let plain = (home.invoice.subtotal * Decimal::new(5, 2)).round_dp(2);
        assert!(home.invoice.discount > plain, "{:?}", home.invoice);
        assert_eq!(sg.invoice.currency, "USD");
        assert_eq!(sg.invoice.region, Some(Some(REGION.to_string())));
        assert!(components(sg).iter().any(|x| x == "increment"));
        let plain_book = PriceBook::from_toml(&part2_book(2)).unwrap();
        let plain_meter = super::meter(&fleet_events(2, &period, false, true)).unwrap();
        let plain_month = rate_month(&plain_book, MONTH, &plain_meter, None).unwrap();
        assert_eq!(plain_month.rated.len(), 2);
        assert!(plain_month.rated.iter().all(|r| r.invoice.region.is_none()));
    }
}
