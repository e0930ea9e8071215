//! The price book versions a store rates with: every uploaded version, newest first, with the
//! account terms set by command merged in, parsed once per new version or term revision, and
//! the periods they name. Split from `provisional.rs`, which re-rates with them.

use crate::Result;
use crate::StoreError;
use crate::db::Conn;
use billing_core::period::Period;
use billing_core::pricebook::PriceBook;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Price book versions, newest first, with the account terms set by command merged in
/// ([`crate::terms::merge`]), parsed once per new version or term revision.
#[derive(Debug, Default)]
pub(crate) struct Books(Vec<PriceBook>);

/// What a parsed [`Books`] is valid for: (latest price book version, latest term revision).
pub(crate) type BooksKey = (i64, i64);

impl Books {
    /// The versions as `conn` sees them, parsed at most once per new version when `cache` is
    /// given (only committed versions may be cached: a transaction that adds one passes none).
    pub(crate) async fn load(
        conn: &mut dyn Conn,
        cache: Option<&std::sync::Mutex<Arc<(BooksKey, Books)>>>,
    ) -> Result<Arc<(BooksKey, Books)>> {
        let row = crate::db::query(include_str!("../queries/shared/select_books_key.sql"))
            .fetch_one(&mut *conn)
            .await?;
        Self::load_up_to(conn, (row.get(0), row.get(1)), cache).await
    }

    /// Like [`Books::load`] when the latest version is known already.
    pub(crate) async fn load_up_to(
        conn: &mut dyn Conn,
        latest: BooksKey,
        cache: Option<&std::sync::Mutex<Arc<(BooksKey, Books)>>>,
    ) -> Result<Arc<(BooksKey, Books)>> {
        if let Some(cache) = cache {
            let cached = cache.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if cached.0 == latest {
                return Ok(cached);
            }
        }
        let mut books = Vec::new();
        for r in crate::db::query(include_str!(
            "../queries/shared/select_pricebooks_up_to.sql"
        ))
        .bind(latest.0)
        .fetch_all(&mut *conn)
        .await?
        {
            books.push(
                PriceBook::from_toml(&r.get::<String, _>(0))
                    .map_err(|e| StoreError::Corrupt(format!("stored price book: {e}")))?,
            );
        }
        // Terms as `conn` sees them; a revision newer than `latest.1` (committed since the
        // caller read it) is not cached under the older key.
        let (rev, terms) = crate::terms::load_terms(conn).await?;
        let books = crate::terms::merge(books, &terms)?;
        let key = (latest.0, rev);
        let fresh = Arc::new((key, Books(books)));
        if key != latest {
            return Ok(fresh);
        }
        if let Some(cache) = cache {
            *cache.lock().unwrap_or_else(|e| e.into_inner()) = fresh.clone();
        }
        Ok(fresh)
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The timezone periods are labelled in (see [`Books::label_of`]); None without a price
    /// book.
    pub(crate) fn timezone(&self) -> Option<chrono_tz::Tz> {
        self.0.first().map(|b| b.timezone)
    }

    /// The label of the period containing `secs`, in the latest version's timezone.
    pub(crate) fn label_of(&self, secs: i64) -> Option<String> {
        Period::containing(secs, self.0.first()?.timezone).map(|p| p.label)
    }

    /// The labels of the periods that hold any of `spans` (`[from, last]` seconds, inclusive,
    /// each at most a day long, so its two ends name every period it holds). Only these:
    /// two events a century apart touch two periods, not the 1,200 between them.
    pub(crate) fn labels_holding(&self, spans: &[(i64, i64)]) -> BTreeSet<String> {
        let Some(tz) = self.0.first().map(|b| b.timezone) else {
            return BTreeSet::new();
        };
        let mut seen: Vec<Period> = Vec::new();
        for &(from, last) in spans {
            for s in [from, last] {
                if seen.iter().any(|p| p.start <= s && s < p.end) {
                    continue;
                }
                seen.extend(Period::containing(s, tz));
            }
        }
        seen.into_iter().map(|p| p.label).collect()
    }

    /// The `[start, end)` of each distinct period among `labels` as its rating version sees
    /// it: what [`Loaded::read`] needs to load for rating them. Never empty when there is a
    /// label (an unknown one stands for nothing, `(0, 0)`), since no windows means all.
    pub(crate) fn windows(
        &self,
        labels: impl IntoIterator<Item = impl AsRef<str>>,
    ) -> Vec<(i64, i64)> {
        // Packages (section 12) carry balances from every earlier second, and SLA
        // compensation (section 10) reads coverage before the fault: with either, a period
        // reads the account's whole history up to its end.
        let history = self
            .0
            .iter()
            .any(|b| !b.packages.is_empty() || b.sla.compensation_multiplier.is_some());
        let mut out: Vec<(i64, i64)> = labels
            .into_iter()
            .map(|l| {
                self.for_period(l.as_ref()).map_or((0, 0), |(_, p)| {
                    (if history { i64::MIN / 2 } else { p.start }, p.end)
                })
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The version that rates `label` and the period in its timezone: the latest uploaded
    /// whose `effective_from` is at or before the period's start (as a close picks it).
    pub(crate) fn for_period(&self, label: &str) -> Option<(&PriceBook, Period)> {
        self.0.iter().find_map(|b| {
            let p = Period::month(label, b.timezone).ok()?;
            b.applies_to_period_starting(p.start).then_some((b, p))
        })
    }
}
