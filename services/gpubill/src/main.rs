//! `gpubill`: the production binary. Roles are subcommands. The benchmark and load tools
//! (`bench`, `bench-kafka`, `load`) are the separate binary `gpubill-bench`
//! (services/gpubill-bench).

mod autoclose;
mod demo;
mod rate;
mod replay;
mod serve;
mod settings;
mod shards;
mod simulate;
mod verify;

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
    /// Generate a GPU fleet's usage events as CloudEvents JSONL.
    Simulate(simulate::SimulateArgs),
    /// Run the persistent engine and its HTTP API (SQLite under ./data by default).
    Serve(serve::ServeArgs),
    /// Apply the database migrations and exit.
    Migrate(serve::MigrateArgs),
    /// Drop event identities of closed periods older than the dedupe horizon.
    Compact(serve::CompactArgs),
    /// A guided tour: the embedded engine, a simulated day of a small fleet, invoices.
    Demo(demo::DemoArgs),
    /// Rebuild every projection from the beginning of the Kafka topics into an empty database.
    Replay(replay::ReplayArgs),
    /// Recompute the ledger and every issued invoice from the stored events; exit 1 on any
    /// difference (the auditor's check).
    Verify(verify::VerifyArgs),
    /// The shards of a deployment (issue 29): the directory, and moving an organization tree
    /// to another shard online.
    Shards(shards::ShardsArgs),
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// Logs to stderr (`RUST_LOG`, default `warn`) and, when `OTEL_EXPORTER_OTLP_ENDPOINT` is set,
/// spans to an OpenTelemetry collector over OTLP/HTTP (protobuf; the exporter reads the
/// standard `OTEL_*` variables: endpoint, headers, timeout, `OTEL_BSP_*`). Spans at `info`
/// and above are exported whatever `RUST_LOG` says (`GPUBILL_OTEL_FILTER` overrides).
fn telemetry() -> anyhow::Result<Option<opentelemetry_sdk::trace::SdkTracerProvider>> {
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::{EnvFilter, Layer};
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")));
    let endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
        .ok()
        .filter(|e| !e.is_empty());
    let Some(endpoint) = endpoint else {
        tracing_subscriber::registry().with(fmt).init();
        return Ok(None);
    };
    use opentelemetry_otlp::WithExportConfig;
    // The standard variable names the collector's base URL; traces go to /v1/traces.
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
        .build()?;
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            opentelemetry_sdk::Resource::builder()
                .with_service_name("gpubill")
                .build(),
        )
        .build();
    let filter = std::env::var("GPUBILL_OTEL_FILTER").unwrap_or_else(|_| "info".into());
    let otel = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("gpubill"))
        .with_filter(EnvFilter::new(filter));
    tracing_subscriber::registry().with(fmt).with(otel).init();
    Ok(Some(provider))
}

fn main() -> ExitCode {
    let provider = match telemetry() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("gpubill: cannot set up OpenTelemetry export: {e:#}");
            return ExitCode::from(2);
        }
    };
    let code = run();
    if let Some(p) = provider {
        // Flushes the spans still batched.
        let _ = p.shutdown();
    }
    code
}

fn run() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Rate(args) => rate::run(args),
        Command::Simulate(args) => simulate::run(args).map(|()| ExitCode::SUCCESS),
        Command::Serve(args) => runtime()
            .and_then(|rt| rt.block_on(serve::run(args)))
            .map(|()| ExitCode::SUCCESS),
        Command::Migrate(args) => runtime()
            .and_then(|rt| rt.block_on(serve::migrate(args)))
            .map(|()| ExitCode::SUCCESS),
        Command::Compact(args) => runtime()
            .and_then(|rt| rt.block_on(serve::compact(args)))
            .map(|()| ExitCode::SUCCESS),
        Command::Demo(args) => runtime()
            .and_then(|rt| rt.block_on(demo::run(args)))
            .map(|()| ExitCode::SUCCESS),
        Command::Verify(args) => runtime().and_then(|rt| rt.block_on(verify::run(args))),
        Command::Replay(args) => runtime()
            .and_then(|rt| rt.block_on(replay::run(args)))
            .map(|()| ExitCode::SUCCESS),
        Command::Shards(args) => runtime()
            .and_then(|rt| rt.block_on(shards::run(args)))
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
