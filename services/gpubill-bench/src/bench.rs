//! `gpubill-bench bench`: the billing core's throughput on a generated fleet (issue 2's targets).
//!
//! 1. decode + dedupe + ledger, one core: one day of N GPUs heartbeating every 30 s with 5 s
//!    overlaps and 10% redeliveries (1,000 GPUs: ~3.2M events);
//! 2. ledger memory per active usage key, measured by a counting allocator;
//! 3. rating a full month for M accounts, each an 8-GPU lease churning daily, with
//!    reservations, graduated tiers and two off-peak windows.

use billing_core::event::Class;
use billing_core::ledger::AccountLedger;
use billing_core::meter::{Admission, Meter};
use billing_core::period::Period;
use billing_core::pricebook::PriceBook;
use billing_core::rating::{RatingContext, rate_account};
use clap::Args;
use gpubill_fleet::{FleetSpec, SKU_GPU, generate};
use rust_decimal::Decimal;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

/// Live heap bytes, for the memory figures. The global allocator of the whole `gpubill-bench`
/// binary (the production binary `gpubill` keeps the system allocator uncounted).
struct Counting;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

#[allow(unsafe_code)] // the counting allocator of `gpubill-bench` wraps the system one
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE_BYTES.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live_bytes() -> isize {
    LIVE_BYTES.load(Ordering::Relaxed)
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// GPUs in the ingest benchmark's fleet.
    #[arg(long, default_value_t = 1000)]
    pub gpus: u32,
    /// Seconds of heartbeats in the ingest benchmark's fleet (`--gpus 1000000 --seconds 60`
    /// measures memory per key at a million keys).
    #[arg(long, default_value_t = 86_400)]
    pub seconds: i64,
    /// Accounts in the rating benchmark.
    #[arg(long, default_value_t = 1000)]
    pub accounts: u32,
    /// Repetitions of each timed part (the best is reported).
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    /// Instead of the ingest and ledger benchmarks: rate the rating benchmark's fleet as
    /// events through `rate_month` (what `gpubill rate` calls) with its part-2 price book and
    /// with a part-3 one (issue 26), alternately, and print both times and their ratio.
    #[arg(long)]
    pub part3: bool,
    /// With `--part3`: rate only this side (`part2` or `part3`), e.g. to count its
    /// instructions under callgrind.
    #[arg(long, requires = "part3", value_parser = ["part2", "part3"])]
    pub only: Option<String>,
    /// With `--part3`: each GPU stops 0 to 3,599 s before its lease's 20 h, so that billing
    /// increments owe padding (the fleet's runs are whole hours otherwise).
    #[arg(long, requires = "part3")]
    pub early_stops: bool,
}

/// The part-2 benchmark (`--part3` is dispatched by `main` to `bench_part3`, which reads this
/// module's fleet: no module imports one that imports it back).
pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    ingest(&args)?;
    rating(&args)?;
    Ok(())
}

/// Records metered together by `Meter::ingest_block`.
const BLOCK: usize = 64;

fn ingest(args: &BenchArgs) -> anyhow::Result<()> {
    let spec = FleetSpec {
        gpus: args.gpus,
        accounts: args.gpus.div_ceil(8).max(1),
        egress_every: 0,
        seconds: args.seconds,
        ..FleetSpec::default()
    };
    let mut buf = String::new();
    let mut ends = Vec::new();
    generate(&spec, |line| {
        buf.push_str(line);
        ends.push(buf.len());
    })?;
    let events = ends.len();
    println!(
        "ingest: {} GPUs, {} s, 30 s heartbeats, 5 s overlap, 10% redeliveries: {events} events, {:.0} MB",
        args.gpus,
        args.seconds,
        buf.len() as f64 / 1e6
    );
    // Decode and validate alone, for the breakdown.
    let t0 = Instant::now();
    let mut start = 0;
    let mut valid = 0u64;
    for &end in &ends {
        valid += billing_core::event::decode(&buf.as_bytes()[start..end]).is_ok() as u64;
        start = end;
    }
    let decode_secs = t0.elapsed().as_secs_f64();
    println!(
        "  decode + validate alone: {:.0} events/s ({valid} valid)",
        events as f64 / decode_secs
    );
    let mut best = f64::MAX;
    let mut keys = 0;
    let mut per_key = 0.0;
    for _ in 0..args.repeat.max(1) {
        let before = live_bytes();
        let mut meter = Meter::with_capacity(events);
        let t0 = Instant::now();
        let (mut accepted, mut duplicates, mut rejected) = (0u64, 0u64, 0u64);
        let mut block: Vec<&[u8]> = Vec::with_capacity(BLOCK);
        let mut start = 0;
        for (i, &end) in ends.iter().enumerate() {
            block.push(&buf.as_bytes()[start..end]);
            start = end;
            if block.len() == BLOCK || i + 1 == ends.len() {
                for a in meter.ingest_block(&block) {
                    match a {
                        Admission::Accepted => accepted += 1,
                        Admission::Duplicate => duplicates += 1,
                        Admission::Rejected(_) => rejected += 1,
                    }
                }
                block.clear();
            }
        }
        let secs = t0.elapsed().as_secs_f64();
        best = best.min(secs);
        anyhow::ensure!(rejected == 0, "generated events were rejected");
        let total = live_bytes() - before;
        // Ledger alone: clone it and measure what the clone holds.
        let b2 = live_bytes();
        let ledgers: Vec<AccountLedger> = meter.accounts().map(|(_, l)| l.clone()).collect();
        let ledger_bytes = live_bytes() - b2;
        keys = meter.usage_keys();
        per_key = ledger_bytes as f64 / keys as f64;
        println!(
            "  run: {secs:.3} s, {:.0} events/s (accepted {accepted}, duplicates {duplicates}); meter heap {:.0} MB (dedupe + ledger)",
            events as f64 / secs,
            total as f64 / 1e6
        );
        drop(ledgers);
    }
    println!("  best: {:.0} events/s on one core", events as f64 / best);
    println!(
        "  ledger: {keys} usage keys, {per_key:.0} bytes per key (key strings, runs, map slot)"
    );
    Ok(())
}

