//! What a customer reads as the price list (`GET /v1/prices`, issue 24.15), and the unit an
//! sku is metered in (the console's usage charts draw one unit per chart, issue 24.12).
//!
//! The list is read off the price book version that rates the open period, with the account
//! terms set by command merged in: every sku's on-demand rate per unit-hour (its tiers, a
//! plain rate being one unbounded tier), the off-peak windows that apply to it with the rates
//! they make (each on-demand tier's rate times the window's multiplier, section 4.3), its spot
//! price now (the curve's point with the latest `from` at or before now, else its
//! `spot_rate_per_hour`, section 9), its minimum charge and its lease-state rates (section 8);
//! the egress tiers per destination; the account's discount percent. Rates show normalized
//! with at least 2 decimals (`"24.00"`, `"16.80"`, `"0.0002"`), never rounded: a rate is a
//! price per unit-hour, only amounts are rounded (section 5).
//!
//! Section 19: the top level is the home region; `regions` lists every other region of the
//! book (by name) with its own currency, timezone (of its off-peak windows), tax, skus and
//! egress, read off [`PriceBook::for_region`] and the region's spot curves. Nothing is
//! inherited from home: a region prices only the skus it names. The plain discount percent
//! applies in every region.

use crate::pricing::offpeak::{OffpeakWindow, WEEKDAYS};
use crate::pricing::pricebook::PriceBook;
use crate::pricing::spot::show_price;
use crate::pricing::tiers::TierMode;
use crate::rental::lease::LeaseState;
use crate::rental::platform::Platform;
use rust_decimal::Decimal;
use serde::Serialize;
use std::collections::BTreeMap;

/// What one unit-hour of an sku is, by its family (the sku's name up to its first `.`, the
/// whole name without one): `gpu.*` is metered in cards (`card_hour`: `quantity` is a count
/// of whole GPUs), `storage.*` in gigabytes (`gb_hour`: `quantity` is a volume's GB), any
/// other family in its own units (`unit_hour`; a `vgpu.t4-quarter` unit is one quarter
/// vGPU). Two families never share a chart or a total: their unit-hours are not the same
/// thing even when both say `unit_hour`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct SkuUnit {
    pub family: String,
    pub unit: &'static str,
}

/// The family of `sku`: its name up to its first `.` (see [`SkuUnit`]).
pub fn sku_family(sku: &str) -> &str {
    sku.split('.').next().unwrap_or(sku)
}

/// The family and unit of `sku` (see [`SkuUnit`]).
pub fn sku_unit(sku: &str) -> SkuUnit {
    let family = sku_family(sku).to_string();
    let unit = match family.as_str() {
        "gpu" => "card_hour",
        "storage" => "gb_hour",
        _ => "unit_hour",
    };
    SkuUnit { family, unit }
}

/// One on-demand tier: up to `up_to_hours` cumulative unit-hours of the period (none: no
/// bound) at `rate_per_hour`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TierPrice {
    pub up_to_hours: Option<Decimal>,
    pub rate_per_hour: Decimal,
}

/// An off-peak window that applies to the sku, and the on-demand rates inside it (one per
/// tier, in tier order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OffpeakPrice {
    /// Local time of day in the price book's timezone, `HH:MM` (`HH:MM:SS` when it has
    /// seconds; `24:00` for the end of the day).
    pub from: String,
    pub to: String,
    /// `mon` to `sun`.
    pub days: Vec<&'static str>,
    pub multiplier: Decimal,
    pub rates_per_hour: Vec<Decimal>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkuPrice {
    pub sku: String,
    pub family: String,
    pub unit: &'static str,
    /// Empty when the sku has no on-demand price (spot only).
    pub on_demand: Vec<TierPrice>,
    pub tier_mode: TierMode,
    pub offpeak: Vec<OffpeakPrice>,
    /// The spot price now; none when the sku cannot be rented as spot.
    pub spot_rate_per_hour: Option<Decimal>,
    pub minimum_seconds: Option<i64>,
    /// Per lease state: the rate per unit-hour of the seconds in that state (section 8).
    pub state_rates: BTreeMap<LeaseState, Decimal>,
}

