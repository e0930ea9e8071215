//! Quotas, prepaid balances and holds: the synchronous authorization of rental backends
//! (issue 5).
//!
//! A hold reserves `quantity x seconds` at the sku's first-tier on-demand rate
//! (`billing_core::quota::hold_rate`), rounded up to the cent, so a hold never reserves less
//! than the usage it stands for (`billing_core::quota::hold_amount`). Authorizations are
//! group-committed (see [`Store::authorize`], in `authorize.rs`) and decided one group at a
//! time: on PostgreSQL under an advisory lock of their own (all processes; they only insert holds, so they never
//! wait for a fold), on SQLite under the writer lock. Concurrent calls see each other's holds:
//! the checks and the new holds are one transaction. Usage that arrives for a hold's lease
//! captures the hold (the fold does it, in the batch's transaction): from then on the usage
//! counts through the ledger instead. Live holds expire by themselves at `expires_at` (checked
//! on every read and authorization; batches mark them) and survive restarts (they are rows).
//!
//! What a group reads per account, in one statement: the account, its quotas, its stored
//! provisional cost (see `provisional`), its wallet's balance and outstanding and its hold
//! revision (`hold_revs`, moved in the transaction of every authorization, release, extension
//! and capture). While the revision has not moved since this process last read the account's
//! live holds, they come from memory; otherwise they are read, and the statement again, so the
//! cost is never older than the holds: a fold capturing a hold in between can only make a usage
//! count twice (a stricter answer), never not at all.
//!
//! What is spent, for the checks (choices where issue 5 leaves room, also in the README):
//! - `spend_limit`: the open period's provisional invoice total (rated from the ledger with
//!   the same function as invoices) plus live holds plus the new hold, at most the limit; and
//!   issue 27, budgets per node (`nodes.rs`): the `spend_limit` of the account itself when it
//!   has sub-accounts, and of every ancestor, over the whole subtree's spend and live holds;
//! - `prepaid_balance`: turns the prepaid rule on; the limit is then the wallet's balance,
//!   burned by what issued invoices still owe and by the open period's provisional total;
//!   live holds and the new hold must fit in the rest (credits of billing-semantics.md count
//!   in, as they lower those totals): `billing_core::quota::against_wallet` and
//!   `billing_core::quota::prepaid_used`;
//! - `max_concurrent[sku]`: units of live holds of the sku plus the new hold's plus the units
//!   running now: every usage key of the sku whose last reported second is within the last
//!   [`RUNNING_WINDOW_S`] seconds counts with its last quantity (a hold captured by its lease's
//!   usage goes on counting through it; a hold placed without a lease is never captured, so
//!   its usage counts twice until it expires);
//! - `gpu_hours[sku]`: the open period's unit-hours of the sku in the ledger plus live holds'
//!   unit-hours plus the new hold's.

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::QuotaHandle;
use crate::events::commands::Command;
use crate::pricing::provisional_reads::measure;
pub use crate::quota::holds::{Authorization, Hold, HoldError, HoldRequest};
use crate::quota::holds::{HoldId, HoldStatus};
pub use billing_core::quota::Quotas;
use rust_decimal::Decimal;
use serde::Serialize;

/// A usage key counts as running (for `max_concurrent`) while its last reported second is at
/// most this old: the core's constant (`billing_core::quota::RUNNING_WINDOW_S`, with the
/// predicate `billing_core::quota::is_running`), re-exported here under its old path.
pub use billing_core::quota::RUNNING_WINDOW_S;

/// The balance view of `GET /v1/balance`.
#[derive(Debug, Clone, Serialize)]
pub struct Balance {
    pub account: String,
    /// Section 19: the region whose billing domain this is (absent: home).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    pub period_label: Option<String>,
    /// The open period's provisional invoice total.
    pub period_cost: Decimal,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prepaid_balance: Option<Decimal>,
    /// Prepaid balance minus what usage burned and live holds reserve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<Decimal>,
    pub held: Decimal,
    pub holds: Vec<Hold>,
    pub quotas: Quotas,
    /// What the account holds (issue 10): see [`billing_core::holdings`].
    pub packages: Vec<billing_core::holdings::PackageBalance>,
    pub credits: Vec<billing_core::holdings::CreditBalance>,
    pub subscriptions: Vec<billing_core::holdings::SubscriptionStatus>,
    /// SLA compensation the issued invoices credited to the balance, in total.
    pub sla_compensation_credited: Decimal,
    /// What of it is not consumed yet.
    pub sla_compensation_left: Decimal,
    /// The prepaid wallet (issue 12): its balance, what invoices still owe, its movements.
    /// With the `prepaid_balance` quota set, `prepaid_balance` is this balance and
    /// `available` is it less `outstanding`, `period_cost` and `held`.
    pub wallet: crate::finance::wallet::Wallet,
}

