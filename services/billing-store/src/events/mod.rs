//! The log and the fold: records in, identities, dead letters, the commands topic, the outbox and compaction of identities.

pub(crate) mod batch;
pub(crate) mod capture;
pub(crate) mod commands;
pub(crate) mod compaction;
pub(crate) mod dead_letters;
pub(crate) mod effects;
pub(crate) mod fold;
pub(crate) mod identities;
pub(crate) mod ingest;
pub(crate) mod ingest_queue;
pub(crate) mod known;
pub(crate) mod own_trees;
pub(crate) mod reads;
pub(crate) mod records;
pub(crate) mod sink;
pub(crate) mod sort;
pub(crate) mod writes;
