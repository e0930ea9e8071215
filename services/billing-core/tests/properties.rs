//! Property tests: order independence, lines adding up, monotone tiers, canonical ledger
//! runs, and the segment-based rater against a naive per-second reading of the spec.

mod common;

use billing_core::event::Class;
use billing_core::invoice::Component;
use billing_core::ledger::{Run, Runs};
use billing_core::meter::{Admission, Meter};
use billing_core::period::Period;
use billing_core::pricebook::PriceBook;
use billing_core::rating::rate_all;
use chrono::{Datelike, TimeZone, Timelike};
use common::{U, d, egress};
use proptest::prelude::*;
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// 2026-11-03T00:00:00Z: inside November in Shanghai and UTC.
const BASE: i64 = 1_793_664_000;
const WINDOW: i64 = 12 * 3600;

#[derive(Debug, Clone)]
struct Ev {
    account: usize,
    lease: usize,
    resource: usize,
    sku: usize,
    spot: bool,
    start: i64,
    start_nanos: u32,
    len_ms: i64,
    quantity: &'static str,
}

const ACCOUNTS: [&str; 2] = ["acme", "beta"];
const SKUS: [&str; 2] = ["gpu.h100", "vgpu.quarter"];
const QUANTITIES: [&str; 5] = ["1", "0.25", "0.5", "2", "0.125"];

fn ev() -> impl Strategy<Value = Ev> {
    (
        0..2usize,
        0..2usize,
        0..3usize,
        0..2usize,
        prop::bool::weighted(0.15),
        0..WINDOW,
        prop_oneof![Just(0u32), 0..1_000_000_000u32],
        1..(3 * 3_600_000i64),
        prop::sample::select(&QUANTITIES[..]),
    )
        .prop_map(
            |(account, lease, resource, sku, spot, start, start_nanos, len_ms, quantity)| Ev {
                account,
                lease,
                resource,
                sku,
                spot,
                start: BASE + start,
                start_nanos,
                len_ms,
                quantity,
            },
        )
}

