//! The outbox relay: what the store wrote to its outbox (invoices, commands, fold records,
//! dead letters, quota decisions) published by an idempotent producer, in order.

use crate::error::KafkaError;
use billing_store::Store;
use rdkafka::config::ClientConfig;
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::Producer as _;
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// Relays the outbox (dead letters, issued invoices, ...) to Kafka with an idempotent producer
/// (`enable.idempotence=true`, `acks=all`) until `stop` turns true. A row is marked published
/// only after the broker acknowledged it, so a crash can publish it again: every record
/// carries its outbox sequence in the `gpubill-outbox-seq` header for consumers to dedupe.
/// Rows are published one at a time, in outbox order, each acknowledged before the next: a
/// failed row is retried before anything after it, so the commands topic keeps the order
/// the commands were made in (replay depends on it).
pub async fn relay(
    store: Arc<Store>,
    brokers: &str,
    clock: impl Fn() -> i64,
    mut stop: watch::Receiver<bool>,
) -> Result<(), KafkaError> {
    let connect = || -> Result<FutureProducer, KafkaError> {
        Ok(ClientConfig::new()
            .set("bootstrap.servers", brokers)
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("message.timeout.ms", "30000")
            .create()?)
    };
    let mut producer = connect()?;
    loop {
        if *stop.borrow() {
            return Ok(());
        }
        let rows = store.log().outbox_pending(500).await?;
        // The backlog as this read sees it: exact below 500, "500 or more" at 500.
        metrics::gauge!("gpubill_outbox_pending").set(rows.len() as f64);
        if rows.is_empty() {
            tokio::select! {
                _ = stop.changed() => {}
                _ = tokio::time::sleep(Duration::from_millis(200)) => {}
            }
            continue;
        }
        let mut done = Vec::with_capacity(rows.len());
        for row in &rows {
            let seq = row.seq.to_string();
            let mut headers = OwnedHeaders::new().insert(Header {
                key: "gpubill-outbox-seq",
                value: Some(seq.as_str()),
            });
            for (k, v) in &row.headers {
                headers = headers.insert(Header {
                    key: k,
                    value: Some(v.as_str()),
                });
            }
            let record = FutureRecord::to(&row.topic)
                .key(&row.key)
                .payload(&row.payload)
                .headers(headers);
            // A stop does not wait for a send the broker may not answer for 30 s (an outage):
            // the row stays pending and is published (again, with its sequence header) by the
            // next relay.
            let sent = tokio::select! {
                sent = producer.send(record, Duration::from_secs(30)) => sent,
                _ = stop.changed() => {
                    store.log().outbox_published(&done, clock()).await?;
                    return Ok(());
                }
            };
            match sent {
                Ok(_) => {
                    metrics::counter!("gpubill_outbox_published_total").increment(1);
                    done.push(row.seq)
                }
                Err((e, _)) => {
                    metrics::counter!("gpubill_outbox_publish_failures_total").increment(1);
                    tracing::warn!(error = %e, topic = %row.topic, "outbox relay could not publish; retrying");
                    // An idempotent producer that hit a fatal error (e.g. a sequence gap the
                    // broker refused) publishes nothing more: start a new one.
                    if let Some((code, why)) = producer.client().fatal_error() {
                        tracing::warn!(?code, %why, "outbox producer failed fatally; reconnecting");
                        producer = connect()?;
                    }
                    break;
                }
            }
        }
        let failed = done.len() < rows.len();
        store.log().outbox_published(&done, clock()).await?;
        if failed {
            tokio::select! {
                _ = stop.changed() => {}
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        }
    }
}
