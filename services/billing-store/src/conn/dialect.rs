//! Every difference between the two databases, in one place: what the store does on
//! PostgreSQL (production, several engines on one database) and on SQLite (embedded, one
//! writer), one method of [`Backend`] per difference, each with both sides side by side.
//! The rest of the store runs one code path and asks here where the databases part ways.
//!
//! | Difference | PostgreSQL | SQLite | Method |
//! |---|---|---|---|
//! | Connecting, migrations | pool of 8, `migrations/postgres` | file made on demand, pragmas per connection, pool of 4, `migrations/sqlite` | [`Backend::of_url`], [`Backend::connect`] |
//! | Statements written twice | `queries/postgres/NAME.sql` | `queries/sqlite/NAME.sql` | [`Backend::sql`] with a [`Statement`] |
//! | A list of values in one parameter | native `text[]`, `= any(array(...))` | a JSON array, `json_each` | [`Backend::in_list`] (bound by `db.rs`) |
//! | Batches of rows | binary `COPY`, or one array per column (`unnest`) | rows of `?` placeholders | [`Backend::row_batches`] (written by `sql.rs`) |
//! | Event identities (`events`) | 16-byte digest, one table with a global unique index, binary `COPY` first (native arrays when a batch meets a held identity) | (source, id) text, JSON | [`Backend::identity_keys`] (kept by `identities.rs`) |
//! | Writers across processes | advisory locks (writer shared or exclusive, one per log partition) | the database's own single writer | [`Backend::advisory_locks`] |
//! | Writers in one process | folds concurrent; authorizations serialize among themselves | one writer mutex for everything | [`Backend::fold_mutex`], [`Backend::authorization_mutex`] |
//! | Dead letter numbers | a sequence (concurrent folds) | after the highest given | [`Backend::next_dead_letter_numbers`], [`Backend::raise_dead_letter_numbers`] |
//!
//! Three things stay with the driver layer (`db.rs`), as they are the drivers' types rather
//! than choices: a [`crate::conn::db::Val::Strings`] list is bound as `text[]` or as JSON (the
//! other half of [`Backend::in_list`]), PostgreSQL's `integer` columns read as `i64`, and
//! [`crate::conn::db::Conn::as_pg`] gives the native connection the PostgreSQL-only code needs
//! (through [`postgres`] here). The schemas differ only where
//! `tests/backends.rs` (`postgres_and_sqlite_schemas_agree_after_migrations`) lists it.

use crate::conn::backend::Backend;
use crate::conn::db::{Conn, Pool};
use crate::conn::error::{Result, StoreError};
use std::time::Duration;
use tokio::sync::Mutex;

/// A statement each database has its own text of, under one name in `queries/postgres` and
/// `queries/sqlite` (see [`Backend::sql`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Statement {
    /// An account, its quotas, provisional cost and hold revision in one read (spent.rs).
    SelectAccountState,
    /// Marks the expired holds of a batch's accounts (capture.rs).
    ExpireHolds,
    /// Captures the live holds of a batch's leases (capture.rs).
    CaptureHolds,
    /// Moves the fold stamp past a recorded one (writes.rs).
    RaiseFoldStamp,
    /// Draws the next fold stamp (writes.rs).
    NextFoldStamp,
    /// Begins an authorization group: its lock (PostgreSQL) and the latest price book
    /// version (locks.rs).
    BeginHolds,
}

/// How a batch of rows goes in (see `sql::insert_rows`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowBatches {
    /// PostgreSQL, a plain insert: binary `COPY` (the fastest way in).
    BinaryCopy,
    /// PostgreSQL, an insert with an `on conflict` tail: one statement with one native array
    /// per column (`select * from unnest(...)`).
    ColumnArrays,
    /// SQLite: rows of anonymous `?` placeholders, chunked below its parameter limit.
    Placeholders,
}

/// How the `events` table keys an event's identity (see `identities.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdentityKeys {
    /// PostgreSQL: a 16-byte digest of (source, id) with the 16-byte fingerprint, the table
    /// partitioned by the month of the event's end, bound as native arrays
    /// (migrations 0010, 0011).
    Digest,
    /// SQLite: the (source, id) text as the primary key, rows passed as JSON.
    SourceAndId,
}

impl Backend {
    /// The database a URL names: `sqlite:...`, or `postgres:` / `postgresql:...`.
    pub(crate) fn of_url(url: &str) -> Result<Backend> {
        if url.starts_with("sqlite:") {
            Ok(Backend::Sqlite)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Ok(Backend::Postgres)
        } else {
            Err(StoreError::UnsupportedUrl(url.to_string()))
        }
    }

