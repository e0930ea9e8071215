//! HTTP ingest (`Store::ingest`): concurrent requests group-committed into one log append and
//! fold (`fold.rs`) per group.

use crate::conn::error::{MAX_BATCH_RECORDS, Result, StoreError};
use crate::conn::handles::LogHandle;
use crate::events::fold::Outcome;
use crate::events::ingest_queue::QueuedIngest;

impl LogHandle<'_> {
    /// Appends `records` to the log and folds them, all in one transaction; answers only once
    /// it is committed. Records already in the log but not yet folded are folded first.
    ///
    /// Group commit (as [`Store::authorize`]): a call queues its records, then whoever holds
    /// the writer lock appends and folds every queued request (in arrival order, up to
    /// [`MAX_BATCH_RECORDS`] records in all) in one transaction and answers each with its own
    /// outcomes; a caller whose request a previous group took just waits for its answer.
    /// Under concurrent posts (a fleet's agents), one transaction, one re-rating of each
    /// touched account and one commit serve many requests. A group is one batch of the log:
    /// duplicates across its requests are settled as within one request (the first in
    /// arrival order is accepted). When a group fails, nothing of it is written and every
    /// request in it gets the error ([`StoreError::Group`] for all but the leader's).
    pub async fn ingest(&self, records: Vec<Vec<u8>>, now_ms: i64) -> Result<Vec<Outcome>> {
        if records.len() > MAX_BATCH_RECORDS {
            return Err(StoreError::BatchTooLarge(records.len()));
        }
        let (answer, mut rx) = tokio::sync::oneshot::channel();
        self.ingests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(QueuedIngest {
                records,
                now_ms,
                answer,
            });
        loop {
            let _w = self.writer.lock().await;
            match rx.try_recv() {
                Ok(answer) => return answer,
                Err(tokio::sync::oneshot::error::TryRecvError::Closed) => {
                    return Err(StoreError::Group("the ingest group was dropped".into()));
                }
                Err(tokio::sync::oneshot::error::TryRecvError::Empty) => {}
            }
            let group = self.next_ingest_group();
            self.ingest_group(group).await;
        }
    }

    /// The queued requests of the next group: from the front, at least one, while the
    /// group's records stay within [`MAX_BATCH_RECORDS`].
    fn next_ingest_group(&self) -> Vec<QueuedIngest> {
        let mut queue = self.ingests.lock().unwrap_or_else(|e| e.into_inner());
        let mut group = Vec::new();
        let mut records = 0;
        while let Some(next) = queue.front() {
            if !group.is_empty() && records + next.records.len() > MAX_BATCH_RECORDS {
                break;
            }
            records += next.records.len();
            group.extend(queue.pop_front());
        }
        group
    }

    /// Appends and folds `group` in one transaction (the caller holds the writer lock) and
    /// answers each request with its outcomes, or all with the error.
    async fn ingest_group(&self, group: Vec<QueuedIngest>) {
        if group.is_empty() {
            return;
        }
        let now_ms = group.iter().map(|q| q.now_ms).max().unwrap_or(0);
        let lens: Vec<usize> = group.iter().map(|q| q.records.len()).collect();
        let (records, answers): (Vec<Vec<Vec<u8>>>, Vec<_>) =
            group.into_iter().map(|q| (q.records, q.answer)).unzip();
        let records: Vec<Vec<u8>> = records.into_iter().flatten().collect();
        metrics::histogram!("gpubill_ingest_group_requests").record(lens.len() as f64);
        self.ingest_groups
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match self.ingest_locked(&records, now_ms).await {
            Ok(outcomes) => {
                let mut outcomes = outcomes.into_iter();
                for (answer, n) in answers.into_iter().zip(lens) {
                    let _ = answer.send(Ok(outcomes.by_ref().take(n).collect()));
                }
            }
            Err(e) => {
                let text = e.to_string();
                let mut answers = answers.into_iter();
                // The first request gets the error itself (its kind decides the HTTP status
                // when it is alone); the others its text.
                if let Some(first) = answers.next() {
                    let _ = first.send(Err(e));
                }
                for answer in answers {
                    let _ = answer.send(Err(StoreError::Group(text.clone())));
                }
            }
        }
    }

    /// Appends `records` and folds them in one transaction (the caller holds the writer lock).
    async fn ingest_locked(&self, records: &[Vec<u8>], now_ms: i64) -> Result<Vec<Outcome>> {
        match self.append_and_fold(records, now_ms).await {
            // Records in the log that were never folded (appended by another writer, or left
            // by a crash of one): fold them first, then this batch.
            Err(StoreError::Fenced { .. }) => {
                self.catch_up_locked(now_ms).await?;
                self.append_and_fold(records, now_ms).await
            }
            other => other,
        }
    }
}
