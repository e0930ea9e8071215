//! Running `billing_core::notify`'s rules against the store's state, in the transaction of
//! what moved it:
//!
//! - [`after_batch`]: a batch's accounts and the organization nodes above them: budgets (the
//!   period's cost to date and the burn rate of what runs), the balance alert and the
//!   arrears sequence of prepaid accounts. `now` is the latest usage second the batch brought
//!   to the account (not the clock), as for quota decisions: a replay evaluates the same
//!   observations and finds every notice's key written.
//! - [`account_now`]: one account after a wallet movement or an invoice payment, at the
//!   command's time (a top-up clears arrears and resolves a low balance at once).
//! - [`NotifyHandle::tick`]: every account with settings, at the clock: the arrears steps that
//!   came due (stop, release), and expiry and renewal reminders.
//!
//! What a rule remembers is in `notify_states` under a subject (`budget:<id>`, `balance`,
//! `arrears`, `reminders`); a state that blocks authorizations (a budget with `action = stop`
//! at 100%, an arrears stop or release) carries its `block`, which `authorize.rs` reads.

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::NotifyHandle;
use crate::conn::store::Store;
use crate::notify::publish::{Measured, Outlet, publish};
use crate::notify::settings::NotifySettings;
use crate::pricing::books::Books;
use crate::pricing::provisional::Measure;
use crate::quota::nodes::Tree;
use billing_core::notify::{
    ArrearsState, BalanceState, Budget, BudgetScope, BudgetState, ExpiryState, Notice,
};
use billing_core::pricebook::PriceBook;
use rust_decimal::Decimal;
use serde::{Serialize, de::DeserializeOwned};
use std::collections::{BTreeMap, HashMap};

/// What a blocking state refuses, as stored in `notify_states.block`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Block {
    /// The account whose subtree it blocks.
    pub node: String,
    pub used: Decimal,
    pub limit: Decimal,
}

/// Budgets, balance alerts and arrears of the accounts a batch touched (`touched`: domain id
/// → latest usage second) and of the nodes above them, measured with the batch's
/// provisional costs (`measured`).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn after_batch(
    conn: &mut dyn Conn,
    store: &Store,
    books: &Books,
    touched: &BTreeMap<String, i64>,
    measured: &HashMap<(String, String), Measure>,
    position: &serde_json::Value,
    now_ms: i64,
) -> Result<()> {
    // Home accounts only: budgets and alerts are an account's, in its home currency.
    let mut at: BTreeMap<String, i64> = BTreeMap::new();
    for (id, &secs) in touched {
        let d = billing_core::domain::Domain::parse(id);
        if d.region.is_none() {
            at.insert(d.account.to_string(), secs);
        }
    }
    if at.is_empty() {
        return Ok(());
    }
    // The nodes above: their budgets may cover these accounts.
    if let Some(book) = books.latest() {
        let tree = Tree::of(book);
        for (a, secs) in at.clone() {
            for node in tree.ancestors(&a) {
                let e = at.entry(node.to_string()).or_insert(secs);
                *e = (*e).max(secs);
            }
        }
    }
    let settings = settings_of_accounts(conn, store.backend, at.keys()).await?;
    if settings.is_empty() {
        return Ok(());
    }
    let out = Outlet {
        backend: store.backend,
        topics: store.topics(),
        position,
        now_ms,
    };
    for (account, s) in &settings {
        let now = at[account];
        let ctx = Ctx {
            books,
            measured: Some(measured),
            out: &out,
        };
        for budget in s.budgets.values() {
            evaluate_budget(conn, &ctx, budget, now).await?;
        }
        evaluate_money(conn, store, &ctx, account, s, now).await?;
    }
    Ok(())
}

impl Store {
    /// One account's balance alert and arrears after a wallet movement or an invoice payment
    /// at `now_ms` (the command's time), in its transaction. A method of the store, so that
    /// the wallet calls it without its module naming this one.
    pub(crate) async fn notify_account_now(
        &self,
        conn: &mut dyn Conn,
        account: &str,
        now_ms: i64,
    ) -> Result<()> {
        account_now(conn, self, account, now_ms).await
    }
}