/// The rating benchmark's price book without its account terms ([`reservations`]).
pub(crate) const RATING_BOOK: &str = r#"
currency = "CNY"
timezone = "Asia/Shanghai"

[skus."gpu.h100-80g"]
minimum_seconds = 60
tiers = [ { up_to_hours = 500, rate_per_hour = "24.00" }, { up_to_hours = 2000, rate_per_hour = "21.00" }, { rate_per_hour = "18.00" } ]

[[offpeak]]
from = "22:00"
to = "06:00"
multiplier = "0.70"

[[offpeak]]
from = "00:00"
to = "24:00"
days = ["sat", "sun"]
multiplier = "0.85"

[tax]
rate = "0.06"
"#;

/// The account terms of the rating benchmark: a reservation of 4 GPUs per account.
pub(crate) fn reservations(accounts: u32) -> String {
    let mut text = String::new();
    for a in 0..accounts {
        text.push_str(&format!(
            "\n[[reservations]]\naccount = \"acct-{a}\"\nsku = \"{SKU_GPU}\"\nquantity = \"4\"\nfrom = \"2026-11-01T00:00:00+08:00\"\nto = \"2026-12-01T00:00:00+08:00\"\nrate_per_hour = \"15.00\"\n"
        ));
    }
    text
}

/// Hours each daily lease of the rating benchmark runs.
pub(crate) const LEASE_HOURS: i64 = 20;

/// When account `a`'s lease of day `day` starts: at a varying hour of the day.
pub(crate) fn lease_start(period_start: i64, a: u32, day: i64) -> i64 {
    period_start + day * 86_400 + ((i64::from(a) * 7 + day * 5) % 12) * 3600
}

fn rating(args: &BenchArgs) -> anyhow::Result<()> {
    let book = PriceBook::from_toml(&format!("{RATING_BOOK}{}", reservations(args.accounts)))?;
    let period = Period::month("2026-11", book.timezone)?;
    // Each account: an 8-GPU lease a day, starting at a varying hour and running 20 h.
    let mut ledgers = Vec::new();
    let mut runs = 0;
    for a in 0..args.accounts {
        let mut l = AccountLedger::new();
        for day in 0..30i64 {
            let from = lease_start(period.start, a, day);
            for g in 0..8 {
                l.insert_usage(
                    &format!("l-{a}-{day}"),
                    &format!("GPU-{g}"),
                    SKU_GPU,
                    Class::OnDemand,
                    from,
                    from + LEASE_HOURS * 3600,
                    Decimal::ONE,
                );
                runs += 1;
            }
        }
        ledgers.push((format!("acct-{a}"), l));
    }
    println!(
        "rating: {} accounts x 8 GPUs, daily churn, reservations of 4, 3 graduated tiers, 2 off-peak windows, 2026-11: {runs} runs",
        args.accounts
    );
    let mut best = f64::MAX;
    let mut total = Decimal::ZERO;
    for _ in 0..args.repeat.max(1) {
        let t0 = Instant::now();
        let ctx = RatingContext::new(&book, period.clone());
        total = Decimal::ZERO;
        for (a, l) in &ledgers {
            let rated = rate_account(&ctx, a, Some(l), Decimal::ZERO)?;
            total += rated.invoice.total;
        }
        let secs = t0.elapsed().as_secs_f64();
        best = best.min(secs);
        println!("  run: {secs:.3} s");
    }
    println!(
        "  best: {best:.3} s for {} accounts ({:.0} accounts/s); sum of totals {total}",
        args.accounts,
        args.accounts as f64 / best
    );
    Ok(())
}
