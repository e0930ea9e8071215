//! `gpubill`: the single binary. Roles are subcommands.

mod bench;
mod demo;
mod fleet;
mod load;
mod rate;
mod replay;
mod serve;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "gpubill",
    version,
    about = "Event-sourced billing and metering for GPU rental platforms"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Rate a JSONL file of CloudEvents with a price book: invoices (JSON) on stdout,
    /// rejected and unpriced usage on stderr (billing-semantics.md section 6).
    Rate(rate::RateArgs),
    /// Benchmark the billing core on a generated GPU fleet (see docs/benchmarks.md).
    Bench(bench::BenchArgs),
    /// Generate a GPU fleet's usage events as CloudEvents JSONL.
    Simulate(fleet::SimulateArgs),
    /// Run the persistent engine and its HTTP API (SQLite under ./data by default).
    Serve(serve::ServeArgs),
    /// Apply the database migrations and exit.
    Migrate(serve::MigrateArgs),
    /// A guided tour: the embedded engine, a simulated day of a small fleet, invoices.
    Demo(demo::DemoArgs),
    /// Rebuild every projection from the beginning of the Kafka topics into an empty database.
    Replay(replay::ReplayArgs),
    /// Fixed-rate GETs against a running server, with latency percentiles (benchmarks).
    Load(load::LoadArgs),
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Rate(args) => rate::run(args),
        Command::Bench(args) => bench::run(args).map(|()| ExitCode::SUCCESS),
        Command::Simulate(args) => fleet::run(args).map(|()| ExitCode::SUCCESS),
        Command::Serve(args) => runtime()
            .and_then(|rt| rt.block_on(serve::run(args)))
            .map(|()| ExitCode::SUCCESS),
        Command::Migrate(args) => runtime()
            .and_then(|rt| rt.block_on(serve::migrate(args)))
            .map(|()| ExitCode::SUCCESS),
        Command::Demo(args) => runtime()
            .and_then(|rt| rt.block_on(demo::run(args)))
            .map(|()| ExitCode::SUCCESS),
        Command::Replay(args) => runtime()
            .and_then(|rt| rt.block_on(replay::run(args)))
            .map(|()| ExitCode::SUCCESS),
        Command::Load(args) => runtime()
            .and_then(|rt| rt.block_on(load::run(args)))
            .map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        // A closed stdout (`gpubill rate ... | head`) is not an error worth a message.
        Err(e)
            if e.chain()
                .filter_map(|c| c.downcast_ref::<std::io::Error>())
                .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gpubill: {e:#}");
            ExitCode::from(2)
        }
    }
}
