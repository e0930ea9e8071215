//! `gpubill rate --prices FILE --events FILE --period YYYY-MM [--account ID]`
//! (billing-semantics.md section 6).
//!
//! stdout: a JSON array, one invoice per account sorted by account.
//! stderr: one JSON object per line for every rejected event (`{"line":..,"reason":..}`) and
//! every unpriced usage (`{"reason":"unpriced",..}`).
//! Exit status 0, unless an input file cannot be read or the price book is invalid (2).

use anyhow::Context;
use billing_core::meter::{Admission, Meter};
use billing_core::period::Period;
use billing_core::pricebook::PriceBook;
use billing_core::rating::rate_all;
use clap::Args;
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct RateArgs {
    /// Price book (TOML).
    #[arg(long)]
    pub prices: PathBuf,
    /// Events, one CloudEvent per line (JSONL); `-` reads stdin.
    #[arg(long)]
    pub events: PathBuf,
    /// Calendar month in the price book's timezone, `YYYY-MM`.
    #[arg(long)]
    pub period: String,
    /// Only this account's invoice.
    #[arg(long)]
    pub account: Option<String>,
}

/// Lines metered together (see `Meter::ingest_block`).
const BLOCK: usize = 64;

/// Reads every line of `reader` into the meter; rejected lines are reported to `rejects`
/// with their line numbers. Returns (lines read, lines rejected).
pub fn meter_lines(
    reader: impl BufRead,
    meter: &mut Meter,
    rejects: &mut impl Write,
) -> anyhow::Result<(u64, u64)> {
    let mut reader = reader;
    let (mut n, mut rejected) = (0u64, 0u64);
    let mut block: Vec<(u64, Vec<u8>)> = Vec::with_capacity(BLOCK);
    let mut flush = |block: &mut Vec<(u64, Vec<u8>)>,
                     meter: &mut Meter,
                     rejected: &mut u64|
     -> anyhow::Result<()> {
        let records: Vec<&[u8]> = block.iter().map(|(_, l)| l.trim_ascii()).collect();
        for ((line_no, _), admission) in block.iter().zip(meter.ingest_block(&records)) {
            if let Admission::Rejected(r) = admission {
                *rejected += 1;
                let mut v = serde_json::to_value(&r)?;
                v["line"] = json!(line_no);
                writeln!(rejects, "{v}")?;
            }
        }
        block.clear();
        Ok(())
    };
    loop {
        let mut line = Vec::new();
        if reader
            .read_until(b'\n', &mut line)
            .context("reading events")?
            == 0
        {
            break;
        }
        n += 1;
        if line.trim_ascii().is_empty() {
            continue;
        }
        block.push((n, line));
        if block.len() == BLOCK {
            flush(&mut block, meter, &mut rejected)?;
        }
    }
    flush(&mut block, meter, &mut rejected)?;
    Ok((n, rejected))
}

pub fn run(args: RateArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.prices)
        .with_context(|| format!("cannot read price book {}", args.prices.display()))?;
    let book = PriceBook::from_toml(&text)
        .with_context(|| format!("invalid price book {}", args.prices.display()))?;
    let period = Period::month(&args.period, book.timezone)?;
    let mut meter = Meter::new();
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    if args.events.as_os_str() == "-" {
        meter_lines(std::io::stdin().lock(), &mut meter, &mut err)?;
    } else {
        let file = std::fs::File::open(&args.events)
            .with_context(|| format!("cannot read events {}", args.events.display()))?;
        meter_lines(
            BufReader::with_capacity(1 << 20, file),
            &mut meter,
            &mut err,
        )
        .with_context(|| format!("cannot read events {}", args.events.display()))?;
    }
    let rated = rate_all(&book, period, &meter, args.account.as_deref())?;
    let mut invoices = Vec::with_capacity(rated.len());
    for r in rated {
        for u in &r.unpriced {
            let mut v = serde_json::to_value(u)?;
            v["reason"] = json!("unpriced");
            writeln!(err, "{v}")?;
        }
        invoices.push(r.invoice);
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    serde_json::to_writer_pretty(&mut out, &invoices)?;
    writeln!(out)?;
    Ok(ExitCode::SUCCESS)
}