/// Egress to one destination: graduated tiers of GB per period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EgressPrice {
    pub dest: String,
    pub tiers: Vec<EgressTier>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EgressTier {
    pub up_to_gb: Option<Decimal>,
    pub rate_per_gb: Decimal,
}

/// The price list of [`price_list`]: the home region's prices, and the other regions'.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PriceList {
    pub currency: String,
    pub timezone: String,
    pub tax_rate: Decimal,
    /// The account's discount percent, taken off every invoice's subtotal (section 5), in
    /// every region (plain discounts, section 19).
    pub discount_percent: Decimal,
    pub skus: Vec<SkuPrice>,
    pub egress: Vec<EgressPrice>,
    /// Section 19: the regions besides home, by name.
    pub regions: Vec<RegionPrices>,
}

/// One region's prices (section 19), in its own currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegionPrices {
    pub region: String,
    pub currency: String,
    /// The timezone of its off-peak windows.
    pub timezone: String,
    pub tax_rate: Decimal,
    pub skus: Vec<SkuPrice>,
    pub egress: Vec<EgressPrice>,
}

fn time_of_day(seconds: u32) -> String {
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if s == 0 {
        format!("{h:02}:{m:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}")
    }
}

fn offpeak_price(w: &OffpeakWindow, tiers: &[TierPrice]) -> OffpeakPrice {
    OffpeakPrice {
        from: time_of_day(w.from_seconds),
        to: time_of_day(w.to_seconds),
        days: WEEKDAYS
            .iter()
            .enumerate()
            .filter(|(i, _)| w.days & (1 << i) != 0)
            .map(|(_, d)| *d)
            .collect(),
        multiplier: w.multiplier,
        rates_per_hour: tiers
            .iter()
            .map(|t| show_price(t.rate_per_hour * w.multiplier))
            .collect(),
    }
}

/// The spot price of `sku` at `now_s`: the curve's point with the latest `from <= now_s`,
/// else the book's `spot_rate_per_hour`.
fn spot_now(book: &PriceBook, platform: &Platform, sku: &str, now_s: i64) -> Option<Decimal> {
    let from_curve = platform
        .curve(sku)
        .and_then(|c| c.range(..=now_s).next_back().map(|(_, p)| *p));
    from_curve
        .or_else(|| book.skus.get(sku).and_then(|s| s.spot_rate_per_hour))
        .map(show_price)
}

/// The prices `account` rents at at `now_s` under `book` (the version rating the open
/// period, account terms merged in) and the spot curves of `platform`, at home and in every
/// other region of the book.
pub fn price_list(book: &PriceBook, platform: &Platform, account: &str, now_s: i64) -> PriceList {
    let regions = book
        .regions
        .keys()
        .filter_map(|name| {
            let rbook = book.for_region(Some(name))?;
            let rplatform = platform.in_region(Some(name));
            Some(RegionPrices {
                region: name.clone(),
                currency: rbook.currency.clone(),
                timezone: rbook.timezone.name().to_string(),
                tax_rate: rbook.tax_rate,
                skus: sku_prices(&rbook, &rplatform, now_s),
                egress: egress_prices(&rbook),
            })
        })
        .collect();
    PriceList {
        currency: book.currency.clone(),
        timezone: book.timezone.name().to_string(),
        tax_rate: book.tax_rate,
        discount_percent: book.discount_percent(account),
        skus: sku_prices(book, platform, now_s),
        egress: egress_prices(book),
        regions,
    }
}

