//! What the Kafka engine, relay and replay fail with.

use billing_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum KafkaError {
    #[error("kafka: {0}")]
    Kafka(#[from] rdkafka::error::KafkaError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Command(#[from] billing_store::CloseError),
    #[error("the fold task failed: {0}")]
    Task(String),
    #[error(
        "replay needs an empty database; this one already holds events, price books, accounts or invoices"
    )]
    NotEmpty,
    #[error("{topic} offset {offset}: not a gpubill command ({detail})")]
    BadCommand {
        topic: String,
        offset: i64,
        detail: String,
    },
    #[error(
        "{topic} partition {partition}: stopped at offset {at}, needed to read up to {until}: {why}"
    )]
    Short {
        topic: String,
        partition: i32,
        at: i64,
        until: i64,
        why: String,
    },
}
