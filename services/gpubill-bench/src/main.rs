//! `gpubill-bench`: the benchmark and load tools of gpubill, out of the production binary
//! (issue 25). Their figures, and the commands that measured them, are in docs/benchmarks.md.
//!
//! - `bench`: the billing core's throughput and memory per key on a generated fleet;
//! - `bench-kafka`: the Kafka pipeline into PostgreSQL (throughput, lag recovery, decision
//!   latency, and with `--soak-seconds` the soak run);
//! - `load`: fixed-rate requests against a running `gpubill serve`, latency percentiles.
//!
//! The fleets are those of `gpubill simulate` (the `gpubill-fleet` crate).

mod bench;
mod bench_copy;
mod bench_decisions;
mod bench_kafka;
mod bench_lag;
mod bench_part3;
mod bench_shards;
mod bench_webhooks;
mod kafka_kit;
mod load;
mod soak;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "gpubill-bench",
    version,
    about = "Benchmark and load tools of gpubill (see docs/benchmarks.md)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Benchmark the billing core on a generated GPU fleet (see docs/benchmarks.md).
    Bench(bench::BenchArgs),
    /// Benchmark the Kafka pipeline: bare consume rate vs the engine's end-to-end rate into
    /// PostgreSQL, or the lag recovery after a stop (see docs/benchmarks.md).
    BenchKafka(kafka_kit::BenchKafkaArgs),
    /// Fixed-rate GETs against a running server, with latency percentiles (benchmarks).
    Load(load::LoadArgs),
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// `gpubill-bench bench-kafka`: a fresh topic and database ([`kafka_kit::prepare`]), then
/// the soak run (`soak.rs`) or the run of `bench_kafka.rs` the arguments choose.
async fn bench_kafka(args: kafka_kit::BenchKafkaArgs) -> anyhow::Result<()> {
    if let Some(shards) = args.shards {
        return bench_shards::run(&args, shards).await;
    }
    let (topic, db, store) = kafka_kit::prepare(&args).await?;
    if let Some(seconds) = args.soak_seconds {
        return soak::soak(&args, &topic, store, seconds).await;
    }
    bench_kafka::run(&args, &topic, &db, store).await
}

fn main() -> ExitCode {
    // Logs to stderr (`RUST_LOG`, default `warn`): `RUST_LOG=billing_store=debug` prints every
    // batch's phases in `bench-kafka`.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(args) if args.part3 => bench_part3::run(&args),
        Command::Bench(args) => bench::run(args),
        Command::BenchKafka(args) => runtime().and_then(|rt| rt.block_on(bench_kafka(args))),
        Command::Load(args) => runtime().and_then(|rt| rt.block_on(load::run(args))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gpubill-bench: {e:#}");
            ExitCode::from(2)
        }
    }
}
