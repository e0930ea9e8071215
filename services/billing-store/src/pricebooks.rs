//! Price book versions: upload (validated, stored as a new version, recorded as a command),
//! the list, and the version that rates a period (billing-semantics section 3).

use crate::{Command, Result, Store, StoreError, provisional, terms};
use billing_core::period::Period;
use billing_core::pricebook::PriceBook;

/// A stored price book version.
#[derive(Debug, Clone)]
pub struct PriceBookVersion {
    pub version: i64,
    pub book: PriceBook,
    pub toml: String,
}

impl Store {
    /// Validates and stores a price book as a new version.
    pub async fn put_pricebook(&self, toml: &str, now_ms: i64) -> Result<i64> {
        let book = PriceBook::from_toml(toml)?;
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        // The newest version must accept every account term set by command.
        let (_, terms) = terms::load_terms(&mut tx).await?;
        book.with_account_terms(&terms)?;
        let next: i64 = crate::db::query(include_str!(
            "../queries/shared/select_next_pricebook_version.sql"
        ))
        .fetch_one(&mut *tx)
        .await?
        .get(0);
        crate::db::query(include_str!("../queries/shared/insert_pricebook.sql"))
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
        let books = provisional::Books::load(&mut tx, None).await?;
        provisional::refresh_all(&mut tx, self.backend, &books.1, now_ms).await?;
        tx.commit().await?;
        Ok(next)
    }

    /// All versions, newest first, with the account terms set by command merged in (`toml`
    /// is the version as uploaded).
    pub async fn pricebooks(&self) -> Result<Vec<PriceBookVersion>> {
        let mut conn = self.pool.acquire().await?;
        let rows = crate::db::query(include_str!("../queries/shared/select_pricebooks.sql"))
            .fetch_all(&mut *conn)
            .await?;
        let (_, terms) = terms::load_terms(&mut conn).await?;
        let mut books = Vec::with_capacity(rows.len());
        for r in &rows {
            books.push(
                PriceBook::from_toml(&r.get::<String, _>(1))
                    .map_err(|e| StoreError::Corrupt(format!("stored price book: {e}")))?,
            );
        }
        let books = terms::merge(books, &terms)?;
        Ok(rows
            .into_iter()
            .zip(books)
            .map(|(r, book)| PriceBookVersion {
                version: r.get(0),
                book,
                toml: r.get(1),
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
        for v in self.pricebooks().await? {
            let Ok(period) = Period::month(period_label, v.book.timezone) else {
                continue;
            };
            if v.book.applies_to_period_starting(period.start) {
                return Ok(Some((v, period)));
            }
        }
        Ok(None)
    }
}

impl Store {
    /// Version `version` as uploaded (no account terms merged), parsed; None when not stored.
    pub(crate) async fn raw_version(
        &self,
        conn: &mut dyn crate::db::Conn,
        version: i64,
    ) -> Result<Option<std::sync::Arc<PriceBook>>> {
        let Some(row) =
            crate::db::query(include_str!("../queries/shared/select_pricebook_toml.sql"))
                .bind(version)
                .fetch_optional(&mut *conn)
                .await?
        else {
            return Ok(None);
        };
        self.pricebook_compiles
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let book = PriceBook::from_toml(&row.get::<String, _>(0))
            .map_err(|e| StoreError::Corrupt(format!("stored price book {version}: {e}")))?;
        Ok(Some(std::sync::Arc::new(book)))
    }
}