async fn account_now(conn: &mut dyn Conn, store: &Store, account: &str, now_ms: i64) -> Result<()> {
    let s = crate::notify::settings::settings_of(conn, account).await?;
    if s.balance.is_none() && s.arrears.is_none() {
        return Ok(());
    }
    let books = store.books(conn).await?;
    let position = serde_json::Value::Array(Vec::new());
    let out = Outlet {
        backend: store.backend,
        topics: store.topics(),
        position: &position,
        now_ms,
    };
    let ctx = Ctx {
        books: &books.1,
        measured: None,
        out: &out,
    };
    evaluate_money(conn, store, &ctx, account, &s, now_ms.div_euclid(1000)).await
}

/// What every evaluation reads from.
struct Ctx<'a> {
    books: &'a Books,
    measured: Option<&'a HashMap<(String, String), Measure>>,
    out: &'a Outlet<'a>,
}

/// The accounts' settings, for those that have some.
async fn settings_of_accounts<'a>(
    conn: &mut dyn Conn,
    backend: crate::conn::backend::Backend,
    accounts: impl Iterator<Item = &'a String>,
) -> Result<BTreeMap<String, NotifySettings>> {
    let names: Vec<&str> = accounts.map(String::as_str).collect();
    let mut out = BTreeMap::new();
    for chunk in names.chunks(crate::conn::sql::MAX_IN_LIST) {
        let filter = crate::conn::sql::in_list("account", backend);
        let sql = include_str!("../../queries/shared/select_notify_settings.sql")
            .replace("{filter}", &filter);
        for r in crate::conn::db::query(&sql)
            .bind(chunk)
            .fetch_all(&mut *conn)
            .await?
        {
            let s = crate::notify::settings::parse(&r.get::<String, _>("body"))?;
            out.insert(r.get::<String, _>("account"), s);
        }
    }
    Ok(out)
}

/// A rule's remembered state (its default when none).
async fn load<T: DeserializeOwned + Default>(
    conn: &mut dyn Conn,
    account: &str,
    subject: &str,
) -> Result<T> {
    match crate::conn::db::query(include_str!("../../queries/shared/select_notify_state.sql"))
        .bind(account)
        .bind(subject)
        .fetch_optional(conn)
        .await?
    {
        Some(r) => serde_json::from_str(&r.get::<String, _>("body"))
            .map_err(|e| StoreError::Corrupt(format!("notify_states.body of {subject}: {e}"))),
        None => Ok(T::default()),
    }
}

async fn save<T: Serialize>(
    conn: &mut dyn Conn,
    account: &str,
    subject: &str,
    state: &T,
    block: Option<&Block>,
    now_ms: i64,
) -> Result<()> {
    let body = serde_json::to_string(state).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let block = block
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    crate::conn::db::query(include_str!("../../queries/shared/upsert_notify_state.sql"))
        .bind(account)
        .bind(subject)
        .bind(body)
        .bind(block)
        .bind(now_ms)
        .execute(conn)
        .await?;
    Ok(())
}

/// Writes each notice (those already written are skipped by their keys).
async fn publish_all(
    conn: &mut dyn Conn,
    out: &Outlet<'_>,
    notices: &[Notice],
    measured: &Measured<'_>,
) -> Result<()> {
    for n in notices {
        publish(conn, out, n, measured).await?;
    }
    Ok(())
}

/// The per-second cost of what runs now in `accounts`: each running unit at its sku's
/// on-demand rate (`billing_core::notify::burn`).
async fn burn_rate(
    conn: &mut dyn Conn,
    book: &PriceBook,
    accounts: impl IntoIterator<Item = String>,
    now: i64,
) -> Result<Decimal> {
    let mut running = Vec::new();
    for a in accounts {
        for (sku, quantity) in crate::quota::spent::running_units(conn, &a, now).await? {
            if let Some(rate_per_hour) = billing_core::quota::hold_rate(book, &sku) {
                running.push(billing_core::notify::burn::Running {
                    quantity,
                    rate_per_hour,
                });
            }
        }
    }
    Ok(billing_core::notify::burn::burn_rate_per_second(&running))
}

/// The cost of one account in period `label`: the batch's measure, else as stored or rated.
async fn cost_of(
    conn: &mut dyn Conn,
    ctx: &Ctx<'_>,
    account: &str,
    label: &str,
) -> Result<Decimal> {
    let key = (account.to_string(), label.to_string());
    Ok(match ctx.measured.and_then(|m| m.get(&key)) {
        Some(m) => m.0,
        None => crate::pricing::provisional_reads::measure(conn, ctx.books, account, label)
            .await?
            .map_or(Decimal::ZERO, |m| m.0),
    })
}

