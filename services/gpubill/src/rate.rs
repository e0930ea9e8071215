//! `gpubill rate --prices FILE --events FILE --period YYYY-MM [--account ID]`
//! (billing-semantics.md section 6).
//!
//! stdout: a JSON array, one invoice per payer and region (sections 18 and 19: an account
//! paid for by its parent's payer is on that payer's invoice), sorted by account, then region
//! (home first, then by name).
//! stderr: one JSON object per line for every rejected event (`{"line":..,"reason":..}`) and
//! every unpriced usage (`{"reason":"unpriced",..}`).
//! Exit status 0, unless an input file cannot be read, the price book is invalid or
//! `--account` names an account that is not a payer (2).

use anyhow::Context;
use billing_core::event::{OVERSIZE_KEPT_BYTES, oversize_stand_in};
use billing_core::limits::MAX_RECORD_BYTES;
use billing_core::meter::{Admission, Meter};
use billing_core::period::Period;
use billing_core::pricebook::PriceBook;
use billing_core::rating::rate_month;
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
    /// Calendar month `YYYY-MM`, in each account's timezone (`[[accounts]]`), else its
    /// invoice's region's (the price book's for home).
    #[arg(long)]
    pub period: String,
    /// Only this payer's invoices (an account paid for by another is a usage error).
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
        let Some(line) = read_record_line(&mut reader).context("reading events")? else {
            break;
        };
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

/// Reads one line without ever holding more than the record limit of it: a line over
/// [`MAX_RECORD_BYTES`] is streamed through SHA-256 and comes back as its bounded stand-in
/// (rejected as `record_too_large` like the line itself), so a multi-GB line without a newline
/// costs no memory. `None` at the end of the input.
pub fn read_record_line(reader: &mut impl BufRead) -> std::io::Result<Option<Vec<u8>>> {
    use sha2::Digest;
    let mut line = Vec::new();
    let mut hasher: Option<sha2::Sha256> = None;
    let (mut len, mut read_any) = (0u64, false);
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        read_any = true;
        // The newline ends the line and is not part of the record.
        let (chunk, consumed, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        len += chunk.len() as u64;
        match &mut hasher {
            Some(h) => h.update(chunk),
            None if line.len() + chunk.len() > MAX_RECORD_BYTES + 1 => {
                let mut h = sha2::Sha256::new();
                h.update(&line);
                h.update(chunk);
                let room = OVERSIZE_KEPT_BYTES.saturating_sub(line.len());
                line.extend_from_slice(&chunk[..room.min(chunk.len())]);
                hasher = Some(h);
            }
            None => line.extend_from_slice(chunk),
        }
        reader.consume(consumed);
        if done {
            break;
        }
    }
    if !read_any {
        return Ok(None);
    }
    Ok(Some(match hasher {
        None => line,
        Some(h) => oversize_stand_in(len, &hex::encode(h.finalize()), &line),
    }))
}

pub fn run(args: RateArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.prices)
        .with_context(|| format!("cannot read price book {}", args.prices.display()))?;
    let book = PriceBook::from_toml(&text)
        .with_context(|| format!("invalid price book {}", args.prices.display()))?;
    // A bad month is refused before reading any event.
    Period::month(&args.period, book.timezone)?;
    // Section 18: only payers get invoices (in the organization of the month, issue 27).
    let month_book = book.at_period(&args.period);
    if let Some(account) = args.account.as_deref()
        && !month_book.is_payer(account)
    {
        eprintln!(
            "gpubill: --account {account:?} is not a payer in {}: it is paid for by {:?}, whose invoice holds it (name that payer instead)",
            args.period,
            month_book.payer_of(account)
        );
        return Ok(ExitCode::from(2));
    }
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
    let month = rate_month(&book, &args.period, &meter, args.account.as_deref())?;
    let mut invoices = Vec::with_capacity(month.rated.len());
    for r in month.rated {
        for u in &r.unpriced {
            let mut v = serde_json::to_value(u)?;
            v["reason"] = json!("unpriced");
            writeln!(err, "{v}")?;
        }
        invoices.push(r.invoice);
    }
    for u in &month.unpriced {
        let mut v = serde_json::to_value(u)?;
        v["reason"] = json!("unpriced");
        writeln!(err, "{v}")?;
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    serde_json::to_writer_pretty(&mut out, &invoices)?;
    writeln!(out)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod bounded_lines {
    use super::*;

    /// A reader that yields `n` bytes of `x` and no newline, without holding them.
    struct Endless(u64);
    impl std::io::Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = (buf.len() as u64).min(self.0) as usize;
            buf[..n].fill(b'x');
            self.0 -= n as u64;
            Ok(n)
        }
    }

    #[test]
    fn a_huge_line_is_streamed_into_a_bounded_stand_in() {
        // Issue 14, finding 15: 256 MiB without a newline, read through a 64 KiB buffer.
        let mut r = BufReader::with_capacity(64 << 10, Endless(256 << 20));
        let line = read_record_line(&mut r).unwrap().unwrap();
        assert!(line.len() < 2048, "{}", line.len());
        let rejection = billing_core::event::decode(&line).unwrap_err();
        assert_eq!(rejection.reason, billing_core::RejectReason::RecordTooLarge);
        assert!(
            rejection.detail.contains("268435456 bytes"),
            "{}",
            rejection.detail
        );
        assert!(read_record_line(&mut r).unwrap().is_none());
    }

    #[test]
    fn lines_within_the_limit_come_back_whole_and_empty_lines_count() {
        let mut r = BufReader::new(&b"{\"a\":1}\n\nlast"[..]);
        assert_eq!(read_record_line(&mut r).unwrap().unwrap(), b"{\"a\":1}");
        assert_eq!(read_record_line(&mut r).unwrap().unwrap(), b"");
        assert_eq!(read_record_line(&mut r).unwrap().unwrap(), b"last");
        assert!(read_record_line(&mut r).unwrap().is_none());
    }
}
