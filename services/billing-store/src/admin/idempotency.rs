//! `Idempotency-Key` (issue 14): the store keeps each key's request fingerprint and answer,
//! shared by every engine on the database. The HTTP layer (`billing_api::idempotency`)
//! decides what to do with [`Claim`].

use crate::conn::error::Result;
use crate::conn::handles::AdminHandle;

/// A claim "running" for longer than this is taken over by the next request with its key:
/// its request died without releasing it (an engine crashed between the claim and the answer,
/// or the connection broke so that neither the answer nor the release could be written).
/// Longer than any admin request runs; a retry waiting for a live one gives up sooner
/// (`billing_api::idempotency::WAIT`) and is told to retry.
pub const STALE_CLAIM_MS: i64 = 120_000;

/// What a request with an idempotency key finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The key is this request's now: run it, then [`Store::idempotency_finish`].
    Run,
    /// The key was used by a request with another fingerprint.
    Mismatch,
    /// The first request with the key is still running.
    Running,
    /// The first request's answer: status, content type, body.
    Done(u16, Option<String>, Vec<u8>),
}

impl AdminHandle<'_> {
    /// Claims `key` of `scope` for a request of `fingerprint`, or says who has it.
    pub async fn idempotency_claim(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        now_ms: i64,
    ) -> Result<Claim> {
        let inserted = crate::conn::db::query(include_str!(
            "../../queries/shared/insert_idempotency_key.sql"
        ))
        .bind(scope)
        .bind(key)
        .bind(fingerprint)
        .bind(now_ms)
        .execute(&self.pool)
        .await?
        .rows_affected()
            == 1;
        if inserted {
            return Ok(Claim::Run);
        }
        let Some(r) = crate::conn::db::query(include_str!(
            "../../queries/shared/select_idempotency_key.sql"
        ))
        .bind(scope)
        .bind(key)
        .fetch_optional(&self.pool)
        .await?
        else {
            // Forgotten in between (its request failed): claim it again.
            return Box::pin(self.idempotency_claim(scope, key, fingerprint, now_ms)).await;
        };
        if r.get::<String, _>("fingerprint") != fingerprint {
            return Ok(Claim::Mismatch);
        }
        let status: i64 = r.get("status");
        if status == 0 {
            let taken = crate::conn::db::query(include_str!(
                "../../queries/shared/take_over_idempotency_key.sql"
            ))
            .bind(scope)
            .bind(key)
            .bind(fingerprint)
            .bind(now_ms)
            .bind(now_ms - STALE_CLAIM_MS)
            .execute(&self.pool)
            .await?
            .rows_affected()
                == 1;
            return Ok(if taken { Claim::Run } else { Claim::Running });
        }
        Ok(Claim::Done(
            status as u16,
            r.get("content_type"),
            r.get::<Option<Vec<u8>>, _>("response").unwrap_or_default(),
        ))
    }

    /// Keeps the answer of the request that claimed `key`.
    pub async fn idempotency_finish(
        &self,
        scope: &str,
        key: &str,
        (status, content_type, body): (u16, Option<&str>, &[u8]),
    ) -> Result<()> {
        crate::conn::db::query(include_str!(
            "../../queries/shared/finish_idempotency_key.sql"
        ))
        .bind(scope)
        .bind(key)
        .bind(i64::from(status))
        .bind(content_type)
        .bind(body.to_vec())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Forgets `key` (its request failed with a 5xx; a retry runs again).
    pub async fn idempotency_forget(&self, scope: &str, key: &str) -> Result<()> {
        crate::conn::db::query(include_str!(
            "../../queries/shared/delete_idempotency_key.sql"
        ))
        .bind(scope)
        .bind(key)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