/// The skus of one region's `book` in name order; an sku with a spot curve in `platform` and
/// no entry in the book is listed with its spot price only.
fn sku_prices(book: &PriceBook, platform: &Platform, now_s: i64) -> Vec<SkuPrice> {
    let mut names: Vec<&str> = book.skus.keys().map(String::as_str).collect();
    for sku in platform.curves().keys() {
        if !book.skus.contains_key(sku) && spot_now(book, platform, sku, now_s).is_some() {
            names.push(sku);
        }
    }
    names.sort_unstable();
    names
        .into_iter()
        .map(|name| sku_price(book, platform, name, now_s))
        .collect()
}

/// One sku's prices in `book` (an sku it does not name: its spot price in `platform` only).
fn sku_price(book: &PriceBook, platform: &Platform, name: &str, now_s: i64) -> SkuPrice {
    let sku = book.skus.get(name);
    let hours = Decimal::from(3600);
    let on_demand: Vec<TierPrice> = sku
        .and_then(|s| s.on_demand_tiers())
        .unwrap_or_default()
        .iter()
        .map(|t| TierPrice {
            up_to_hours: t.up_to.map(|u| (u / hours).normalize()),
            rate_per_hour: show_price(t.rate),
        })
        .collect();
    let offpeak = if on_demand.is_empty() {
        Vec::new()
    } else {
        book.offpeak
            .iter()
            .filter(|w| w.applies_to(name))
            .map(|w| offpeak_price(w, &on_demand))
            .collect()
    };
    let unit = sku_unit(name);
    SkuPrice {
        sku: name.to_string(),
        family: unit.family,
        unit: unit.unit,
        tier_mode: sku.map(|s| s.tier_mode).unwrap_or_default(),
        on_demand,
        offpeak,
        spot_rate_per_hour: spot_now(book, platform, name, now_s),
        minimum_seconds: sku.and_then(|s| s.minimum_seconds),
        state_rates: sku
            .map(|s| {
                s.state_rates
                    .iter()
                    .map(|(k, v)| (*k, show_price(*v)))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The egress tiers of one region's `book`, by dest.
fn egress_prices(book: &PriceBook) -> Vec<EgressPrice> {
    book.egress
        .iter()
        .map(|(dest, tiers)| EgressPrice {
            dest: dest.clone(),
            tiers: tiers
                .iter()
                .map(|t| EgressTier {
                    up_to_gb: t.up_to.map(|u| u.normalize()),
                    rate_per_gb: show_price(t.rate),
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOOK: &str = r#"
currency = "CNY"
timezone = "Asia/Shanghai"

[skus."gpu.h100-80g"]
rate_per_hour = "24.00"
spot_rate_per_hour = "9.60"
minimum_seconds = 60
tiers = [ { up_to_hours = 2, rate_per_hour = "24.00" }, { rate_per_hour = "20.00" } ]

[skus."storage.ssd"]
rate_per_hour = "0.0002"

[[offpeak]]
from = "22:00"
to = "06:00"
multiplier = "0.70"

[egress.internet]
tiers = [ { up_to_gb = 100, rate_per_gb = "0.00" }, { rate_per_gb = "0.80" } ]

[[discounts]]
account = "beta"
percent = "10"
"#;

    #[test]
    fn units_by_family() {
        assert_eq!(sku_unit("gpu.h100-80g").unit, "card_hour");
        assert_eq!(sku_unit("storage.ssd").unit, "gb_hour");
        let v = sku_unit("vgpu.t4-quarter");
        assert_eq!((v.family.as_str(), v.unit), ("vgpu", "unit_hour"));
        assert_eq!(sku_unit("plain").family, "plain");
    }

    #[test]
    fn the_list_of_a_book_with_tiers_offpeak_spot_and_egress() {
        let book = PriceBook::from_toml(BOOK).unwrap();
        let mut platform = Platform::new();
        let list = price_list(&book, &platform, "beta", 1_800_000_000);
        assert_eq!(list.discount_percent, Decimal::from(10));
        let h100 = &list.skus[0];
        assert_eq!(h100.sku, "gpu.h100-80g");
        assert_eq!(h100.on_demand.len(), 2);
        assert_eq!(h100.on_demand[0].up_to_hours, Some(Decimal::from(2)));
        assert_eq!(h100.offpeak[0].from, "22:00");
        assert_eq!(h100.offpeak[0].days.len(), 7);
        let rates: Vec<String> = h100.offpeak[0]
            .rates_per_hour
            .iter()
            .map(|r| r.to_string())
            .collect();
        assert_eq!(rates, ["16.80", "14.00"]);
        assert_eq!(h100.spot_rate_per_hour.unwrap().to_string(), "9.60");
        let ssd = &list.skus[1];
        assert_eq!(
            (
                ssd.unit,
                ssd.on_demand[0].rate_per_hour.to_string().as_str()
            ),
            ("gb_hour", "0.0002")
        );
        assert_eq!(list.egress[0].tiers[1].rate_per_gb.to_string(), "0.80");
        // A spot curve point before now sets the spot price; one after it does not yet.
        platform.add_spot_price("gpu.h100-80g", 1_700_000_000, Decimal::new(75, 1));
        platform.add_spot_price("gpu.h100-80g", 1_900_000_000, Decimal::new(50, 1));
        let list = price_list(&book, &platform, "acme", 1_800_000_000);
        assert_eq!(list.skus[0].spot_rate_per_hour.unwrap().to_string(), "7.50");
        assert_eq!(list.discount_percent, Decimal::ZERO);
    }

    /// Section 19: the home prices stay at the top level; a region lists its own skus (only
    /// the ones it names), off-peak windows, egress and tax in its own currency, and its spot
    /// curve (a home curve point does not move it).
    #[test]
    fn each_region_lists_its_own_prices_in_its_currency() {
        let book = PriceBook::from_toml(&format!(
            r#"{BOOK}
[regions."ap-singapore"]
currency = "USD"
timezone = "Asia/Singapore"
[regions."ap-singapore".skus."gpu.h100-80g"]
rate_per_hour = "3.20"
spot_rate_per_hour = "1.50"
[[regions."ap-singapore".offpeak]]
from = "00:00"
to = "06:00"
multiplier = "0.50"
[regions."ap-singapore".egress.internet]
rate_per_gb = "0.09"
[regions."ap-singapore".tax]
rate = "0.09"
"#
        ))
        .unwrap();
        let mut platform = Platform::new();
        platform.add_spot_price("gpu.h100-80g", 1_700_000_000, Decimal::new(75, 1));
        platform.add_spot_price_in(
            Some("ap-singapore"),
            "gpu.h100-80g",
            1_700_000_000,
            Decimal::new(12, 1),
        );
        let list = price_list(&book, &platform, "beta", 1_800_000_000);
        let home = price_list(
            &PriceBook::from_toml(BOOK).unwrap(),
            &platform,
            "beta",
            1_800_000_000,
        );
        assert_eq!(
            (&list.currency, &list.skus, &list.egress),
            (&home.currency, &home.skus, &home.egress)
        );
        assert_eq!(list.regions.len(), 1);
        let sg = &list.regions[0];
        assert_eq!(
            (
                sg.region.as_str(),
                sg.currency.as_str(),
                sg.timezone.as_str()
            ),
            ("ap-singapore", "USD", "Asia/Singapore")
        );
        assert_eq!(sg.tax_rate.to_string(), "0.09");
        let names: Vec<&str> = sg.skus.iter().map(|s| s.sku.as_str()).collect();
        assert_eq!(names, ["gpu.h100-80g"]);
        let h100 = &sg.skus[0];
        assert_eq!(h100.on_demand[0].rate_per_hour.to_string(), "3.20");
        assert_eq!(h100.offpeak[0].rates_per_hour[0].to_string(), "1.60");
        assert_eq!(h100.spot_rate_per_hour.unwrap().to_string(), "1.20");
        assert_eq!(sg.egress[0].tiers[0].rate_per_gb.to_string(), "0.09");
        assert!(home.regions.is_empty());
    }
}
