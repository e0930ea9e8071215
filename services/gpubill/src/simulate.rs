//! `gpubill simulate`: a generated fleet's usage events (the generator is the `gpubill-fleet`
//! crate) as CloudEvents JSONL, or posted to a running `gpubill serve` (`--post`, with a
//! progress bar; scripts/bench-http.sh feeds its benchmarks this way).

use anyhow::Context;
use clap::Args;
use gpubill_fleet::{FleetSpec, generate};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub fleet: FleetSpec,
    /// Output file (JSONL); stdout when absent.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Post the events to a running `gpubill serve` at this base URL instead of writing them.
    #[arg(long)]
    pub post: Option<String>,
    /// Bearer token for --post (admin or ingest token).
    #[arg(long, env = "GPUBILL_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Events per request with --post.
    #[arg(long, default_value_t = 1000)]
    pub batch: usize,
    /// Requests in flight with --post.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// With --post: at most this many events a second (batches paced evenly); unlimited when
    /// absent.
    #[arg(long)]
    pub rate: Option<u64>,
}

pub fn run(args: SimulateArgs) -> anyhow::Result<()> {
    if let Some(url) = &args.post {
        let token = args
            .token
            .clone()
            .context("--post needs --token (or GPUBILL_TOKEN)")?;
        let mut events = Vec::new();
        generate(&args.fleet, |line| events.push(line.to_string()))?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        return rt.block_on(post_events(
            url,
            &token,
            events,
            args.batch,
            args.concurrency,
            args.rate,
        ));
    }
    let sink: Box<dyn Write> = match &args.out {
        Some(p) => Box::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut w = BufWriter::with_capacity(1 << 20, sink);
    let mut result = Ok(());
    generate(&args.fleet, |line| {
        if result.is_ok() {
            result = writeln!(w, "{line}");
        }
    })?;
    result?;
    w.flush()?;
    Ok(())
}

/// Posts `events` to `url`/v1/events in batches, `concurrency` requests in flight; prints the
/// rate it sustained. With more than one in flight, batches may be folded out of order, which
/// changes nothing billed (the ledger does not depend on order).
pub async fn post_events(
    url: &str,
    token: &str,
    events: Vec<String>,
    batch: usize,
    concurrency: usize,
    rate: Option<u64>,
) -> anyhow::Result<()> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()?;
    let endpoint = format!("{}/v1/events", url.trim_end_matches('/'));
    let bar = ProgressBar::new(events.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} events {per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let t0 = Instant::now();
    let (mut accepted, mut duplicates, mut rejected) = (0u64, 0u64, 0u64);
    let mut in_flight = tokio::task::JoinSet::new();
    let mut chunks = events
        .chunks(batch.max(1))
        .map(|c| (c.len() as u64, format!("[{}]", c.join(","))));
    let mut sent = 0u64;
    loop {
        while in_flight.len() < concurrency.max(1) {
            let Some((n, body)) = chunks.next() else {
                break;
            };
            // Paced: a batch leaves when the events before it are due at `rate`.
            if let Some(r) = rate.filter(|r| *r > 0) {
                let due = t0 + Duration::from_secs_f64(sent as f64 / r as f64);
                tokio::time::sleep_until(due.into()).await;
            }
            sent += n;
            let req = client
                .post(&endpoint)
                .bearer_auth(token)
                .header("content-type", "application/cloudevents-batch+json")
                .body(body);
            let endpoint = endpoint.clone();
            in_flight.spawn(async move {
                let resp = req
                    .send()
                    .await
                    .with_context(|| format!("POST {endpoint}"))?;
                let status = resp.status();
                let v: serde_json::Value = resp.json().await.context("ingest answer")?;
                anyhow::ensure!(status.is_success(), "ingest answered {status}: {v}");
                Ok::<_, anyhow::Error>((n, v))
            });
        }
        let Some(done) = in_flight.join_next().await else {
            break;
        };
        let (n, v) = done??;
        accepted += v["accepted"].as_u64().unwrap_or(0);
        duplicates += v["duplicates"].as_u64().unwrap_or(0);
        rejected += v["rejected"].as_u64().unwrap_or(0);
        bar.inc(n);
    }
    bar.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "posted {} events in batches of {batch} ({concurrency} in flight) in {secs:.2} s: {:.0} events/s ({accepted} accepted, {duplicates} duplicates, {rejected} rejected)",
        events.len(),
        events.len() as f64 / secs
    );
    Ok(())
}