/// What an account holds at an instant (the fields of [`Balance`] from issue 10).
#[derive(Debug, Default)]
struct Holdings {
    packages: Vec<billing_core::holdings::PackageBalance>,
    credits: Vec<billing_core::holdings::CreditBalance>,
    subscriptions: Vec<billing_core::holdings::SubscriptionStatus>,
    sla_credited: Decimal,
    sla_left: Decimal,
}

/// The account's holdings at `now_s` under `book` (the merged version rating the open period).
///
/// `(account, domain)`: the account names its terms in `book` (the domain's region's book);
/// the domain's id (`account` or `account@region`) holds its issued invoices and ledger.
async fn holdings(
    conn: &mut dyn Conn,
    book: &billing_core::PriceBook,
    (account, domain): (&str, &str),
    now_s: i64,
) -> Result<Holdings> {
    use billing_core::holdings::{credit_balances, package_balances, subscription_statuses};
    let issued =
        crate::pricing::issued::issued_credits(conn, crate::conn::sql::ONE_ACCOUNT, &domain.into())
            .await?;
    let resolved = billing_core::credits::resolve_labels(
        book,
        crate::pricing::issued::labelled(issued.get(domain).map_or(&[][..], Vec::as_slice)),
    );
    let sla_credited = resolved.iter().map(|r| r.1.compensation).sum();
    let (credits, sla_left) = credit_balances(book, account, &resolved);
    let packages = if book.packages.iter().any(|p| p.account == account) {
        let ledger = crate::ledger::ledgers::load_ledger(conn, domain).await?;
        let platform = crate::ledger::rental::load_platform(conn).await?;
        let region = billing_core::domain::Domain::parse(domain).region;
        package_balances(
            book,
            account,
            Some(&ledger),
            &platform.in_region(region),
            now_s,
        )
        .map_err(|e| StoreError::Corrupt(format!("package balances of {account:?}: {e}")))?
    } else {
        Vec::new()
    };
    Ok(Holdings {
        packages,
        credits,
        subscriptions: subscription_statuses(book, account, now_s),
        sla_credited,
        sla_left,
    })
}

