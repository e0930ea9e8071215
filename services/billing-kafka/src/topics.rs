//! The topics `serve` writes and reads, made at start when missing (issue 24, item 10).
//!
//! A broker that auto-creates topics (tansu does, as Kafka does by default) makes a topic on
//! its first use with the broker's default partitions: a commands topic of 4 partitions
//! loses the one order of the commands, and `gpubill replay` refuses it long after the fact.
//! So `serve` creates its topics itself before anything writes to them (the commands topic
//! with one partition and unlimited retention: it is the log replay rebuilds the terms from),
//! and refuses to start, naming the topic, when the commands topic exists with more than
//! one partition. Existing usage and output topics are taken as they are.

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::types::RDKafkaErrorCode;
use std::time::{Duration, Instant};

/// How long `ensure_topics` waits for the broker (to answer, and for a topic it just created
/// to show in the metadata).
pub const TOPICS_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum TopicError {
    #[error(
        "the commands topic {topic} has {partitions} partitions, it needs exactly 1 (its order is the order the commands were made in, which replay depends on): delete it and let serve create it, or name another with --commands-topic"
    )]
    CommandsPartitioned { topic: String, partitions: usize },
    #[error("cannot create topic {topic}: {code}")]
    Create {
        topic: String,
        #[source]
        code: RDKafkaErrorCode,
    },
    #[error("topic {topic} is not in the broker's metadata {waited_s} s after creating it")]
    Missing { topic: String, waited_s: u64 },
    #[error("cannot reach the Kafka brokers {brokers} to check the topics: {source}")]
    Unreachable {
        brokers: String,
        #[source]
        source: rdkafka::error::KafkaError,
    },
}

/// The topics of one deployment: what `serve` creates when missing.
#[derive(Debug, Clone)]
pub struct TopicPlan {
    /// Usage topics (keyed by account), created with `usage_partitions` partitions.
    pub usage: Vec<String>,
    pub usage_partitions: i32,
    /// The commands topic: one partition, `retention.ms=-1`; refused when it has more.
    pub commands: String,
    /// Output topics (invoices, quota decisions, dead letters): one partition when created.
    pub outputs: Vec<String>,
}

/// What `ensure_topics` did: the topics it created.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Ensured {
    pub created: Vec<String>,
}

/// Creates the plan's missing topics and checks the commands topic has one partition.
/// Creating first (an existing topic answers `TopicAlreadyExists`) rather than looking first
/// keeps a metadata request from auto-creating the topic with the broker's defaults.
pub async fn ensure_topics(brokers: &str, plan: &TopicPlan) -> Result<Ensured, TopicError> {
    let unreachable = |source| TopicError::Unreachable {
        brokers: brokers.to_string(),
        source,
    };
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("allow.auto.create.topics", "false")
        .create()
        .map_err(unreachable)?;
    let mut wanted: Vec<NewTopic<'_>> = Vec::new();
    for name in &plan.usage {
        wanted.push(NewTopic::new(
            name,
            plan.usage_partitions.max(1),
            TopicReplication::Fixed(-1),
        ));
    }
    wanted.push(
        NewTopic::new(&plan.commands, 1, TopicReplication::Fixed(-1))
            // The log of the account terms: replay reads it from its beginning.
            .set("retention.ms", "-1"),
    );
    for name in &plan.outputs {
        wanted.push(NewTopic::new(name, 1, TopicReplication::Fixed(-1)));
    }
    let options = AdminOptions::new()
        .request_timeout(Some(TOPICS_TIMEOUT))
        .operation_timeout(Some(TOPICS_TIMEOUT));
    let results = admin
        .create_topics(&wanted, &options)
        .await
        .map_err(unreachable)?;
    let mut ensured = Ensured::default();
    for result in results {
        match result {
            Ok(topic) => {
                tracing::info!(%topic, "created topic");
                ensured.created.push(topic);
            }
            Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((topic, code)) => return Err(TopicError::Create { topic, code }),
        }
    }
    let partitions = partitions_of(&admin, brokers, &plan.commands).await?;
    if partitions != 1 {
        return Err(TopicError::CommandsPartitioned {
            topic: plan.commands.clone(),
            partitions,
        });
    }
    Ok(ensured)
}

/// The partitions of an existing `topic` per the broker's metadata, waiting (up to
/// `TOPICS_TIMEOUT`) for one just created to show.
async fn partitions_of(
    admin: &AdminClient<DefaultClientContext>,
    brokers: &str,
    topic: &str,
) -> Result<usize, TopicError> {
    let started = Instant::now();
    loop {
        let metadata = admin
            .inner()
            .fetch_metadata(Some(topic), TOPICS_TIMEOUT)
            .map_err(|source| TopicError::Unreachable {
                brokers: brokers.to_string(),
                source,
            })?;
        let found = metadata
            .topics()
            .iter()
            .find(|t| t.name() == topic && t.error().is_none())
            .map(|t| t.partitions().len())
            .filter(|n| *n > 0);
        if let Some(n) = found {
            return Ok(n);
        }
        if started.elapsed() >= TOPICS_TIMEOUT {
            return Err(TopicError::Missing {
                topic: topic.to_string(),
                waited_s: TOPICS_TIMEOUT.as_secs(),
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
