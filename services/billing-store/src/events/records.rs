//! The shapes of a batch being folded: its parts (a partition's position and records) and its
//! records in fold order, shared by the fold and its sorting stage.

/// One partition's share of a batch: its position and its records (offset, payload).
pub type Part<'a> = (Position<'a>, &'a [(i64, &'a [u8])]);

/// Where a batch comes from: a consumer's partition and the offset the batch must start the
/// stored position at (compare-and-set).
#[derive(Debug, Clone, Copy)]
pub struct Position<'a> {
    pub consumer: &'a str,
    pub partition: i64,
    /// The stored next offset this batch continues from (absent rows count as this value).
    pub expected_next: i64,
    /// Where rejected records go besides the dead-letter table: an outbox row for this topic,
    /// written in the same transaction (relayed to Kafka afterwards).
    pub dead_letter_topic: Option<&'a str>,
}

/// A batch's records in fold order, with the part each came from: (part, offset, record).
pub(crate) type Records<'a> = Vec<(usize, i64, &'a [u8])>;