fn rfc(secs: i64, nanos: u32) -> String {
    chrono::DateTime::from_timestamp(secs, nanos)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

impl Ev {
    /// (start, end) as (secs, nanos) pairs.
    fn span(&self) -> ((i64, u32), (i64, u32)) {
        let start_ns = self.start as i128 * 1_000_000_000 + self.start_nanos as i128;
        let end_ns = start_ns + self.len_ms as i128 * 1_000_000;
        let s = (
            start_ns.div_euclid(1_000_000_000) as i64,
            start_ns.rem_euclid(1_000_000_000) as u32,
        );
        let e = (
            end_ns.div_euclid(1_000_000_000) as i64,
            end_ns.rem_euclid(1_000_000_000) as u32,
        );
        (s, e)
    }

    fn json(&self, id: usize) -> String {
        let ((ss, sn), (es, en)) = self.span();
        let lease = format!("L{}", self.lease);
        let resource = format!("r{}", self.resource);
        let start = rfc(ss, sn);
        let end = rfc(es, en);
        let id = format!("e{id}");
        U {
            id: &id,
            account: ACCOUNTS[self.account],
            lease: &lease,
            resource: &resource,
            sku: SKUS[self.sku],
            class: if self.spot { "spot" } else { "on_demand" },
            start: &start,
            end: &end,
            quantity: self.quantity,
        }
        .json()
    }

    /// Whole seconds covered: floor(start) ..= ceil(end) - 1.
    fn seconds(&self) -> (i64, i64) {
        let ((ss, _), (es, en)) = self.span();
        (ss, if en > 0 { es + 1 } else { es })
    }
}

#[derive(Debug, Clone)]
struct Book {
    tz: &'static str,
    volume: bool,
    bounds_half_hours: Vec<u32>,
    windows: Vec<(u32, u32, u32, &'static str, bool)>,
    reservations: Vec<(usize, u32, i64, i64)>,
    minimum: Option<u32>,
}

fn book() -> impl Strategy<Value = Book> {
    (
        prop::sample::select(&["Asia/Shanghai", "UTC", "Europe/Berlin"][..]),
        any::<bool>(),
        prop::collection::btree_set(1..12u32, 0..3),
        prop::collection::vec(
            (
                0..24u32,
                0..24u32,
                1..128u32,
                prop::sample::select(&["0.70", "0.5", "0.85", "1.2"][..]),
                any::<bool>(),
            ),
            0..3,
        ),
        prop::collection::vec((0..2usize, 1..4u32, 0..WINDOW, 600..WINDOW), 0..3),
        prop::option::of(30..600u32),
    )
        .prop_map(
            |(tz, volume, bounds, windows, reservations, minimum)| Book {
                tz,
                volume,
                bounds_half_hours: bounds.into_iter().collect(),
                windows: windows.into_iter().filter(|w| w.0 != w.1).collect(),
                reservations,
                minimum,
            },
        )
}

const RATES: [&str; 4] = ["24.00", "21.50", "18.25", "15.10"];

impl Book {
    fn toml(&self) -> String {
        let mut t = format!("currency = \"CNY\"\ntimezone = \"{}\"\n", self.tz);
        t += "[tax]\nrate = \"0.06\"\n";
        t += "[skus.\"gpu.h100\"]\nspot_rate_per_hour = \"9.60\"\n";
        if let Some(m) = self.minimum {
            t += &format!("minimum_seconds = {m}\n");
        }
        if self.volume {
            t += "tier_mode = \"volume\"\n";
        }
        if self.bounds_half_hours.is_empty() {
            t += "rate_per_hour = \"24.00\"\n";
        } else {
            t += "tiers = [";
            for (i, b) in self.bounds_half_hours.iter().enumerate() {
                t += &format!(
                    "{{ up_to_hours = \"{}\", rate_per_hour = \"{}\" }}, ",
                    Decimal::from(*b) / Decimal::from(2),
                    RATES[i]
                );
            }
            t += &format!(
                "{{ rate_per_hour = \"{}\" }} ]\n",
                RATES[self.bounds_half_hours.len()]
            );
        }
        t += "[skus.\"vgpu.quarter\"]\nrate_per_hour = \"2.40\"\n";
        for (from, to, days, m, only_h100) in &self.windows {
            let days: Vec<String> = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
                .iter()
                .enumerate()
                .filter(|(i, _)| days & (1 << i) != 0)
                .map(|(_, d)| format!("\"{d}\""))
                .collect();
            t += &format!(
                "[[offpeak]]\nfrom = \"{from:02}:00\"\nto = \"{to:02}:00\"\nmultiplier = \"{m}\"\n"
            );
            if !days.is_empty() {
                t += &format!("days = [{}]\n", days.join(","));
            }
            if *only_h100 {
                t += "skus = [\"gpu.h100\"]\n";
            }
        }
        for (account, q, from, len) in &self.reservations {
            t += &format!(
                "[[reservations]]\naccount = \"{}\"\nsku = \"gpu.h100\"\nquantity = \"{q}\"\nfrom = \"{}\"\nto = \"{}\"\nrate_per_hour = \"15.00\"\n",
                ACCOUNTS[*account],
                rfc(BASE + from, 0),
                rfc(BASE + from + len, 0)
            );
        }
        t
    }
}

fn invoices_json(book: &PriceBook, records: &[String]) -> String {
    let mut meter = Meter::new();
    for r in records {
        assert!(
            !matches!(meter.ingest(r.as_bytes()), Admission::Rejected(_)),
            "{r}"
        );
    }
    let period = Period::month("2026-11", book.timezone).unwrap();
    let rated = rate_all(book, period, &meter, None).unwrap();
    let invoices: Vec<_> = rated.into_iter().map(|r| r.invoice).collect();
    serde_json::to_string(&invoices).unwrap()
}

/// The on-demand lines by a naive, per-second reading of section 4 (no ledger runs, no
/// segments, no schedule): (sku, tier, multiplier) -> unit-seconds, plus reserved usage.
fn naive_on_demand(
    b: &Book,
    book: &PriceBook,
    evs: &[Ev],
    account: usize,
    sku: usize,
) -> (BTreeMap<(usize, Decimal), Decimal>, Decimal) {
    let tz: chrono_tz::Tz = b.tz.parse().unwrap();
    let sku_name = SKUS[sku];
    let tiers = book.skus[sku_name].on_demand_tiers().unwrap();
    let mine: Vec<&Ev> = evs
        .iter()
        .filter(|e| e.account == account && e.sku == sku && !e.spot)
        .collect();
    let mut out = BTreeMap::new();
    let mut covered = Decimal::ZERO;
    let mut filled = Decimal::ZERO;
    let mut volume: BTreeMap<Decimal, Decimal> = BTreeMap::new();
    let lo = BASE - 1;
    let hi = BASE + WINDOW + 3 * 3600 + 2;
    for s in lo..hi {
        // U(s): per key, the max quantity of its events covering s; summed over keys.
        let mut per_key: BTreeMap<(usize, usize), Decimal> = BTreeMap::new();
        for e in &mine {
            let (a, z) = e.seconds();
            if a <= s && s < z {
                let q = d(e.quantity);
                let slot = per_key.entry((e.lease, e.resource)).or_insert(q);
                *slot = (*slot).max(q);
            }
        }
        let u: Decimal = per_key.values().sum();
        if u.is_zero() {
            continue;
        }
        let r: Decimal = b
            .reservations
            .iter()
            .filter(|(acc, _, from, len)| {
                *acc == account && sku == 0 && BASE + from <= s && s < BASE + from + len
            })
            .map(|(_, q, _, _)| Decimal::from(*q))
            .sum();
        let c = u.min(r);
        covered += c;
        let o = u - c;
        if o.is_zero() {
            continue;
        }
        let local = tz.timestamp_opt(s, 0).unwrap();
        let tod = local.num_seconds_from_midnight();
        let wd = local.weekday().num_days_from_monday();
        let m = book
            .offpeak
            .iter()
            .filter(|w| w.applies_to(sku_name))
            .filter(|w| {
                let inside = if w.from_seconds < w.to_seconds {
                    w.from_seconds <= tod && tod < w.to_seconds
                } else {
                    tod >= w.from_seconds || tod < w.to_seconds
                };
                inside && w.days & (1 << wd) != 0
            })
            .map(|w| w.multiplier)
            .min()
            .unwrap_or(Decimal::ONE);
        if book.skus[sku_name].tier_mode == billing_core::tiers::TierMode::Volume && tiers.len() > 1
        {
            *volume.entry(m).or_default() += o;
        } else {
            // Fill tiers unit by unit-second part.
            let mut left = o;
            for (i, t) in tiers.iter().enumerate() {
                let cap = if i + 1 == tiers.len() { None } else { t.up_to };
                let room = cap.map_or(left, |c| (c - filled).max(Decimal::ZERO).min(left));
                if room > Decimal::ZERO {
                    *out.entry((i, m)).or_default() += room;
                    filled += room;
                    left -= room;
                }
            }
        }
    }
    if !volume.is_empty() {
        let total: Decimal = volume.values().sum();
        let tier = tiers
            .iter()
            .position(|t| t.up_to.is_some_and(|b| b >= total))
            .unwrap_or(tiers.len() - 1);
        for (m, q) in volume {
            *out.entry((tier, m)).or_default() += q;
        }
    }
    (out, covered)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn shuffled_and_redelivered_events_give_a_byte_identical_invoice(
        evs in prop::collection::vec(ev(), 1..30),
        b in book(),
        redeliver in prop::collection::vec(any::<prop::sample::Index>(), 0..20),
        seed in any::<u64>(),
    ) {
        let book = PriceBook::from_toml(&b.toml()).unwrap();
        let mut records: Vec<String> = evs.iter().enumerate().map(|(i, e)| e.json(i)).collect();
        records.push(egress("x1", "acme", "internet", "2026-11-03T10:00:00Z", 10));
        let once = invoices_json(&book, &records);
        for i in &redeliver {
            let r = records[i.index(records.len())].clone();
            records.push(r);
        }
        // Fisher-Yates with a seeded splitmix.
        let mut state = seed;
        for i in (1..records.len()).rev() {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            records.swap(i, ((z ^ (z >> 31)) % (i as u64 + 1)) as usize);
        }
        prop_assert_eq!(invoices_json(&book, &records), once);
    }

    #[test]
    fn invoice_lines_add_up_to_the_subtotal_and_totals_follow(evs in prop::collection::vec(ev(), 0..30), b in book()) {
        let book = PriceBook::from_toml(&b.toml()).unwrap();
        let records: Vec<String> = evs.iter().enumerate().map(|(i, e)| e.json(i)).collect();
        let invoices: Vec<billing_core::Invoice> = serde_json::from_str(&invoices_json(&book, &records)).unwrap();
        for inv in invoices {
            let sum: Decimal = inv.lines.iter().map(|l| l.amount).sum();
            prop_assert_eq!(sum, inv.subtotal);
            prop_assert_eq!(inv.subtotal - inv.discount - inv.credit + inv.tax, inv.total);
            prop_assert!(inv.lines.iter().all(|l| l.amount.scale() == 2 && !l.quantity.is_zero()));
        }
    }

    #[test]
    fn segment_rating_equals_a_naive_per_second_reading_of_the_spec(evs in prop::collection::vec(ev(), 1..12), b in book()) {
        let book = PriceBook::from_toml(&b.toml()).unwrap();
        let records: Vec<String> = evs.iter().enumerate().map(|(i, e)| e.json(i)).collect();
        let invoices: Vec<billing_core::Invoice> = serde_json::from_str(&invoices_json(&book, &records)).unwrap();
        for inv in &invoices {
            let account = ACCOUNTS.iter().position(|a| *a == inv.account).unwrap();
            for (sku, name) in SKUS.iter().enumerate() {
                let (want, covered) = naive_on_demand(&b, &book, &evs, account, sku);
                let got: BTreeMap<(usize, Decimal), Decimal> = inv
                    .lines
                    .iter()
                    .filter(|l| l.component == Component::OnDemand && l.sku.as_deref() == Some(*name))
                    .map(|l| ((l.tier, l.multiplier.unwrap()), l.quantity))
                    .collect();
                let want: BTreeMap<(usize, Decimal), Decimal> = want.into_iter().filter(|(_, q)| !q.is_zero()).collect();
                prop_assert_eq!(&got, &want, "sku {} of {}", name, inv.account);
                let reserved: Decimal = inv
                    .lines
                    .iter()
                    .filter(|l| l.component == Component::ReservedUsage && l.sku.as_deref() == Some(*name))
                    .map(|l| l.quantity)
                    .sum();
                prop_assert_eq!(reserved, covered);
            }
        }
    }

    #[test]
    fn graduated_totals_never_decrease_when_usage_is_added(evs in prop::collection::vec(ev(), 1..20), extra in ev(), b in book()) {
        let mut b = b;
        b.volume = false;
        // Without a minimum charge: section 4.6 counts covered *seconds*, so 10 s more at a
        // quarter unit can lower what a 1 s, 1-unit resource owes (30 s minimum: 30 unit-seconds
        // before, 1 + 2.5 + 19 after) — a decrease the semantics intend.
        b.minimum = None;
        let book = PriceBook::from_toml(&b.toml()).unwrap();
        let records: Vec<String> = evs.iter().enumerate().map(|(i, e)| e.json(i)).collect();
        let before: Vec<billing_core::Invoice> = serde_json::from_str(&invoices_json(&book, &records)).unwrap();
        let mut more = records.clone();
        more.push(extra.json(10_000));
        let after: Vec<billing_core::Invoice> = serde_json::from_str(&invoices_json(&book, &more)).unwrap();
        // Section 5 rounds once per line: added usage can move unit-seconds between lines (from
        // one tier's line to the next, say), so the subtotal may drop by what the rounding of
        // the lines can take, half a cent per line before and after, and by nothing more.
        for a in &after {
            let prev = before.iter().find(|x| x.account == a.account);
            let (prev_total, prev_lines) = prev.map_or((Decimal::ZERO, 0), |x| (x.subtotal, x.lines.len()));
            let slack = Decimal::new(5, 3) * Decimal::from(prev_lines + a.lines.len());
            prop_assert!(a.subtotal + slack >= prev_total, "{} went from {} to {}", a.account, prev_total, a.subtotal);
        }
    }

    #[test]
    fn ledger_runs_stay_disjoint_sorted_and_equal_the_per_second_max(
        spans in prop::collection::vec((0..400i64, 1..80i64, prop::sample::select(&QUANTITIES[..])), 1..40)
    ) {
        let mut runs = Runs::new();
        let mut model: BTreeMap<i64, Decimal> = BTreeMap::new();
        for (from, len, q) in &spans {
            runs.insert(*from, from + len, d(q));
            for s in *from..from + len {
                let slot = model.entry(s).or_insert(Decimal::ZERO);
                *slot = (*slot).max(d(q));
            }
            prop_assert!(runs.is_canonical(), "{:?}", runs);
        }
        for s in -1..500 {
            prop_assert_eq!(runs.quantity_at(s), model.get(&s).copied().unwrap_or_default(), "second {}", s);
        }
        // The same set in reverse order gives the same runs.
        let reversed = Runs::from_runs(spans.iter().rev().map(|(f, l, q)| Run { from: *f, to: f + l, quantity: d(q) }));
        prop_assert_eq!(reversed, runs);
    }
}

#[test]
fn classes_are_separate_usage_keys() {
    let mut m = Meter::new();
    for (id, class) in [("a", "on_demand"), ("b", "spot")] {
        let e = U {
            id,
            class,
            start: "2026-11-03T10:00:00Z",
            end: "2026-11-03T11:00:00Z",
            ..U::default()
        }
        .json();
        assert_eq!(m.ingest(e.as_bytes()), Admission::Accepted);
    }
    let l = m.account("acme").unwrap();
    assert!(l.runs("L1", "gpu0", "gpu.h100", Class::OnDemand).is_some());
    assert!(l.runs("L1", "gpu0", "gpu.h100", Class::Spot).is_some());
    assert_eq!(l.usage_keys(), 2);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Issue 11: re-rating a period loads only the keys with a second in it (whole) and the
    /// egress timed in it. No rule reads more: rating that restriction equals rating the
    /// whole ledger, for usage spread over three periods (minimum charges, reservations,
    /// tiers and off-peak included).
    #[test]
    fn rating_a_period_reads_only_the_keys_it_holds(
        evs in prop::collection::vec(ev(), 1..30),
        shifts in prop::collection::vec(prop_oneof![Just(0i64), Just(-30), Just(30)], 30),
        b in book(),
    ) {
        use billing_core::rating::{RatingContext, rate_account};
        let book = PriceBook::from_toml(&b.toml()).unwrap();
        let mut meter = Meter::new();
        for (i, e) in evs.iter().enumerate() {
            let mut e = e.clone();
            e.start += shifts[i] * 86_400;
            prop_assert!(!matches!(meter.ingest(e.json(i).as_bytes()), Admission::Rejected(_)));
        }
        for (n, t) in ["2026-10-20T00:00:00Z", "2026-11-03T10:00:00Z", "2026-12-05T00:00:00Z"].iter().enumerate() {
            meter.ingest(egress(&format!("x{n}"), "acme", "internet", t, 10_000_000_000).as_bytes());
        }
        for label in ["2026-10", "2026-11", "2026-12"] {
            let period = Period::month(label, book.timezone).unwrap();
            let ctx = RatingContext::new(&book, period.clone());
            for (account, ledger) in meter.accounts() {
                let whole = rate_account(&ctx, account, Some(ledger), d("5")).unwrap();
                let part = ledger.restricted_to(period.start, period.end);
                let restricted = rate_account(&ctx, account, Some(&part), d("5")).unwrap();
                prop_assert_eq!(&whole.invoice, &restricted.invoice);
                prop_assert!(part.usage().all(|(_, r)| r.clipped(period.start, period.end).next().is_some()));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Issue 29: an account whose period no rule reads key by key (no spot, billing
    /// increment, lease state or allocation) is rated from its keys' sum (`pricing::summed`):
    /// the invoice is byte-identical to the one rated key by key, with tiers (graduated and
    /// volume), off-peak windows, reservations, minimum charges and packages drawn across
    /// periods, for usage spread over three months (some of it across a month's end), folded
    /// in any order, with quantities spelled with trailing zeros and a sku the book does not
    /// price (unpriced). The ledger's sum is always the one rebuilt from its keys, also for a
    /// ledger loaded key by key and then replaced (`set_runs`, as the store's kept ledgers).
    #[test]
    fn rating_from_the_keys_sum_equals_rating_key_by_key(
        evs in prop::collection::vec(ev(), 1..40),
        shifts in prop::collection::vec(prop_oneof![Just(0i64), Just(-600), Just(600), Just(660)], 40),
        packages in prop::collection::vec((0..2usize, 1..6u32, -960..480i64, 1..1440i64), 0..3),
        seed in any::<u64>(),
        b in book(),
    ) {
        use billing_core::ledger::AccountLedger;
        use billing_core::pricing::summed::summed;
        use billing_core::rating::{RatingContext, rate_account};
        let mut toml = b.toml();
        for (i, (account, hours, from_hours, len_hours)) in packages.iter().enumerate() {
            let from = BASE + from_hours * 3600;
            toml += &format!(
                "[[packages]]\naccount = \"{}\"\nid = \"p{i}\"\nsku = \"gpu.h100\"\nhours = \"{hours}\"\nfrom = \"{}\"\nto = \"{}\"\nprice = \"10.00\"\n",
                ACCOUNTS[*account], rfc(from, 0), rfc(from + len_hours * 3600, 0)
            );
        }
        let book = PriceBook::from_toml(&toml).unwrap();
        let mut rng = seed;
        let mut next = move || {
            rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            rng >> 33
        };
        let mut records: Vec<String> = evs.iter().enumerate().map(|(i, e)| {
            let mut e = e.clone();
            e.spot = false;
            e.start += shifts[i] * 3600;
            let mut json = e.json(i);
            if next() % 2 == 0 {
                let q = e.quantity;
                let spelled = if q.contains('.') { format!("{q}00") } else { format!("{q}.000") };
                json = json.replace(&format!("\"quantity\":\"{q}\""), &format!("\"quantity\":\"{spelled}\""));
            }
            if next() % 6 == 0 {
                json = json.replace("\"sku\":\"vgpu.quarter\"", "\"sku\":\"a100.unpriced\"");
            }
            json
        }).collect();
        records.extend(records.clone().into_iter().step_by(3));
        for i in (1..records.len()).rev() {
            records.swap(i, next() as usize % (i + 1));
        }
        let mut meter = Meter::new();
        for r in &records {
            prop_assert!(!matches!(meter.ingest(r.as_bytes()), Admission::Rejected(_)), "{}", r);
        }
        for label in ["2026-10", "2026-11", "2026-12"] {
            let period = Period::month(label, book.timezone).unwrap();
            let ctx = RatingContext::new(&book, period.clone());
            let by_keys = RatingContext::new(&book, period.clone()).by_keys();
            for (account, ledger) in meter.accounts() {
                prop_assert!(summed(&ctx, ledger, false).is_some());
                prop_assert!(summed(&by_keys, ledger, false).is_none());
                let rebuilt = ledger.restricted_to(i64::MIN, i64::MAX);
                prop_assert_eq!(ledger.profiles(), rebuilt.profiles());
                // Loaded key by key, each key first with its first run only, then replaced.
                let mut keys: Vec<_> = ledger.usage().collect();
                keys.sort_by(|a, b| a.0.cmp(b.0));
                let mut loaded = AccountLedger::new();
                for (key, runs) in &keys {
                    let first = Runs::from_runs(runs.as_slice().iter().take(1).copied());
                    loaded.set_runs((*key).clone(), first);
                }
                for j in (1..keys.len()).rev() {
                    keys.swap(j, next() as usize % (j + 1));
                }
                for (key, runs) in &keys {
                    loaded.set_runs((*key).clone(), (*runs).clone());
                }
                prop_assert_eq!(ledger.profiles(), loaded.profiles());
                let fast = rate_account(&ctx, account, Some(ledger), d("5")).unwrap();
                let slow = rate_account(&by_keys, account, Some(ledger), d("5")).unwrap();
                let from_loaded = rate_account(&ctx, account, Some(&loaded), d("5")).unwrap();
                let json = |r: &billing_core::rating::Rated| {
                    (serde_json::to_string(&r.invoice).unwrap(), serde_json::to_string(&r.unpriced).unwrap())
                };
                prop_assert_eq!(json(&fast), json(&slow));
                prop_assert_eq!(json(&from_loaded), json(&slow));
            }
        }
    }
}
