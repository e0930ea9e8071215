//! The port between ingest and the event log: the API hands records to an [`EventSink`]
//! (Kafka mode: `billing_kafka::UsageSink`). It lives here, below both the API and the Kafka
//! crate, so that neither depends on the other.

/// Hands ingested records to the event log (Kafka): `Ok` only once it acknowledged all of
/// them; `Err` with a reason when it did not within its bounded time.
pub trait EventSink: Send + Sync {
    fn publish(
        &self,
        records: Vec<(String, Vec<u8>)>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>> + Send + '_>>;
}
