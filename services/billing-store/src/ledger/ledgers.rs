//! Loading accounts' ledgers (usage keys and egress) from the store, whole or only what
//! rating some periods reads.

use crate::conn::backend::Backend;
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::LogHandle;
use crate::events::known::Known;
use crate::ledger::ledger_cache::Sources;
use billing_core::Class;
use billing_core::ledger::{AccountLedger, EgressRecord, ResourceKey, Runs};
use billing_core::timestamp::Timestamp;

/// Reads of accounts' ledgers for the API (outside any fold).
impl LogHandle<'_> {
    /// Everything metered for `account`: all its usage keys and egress records.
    pub async fn account_ledger(&self, account: &str) -> Result<AccountLedger> {
        let mut conn = self.pool.acquire().await?;
        load_ledger(&mut conn, account).await
    }

    /// What `account`'s usage in `[from, to)` seconds reads: the usage keys with a second in
    /// it (whole) and the egress in it, as committed. From the ledger this process keeps in
    /// memory when its token is the stored one (see `ledger_cache`), else from the database,
    /// only those keys (the usage API's path: never the account's whole history).
    pub async fn usage_ledger(&self, account: &str, from: i64, to: i64) -> Result<AccountLedger> {
        let token = self.ledger_token(account).await?;
        self.usage_ledger_at(account, token, from, to).await
    }

    /// [`Store::usage_ledger`] for a caller that has just read the account's ledger token
    /// ([`Store::ledger_token`]): the kept ledger is used only if it is that token's.
    pub async fn usage_ledger_at(
        &self,
        account: &str,
        token: Option<i64>,
        from: i64,
        to: i64,
    ) -> Result<AccountLedger> {
        let kept = self
            .ledger_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .peek(account, token, (from, to));
        if let Some(ledger) = kept {
            return Ok(ledger);
        }
        let mut conn = self.pool.acquire().await?;
        let mut all = load_ledgers(&mut conn, None, &[account], &[(from, to)]).await?;
        Ok(all.remove(account).unwrap_or_default())
    }

    /// The account's ledger token: a value every fold that moves the account's ledger
    /// replaces with a fresh random one, in its transaction (see `ledger_cache`); `None`
    /// before its first. While it reads the same, everything read from the account's ledger
    /// (its usage, egress and rental facts) is unchanged, so answers derived from it alone
    /// may be kept under it.
    pub async fn ledger_token(&self, account: &str) -> Result<Option<i64>> {
        Ok(
            crate::conn::db::query(include_str!("../../queries/shared/select_ledger_token.sql"))
                .bind(account)
                .fetch_optional(&self.pool)
                .await?
                .map(|r| r.get("token")),
        )
    }
}

/// An account's ledger as `conn` sees it (inside a batch's transaction: with the batch).
pub(crate) async fn load_ledger(
    conn: &mut dyn crate::conn::db::Conn,
    account: &str,
) -> Result<AccountLedger> {
    let mut all = load_ledgers(conn, None, &[account], &[]).await?;
    Ok(all.remove(account).unwrap_or_default())
}

/// The ledgers of `accounts` in two statements (every account present, empty or not). With
/// `backend` the accounts go in one list parameter (`sql::in_list`); without, there must be one account.
///
/// With `windows` (`[start, end)` seconds; empty: everything) only what rating those periods
/// reads is loaded ([`AccountLedger::restricted_to`] for their union): the keys with a run in
/// one of them (whole, as the minimum charge counts all of a key's seconds) and the egress
/// timed in one, not the account's whole history.
pub(crate) async fn load_ledgers(
    conn: &mut dyn crate::conn::db::Conn,
    backend: Option<Backend>,
    accounts: &[&str],
    windows: &[(i64, i64)],
) -> Result<std::collections::HashMap<String, AccountLedger>> {
    let (keys_in, egress_in) = window_conditions(windows);
    let (filter, param) = match backend {
        Some(b) => (
            crate::conn::sql::in_list("account", b),
            crate::conn::db::Val::from(accounts),
        ),
        None => (
            crate::conn::sql::ONE_ACCOUNT.to_string(),
            crate::conn::db::Val::Text(accounts.first().map(|a| a.to_string()).unwrap_or_default()),
        ),
    };
    let mut out: std::collections::HashMap<String, AccountLedger> = accounts
        .iter()
        .map(|a| (a.to_string(), AccountLedger::new()))
        .collect();
    let rows = crate::conn::db::query(
        &include_str!("../../queries/shared/select_account_ledger_keys.sql")
            .replace("{filter}", &filter)
            .replace("{windows}", &keys_in),
    )
    .bind(param.clone())
    .fetch_all(&mut *conn)
    .await?;
    for r in rows {
        let class: String = r.get("class");
        let class =
            crate::conn::error::stored(Class::parse(&class), "ledger_keys", "class", &class)?;
        let runs: Runs = serde_json::from_str(&r.get::<String, _>("runs"))
            .map_err(|e| StoreError::Corrupt(format!("ledger runs: {e}")))?;
        let key = ResourceKey {
            lease: r.get::<String, _>("lease").into(),
            resource: r.get::<String, _>("resource").into(),
            sku: r.get::<String, _>("sku").into(),
            class,
        };
        let ledger = out.entry(r.get("account")).or_default();
        ledger.set_runs(key.clone(), runs);
        for (source, runs) in parse_sources(r.get::<Option<String>, _>("sources"))? {
            ledger.set_source_runs(key.clone(), &source, runs);
        }
    }
    let rows = crate::conn::db::query(
        &include_str!("../../queries/shared/select_account_egress.sql")
            .replace("{filter}", &filter)
            .replace("{windows}", &egress_in),
    )
    .bind(param.clone())
    .fetch_all(&mut *conn)
    .await?;
    for r in rows {
        let dest: String = r.get("dest");
        let record = EgressRecord {
            time: Timestamp {
                secs: r.get("time_s"),
                nanos: r.get::<i64, _>("time_ns") as u32,
            },
            // Stored bit for bit as a signed 64-bit integer (see `fold`): exact for every u64.
            bytes: r.get::<i64, _>("bytes") as u64,
        };
        add_egress_row(out.entry(r.get("account")).or_default(), &dest, record, &r);
    }
    crate::ledger::rental::load_account_facts(conn, &filter, &param, &mut out).await?;
    crate::ledger::rental::add_home_lease_states(conn, "", &mut out).await?;
    Ok(out)
}

