//! The directory of a sharded deployment (issue 29; `migrations/directory`): which shards
//! there are, where each one's database and API are, and where moved trees are now. Read by
//! the API to forward requests (`billing_api::shards`) and written by `gpubill shards`.

use super::key::{Shard, shard_of_root};
use crate::conn::error::{Result, StoreError};
use sqlx::{PgPool, Row};

/// One shard as the directory lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ShardEntry {
    pub shard: u32,
    pub count: u32,
    pub database_url: String,
    pub api_url: String,
}

/// A connection pool to the directory database.
#[derive(Debug, Clone)]
pub struct Directory {
    pool: PgPool,
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(format!("directory: {what}"))
}

impl Directory {
    /// Connects to the directory (PostgreSQL) and applies its migrations.
    pub async fn open(url: &str) -> Result<Directory> {
        if !url.starts_with("postgres://") && !url.starts_with("postgresql://") {
            return Err(StoreError::UnsupportedUrl(url.to_string()));
        }
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(4)
            .connect(url)
            .await?;
        sqlx::migrate!("../../migrations/directory")
            .run(&pool)
            .await?;
        Ok(Directory { pool })
    }

    /// Adds a shard or changes its addresses. Every shard of a directory has the same count.
    pub async fn put_shard(&self, shard: Shard, database_url: &str, api_url: &str) -> Result<()> {
        if let Some(other) = self.shards().await?.iter().find(|s| s.count != shard.count) {
            return Err(StoreError::Directory(format!(
                "its shards are of {} (shard {}), not {}",
                other.count, other.shard, shard.count
            )));
        }
        sqlx::query(
            "insert into shards (shard, shard_count, database_url, api_url) values ($1, $2, $3, $4) \
             on conflict (shard) do update set database_url = excluded.database_url, \
             api_url = excluded.api_url",
        )
        .bind(i64::from(shard.index))
        .bind(i64::from(shard.count))
        .bind(database_url)
        .bind(api_url)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Every shard, by index.
    pub async fn shards(&self) -> Result<Vec<ShardEntry>> {
        sqlx::query("select shard, shard_count, database_url, api_url from shards order by shard")
            .fetch_all(&self.pool)
            .await?
            .into_iter()
            .map(|r| {
                Ok(ShardEntry {
                    shard: u32::try_from(r.get::<i64, _>("shard")).map_err(|_| corrupt("shard"))?,
                    count: u32::try_from(r.get::<i64, _>("shard_count"))
                        .map_err(|_| corrupt("shard_count"))?,
                    database_url: r.get("database_url"),
                    api_url: r.get("api_url"),
                })
            })
            .collect()
    }

    /// The shard of `count` that holds the tree `root` now.
    pub async fn holder(&self, root: &str, count: u32) -> Result<u32> {
        let placed = sqlx::query("select shard from tree_placements where root = $1")
            .bind(root)
            .fetch_optional(&self.pool)
            .await?;
        match placed {
            Some(r) => u32::try_from(r.get::<i64, _>("shard")).map_err(|_| corrupt("placement")),
            None => Ok(shard_of_root(root, count)),
        }
    }

    /// Records that the tree `root` is on `shard` after its move number `moves`.
    pub async fn placed(&self, root: &str, shard: u32, moves: i64, now_ms: i64) -> Result<()> {
        sqlx::query(
            "insert into tree_placements (root, shard, moves, moved_at_ms) values ($1, $2, $3, $4) \
             on conflict (root) do update set shard = excluded.shard, moves = excluded.moves, \
             moved_at_ms = excluded.moved_at_ms",
        )
        .bind(root)
        .bind(i64::from(shard))
        .bind(moves)
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}