/// One budget at `now` (seconds): its period's cost to date and burn rate, the core's
/// evaluation, the state kept and the notices written.
async fn evaluate_budget(
    conn: &mut dyn Conn,
    ctx: &Ctx<'_>,
    budget: &Budget,
    now: i64,
) -> Result<()> {
    let Some(label) = ctx.books.label_of(now) else {
        return Ok(());
    };
    let Some((book, period)) = ctx.books.for_period(&mut *conn, &label).await? else {
        return Ok(());
    };
    let tree = Tree::of(&book);
    // What the budget measures, who runs under it (the burn rate's accounts) and, for a tag,
    // its share of their cost (the burn rate is theirs times that share).
    let (node, cost, members, share) = match &budget.scope {
        BudgetScope::Account(a) => (
            a.clone(),
            cost_of(conn, ctx, a, &label).await?,
            vec![a.clone()],
            None,
        ),
        BudgetScope::Node(n) => {
            let spend = crate::quota::nodes::node_spend(
                conn,
                ctx.books,
                (&book, &tree),
                n,
                &label,
                ctx.measured,
            )
            .await?;
            (
                n.clone(),
                spend,
                tree.subtree(n).into_iter().collect(),
                None,
            )
        }
        BudgetScope::Tag { value, .. } => {
            let below = tree.subtree(&budget.account);
            let payer = book.payer_of(&budget.account).to_string();
            let (tagged, all) = tag_cost(conn, &payer, &label, value, &below).await?;
            (
                budget.account.clone(),
                tagged,
                below.into_iter().collect(),
                Some((tagged, all)),
            )
        }
    };
    let burn = burn_rate(conn, &book, members, now).await?;
    let burn = match share {
        Some((_, all)) if all <= Decimal::ZERO => Decimal::ZERO,
        Some((part, all)) => burn * part / all,
        None => burn,
    };
    let subject = format!("budget:{}", budget.id);
    let state: BudgetState = load(conn, &budget.account, &subject).await?;
    let obs = billing_core::notify::budget::BudgetObservation {
        period: &period,
        cost,
        burn_rate_per_second: burn,
        now,
    };
    let eval = billing_core::notify::evaluate_budget(budget, &state, &obs);
    let block = eval.state.limited.then(|| Block {
        node: node.clone(),
        used: cost,
        limit: budget.amount,
    });
    if eval.state != state || block.is_some() {
        save(
            conn,
            &budget.account,
            &subject,
            &eval.state,
            block.as_ref(),
            ctx.out.now_ms,
        )
        .await?;
    }
    let measured = Measured {
        label: &label,
        used: cost,
        limit: budget.amount,
    };
    publish_all(conn, ctx.out, &eval.notices, &measured).await
}

/// What the allocation of `payer`'s provisional invoice of `label` gives to tag `value` in
/// the accounts of `below`, and to those accounts in all (section 18's rows, as stored by the
/// batch that rated it).
async fn tag_cost(
    conn: &mut dyn Conn,
    payer: &str,
    label: &str,
    value: &str,
    below: &std::collections::BTreeSet<String>,
) -> Result<(Decimal, Decimal)> {
    let Some(r) = crate::conn::db::query(include_str!(
        "../../queries/shared/select_provisional_body.sql"
    ))
    .bind(payer)
    .bind(label)
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok((Decimal::ZERO, Decimal::ZERO));
    };
    let invoice: billing_core::Invoice = serde_json::from_str(&r.get::<String, _>("body"))
        .map_err(|e| StoreError::Corrupt(format!("provisional_costs.body: {e}")))?;
    let rows = match &invoice.allocation {
        Some(rows) => rows.clone(),
        None => vec![billing_core::pricing::allocation_report::whole(&invoice)],
    };
    let (mut tagged, mut all) = (Decimal::ZERO, Decimal::ZERO);
    for row in rows.iter().filter(|r| below.contains(&r.account)) {
        all += row.total;
        if row.tag == value {
            tagged += row.total;
        }
    }
    Ok((tagged, all))
}