/// An egress row into its ledger: with the lease it names, if any (section 18 allocates
/// egress by that lease's tag).
fn add_egress_row(
    ledger: &mut AccountLedger,
    dest: &str,
    record: EgressRecord,
    r: &crate::conn::db::DbRow,
) {
    match r.get::<Option<String>, _>("lease") {
        Some(lease) => ledger.add_egress_of_lease(dest, record, &lease),
        None => ledger.add_egress(dest, record),
    }
}

/// The `{windows}` of the ledger keys' and the egress statements: ` and (...)`, empty for none.
fn window_conditions(windows: &[(i64, i64)]) -> (String, String) {
    // Integers written into the statement: no text from outside reaches it.
    let any_of = |clause: &dyn Fn(i64, i64) -> String| -> String {
        if windows.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = windows.iter().map(|&(s, e)| clause(s, e)).collect();
        format!(" and ({})", parts.join(" or "))
    };
    let keys_in = any_of(&|s, e| format!("(first_s < {e} and end_s > {s})"));
    let egress_in = any_of(&|s, e| format!("(time_s >= {s} and time_s < {e})"));
    (keys_in, egress_in)
}

/// A key's stored coverage by source (none for keys folded before migration 0012).
pub(crate) fn parse_sources(text: Option<String>) -> Result<Sources> {
    match text {
        None => Ok(Default::default()),
        Some(t) => serde_json::from_str(&t)
            .map_err(|e| StoreError::Corrupt(format!("ledger sources: {e}"))),
    }
}

impl LogHandle<'_> {
    /// `account`'s ledger as the events `known` counts made it (issue 12, as-known-at: those
    /// ingested at or before a time; `verify`: those folded before a close): usage from the facts each accepted event left (`usage_facts`), folded
    /// again with the ledger's own union; egress and the account's rental facts ingested by
    /// then (those stored before migration 0018 count as known from the start); platform
    /// events come with the rating (`rental::load_platform_known_at`). Whole history: the
    /// minimum charge counts a resource's seconds over all its events.
    pub async fn ledger_known_at(&self, account: &str, known: Known) -> Result<AccountLedger> {
        let (t_ms, stamp) = known.bounds();
        let mut conn = self.pool.acquire().await?;
        let mut ledger = AccountLedger::new();
        for r in crate::conn::db::query(include_str!(
            "../../queries/shared/select_usage_facts_known_at.sql"
        ))
        .bind(account)
        .bind(t_ms)
        .bind(i64::MIN)
        .bind(i64::MAX)
        .bind(stamp)
        .fetch_all(&mut *conn)
        .await?
        {
            let class: String = r.get("class");
            let class =
                crate::conn::error::stored(Class::parse(&class), "usage_facts", "class", &class)?;
            let quantity: String = r.get("quantity");
            let quantity = crate::conn::error::stored(
                quantity.parse().ok(),
                "usage_facts",
                "quantity",
                &quantity,
            )?;
            ledger.insert_usage_from(
                &r.get::<String, _>("source"),
                &r.get::<String, _>("lease"),
                &r.get::<String, _>("resource"),
                &r.get::<String, _>("sku"),
                class,
                r.get("start_s"),
                r.get("end_s"),
                quantity,
            );
        }
        let known = known.condition();
        let mut all = std::collections::HashMap::new();
        all.insert(account.to_string(), ledger);
        for r in crate::conn::db::query(
            &include_str!("../../queries/shared/select_account_egress.sql")
                .replace("{filter}", crate::conn::sql::ONE_ACCOUNT)
                .replace("{windows}", &known),
        )
        .bind(account)
        .fetch_all(&mut *conn)
        .await?
        {
            let record = EgressRecord {
                time: Timestamp {
                    secs: r.get("time_s"),
                    nanos: r.get::<i64, _>("time_ns") as u32,
                },
                bytes: r.get::<i64, _>("bytes") as u64,
            };
            if let Some(l) = all.get_mut(account) {
                add_egress_row(l, &r.get::<String, _>("dest"), record, &r);
            }
        }
        let filter = format!("{}{known}", crate::conn::sql::ONE_ACCOUNT);
        crate::ledger::rental::load_account_facts(&mut conn, &filter, &account.into(), &mut all)
            .await?;
        crate::ledger::rental::add_home_lease_states(&mut conn, &known, &mut all).await?;
        Ok(all.remove(account).unwrap_or_default())
    }
}
