//! `gpubill-bench load`: request latency at a fixed rate against a running `gpubill serve`
//! (its figures go to docs/benchmarks.md). Posting a simulated fleet is `gpubill simulate
//! --post`, in the production binary.

use clap::Args;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct LoadArgs {
    /// Full URL to GET, e.g. http://127.0.0.1:8080/v1/usage?from=...&to=...&granularity=hour
    #[arg(long)]
    pub url: String,
    /// Bearer token.
    #[arg(long)]
    pub token: String,
    /// Requests per second (open loop: sent on schedule whatever the answers take).
    #[arg(long, default_value_t = 500)]
    pub rate: u32,
    /// How long to send, in seconds.
    #[arg(long, default_value_t = 10)]
    pub seconds: u32,
    /// POST this JSON body instead of a GET (e.g. an authorization to `/v1/authorize`).
    #[arg(long)]
    pub post_json: Option<String>,
    /// Send at the same rate for this many seconds first, not counted: the steady state is
    /// measured, not the server's and the client's connection setup.
    #[arg(long, default_value_t = 0)]
    pub warmup_seconds: u32,
}

/// Fixed-rate GETs; prints latency percentiles.
pub async fn run(args: LoadArgs) -> anyhow::Result<()> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .pool_max_idle_per_host(256)
        .build()?;
    let total = (args.rate as u64 * args.seconds as u64).max(1);
    let warm = args.rate as u64 * args.warmup_seconds as u64;
    let gap = Duration::from_secs_f64(1.0 / args.rate.max(1) as f64);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(bool, Result<Duration, String>)>();
    let start = tokio::time::Instant::now();
    // Counted requests are due from here on.
    let measured = start + gap * warm as u32;
    for i in 0..warm + total {
        let counted = i >= warm;
        tokio::time::sleep_until(start + gap * i as u32).await;
        let (client, url, token, tx, body) = (
            client.clone(),
            args.url.clone(),
            args.token.clone(),
            tx.clone(),
            args.post_json.clone(),
        );
        tokio::spawn(async move {
            let t = Instant::now();
            let req = match body {
                Some(b) => client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(b),
                None => client.get(&url),
            };
            let r = match req.bearer_auth(&token).send().await {
                Ok(resp) if resp.status().is_success() => resp
                    .bytes()
                    .await
                    .map(|_| t.elapsed())
                    .map_err(|e| e.to_string()),
                Ok(resp) => Err(format!("status {}", resp.status())),
                Err(e) => Err(e.to_string()),
            };
            let _ = tx.send((counted, r));
        });
    }
    drop(tx);
    let mut lat = Vec::with_capacity(total as usize);
    let mut errors = Vec::new();
    while let Some((counted, r)) = rx.recv().await {
        if !counted {
            continue;
        }
        match r {
            Ok(d) => lat.push(d),
            Err(e) => errors.push(e),
        }
    }
    let wall = measured.elapsed().as_secs_f64();
    lat.sort();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p).ceil() as usize).saturating_sub(1))
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "{} requests at {} req/s over {wall:.1} s: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {} errors",
        lat.len() + errors.len(),
        args.rate,
        pct(0.50),
        pct(0.90),
        pct(0.99),
        pct(1.0),
        errors.len()
    );
    if let Some(e) = errors.first() {
        println!("first error: {e}");
    }
    Ok(())
}
