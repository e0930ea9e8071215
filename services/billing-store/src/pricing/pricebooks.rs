//! Price book versions: upload (validated, stored as a new version, recorded as a command),
//! the list, and the version that rates a period (billing-semantics section 3).

use crate::conn::error::Result;
use crate::conn::handles::AdminHandle;
use crate::conn::store::Store;
use crate::events::commands::Command;
use crate::pricing::books::Books;
use crate::pricing::{provisional, terms_merge};
use billing_core::period::Period;
use billing_core::pricebook::PriceBook;
use std::sync::Arc;

/// A stored price book version.
#[derive(Debug, Clone)]
pub struct PriceBookVersion {
    pub version: i64,
    /// Shared: a compiled version is large (issue 24.9).
    pub book: Arc<PriceBook>,
    pub toml: String,
}

impl AdminHandle<'_> {
    /// Validates and stores a price book as a new version. Compiles it once; earlier versions
    /// are not compiled again (issue 24.9: only what rates an open period is, on demand).
    pub async fn put_pricebook(&self, toml: &str, now_ms: i64) -> Result<i64> {
        let book = self.books.compile(toml)?;
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        // The newest version must accept every account term set by command.
        let (rev, terms) = terms_merge::load_terms(&mut tx).await?;
        let book = if terms.is_empty() {
            book
        } else {
            book.with_account_terms(&terms)?
        };
        if self.shard.is_some() {
            // Only a shard reads the versions before (a store of one database compiles none).
            let before = self.books(&mut tx).await?;
            self.keep_trees_whole(&mut tx, before.1.latest(), &book)
                .await?;
        }
        let next: i64 = crate::conn::db::query(include_str!(
            "../../queries/shared/select_next_pricebook_version.sql"
        ))
        .fetch_one(&mut *tx)
        .await?
        .get("version");
        crate::conn::db::query(include_str!("../../queries/shared/insert_pricebook.sql"))
            .bind(next)
            .bind(book.effective_from.map(|t| t.secs))
            .bind(toml)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
        self.record_command(
            &mut tx,
            &Command::PutPriceBook {
                version: next,
                toml: toml.to_string(),
                at_ms: now_ms,
            },
            now_ms,
        )
        .await?;
        // What the ledger rates to changed: every provisional cost is re-rated.
        let books = Books::with_latest(
            &mut tx,
            &self.books,
            (next, std::sync::Arc::new(book)),
            (rev, terms),
        )
        .await?;
        provisional::refresh_all(&mut tx, self.backend, &books.1, now_ms).await?;
        tx.commit().await?;
        // Committed: the first ingest after the upload finds it compiled.
        self.books.install(&books.1);
        Ok(next)
    }

    /// All versions, newest first, with the account terms set by command merged in (`toml`
    /// is the version as uploaded). Compiles every version: for tools, not for serving.
    pub async fn pricebooks(&self) -> Result<Vec<PriceBookVersion>> {
        let mut conn = self.pool.acquire().await?;
        let rows =
            crate::conn::db::query(include_str!("../../queries/shared/select_pricebooks.sql"))
                .fetch_all(&mut *conn)
                .await?;
        let (_, terms) = terms_merge::load_terms(&mut conn).await?;
        let mut books = Vec::with_capacity(rows.len());
        for r in &rows {
            books.push(
                self.books
                    .compile_stored(r.get("version"), &r.get::<String, _>("toml"))?,
            );
        }
        let books = terms_merge::merge(books, &terms)?;
        Ok(rows
            .into_iter()
            .zip(books)
            .map(|(r, book)| PriceBookVersion {
                version: r.get("version"),
                book: Arc::new(book),
                toml: r.get("toml"),
            })
            .collect())
    }

    /// The version that rates `period_label` ("Versions", billing-semantics.md section 3): the
    /// latest uploaded whose `effective_from` is at or before the period's start, or that has
    /// none. With the period in that version's timezone.
    pub async fn pricebook_for(
        &self,
        period_label: &str,
    ) -> Result<Option<(PriceBookVersion, Period)>> {
        let mut conn = self.pool.acquire().await?;
        let Some((version, book, period)) = self.rating_version(&mut conn, period_label).await?
        else {
            return Ok(None);
        };
        let toml: String = crate::conn::db::query(include_str!(
            "../../queries/shared/select_pricebook_toml.sql"
        ))
        .bind(version)
        .fetch_one(&mut *conn)
        .await?
        .get("toml");
        Ok(Some((
            PriceBookVersion {
                version,
                book,
                toml,
            },
            period,
        )))
    }
}

impl AdminHandle<'_> {}

impl Store {
    /// The version that rates `period_label` (see [`Store::pricebook_for`]): its number, the
    /// book (compiled on demand when it is not the latest) and the period.
    pub(crate) async fn rating_version(
        &self,
        conn: &mut dyn crate::conn::db::Conn,
        period_label: &str,
    ) -> Result<Option<(i64, Arc<PriceBook>, Period)>> {
        let books = self.books(conn).await?;
        books.1.rating(conn, period_label).await
    }

    /// Version `version` as uploaded (no account terms merged), compiled now; None when not
    /// stored.
    pub(crate) async fn raw_version(
        &self,
        conn: &mut dyn crate::conn::db::Conn,
        version: i64,
    ) -> Result<Option<Arc<PriceBook>>> {
        let Some(row) = crate::conn::db::query(include_str!(
            "../../queries/shared/select_pricebook_toml.sql"
        ))
        .bind(version)
        .fetch_optional(&mut *conn)
        .await?
        else {
            return Ok(None);
        };
        let book = self
            .books
            .compile_stored(version, &row.get::<String, _>("toml"))?;
        Ok(Some(Arc::new(book)))
    }
}