impl QuotaHandle<'_> {
    /// Sets an account's quotas (replacing the previous set) and records the command.
    ///
    /// Section 19: quotas are a billing domain's: `region` (`None`: home) names the domain
    /// whose cost, holds and wallet they measure, in its currency (the caller checks that the
    /// price book names it).
    pub async fn set_quotas(
        &self,
        account: &str,
        region: Option<&str>,
        quotas: &Quotas,
        now_ms: i64,
    ) -> Result<(), HoldError> {
        quotas.validate().map_err(HoldError::Invalid)?;
        if !self.admin().account_exists(account).await? {
            return Err(HoldError::UnknownAccount(account.to_string()));
        }
        let home = account;
        let domain = billing_core::domain::Domain { account, region }.id();
        let account: &str = &domain;
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        // Found by the simulation (issue 14): two settings in one millisecond got one command
        // id (`quotas.set:{account}:{at_ms}`) and one correction reference, so a replay (and
        // any consumer deduplicating by id) kept the first and dropped the second. Each
        // setting of an account is now at least a millisecond after the one before.
        let last: Option<i64> = crate::conn::db::query(include_str!(
            "../../queries/shared/select_quotas_updated_at.sql"
        ))
        .bind(account)
        .fetch_optional(&mut *tx)
        .await?
        .map(|r| r.get("updated_at_ms"));
        let now_ms = last.map_or(now_ms, |l| now_ms.max(l + 1));
        let body = serde_json::to_string(quotas).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        crate::conn::db::query(include_str!("../../queries/shared/upsert_quotas.sql"))
            .bind(account)
            .bind(body)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
        // Setting a prepaid balance is a correction movement of the wallet (issue 12), not an
        // overwrite: the movements keep adding up to the balance.
        if let Some(target) = quotas.prepaid_balance {
            self.correct_balance(&mut tx, account, target, now_ms)
                .await?;
        }
        self.record_command(
            &mut tx,
            &Command::SetQuotas {
                account: home.to_string(),
                region: region.map(str::to_string),
                quotas: quotas.clone(),
                at_ms: now_ms,
            },
            now_ms,
        )
        .await?;
        // The open period's provisional cost, stored if no batch has yet: authorizations read
        // it instead of rating.
        let books = crate::pricing::books::Books::load(&mut tx, &self.books, true).await?;
        if let Some(label) = books.1.label_of(now_ms.div_euclid(1000)) {
            crate::pricing::provisional::ensure(&mut tx, &books.1, account, &label, now_ms).await?;
            // Issue 27: a node's budget measures its subtree's rows (`nodes.rs`): each stored
            // now if no batch has yet (a payer's row brings its members').
            if let Some((book, _)) = books.1.for_period(&mut tx, &label).await? {
                let tree = crate::quota::nodes::Tree::of(&book);
                if tree.has_children(home) {
                    for m in tree.subtree(home) {
                        let id = billing_core::domain::Domain {
                            account: &m,
                            region,
                        }
                        .id();
                        crate::pricing::provisional::ensure(&mut tx, &books.1, &id, &label, now_ms)
                            .await?;
                    }
                }
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// An account's quotas and when they were set (none: no quotas).
    pub async fn quotas(&self, account: &str) -> Result<Option<(Quotas, i64)>> {
        let mut conn = self.pool.acquire().await?;
        quotas_of(&mut conn, account).await
    }

    /// Extends a live hold to `now + ttl` (an account, when given, must own it).
    pub async fn extend_hold(
        &self,
        id: &HoldId,
        account: Option<&str>,
        ttl_ms: i64,
        now_ms: i64,
    ) -> Result<Hold, HoldError> {
        self.close_or_extend(id, account, Some(ttl_ms), now_ms)
            .await
    }

    /// Releases a live hold: its amount is free again.
    pub async fn release_hold(
        &self,
        id: &HoldId,
        account: Option<&str>,
        now_ms: i64,
    ) -> Result<Hold, HoldError> {
        self.close_or_extend(id, account, None, now_ms).await
    }

    async fn close_or_extend(
        &self,
        id: &HoldId,
        account: Option<&str>,
        ttl_ms: Option<i64>,
        now_ms: i64,
    ) -> Result<Hold, HoldError> {
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        self.expire_holds(&mut tx, now_ms).await?;
        let hold = self
            .hold(&mut tx, id)
            .await?
            .filter(|h| account.is_none_or(|a| a == h.account))
            .ok_or_else(|| HoldError::UnknownHold(id.to_string()))?;
        if hold.status != HoldStatus::Live {
            tx.rollback().await?;
            return Err(HoldError::NotLive {
                id: id.to_string(),
                status: hold.status,
            });
        }
        let q = match ttl_ms {
            Some(ttl) => {
                crate::conn::db::query(include_str!("../../queries/shared/extend_hold.sql"))
                    .bind(now_ms + ttl)
            }
            None => crate::conn::db::query(include_str!("../../queries/shared/release_hold.sql"))
                .bind(now_ms),
        };
        q.bind(id.as_str()).execute(&mut *tx).await?;
        bump_hold_rev(&mut tx, &hold.account).await?;
        let updated = self
            .hold(&mut tx, id)
            .await?
            .ok_or_else(|| HoldError::UnknownHold(id.to_string()))?;
        tx.commit().await?;
        Ok(updated)
    }

    /// The account's balance, quotas and live holds.
    ///
    /// Section 19: `region` (`None`: home) picks the billing domain, whose quotas, holds,
    /// cost, wallet and terms (in the region's book) the balance shows.
    pub async fn balance(
        &self,
        home: &str,
        region: Option<&str>,
        now_ms: i64,
    ) -> Result<Balance, HoldError> {
        let domain = billing_core::domain::Domain {
            account: home,
            region,
        }
        .id();
        let account: &str = &domain;
        let mut conn = self.pool.acquire().await?;
        let (quotas, _) = quotas_of(&mut conn, account).await?.unwrap_or_default();
        // Holds before the cost: a fold committing in between can only make both count.
        let holds = live_holds(&mut conn, account, now_ms).await?;
        let held: Decimal = holds.iter().map(|h| h.amount).sum();
        let books = self.books(&mut conn).await?;
        let label = books.1.label_of(now_ms.div_euclid(1000));
        let period_cost = match &label {
            Some(l) => measure(&mut conn, &books.1, account, l)
                .await?
                .map_or(Decimal::ZERO, |m| m.0),
            None => Decimal::ZERO,
        };
        let rating = match label.as_deref() {
            Some(l) => books.1.for_period(&mut conn, l).await?,
            None => None,
        };
        let held_terms = match rating
            .as_ref()
            .and_then(|(book, _)| book.for_region(region))
        {
            Some(rbook) => {
                let whose = (home, account);
                holdings(&mut conn, &rbook, whose, now_ms.div_euclid(1000)).await?
            }
            None => Holdings::default(),
        };
        // Prepaid: the wallet's balance less what invoices still owe, the open period's
        // cost and the live holds.
        let (wallet, outstanding) =
            crate::finance::wallet_rows::wallet_state(&mut conn, account).await?;
        let (checked, owed) = billing_core::quota::against_wallet(&quotas, wallet, outstanding);
        let prepaid = checked.prepaid_balance;
        let available =
            prepaid.map(|w| billing_core::quota::prepaid_available(w, owed, period_cost, held));
        Ok(Balance {
            account: home.to_string(),
            region: region.map(str::to_string),
            period_label: label,
            period_cost: cents(period_cost),
            prepaid_balance: prepaid.map(cents),
            available: available.map(cents),
            held: cents(held),
            holds,
            quotas,
            packages: held_terms.packages,
            credits: held_terms.credits,
            subscriptions: held_terms.subscriptions,
            sla_compensation_credited: held_terms.sla_credited,
            sla_compensation_left: held_terms.sla_left,
            wallet: self.finance().wallet(account).await?,
        })
    }

    async fn expire_holds(&self, conn: &mut dyn crate::conn::db::Conn, now_ms: i64) -> Result<()> {
        crate::conn::db::query(include_str!("../../queries/shared/expire_all_holds.sql"))
            .bind(now_ms)
            .execute(conn)
            .await?;
        Ok(())
    }

    /// Live holds of an account at `now` (an expired one counts as expired even before the
    /// next write marks it).
    pub async fn live_holds(&self, account: &str, now_ms: i64) -> Result<Vec<Hold>> {
        let mut conn = self.pool.acquire().await?;
        live_holds(&mut conn, account, now_ms).await
    }

    async fn hold(
        &self,
        conn: &mut dyn crate::conn::db::Conn,
        id: &HoldId,
    ) -> Result<Option<Hold>> {
        let row = crate::conn::db::query(include_str!("../../queries/shared/select_hold.sql"))
            .bind(id.as_str())
            .fetch_optional(conn)
            .await?;
        row.map(hold_from_row).transpose()
    }
}

/// Live holds of an account at `now`, as `conn` sees them.
pub(crate) async fn live_holds(
    conn: &mut dyn Conn,
    account: &str,
    now_ms: i64,
) -> Result<Vec<Hold>> {
    let rows = crate::conn::db::query(include_str!("../../queries/shared/select_live_holds.sql"))
        .bind(account)
        .bind(now_ms)
        .fetch_all(conn)
        .await?;
    rows.into_iter().map(hold_from_row).collect()
}

/// Bumps `account`'s hold revision (in the caller's transaction) and returns the new one.
pub(crate) async fn bump_hold_rev(conn: &mut dyn Conn, account: &str) -> Result<i64> {
    Ok(
        crate::conn::db::query(include_str!("../../queries/shared/bump_hold_rev.sql"))
            .bind(account)
            .fetch_one(conn)
            .await?
            .get("rev"),
    )
}

/// An account's quotas and when they were set, as `conn` sees them.
pub(crate) async fn quotas_of(conn: &mut dyn Conn, account: &str) -> Result<Option<(Quotas, i64)>> {
    let row = crate::conn::db::query(include_str!("../../queries/shared/select_quotas.sql"))
        .bind(account)
        .fetch_optional(conn)
        .await?;
    row.map(|r| {
        let q: Quotas = serde_json::from_str(&r.get::<String, _>("body"))
            .map_err(|e| StoreError::Corrupt(format!("stored quotas: {e}")))?;
        Ok((q, r.get("updated_at_ms")))
    })
    .transpose()
}

/// Money shown with two decimals.
fn cents(mut d: Decimal) -> Decimal {
    d.rescale(2);
    d
}

fn hold_from_row(r: crate::conn::db::DbRow) -> Result<Hold> {
    let dec = |column: &str| {
        let s: String = r.get(column);
        crate::conn::error::stored(s.parse::<Decimal>().ok(), "holds", column, &s)
    };
    Ok(Hold {
        id: HoldId::new(r.get::<String, _>("id")),
        account: r.get("account"),
        sku: r.get("sku"),
        quantity: dec("quantity")?,
        seconds: r.get("seconds"),
        amount: dec("amount")?,
        lease: r.get("lease"),
        status: {
            let status: String = r.get("status");
            crate::conn::error::stored(HoldStatus::parse(&status), "holds", "status", &status)?
        },
        created_at_ms: r.get("created_at_ms"),
        expires_at_ms: r.get("expires_at_ms"),
    })
}