    /// Connects to `url` (of this backend) and applies its migrations. SQLite: the file is
    /// made when missing (`mode=rwc` unless the URL says otherwise), every connection sets
    /// `queries/sqlite/connection_pragmas.sql`, at most 4 connections. PostgreSQL: at most 8.
    ///
    /// sqlx's own statement logging is off: its slow-statement warnings print whole
    /// multi-KB statements with their parameters. Slow batches are logged by the fold with
    /// their size and latency instead (and every batch is a `fold_batch` span).
    pub(crate) async fn connect(self, url: &str) -> Result<Pool> {
        use sqlx::ConnectOptions;
        Ok(match self {
            Backend::Sqlite => {
                let url = if url.contains("mode=") {
                    url.to_string()
                } else {
                    format!("{url}{}mode=rwc", if url.contains('?') { "&" } else { "?" })
                };
                let connect: sqlx::sqlite::SqliteConnectOptions = url.parse()?;
                let pool = sqlx::sqlite::SqlitePoolOptions::new()
                    .acquire_timeout(Duration::from_secs(10))
                    .max_connections(4)
                    .after_connect(|conn, _| {
                        Box::pin(async move {
                            use sqlx::Executor;
                            conn.execute(include_str!(
                                "../../queries/sqlite/connection_pragmas.sql"
                            ))
                            .await?;
                            Ok(())
                        })
                    })
                    .connect_with(connect.disable_statement_logging())
                    .await?;
                sqlx::migrate!("../../migrations/sqlite").run(&pool).await?;
                Pool::Lite(pool)
            }
            Backend::Postgres => {
                let connect: sqlx::postgres::PgConnectOptions = url.parse()?;
                let pool = sqlx::postgres::PgPoolOptions::new()
                    .acquire_timeout(Duration::from_secs(10))
                    .max_connections(8)
                    .connect_with(connect.disable_statement_logging())
                    .await?;
                sqlx::migrate!("../../migrations/postgres")
                    .run(&pool)
                    .await?;
                Pool::Pg(pool)
            }
        })
    }

    /// This database's text of `statement` (`queries/postgres/NAME.sql` or
    /// `queries/sqlite/NAME.sql`).
    pub(crate) fn sql(self, statement: Statement) -> &'static str {
        macro_rules! each {
            ($name:literal) => {
                match self {
                    Backend::Postgres => {
                        include_str!(concat!("../../queries/postgres/", $name, ".sql"))
                    }
                    Backend::Sqlite => {
                        include_str!(concat!("../../queries/sqlite/", $name, ".sql"))
                    }
                }
            };
        }
        match statement {
            Statement::SelectAccountState => each!("select_account_state"),
            Statement::ExpireHolds => each!("expire_holds"),
            Statement::CaptureHolds => each!("capture_holds"),
            Statement::RaiseFoldStamp => each!("raise_fold_stamp"),
            Statement::NextFoldStamp => each!("next_fold_stamp"),
            Statement::BeginHolds => each!("begin_holds"),
        }
    }

    /// `column` is one of the strings of the list bound as `$1` ([`crate::conn::db::Val::Strings`]:
    /// a native `text[]` on PostgreSQL, a JSON array on SQLite): one parameter for up to a
    /// thousand values, written so that both databases look them up through the column's
    /// index (PostgreSQL plans `in (subquery)` as a hash join over the whole table;
    /// `= any(array)` is an index scan, and `= any(array(select ...))` rather than
    /// `= any($1)` because a custom plan that sees the array may prefer a sequential scan on
    /// stale estimates: see `queries/postgres/insert_identities.sql`).
    pub(crate) fn in_list(self, column: &str) -> String {
        match self {
            Backend::Postgres => {
                format!("{column} = any(array(select unnest(cast($1 as text[]))))")
            }
            Backend::Sqlite => format!("{column} in (select value from json_each($1))"),
        }
    }

    /// How a batch of rows goes in: `with_tail` when the insert has an `on conflict` tail
    /// (binary `COPY` cannot take one).
    pub(crate) fn row_batches(self, with_tail: bool) -> RowBatches {
        match self {
            Backend::Postgres if with_tail => RowBatches::ColumnArrays,
            Backend::Postgres => RowBatches::BinaryCopy,
            Backend::Sqlite => RowBatches::Placeholders,
        }
    }

    /// How `events` keys identities.
    pub(crate) fn identity_keys(self) -> IdentityKeys {
        match self {
            Backend::Postgres => IdentityKeys::Digest,
            Backend::Sqlite => IdentityKeys::SourceAndId,
        }
    }

    /// Takes a writer's transaction-scoped advisory locks on `conn`: `shared` (if any) in
    /// shared mode, then each of `exclusive` exclusively, in the order given (callers sort
    /// them). Returns whether it took any: PostgreSQL orders writers of several processes
    /// with these (README, "Concurrent engines"); SQLite has one writer at a time by itself,
    /// so it takes none.
    pub(crate) async fn advisory_locks(
        self,
        conn: &mut dyn Conn,
        shared: Option<i64>,
        exclusive: &[i64],
    ) -> Result<bool> {
        match self {
            Backend::Sqlite => Ok(false),
            Backend::Postgres => {
                if let Some(key) = shared {
                    crate::conn::db::query(include_str!(
                        "../../queries/postgres/lock_writer_shared.sql"
                    ))
                    .bind(key)
                    .execute(&mut *conn)
                    .await?;
                }
                for &key in exclusive {
                    crate::conn::db::query(include_str!(
                        "../../queries/postgres/lock_exclusive.sql"
                    ))
                    .bind(key)
                    .execute(&mut *conn)
                    .await?;
                }
                Ok(true)
            }
        }
    }

    /// What a fold holds in its process besides its transaction's locks: on SQLite the
    /// `writer` mutex (one writer at a time); on PostgreSQL nothing, so that folds of
    /// different partitions in one process (the Kafka engine's lanes) run at the same time,
    /// ordered only by [`Backend::advisory_locks`], as folds of different processes are.
    pub(crate) fn fold_mutex(self, writer: &Mutex<()>) -> Option<&Mutex<()>> {
        match self {
            Backend::Sqlite => Some(writer),
            Backend::Postgres => None,
        }
    }

    /// The mutex an authorization group holds in its process: on PostgreSQL `holds`
    /// (authorizations serialize among themselves, and across processes by their advisory
    /// lock, not with folds); on SQLite, one writer, the `writer` mutex.
    pub(crate) fn authorization_mutex<'a>(
        self,
        writer: &'a Mutex<()>,
        holds: &'a Mutex<()>,
    ) -> &'a Mutex<()> {
        match self {
            Backend::Postgres => holds,
            Backend::Sqlite => writer,
        }
    }

    /// Moves the numbering of dead letters past `max` (a replay gives the recorded numbers):
    /// PostgreSQL's sequence is set past it; SQLite numbers after the highest stored number,
    /// so there is nothing to move.
    pub(crate) async fn raise_dead_letter_numbers(
        self,
        conn: &mut dyn Conn,
        max: i64,
    ) -> Result<()> {
        match self {
            Backend::Postgres => {
                crate::conn::db::query(include_str!(
                    "../../queries/postgres/raise_dead_letter_numbers.sql"
                ))
                .bind(max)
                .execute(conn)
                .await?;
            }
            Backend::Sqlite => {}
        }
        Ok(())
    }

    /// The numbers of `n` new dead letters (in no particular order): PostgreSQL draws them
    /// from a sequence (folds of different partitions number at the same time); SQLite (one
    /// writer at a time) takes the numbers after the highest ever given.
    pub(crate) async fn next_dead_letter_numbers(
        self,
        conn: &mut dyn Conn,
        n: usize,
    ) -> Result<Vec<i64>> {
        Ok(match self {
            Backend::Postgres => crate::conn::db::query(include_str!(
                "../../queries/postgres/next_dead_letter_numbers.sql"
            ))
            .bind(n as i64)
            .fetch_all(conn)
            .await?
            .into_iter()
            .map(|r| r.get("seq"))
            .collect(),
            Backend::Sqlite => {
                let last: i64 = crate::conn::db::query(include_str!(
                    "../../queries/sqlite/last_dead_letter_number.sql"
                ))
                .fetch_one(conn)
                .await?
                .get("seq");
                (1..=n as i64).map(|i| last + i).collect()
            }
        })
    }
}

