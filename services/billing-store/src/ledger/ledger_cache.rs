//! Accounts' ledgers kept in memory between batches, so that a batch's provisional re-rating
//! reads from the database only the accounts somebody else wrote since (issue 11). With every
//! account in every batch and hundreds of active keys per account (the soak: 600,000 keys over
//! 1,000 accounts at 20,000 events/s), loading the touched accounts' keys again for each batch
//! was the fold's bound: ~300,000 rows a batch, where the batch itself changed 5,000.
//!
//! Coherence, with any number of engines on one database: `ledger_tokens` holds a token per
//! account, set to a fresh random value by every fold that moves the account (usage, egress or
//! rental facts), in the fold's transaction ([`stamp`]). An entry here is the account's ledger
//! as the fold that stamped `token` left it, complete for every key overlapping `windows` (it
//! may hold more: rating ignores keys outside the period). A fold rates an account from its
//! entry only when the stored token it read is the entry's: then nobody wrote the account since
//! *and* the fold that made the entry committed. A fold that rolled back (fenced, deadlock,
//! crash) left the old token stored and its entry under the new one, so the next fold reads the
//! account from the database again; so does a fold after another engine wrote the account.
//! An account whose batch brings egress or rental facts is read from the database too (rare
//! beside heartbeats; applying them here would be a second loader to keep in step).
//!
//! Bounded: at most `max_keys` usage keys are kept (`Store::with_ledger_cache_keys`, 0
//! disables the cache); past it entries are dropped, the oldest stamped first.

use crate::conn::backend::Backend;
use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::sql::{Val, in_list, insert_rows};
use billing_core::ledger::{AccountLedger, ResourceKey, Runs};
use std::collections::{BTreeSet, HashMap};

/// Default of `Store::with_ledger_cache_keys`: a million usage keys (~300 MB at the 301 bytes
/// a key measured in `docs/benchmarks.md`).
pub const DEFAULT_LEDGER_CACHE_KEYS: usize = 1_000_000;

/// A key a batch changed, with its whole runs and coverage by source after the batch (what
/// the database holds once the batch commits).
/// A key's coverage by source (billing-semantics section 10): source -> runs.
pub(crate) type Sources = std::collections::BTreeMap<String, Runs>;

pub(crate) type ChangedKey = (ResourceKey, Runs, Sources);

/// The tokens of the accounts a batch moved: the one it stamps and the ones stored before.
#[derive(Debug, Default)]
pub(crate) struct Stamp {
    pub(crate) token: i64,
    pub(crate) before: HashMap<String, i64>,
}

/// Reads the stored tokens of `accounts` and stamps a fresh one on each, in the caller's
/// transaction (one statement each way).
pub(crate) async fn stamp(
    conn: &mut dyn Conn,
    backend: Backend,
    accounts: &BTreeSet<&str>,
) -> Result<Stamp> {
    let mut out = Stamp {
        token: fresh_token()?,
        before: HashMap::new(),
    };
    if accounts.is_empty() {
        return Ok(out);
    }
    let names: Vec<&str> = accounts.iter().copied().collect();
    for chunk in names.chunks(crate::conn::sql::MAX_IN_LIST) {
        let sql = include_str!("../../queries/shared/select_ledger_tokens.sql")
            .replace("{filter}", &in_list("account", backend));
        for r in crate::conn::db::query(&sql)
            .bind(chunk)
            .fetch_all(&mut *conn)
            .await?
        {
            out.before.insert(r.get("account"), r.get("token"));
        }
    }
    let rows = names
        .iter()
        .map(|a| vec![Val::Text(a.to_string()), Val::I64(out.token)])
        .collect();
    insert_rows(
        conn,
        include_str!("../../queries/shared/upsert_ledger_tokens.sql"),
        include_str!("../../queries/shared/upsert_ledger_tokens_on_conflict.sql"),
        rows,
    )
    .await?;
    Ok(out)
}

/// A fresh random 64-bit value (ledger tokens; the nonces of moves' commands).
pub(crate) fn fresh_token() -> Result<i64> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes)
        .map_err(|e| StoreError::Corrupt(format!("the OS random number generator failed: {e}")))?;
    Ok(i64::from_le_bytes(bytes))
}

#[derive(Debug)]
struct Entry {
    token: i64,
    windows: Vec<(i64, i64)>,
    ledger: AccountLedger,
    keys: usize,
    /// When it was put (a counter), for dropping the oldest first.
    at: u64,
}

/// The ledgers kept between batches (see the module's docs).
#[derive(Debug)]
pub(crate) struct LedgerCache {
    entries: HashMap<String, Entry>,
    keys: usize,
    max_keys: usize,
    clock: u64,
}

