//! Reading the price book back (issue 24.15): a version as it was uploaded, and the price
//! list a customer rents at (`billing_core::prices`).

use crate::conn::error::Result;
use crate::conn::handles::AdminHandle;
use billing_core::prices::PriceList;

/// A price book version as uploaded: the TOML byte for byte, when, and from when it rates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadedPriceBook {
    pub version: i64,
    pub toml: String,
    pub uploaded_at_ms: i64,
    /// Unix seconds; none: it rates every period it is the latest version for.
    pub effective_from_s: Option<i64>,
}

impl AdminHandle<'_> {
    /// Version `version` as uploaded (the newest when `None`); `None` when there is no such
    /// version.
    pub async fn uploaded_pricebook(
        &self,
        version: Option<i64>,
    ) -> Result<Option<UploadedPriceBook>> {
        let row = match version {
            Some(v) => {
                crate::conn::db::query(include_str!(
                    "../../queries/shared/select_pricebook_version.sql"
                ))
                .bind(v)
                .fetch_optional(&self.pool)
                .await?
            }
            None => {
                crate::conn::db::query(include_str!(
                    "../../queries/shared/select_latest_pricebook.sql"
                ))
                .fetch_optional(&self.pool)
                .await?
            }
        };
        Ok(row.map(|r| UploadedPriceBook {
            version: r.get("version"),
            toml: r.get("toml"),
            uploaded_at_ms: r.get("uploaded_at_ms"),
            effective_from_s: r.get::<Option<i64>, _>("effective_from_s"),
        }))
    }

    /// The prices `account` rents at at `now_ms`: those of the version rating the period
    /// holding `now_ms` (account terms merged in) with the spot curves as they are; the
    /// period's label with it. `None` when no price book rates that period.
    pub async fn price_list(
        &self,
        account: &str,
        now_ms: i64,
    ) -> Result<Option<(String, PriceList)>> {
        let mut conn = self.pool.acquire().await?;
        let books = self.books(&mut conn).await?;
        let now_s = now_ms.div_euclid(1000);
        let Some(label) = books.1.label_of(now_s) else {
            return Ok(None);
        };
        let Some((book, _)) = books.1.for_period(&mut conn, &label).await? else {
            return Ok(None);
        };
        let platform = crate::ledger::rental::load_platform(&mut conn).await?;
        let list = billing_core::prices::price_list(&book, &platform, account, now_s);
        Ok(Some((label, list)))
    }

    /// Issue 26: the price book (account terms merged in) of the version rating the period
    /// holding `at_s`, as `POST /v1/estimate` reads it; `None` when no version rates it.
    pub async fn pricebook_at(
        &self,
        at_s: i64,
    ) -> Result<Option<std::sync::Arc<billing_core::PriceBook>>> {
        let mut conn = self.pool.acquire().await?;
        let books = self.books(&mut conn).await?;
        let Some(label) = books.1.label_of(at_s) else {
            return Ok(None);
        };
        Ok(books.1.for_period(&mut conn, &label).await?.map(|(b, _)| b))
    }
}