/// The native PostgreSQL connection of `conn`, for code written for PostgreSQL alone (binary
/// `COPY`, arrays bound by sqlx's own driver); an error on SQLite.
pub(crate) fn postgres(conn: &mut dyn Conn) -> Result<&mut sqlx::PgConnection, sqlx::Error> {
    conn.as_pg()
        .ok_or_else(|| sqlx::Error::Protocol("a PostgreSQL statement on another database".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_their_database() {
        assert_eq!(Backend::of_url("sqlite://x.db").ok(), Some(Backend::Sqlite));
        assert_eq!(
            Backend::of_url("postgres://h/db").ok(),
            Some(Backend::Postgres)
        );
        assert_eq!(
            Backend::of_url("postgresql://h/db").ok(),
            Some(Backend::Postgres)
        );
        assert!(matches!(
            Backend::of_url("mysql://h/db"),
            Err(StoreError::UnsupportedUrl(_))
        ));
    }

    #[test]
    fn lists_and_batches_per_database() {
        assert_eq!(
            Backend::Sqlite.in_list("account"),
            "account in (select value from json_each($1))"
        );
        assert_eq!(
            Backend::Postgres.in_list("key_id"),
            "key_id = any(array(select unnest(cast($1 as text[]))))"
        );
        assert_eq!(Backend::Postgres.row_batches(false), RowBatches::BinaryCopy);
        assert_eq!(
            Backend::Postgres.row_batches(true),
            RowBatches::ColumnArrays
        );
        assert_eq!(Backend::Sqlite.row_batches(true), RowBatches::Placeholders);
    }

    #[test]
    fn statements_written_twice_are_each_databases_own() {
        // `select_account_state.sql` is the same text in both folders today (it could move
        // to `queries/shared`); the others differ.
        assert_eq!(
            Backend::Postgres.sql(Statement::SelectAccountState),
            Backend::Sqlite.sql(Statement::SelectAccountState)
        );
        for s in [
            Statement::ExpireHolds,
            Statement::CaptureHolds,
            Statement::RaiseFoldStamp,
            Statement::NextFoldStamp,
            Statement::BeginHolds,
        ] {
            assert_ne!(Backend::Postgres.sql(s), Backend::Sqlite.sql(s), "{s:?}");
        }
    }
}