impl LedgerCache {
    pub(crate) fn new(max_keys: usize) -> Self {
        LedgerCache {
            entries: HashMap::new(),
            keys: 0,
            max_keys,
            clock: 0,
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.max_keys > 0
    }

    /// Takes `account`'s entry out when it is valid for a fold that read `stored` (the token in
    /// the database before its stamp) and needs `windows`: returns its ledger and windows.
    /// An invalid entry is dropped.
    pub(crate) fn take(
        &mut self,
        account: &str,
        stored: Option<i64>,
        windows: &[(i64, i64)],
    ) -> Option<(AccountLedger, Vec<(i64, i64)>)> {
        let e = self.entries.remove(account)?;
        self.keys -= e.keys;
        let covered = windows
            .iter()
            .all(|&(s, end)| e.windows.iter().any(|&(cs, ce)| cs <= s && end <= ce));
        (stored == Some(e.token) && covered).then_some((e.ledger, e.windows))
    }

    /// What a reader of `[from, to)` of `account`'s usage needs (the keys overlapping it, and
    /// the egress in it), when the entry is the committed state `stored` names and covers it.
    pub(crate) fn peek(
        &self,
        account: &str,
        stored: Option<i64>,
        (from, to): (i64, i64),
    ) -> Option<AccountLedger> {
        let e = self.entries.get(account)?;
        let covered = e.windows.iter().any(|&(cs, ce)| cs <= from && to <= ce);
        (stored == Some(e.token) && covered).then(|| e.ledger.restricted_to(from, to))
    }

    /// A key's stored runs and coverage by source when `account`'s entry is the committed
    /// state `stored` names and holds the key (a key it holds is whole, as stored). None: ask
    /// the database (the key may be new, or lie outside the entry's windows).
    pub(crate) fn stored_key(
        &self,
        account: &str,
        stored: Option<i64>,
        (lease, resource, sku, class): (&str, &str, &str, billing_core::Class),
    ) -> Option<(Runs, Sources)> {
        let e = self.entries.get(account)?;
        if stored != Some(e.token) {
            return None;
        }
        let (runs, sources) = e.ledger.key_runs(lease, resource, sku, class)?;
        let sources = sources
            .into_iter()
            .map(|(s, r)| (s.to_string(), r.clone()))
            .collect();
        Some((runs.clone(), sources))
    }

    /// Keeps `ledger` as the fold that stamped `token` leaves it, complete over `windows`.
    pub(crate) fn put(
        &mut self,
        account: String,
        token: i64,
        windows: Vec<(i64, i64)>,
        ledger: AccountLedger,
    ) {
        // A regional domain's ledger (`account@region`) carries its home account's lease
        // states, which a fold stamps on the home account only: never kept, always read.
        if !self.enabled() || account.contains(billing_core::domain::SEPARATOR) {
            return;
        }
        let keys = ledger.key_count();
        if keys > self.max_keys {
            return;
        }
        self.clock += 1;
        let entry = Entry {
            token,
            windows,
            ledger,
            keys,
            at: self.clock,
        };
        if let Some(old) = self.entries.insert(account, entry) {
            self.keys -= old.keys;
        }
        self.keys += keys;
        if self.keys > self.max_keys {
            self.shrink();
        }
    }

    /// Drops the oldest entries until at most three quarters of `max_keys` are kept (so a
    /// cache at its bound does not sort on every put).
    fn shrink(&mut self) {
        let mut by_age: Vec<(u64, String)> = self
            .entries
            .iter()
            .map(|(a, e)| (e.at, a.clone()))
            .collect();
        by_age.sort_unstable();
        let target = self.max_keys / 4 * 3;
        for (_, account) in by_age {
            if self.keys <= target {
                break;
            }
            if let Some(e) = self.entries.remove(&account) {
                self.keys -= e.keys;
            }
        }
    }

    /// Usage keys kept (tests and metrics).
    pub(crate) fn keys(&self) -> usize {
        self.keys
    }
}

/// A batch's changed keys applied to a ledger loaded before it, as loading the ledger from
/// the database after the batch would set them (see `ledgers::load_ledgers`).
pub(crate) fn apply(ledger: &mut AccountLedger, changed: &[ChangedKey]) {
    for (key, runs, sources) in changed {
        ledger.set_runs(key.clone(), runs.clone());
        for (source, runs) in sources {
            ledger.set_source_runs(key.clone(), source, runs.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use billing_core::Class;

    fn ledger(keys: usize) -> AccountLedger {
        let mut l = AccountLedger::new();
        for k in 0..keys {
            let r = format!("g{k}");
            l.insert_usage("L", &r, "gpu.h100", Class::OnDemand, 0, 30, 1.into());
        }
        l
    }

    #[test]
    fn an_entry_serves_only_the_token_it_was_stamped_with_and_its_windows() {
        let mut c = LedgerCache::new(100);
        c.put("a".into(), 7, vec![(0, 100)], ledger(3));
        assert_eq!(c.keys(), 3);
        // Another writer's token: read again (and the entry is gone).
        assert!(c.take("a", Some(8), &[(0, 100)]).is_none());
        assert_eq!(c.keys(), 0);
        c.put("a".into(), 7, vec![(0, 100)], ledger(3));
        // A window it does not cover: read again.
        assert!(c.take("a", Some(7), &[(50, 150)]).is_none());
        c.put("a".into(), 7, vec![(i64::MIN / 2, 100)], ledger(3));
        assert!(c.take("a", None, &[(0, 100)]).is_none());
        c.put("a".into(), 7, vec![(i64::MIN / 2, 100)], ledger(3));
        assert!(c.peek("a", Some(7), (10, 20)).is_some());
        assert!(c.peek("a", Some(8), (10, 20)).is_none());
        assert!(c.peek("a", Some(7), (10, 200)).is_none());
        let (l, w) = c.take("a", Some(7), &[(0, 100), (10, 20)]).expect("valid");
        assert_eq!((l.key_count(), w), (3, vec![(i64::MIN / 2, 100)]));
    }

    #[test]
    fn the_cache_keeps_at_most_max_keys_dropping_the_oldest() {
        let mut c = LedgerCache::new(10);
        for n in 0..5 {
            c.put(format!("a{n}"), 1, vec![(0, 1)], ledger(3));
            assert!(c.keys() <= 10);
        }
        // The newest survives the shrink, the oldest does not.
        assert!(c.take("a4", Some(1), &[(0, 1)]).is_some());
        assert!(c.take("a0", Some(1), &[(0, 1)]).is_none());
        // Disabled: nothing is kept.
        let mut off = LedgerCache::new(0);
        off.put("a".into(), 1, vec![(0, 1)], ledger(1));
        assert_eq!(off.keys(), 0);
    }
}