/// The balance a prepaid account can still spend (its quotas have a `prepaid_balance`), else
/// its wallet's balance; and whether an issued invoice is overdue at `now`.
async fn money_of(
    conn: &mut dyn Conn,
    store: &Store,
    ctx: &Ctx<'_>,
    account: &str,
    now: i64,
) -> Result<(Decimal, bool, bool)> {
    let (wallet, outstanding) = crate::finance::wallet_rows::wallet_state(conn, account).await?;
    let prepaid = crate::quota::limits::quotas_of(conn, account)
        .await?
        .is_some_and(|(q, _)| q.prepaid_balance.is_some());
    let balance = match (prepaid, ctx.books.label_of(now)) {
        (true, Some(label)) => {
            let cost = cost_of(conn, ctx, account, &label).await?;
            billing_core::quota::prepaid_available(wallet, outstanding, cost, Decimal::ZERO)
        }
        _ => wallet,
    };
    let cutoff_ms = now
        .saturating_mul(1000)
        .saturating_sub(store.payment_days.saturating_mul(86_400_000));
    let mut overdue = false;
    for r in crate::conn::db::query(include_str!(
        "../../queries/shared/select_invoices_unpaid.sql"
    ))
    .bind(account)
    .bind(cutoff_ms)
    .fetch_all(&mut *conn)
    .await?
    {
        let due: String = r.get("amount_due");
        if due.parse::<Decimal>().is_ok_and(|d| d > Decimal::ZERO) {
            overdue = true;
            break;
        }
    }
    Ok((balance, overdue, prepaid))
}

/// The balance alert and the arrears sequence of one account at `now` (seconds).
async fn evaluate_money(
    conn: &mut dyn Conn,
    store: &Store,
    ctx: &Ctx<'_>,
    account: &str,
    s: &NotifySettings,
    now: i64,
) -> Result<()> {
    if s.balance.is_none() && s.arrears.is_none() {
        return Ok(());
    }
    let (balance, overdue, prepaid) = money_of(conn, store, ctx, account, now).await?;
    let measured = Measured {
        label: "arrears",
        used: balance,
        limit: Decimal::ZERO,
    };
    if let (Some(alert), true) = (&s.balance, prepaid) {
        let burn = match ctx.books.latest() {
            Some(book) => burn_rate(conn, book, [account.to_string()], now).await?,
            None => Decimal::ZERO,
        };
        let state: BalanceState = load(conn, account, "balance").await?;
        let obs = billing_core::notify::balance::BalanceObservation {
            balance,
            burn_rate_per_second: burn,
            now,
        };
        let (next, notices) = billing_core::notify::balance::evaluate(account, alert, &state, &obs);
        if next != state {
            save(conn, account, "balance", &next, None, ctx.out.now_ms).await?;
        }
        publish_all(conn, ctx.out, &notices, &measured).await?;
    }
    if let Some(policy) = &s.arrears {
        let state: Option<ArrearsState> = load(conn, account, "arrears").await?;
        let state = state.unwrap_or_else(|| ArrearsState::new(account));
        let observed = billing_core::notify::Observed { balance, overdue };
        let (next, notices) = billing_core::notify::step(&state, policy, &observed, now);
        let block = match next.phase {
            billing_core::notify::arrears::Phase::Stopped { .. }
            | billing_core::notify::arrears::Phase::Released { .. } => Some(Block {
                node: account.to_string(),
                used: balance,
                limit: Decimal::ZERO,
            }),
            _ => None,
        };
        if next != state {
            save(
                conn,
                account,
                "arrears",
                &next,
                block.as_ref(),
                ctx.out.now_ms,
            )
            .await?;
        }
        publish_all(conn, ctx.out, &notices, &measured).await?;
    }
    Ok(())
}

