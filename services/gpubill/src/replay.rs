//! `gpubill replay`: rebuild every projection from the beginning of the topics into an empty
//! database (see `billing_kafka::replay`).

use anyhow::Context;
use billing_store::{Store, Topics};
use clap::Args;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Kafka bootstrap servers, HOST:PORT.
    #[arg(long, env = "GPUBILL__KAFKA__BROKERS")]
    pub kafka_brokers: String,
    /// The database to rebuild into (must be empty): postgres://... or sqlite://PATH.
    #[arg(long)]
    pub database: String,
    /// The usage topic.
    #[arg(long, default_value = "gpu.usage.v1")]
    pub usage_topic: String,
    /// The commands topic (price books, accounts, period closes).
    #[arg(long, default_value = "billing.commands.v1")]
    pub commands_topic: String,
    /// The invoice number prefix the engines used (`serve --invoice-prefix`).
    #[arg(long, env = "GPUBILL_INVOICE_PREFIX", default_value = billing_core::numbering::INVOICE_PREFIX)]
    pub invoice_prefix: String,
    /// The credit note number prefix the engines used (`serve --credit-note-prefix`).
    #[arg(long, env = "GPUBILL_CREDIT_NOTE_PREFIX", default_value = billing_core::numbering::CREDIT_NOTE_PREFIX)]
    pub credit_note_prefix: String,
    /// The regions' own series the engines used (`serve --region-prefix`).
    #[arg(
        long = "region-prefix",
        env = "GPUBILL_REGION_PREFIXES",
        value_delimiter = ','
    )]
    pub region_prefixes: Vec<String>,
    /// The shard the database is (`serve --shard`): its own commands topic and trees only.
    #[arg(long, env = "GPUBILL_SHARD")]
    pub shard: Option<billing_store::shard::Shard>,
}

pub async fn run(args: ReplayArgs) -> anyhow::Result<()> {
    let commands_topic = match args.shard {
        Some(s) => s.own(&args.commands_topic),
        None => args.commands_topic.clone(),
    };
    let topics = Topics {
        commands: commands_topic.clone(),
        ..Topics::default()
    };
    let store = Store::open(&args.database)
        .await
        .context("cannot open the database")?
        .with_topics(topics);
    let store = crate::settings::with_numbering(
        store,
        &args.invoice_prefix,
        &args.credit_note_prefix,
        &args.region_prefixes,
    )?;
    let store = Arc::new(crate::settings::as_shard(store, args.shard));
    let clock = billing_api::system_clock();
    let started = std::time::Instant::now();
    let report = billing_kafka::replay(
        store.clone(),
        billing_kafka::ReplaySettings::new(&args.kafka_brokers, &args.usage_topic, &commands_topic),
        move || clock(),
    )
    .await?;
    let invoices = store.finance().invoices(None, None).await?.len();
    eprintln!(
        "gpubill: replayed {} commands ({} relayed twice, applied once) and {} usage records from {} partitions in {:.1} s; {} invoices issued",
        report.commands,
        report.duplicate_commands,
        report.records,
        report.partitions,
        started.elapsed().as_secs_f64(),
        invoices
    );
    store.close().await;
    Ok(())
}
