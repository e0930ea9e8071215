//! The usage sink of Kafka mode's HTTP ingest: records handed to the usage topic, answered
//! only once the broker acknowledged them all.

use crate::error::KafkaError;
use rdkafka::config::ClientConfig;
use rdkafka::producer::Producer as _;
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::sync::Arc;
use std::time::Duration;

impl billing_store::EventSink for UsageSink {
    fn publish(
        &self,
        records: Vec<(String, Vec<u8>)>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>> + Send + '_>> {
        Box::pin(self.send(records))
    }
}

/// Producers one ingest request may make after fenced or fatal errors before it answers 503: a broker
/// that fails every new producer at once must not keep a request (or the sink) spinning.
const SINK_RENEWALS_MAX: usize = 3;

/// Publishes ingested records to the usage topic (`billing_store::EventSink`): idempotent
/// producer, `acks=all`, a bounded delivery time so the API can answer 503 instead of hanging.
///
/// Like the outbox relay, it makes a new producer when its producer is broken for good
/// (issue 30): after deliveries timed out while the broker was paused, tansu answers every
/// produce of the idempotent producer with `ProducerFenced` (a broker may also fence its
/// `InitProducerId`, which librdkafka raises as a fatal error); such a producer publishes
/// nothing more. The request that sees it retries on the new producer within its own
/// deadline. A 503 means "retry": the records of a request
/// answered 503 may still be written (their identities dedupe them when the client sends
/// them again).
pub struct UsageSink {
    brokers: String,
    producer: std::sync::Mutex<Arc<FutureProducer>>,
    topic: String,
    timeout: Duration,
}

impl UsageSink {
    pub fn new(brokers: &str, topic: &str, timeout: Duration) -> Result<Self, KafkaError> {
        Ok(UsageSink {
            producer: std::sync::Mutex::new(Arc::new(Self::connect(brokers, timeout)?)),
            brokers: brokers.to_string(),
            topic: topic.to_string(),
            timeout,
        })
    }

    fn connect(brokers: &str, timeout: Duration) -> Result<FutureProducer, KafkaError> {
        Ok(ClientConfig::new()
            .set("bootstrap.servers", brokers)
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("message.timeout.ms", timeout.as_millis().to_string())
            .create()?)
    }

    fn current(&self) -> Arc<FutureProducer> {
        self.producer
            .lock()
            .expect("no panic holds the lock")
            .clone()
    }

    /// Replaces `failed` by a new producer, unless another request already did.
    fn renew(&self, failed: &Arc<FutureProducer>) -> Result<(), String> {
        let mut current = self.producer.lock().expect("no panic holds the lock");
        if !Arc::ptr_eq(&current, failed) {
            return Ok(());
        }
        let fresh = Self::connect(&self.brokers, self.timeout).map_err(|e| e.to_string())?;
        let old = std::mem::replace(&mut *current, Arc::new(fresh));
        drop(current);
        metrics::counter!("gpubill_ingest_producer_renewals_total").increment(1);
        // Dropping a producer purges and flushes it (blocking up to 500 ms): not on this task.
        tokio::task::spawn_blocking(move || drop(old));
        Ok(())
    }

    /// Enqueues all records (keyed by account), then waits for every acknowledgement, at most
    /// the configured time (plus a second) in all, making a new producer when the current
    /// one is broken for good and retrying on it within that time.
    pub async fn send(&self, records: Vec<(String, Vec<u8>)>) -> Result<(), String> {
        let deadline = tokio::time::Instant::now() + self.timeout + Duration::from_secs(1);
        let mut renewals = 0;
        loop {
            let producer = self.current();
            let delivered =
                tokio::time::timeout_at(deadline, deliver(&producer, &self.topic, &records));
            let e = match delivered.await {
                Err(_) => return Err("timed out waiting for the broker".to_string()),
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) => e,
            };
            let broken = match producer.client().fatal_error() {
                Some((_, why)) => Some(why),
                None if fenced(&e) => Some(e.to_string()),
                None => None,
            };
            match broken {
                Some(why) if renewals < SINK_RENEWALS_MAX => {
                    tracing::warn!(%why, "ingest producer unusable; making a new one");
                    self.renew(&producer)?;
                    renewals += 1;
                }
                _ => return Err(e.to_string()),
            }
        }
    }
}

/// Whether a delivery failed because the broker no longer takes the producer's id or epoch
/// (tansu answers `ProducerFenced` to every produce after its session was re-initialised
/// during an outage, without librdkafka raising a fatal error): the producer sends nothing
/// more, a new one does.
fn fenced(e: &rdkafka::error::KafkaError) -> bool {
    use rdkafka::types::RDKafkaErrorCode::*;
    matches!(
        e.rdkafka_error_code(),
        Some(ProducerFenced | InvalidProducerEpoch | Fatal)
    )
}

/// Enqueues `records` on `producer`, then waits for every acknowledgement.
async fn deliver(
    producer: &FutureProducer,
    topic: &str,
    records: &[(String, Vec<u8>)],
) -> Result<(), rdkafka::error::KafkaError> {
    let mut deliveries = Vec::with_capacity(records.len());
    for (key, payload) in records {
        let record = FutureRecord::to(topic).key(key).payload(payload);
        deliveries.push(producer.send_result(record).map_err(|(e, _)| e)?);
    }
    for d in deliveries {
        match d.await {
            Ok(Ok(_)) => {}
            Ok(Err((e, _))) => return Err(e),
            Err(_) => return Err(rdkafka::error::KafkaError::Canceled),
        }
    }
    Ok(())
}