/// Expiry and renewal reminders of one account at `now` (seconds).
async fn evaluate_reminders(
    conn: &mut dyn Conn,
    ctx: &Ctx<'_>,
    account: &str,
    s: &NotifySettings,
    now: i64,
) -> Result<()> {
    let Some(policy) = &s.reminders else {
        return Ok(());
    };
    let Some(book) = ctx.books.latest() else {
        return Ok(());
    };
    let mut terms = Vec::new();
    terms.extend(
        book.packages
            .iter()
            .filter(|p| p.account == account)
            .map(billing_core::notify::expiry::package_term),
    );
    terms.extend(
        book.credit_terms
            .iter()
            .filter(|c| c.account == account)
            .filter_map(billing_core::notify::expiry::credit_term),
    );
    terms.extend(
        book.subscriptions
            .iter()
            .filter(|x| x.account == account)
            .filter_map(|x| billing_core::notify::expiry::subscription_term(x, book.timezone, now)),
    );
    if terms.is_empty() {
        return Ok(());
    }
    let (wallet, _) = crate::finance::wallet_rows::wallet_state(conn, account).await?;
    let state: ExpiryState = load(conn, account, "reminders").await?;
    let (next, notices) = billing_core::notify::reminders(policy, &terms, wallet, &state, now);
    if next != state {
        save(conn, account, "reminders", &next, None, ctx.out.now_ms).await?;
    }
    let measured = Measured {
        label: "reminders",
        used: Decimal::ZERO,
        limit: Decimal::ZERO,
    };
    publish_all(conn, ctx.out, &notices, &measured).await
}

/// What one tick did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Ticked {
    /// Accounts with settings evaluated.
    pub accounts: usize,
}

impl NotifyHandle<'_> {
    /// Evaluates every account with settings at `now_ms` (the clock): arrears steps that came
    /// due, balance alerts, reminders. One transaction per account; a crash between two
    /// loses nothing (the next tick evaluates again and the keys keep each notice once).
    pub async fn tick(&self, now_ms: i64) -> Result<Ticked> {
        let accounts: Vec<(String, NotifySettings)> = {
            let mut conn = self.pool.acquire().await?;
            let rows = crate::conn::db::query(include_str!(
                "../../queries/shared/select_notify_settings_all.sql"
            ))
            .fetch_all(&mut *conn)
            .await?;
            let mut out = Vec::with_capacity(rows.len());
            for r in rows {
                let s = crate::notify::settings::parse(&r.get::<String, _>("body"))?;
                out.push((r.get("account"), s));
            }
            out
        };
        let now = now_ms.div_euclid(1000);
        let position = serde_json::Value::Array(Vec::new());
        for (account, s) in &accounts {
            if s.arrears.is_none() && s.balance.is_none() && s.reminders.is_none() {
                continue;
            }
            let _w = self.writer.lock().await;
            let mut tx = self.begin_write().await?;
            let books = self.books(&mut tx).await?;
            let out = Outlet {
                backend: self.backend,
                topics: self.topics(),
                position: &position,
                now_ms,
            };
            let ctx = Ctx {
                books: &books.1,
                measured: None,
                out: &out,
            };
            evaluate_money(&mut tx, self, &ctx, account, s, now).await?;
            evaluate_reminders(&mut tx, &ctx, account, s, now).await?;
            tx.commit().await?;
        }
        Ok(Ticked {
            accounts: accounts.len(),
        })
    }
}

/// Every blocking state, by the node it blocks: (its subject, what it says).
pub(crate) async fn blocks(conn: &mut dyn Conn) -> Result<HashMap<String, (String, Block)>> {
    let mut out: HashMap<String, (String, Block)> = HashMap::new();
    for r in crate::conn::db::query(include_str!(
        "../../queries/shared/select_notify_blocks.sql"
    ))
    .fetch_all(conn)
    .await?
    {
        let text: String = r.get("block");
        let block: Block = serde_json::from_str(&text)
            .map_err(|e| StoreError::Corrupt(format!("notify_states.block: {e}")))?;
        let subject: String = r.get("subject");
        out.entry(block.node.clone()).or_insert((subject, block));
    }
    Ok(out)
}

/// The denial of a hold of `amount` for `account` when it or a node above it is blocked
/// (the nearest first).
pub(crate) fn blocked(
    blocks: &HashMap<String, (String, Block)>,
    tree: Option<&Tree<'_>>,
    account: &str,
    amount: Decimal,
) -> Option<crate::quota::holds::Authorization> {
    if blocks.is_empty() {
        return None;
    }
    let mut nodes = vec![account];
    if let Some(t) = tree {
        nodes.extend(t.ancestors(account));
    }
    nodes.into_iter().find_map(|n| {
        blocks
            .get(n)
            .map(|(subject, b)| crate::quota::holds::Authorization::Denied {
                node: n.to_string(),
                quota: subject.clone(),
                used: billing_core::money::round_amount(b.used),
                requested: amount,
                limit: billing_core::money::round_amount(b.limit),
            })
    })
}
