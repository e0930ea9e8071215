//! The price book versions a store rates with, and what a version costs (issue 24.9). Only the
//! versions that can still rate a period stay compiled: the latest (with the account terms set
//! by command merged in), and older ones compiled on demand from their stored TOML when a period
//! they rate is rated (an open period a later version's `effective_from` leaves to them),
//! [`OLDER_COMPILED_MAX`] of them kept, least recently used out first. A closed period being
//! re-rated compiles its version for that re-rating (`adjust.rs`). Every version's number and
//! `effective_from` are read from the table, which is all choosing a version needs besides
//! the timezone of an older version with an `effective_from`, learned when it is compiled.
//! Split from `provisional.rs`, which re-rates with them.

use crate::conn::db::Conn;
use crate::conn::error::Result;
use crate::conn::error::StoreError;
use billing_core::period::Period;
use billing_core::pricebook::{AccountTerm, PriceBook};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How many versions besides the latest a store keeps compiled (each costs about 15 times its
/// TOML in memory): enough for an open period a scheduled version leaves to an older one and a
/// closed period being re-rated.
pub const OLDER_COMPILED_MAX: usize = 2;

/// What a parsed [`Books`] is valid for: (latest price book version, latest term revision).
pub(crate) type BooksKey = (i64, i64);

/// Every version up to the latest, newest first: (version, `effective_from` in seconds).
type Heads = Vec<(i64, Option<i64>)>;

/// The compiled versions a store holds, and how many it compiled (see the module header).
#[derive(Debug, Default)]
pub(crate) struct BookCache {
    held: Mutex<Held>,
    compiles: AtomicU64,
}

#[derive(Debug, Default)]
struct Held {
    /// The versions as the latest committed key has them (None: nothing loaded yet).
    current: Option<Snapshot>,
    /// Older versions compiled on demand: (version, term revision merged in, book), least
    /// recently used first.
    older: VecDeque<(i64, i64, Arc<PriceBook>)>,
    /// The timezone of each version compiled so far (a stored version never changes).
    zones: BTreeMap<i64, chrono_tz::Tz>,
}

/// What [`Books`] shares with the cache.
#[derive(Debug, Clone, Default)]
struct Snapshot {
    key: BooksKey,
    latest: Option<(i64, Arc<PriceBook>)>,
    heads: Arc<Heads>,
    terms: Arc<Vec<AccountTerm>>,
}

impl BookCache {
    /// Parses a price book, counted.
    pub(crate) fn compile(&self, toml: &str) -> Result<PriceBook, billing_core::PriceBookError> {
        self.compiles.fetch_add(1, Ordering::Relaxed);
        PriceBook::from_toml(toml)
    }

    /// A stored version parsed, counted (a stored book that no longer parses is corruption).
    pub(crate) fn compile_stored(&self, version: i64, toml: &str) -> Result<PriceBook> {
        self.compile(toml)
            .map_err(|e| StoreError::Corrupt(format!("stored price book {version}: {e}")))
    }

    pub(crate) fn compiles(&self) -> u64 {
        self.compiles.load(Ordering::Relaxed)
    }

    /// How many versions are held compiled (the latest and the older ones).
    pub(crate) fn held(&self) -> usize {
        let held = self.lock();
        let latest = held.current.as_ref().is_some_and(|s| s.latest.is_some());
        usize::from(latest) + held.older.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `books` (committed) as the current versions unless a newer key is held already.
    /// The latest it replaces is dropped: no open period is rated by it any more (unless a
    /// later version's `effective_from` leaves one to it: then it is compiled again).
    pub(crate) fn install(&self, books: &Books) {
        let mut held = self.lock();
        if held
            .current
            .as_ref()
            .is_some_and(|c| c.key >= books.snap.key)
        {
            return;
        }
        let (rev, latest) = (books.snap.key.1, books.snap.latest.as_ref().map(|l| l.0));
        if let Some((v, b)) = &books.snap.latest {
            held.zones.insert(*v, b.timezone);
        }
        held.current = Some(books.snap.clone());
        held.older
            .retain(|(v, r, _)| *r == rev && Some(*v) != latest);
    }
}

/// The price book versions as one reader sees them: the latest compiled, the others compiled
/// when a period they rate is asked for (see the module header).
#[derive(Debug)]
pub(crate) struct Books {
    snap: Snapshot,
    cache: Arc<BookCache>,
    /// Whether what this reader compiles may be kept (see [`Books::load`]).
    keep: bool,
    /// What a reader that may not keep anything compiled, for its own use (it lives as long
    /// as the transaction that loaded it).
    own: Mutex<Vec<(i64, Arc<PriceBook>)>>,
    /// Versions as they rate the periods after a move of accounts (issue 27): (version, the
    /// month of the last move, the book with that organization).
    moved: Mutex<Vec<(i64, String, Arc<PriceBook>)>>,
}

impl Books {
    /// The versions as `conn` sees them. `keep`: what is compiled may be kept in `cache` (only
    /// committed versions and terms may be: a transaction that adds one passes false).
    pub(crate) async fn load(
        conn: &mut dyn Conn,
        cache: &Arc<BookCache>,
        keep: bool,
    ) -> Result<Arc<(BooksKey, Books)>> {
        let row = crate::conn::db::query(include_str!("../../queries/shared/select_books_key.sql"))
            .fetch_one(&mut *conn)
            .await?;
        Self::load_up_to(
            conn,
            (row.get("version"), row.get("terms_rev")),
            cache,
            keep,
        )
        .await
    }

    /// Like [`Books::load`] when the latest version is known already.
    pub(crate) async fn load_up_to(
        conn: &mut dyn Conn,
        latest: BooksKey,
        cache: &Arc<BookCache>,
        keep: bool,
    ) -> Result<Arc<(BooksKey, Books)>> {
        if keep && let Some(current) = cache.lock().current.clone().filter(|c| c.key == latest) {
            return Ok(Arc::new((
                latest,
                Books {
                    snap: current,
                    cache: cache.clone(),
                    keep,
                    own: Mutex::default(),
                    moved: Mutex::default(),
                },
            )));
        }
        let heads = load_heads(conn, latest.0).await?;
        // Terms as `conn` sees them; a revision newer than `latest.1` (committed since the
        // caller read it) is not kept under the older key.
        let (rev, terms) = crate::pricing::terms_merge::load_terms(conn).await?;
        let key = (latest.0, rev);
        let reuse = cache
            .lock()
            .current
            .clone()
            .filter(|c| keep && c.key == key)
            .and_then(|c| c.latest);
        let latest_book = match (reuse, heads.first()) {
            (Some(l), _) => Some(l),
            (None, None) => None,
            (None, Some(&(v, _))) => {
                let book = cache.compile_stored(v, &toml_of(conn, v).await?)?;
                let merged = if terms.is_empty() {
                    book
                } else {
                    book.with_account_terms(&terms).map_err(|e| {
                        StoreError::Corrupt(format!("stored account terms and price book: {e}"))
                    })?
                };
                Some((v, Arc::new(merged)))
            }
        };
        let books = Books {
            snap: Snapshot {
                key,
                latest: latest_book,
                heads: Arc::new(heads),
                terms: Arc::new(terms),
            },
            cache: cache.clone(),
            keep: keep && key == latest,
            own: Mutex::default(),
            moved: Mutex::default(),
        };
        if books.keep {
            cache.install(&books);
        }
        Ok(Arc::new((key, books)))
    }

    /// The versions of an uploading transaction: `book` (its terms merged in, revision `rev`)
    /// as the newest, `version`; nothing compiled is kept (call [`BookCache::install`] once
    /// committed).
    pub(crate) async fn with_latest(
        conn: &mut dyn Conn,
        cache: &Arc<BookCache>,
        (version, book): (i64, Arc<PriceBook>),
        (rev, terms): (i64, Vec<AccountTerm>),
    ) -> Result<Arc<(BooksKey, Books)>> {
        let heads = load_heads(conn, version).await?;
        let key = (version, rev);
        let books = Books {
            snap: Snapshot {
                key,
                latest: Some((version, book)),
                heads: Arc::new(heads),
                terms: Arc::new(terms),
            },
            cache: cache.clone(),
            keep: false,
            own: Mutex::default(),
            moved: Mutex::default(),
        };
        Ok(Arc::new((key, books)))
    }

    pub(crate) fn latest(&self) -> Option<&PriceBook> {
        self.snap.latest.as_ref().map(|(_, b)| b.as_ref())
    }

    /// The timezone periods are labelled in (see [`Books::label_of`]); None without a price
    /// book.
    pub(crate) fn timezone(&self) -> Option<chrono_tz::Tz> {
        self.latest().map(|b| b.timezone)
    }

    /// The label of the period containing `secs`, in the latest version's timezone.
    pub(crate) fn label_of(&self, secs: i64) -> Option<String> {
        Period::containing(secs, self.latest()?.timezone).map(|p| p.label)
    }

    /// The labels of the periods that hold any of `spans` (`[from, last]` seconds, inclusive,
    /// each at most a day long, so its two ends name every period it holds). Only these:
    /// two events a century apart touch two periods, not the 1,200 between them.
    pub(crate) fn labels_holding(&self, spans: &[(i64, i64)]) -> BTreeSet<String> {
        let Some(tz) = self.timezone() else {
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
    /// it: what [`crate::pricing::provisional::Loaded::read`] needs to load for rating them. Never
    /// empty when there is a label (an unknown one stands for nothing, `(0, 0)`), since no
    /// windows means all.
    pub(crate) async fn windows<S: AsRef<str> + Sync>(
        &self,
        conn: &mut dyn Conn,
        labels: &[S],
    ) -> Result<Vec<(i64, i64)>> {
        let mut out = Vec::with_capacity(labels.len());
        for l in labels {
            out.push(match self.for_period(conn, l.as_ref()).await? {
                // Packages (section 12) carry balances from every earlier second, and SLA
                // compensation (section 10) reads coverage before the fault: with either, a
                // period reads the account's whole history up to its end.
                Some((b, p))
                    if !b.packages.is_empty() || b.sla.compensation_multiplier.is_some() =>
                {
                    (i64::MIN / 2, p.end)
                }
                Some((_, p)) => (p.start, p.end),
                None => (0, 0),
            });
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// The version that rates `label` and the period in its timezone: the latest uploaded
    /// whose `effective_from` is at or before the period's start (as a close picks it).
    pub(crate) async fn for_period(
        &self,
        conn: &mut dyn Conn,
        label: &str,
    ) -> Result<Option<(Arc<PriceBook>, Period)>> {
        Ok(self.rating(conn, label).await?.map(|(_, b, p)| (b, p)))
    }

    /// Like [`Books::for_period`], with the version's number.
    pub(crate) async fn rating(
        &self,
        conn: &mut dyn Conn,
        label: &str,
    ) -> Result<Option<(i64, Arc<PriceBook>, Period)>> {
        for &(version, effective_from) in self.snap.heads.iter() {
            let tz = match self.zone_of(version) {
                Some(tz) => tz,
                None => self.version(conn, version).await?.timezone,
            };
            let Ok(period) = Period::month(label, tz) else {
                continue;
            };
            if effective_from.is_none_or(|t| t <= period.start) {
                let book = self.version(conn, version).await?;
                return Ok(Some((
                    version,
                    self.in_period(version, book, label),
                    period,
                )));
            }
        }
        Ok(None)
    }

    /// Version `version` (`book`) as it rates period `label`: with the organization after
    /// the moves of accounts from that month or earlier (issue 27), made once per reader and
    /// month of a move.
    fn in_period(&self, version: i64, book: Arc<PriceBook>, label: &str) -> Arc<PriceBook> {
        let Some(epoch) = crate::pricing::moves::moves_epoch(&book, label) else {
            return book;
        };
        let mut moved = self.moved.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, b)) = moved.iter().find(|(v, e, _)| *v == version && e == epoch) {
            return b.clone();
        }
        let epoch = epoch.to_string();
        let b = crate::pricing::moves::in_period(book, label);
        moved.push((version, epoch, b.clone()));
        b
    }

    fn zone_of(&self, version: i64) -> Option<chrono_tz::Tz> {
        match &self.snap.latest {
            Some((v, b)) if *v == version => Some(b.timezone),
            _ => self
                .cache
                .lock()
                .zones
                .get(&version)
                .copied()
                .or_else(|| self.own_version(version).map(|b| b.timezone)),
        }
    }

    fn own_version(&self, version: i64) -> Option<Arc<PriceBook>> {
        let own = self.own.lock().unwrap_or_else(|e| e.into_inner());
        own.iter()
            .find(|(v, _)| *v == version)
            .map(|(_, b)| b.clone())
    }

    /// Version `version` with the terms merged in: the latest, a kept one, or compiled now
    /// (and kept, least recently used out, when this reader may keep it).
    async fn version(&self, conn: &mut dyn Conn, version: i64) -> Result<Arc<PriceBook>> {
        if let Some((v, b)) = &self.snap.latest
            && *v == version
        {
            return Ok(b.clone());
        }
        if let Some(b) = self.own_version(version) {
            return Ok(b);
        }
        let rev = self.snap.key.1;
        {
            let mut held = self.cache.lock();
            if let Some(i) = held
                .older
                .iter()
                .position(|(v, r, _)| *v == version && *r == rev)
            {
                let hit = held.older.remove(i).expect("position is in range");
                let book = hit.2.clone();
                held.older.push_back(hit);
                return Ok(book);
            }
        }
        let raw = self
            .cache
            .compile_stored(version, &toml_of(conn, version).await?)?;
        let book = Arc::new(
            crate::pricing::terms_merge::merge_lenient(&raw, &self.snap.terms).unwrap_or(raw),
        );
        if self.keep {
            let mut held = self.cache.lock();
            held.zones.insert(version, book.timezone);
            held.older.push_back((version, rev, book.clone()));
            while held.older.len() > OLDER_COMPILED_MAX {
                held.older.pop_front();
            }
        } else {
            self.own
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((version, book.clone()));
        }
        Ok(book)
    }
}

async fn load_heads(conn: &mut dyn Conn, up_to: i64) -> Result<Heads> {
    Ok(crate::conn::db::query(include_str!(
        "../../queries/shared/select_pricebook_heads.sql"
    ))
    .bind(up_to)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|r| (r.get("version"), r.get("effective_from_s")))
    .collect())
}

async fn toml_of(conn: &mut dyn Conn, version: i64) -> Result<String> {
    let row = crate::conn::db::query(include_str!(
        "../../queries/shared/select_pricebook_toml.sql"
    ))
    .bind(version)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| StoreError::Corrupt(format!("price book version {version} is not stored")))?;
    Ok(row.get("toml"))
}
