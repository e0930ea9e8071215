//! `gpubill verify --database URL [--period P]` (issue 14): recomputes the ledger from the
//! stored events and every issued invoice and adjustment from the events ingested by its
//! issue and the price book version it was issued with (`billing_store::Store::verify`),
//! and every stored money figure: invoice columns and statuses, gapless numbering, wallets,
//! movements and payments (issue 24.3).
//! Prints the report as JSON on stdout and a summary on stderr; exit status 1 when anything
//! differs, 2 when it cannot run.

use anyhow::Context;
use billing_store::Store;
use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The database to verify: sqlite://PATH or postgres://...
    #[arg(long, env = "GPUBILL__DATABASE__URL")]
    pub database: String,
    /// Only the invoices and adjustments of this period (`YYYY-MM`); the ledger is checked
    /// whole.
    #[arg(long)]
    pub period: Option<String>,
}

pub async fn run(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let is_month = |p: &str| {
        let b = p.as_bytes();
        b.len() == 7
            && b[4] == b'-'
            && b.iter()
                .enumerate()
                .all(|(i, c)| i == 4 || c.is_ascii_digit())
            && (1..=12).contains(&p[5..].parse::<u32>().unwrap_or(0))
    };
    if let Some(p) = &args.period
        && !is_month(p)
    {
        anyhow::bail!("--period {p:?} is not a month YYYY-MM");
    }
    let store = Store::open(&args.database)
        .await
        .context("cannot open the database")?;
    let report = store
        .finance()
        .verify(args.period.as_deref())
        .await
        .map_err(|e| anyhow::anyhow!("verify: {e}"))?;
    store.close().await;
    println!("{}", serde_json::to_string_pretty(&report)?);
    eprintln!(
        "gpubill verify: {} accounts, {} usage keys, {} invoices, {} adjustments, {} wallets checked: {} differences",
        report.accounts,
        report.usage_keys,
        report.invoices,
        report.adjustments,
        report.wallets,
        report.differences.len()
    );
    for d in &report.differences {
        eprintln!("  {} {} {}: {}", d.kind, d.account, d.what, d.detail);
    }
    Ok(if report.differences.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
