//! Authorization (`Store::authorize`): requests group-committed, decided one group at a time
//! with `billing_core::quota`'s policy against each account's state, and the holds they place
//! (see `quota.rs` for what is spent and how holds live).

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::QuotaHandle;
use crate::conn::sql::{Val, insert_rows};
use crate::quota::holds::{Authorization, Hold, HoldError, HoldRequest, Queued};
use crate::quota::limits::bump_hold_rev;
use crate::quota::nodes::{NodeBudget, Tree, node_budget};
use crate::quota::spent::{AccountState, account_state, add_hold};
use billing_core::pricebook::PriceBook;
use billing_core::quota::Verdict;
use std::collections::HashMap;

impl QuotaHandle<'_> {
    /// Decides an authorization and, when allowed, places the hold.
    ///
    /// Group commit: a call queues its request, then whoever holds the writer lock decides
    /// every queued request in one transaction, in arrival order, each seeing the holds the
    /// ones before it placed; a caller whose request a previous group took just waits for its
    /// answer. Under load, groups grow while a commit is in flight, so one commit serves many.
    /// (Over 80 lines: the group-commit protocol, queue, take, decide, answer, reads in one
    /// place; the decisions themselves are `billing_core` functions.)
    pub async fn authorize(
        &self,
        req: &HoldRequest,
        ttl_ms: i64,
        now_ms: i64,
    ) -> Result<Authorization, HoldError> {
        billing_core::quota::check_hold_size(req.quantity, req.seconds)
            .map_err(HoldError::Invalid)?;
        // The strings an authorization stores follow the event grammar: an account id, and
        // at most 256 bytes of sku and lease (a 1 MiB lease was once stored as it came).
        if !billing_core::event::is_account_id(&req.account) {
            return Err(HoldError::Invalid(format!(
                "account = {:?}: not an account id (1 to 256 of A-Z a-z 0-9 . _ -)",
                req.account.chars().take(60).collect::<String>()
            )));
        }
        let limit = billing_core::limits::MAX_STRING_BYTES;
        for (name, v) in [("sku", Some(&req.sku)), ("lease", req.lease.as_ref())] {
            if let Some(v) = v
                && (v.is_empty() || v.len() > limit)
            {
                return Err(HoldError::Invalid(format!(
                    "{name} is {} bytes: must be 1 to {limit}",
                    v.len()
                )));
            }
        }
        // From here on, every return records `gpubill_authorize_duration_seconds`: the wait
        // in the queue and the group's commit, as the caller sees them.
        let _timer = AuthorizeTimer(std::time::Instant::now());
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        self.authorizations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Queued {
                req: req.clone(),
                ttl_ms,
                now_ms,
                answer: tx,
            });
        // PostgreSQL: authorizations serialize among themselves (and across processes, see
        // `begin_holds`), not with folds. SQLite has one writer: the writer lock.
        let lock = self.backend.authorization_mutex(&self.writer, &self.holds);
        let _w = lock.lock().await;
        // A group decided while we waited for the lock may have taken our request: then the
        // answer is here and there is nothing to do (the callers still queued will lead).
        match rx.try_recv() {
            Ok(answer) => return answer,
            Err(tokio::sync::oneshot::error::TryRecvError::Closed) => {
                return Err(HoldError::Store(StoreError::Corrupt(
                    "the authorization group was dropped".into(),
                )));
            }
            Err(tokio::sync::oneshot::error::TryRecvError::Empty) => {}
        }
        let group = std::mem::take(
            &mut *self
                .authorizations
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        self.decide_group(group).await;
        drop(_w);
        rx.await.unwrap_or_else(|_| {
            Err(HoldError::Store(StoreError::Corrupt(
                "the authorization group was dropped".into(),
            )))
        })
    }

    /// Decides a group in one transaction and answers each request (the caller holds the
    /// writer lock).
    async fn decide_group(&self, group: Vec<Queued>) {
        let now_ms = group.iter().map(|q| q.now_ms).max().unwrap_or(0);
        let decided = self.decide_all(&group, now_ms).await;
        match decided {
            Ok(answers) => {
                for (q, a) in group.into_iter().zip(answers) {
                    let _ = q.answer.send(a);
                }
            }
            Err(e) => {
                // The transaction failed: nothing was placed; every request gets the error.
                let text = e.to_string();
                for q in group {
                    let _ = q
                        .answer
                        .send(Err(HoldError::Store(StoreError::Corrupt(text.clone()))));
                }
            }
        }
    }

    async fn decide_all(
        &self,
        group: &[Queued],
        now_ms: i64,
    ) -> Result<Vec<Result<Authorization, HoldError>>, HoldError> {
        let t0 = std::time::Instant::now();
        let (mut tx, latest) = self.begin_holds().await?;
        let t_lock = t0.elapsed();
        let books =
            crate::pricing::books::Books::load_up_to(&mut tx, latest, &self.books, true).await?;
        let mut accounts: HashMap<String, Option<AccountState>> = HashMap::new();
        let (answers, placed) = self
            .decide_each(&mut tx, &books.1, group, &mut accounts, now_ms)
            .await?;
        let rows = hold_rows(&placed);
        let t_read = t0.elapsed();
        insert_rows(
            &mut tx,
            include_str!("../../queries/shared/insert_holds.sql"),
            "",
            rows,
        )
        .await?;
        let (cached, stale) = bump_revisions(&mut tx, accounts, &placed).await?;
        let t_insert = t0.elapsed();
        let committed = tx.commit().await;
        self.keep_held(committed.is_ok(), cached, stale);
        committed?;
        tracing::debug!(
            group = group.len(),
            lock_us = t_lock.as_micros() as u64,
            read_us = (t_read - t_lock).as_micros() as u64,
            insert_us = (t_insert - t_read).as_micros() as u64,
            commit_us = (t0.elapsed() - t_insert).as_micros() as u64,
            "authorization group"
        );
        Ok(answers)
    }

    /// Decides `group` in order (each account read once, into `accounts`): answers, holds placed.
    async fn decide_each(
        &self,
        tx: &mut dyn Conn,
        books: &crate::pricing::books::Books,
        group: &[Queued],
        accounts: &mut HashMap<String, Option<AccountState>>,
        now_ms: i64,
    ) -> Result<(Vec<Result<Authorization, HoldError>>, Vec<Hold>), HoldError> {
        let open = match books.label_of(now_ms.div_euclid(1000)) {
            Some(label) => books
                .for_period(&mut *tx, &label)
                .await?
                .map(|(book, _)| (label, book)),
            None => None,
        };
        let mut answers = Vec::with_capacity(group.len());
        let mut placed: Vec<Hold> = Vec::new();
        // Budgets per node (`nodes.rs`): each ancestor's budget read once per group (None:
        // no `spend_limit`), by domain id.
        let mut budgets: HashMap<String, Option<NodeBudget>> = HashMap::new();
        let tree = open.as_ref().map(|(_, book)| Tree::of(book));
        // Issue 28: what budgets with `action = stop` and arrears stops block, by node.
        let blocks = crate::notify::evaluate::blocks(&mut *tx).await?;
        // Each region's book made once per group.
        let mut rbooks: HashMap<Option<String>, Option<std::borrow::Cow<'_, PriceBook>>> =
            HashMap::new();
        for q in group {
            let Some((label, book)) = &open else {
                answers.push(Err(HoldError::NoPriceBook));
                continue;
            };
            // Section 19: a hold is its billing domain's (quotas, wallet, holds, cost), at
            // the rate of the region's book.
            let rbook = rbooks
                .entry(q.req.region.clone())
                .or_insert_with(|| book.for_region(q.req.region.as_deref()));
            let Some(rbook) = rbook.as_deref() else {
                answers.push(Err(HoldError::Invalid(unknown_region(
                    book,
                    q.req.region.as_deref().unwrap_or_default(),
                ))));
                continue;
            };
            let domain = billing_core::domain::Domain {
                account: &q.req.account,
                region: q.req.region.as_deref(),
            }
            .id()
            .into_owned();
            // Each domain read once per group (None: no such account).
            if !accounts.contains_key(&domain) {
                let state = account_state(
                    &mut *tx,
                    self.backend,
                    &self.held_cache,
                    books,
                    &domain,
                    label,
                    now_ms,
                )
                .await?;
                accounts.insert(domain.clone(), state);
            }
            let Some(state) = accounts.get_mut(&domain).and_then(Option::as_mut) else {
                answers.push(Err(HoldError::UnknownAccount(q.req.account.clone())));
                continue;
            };
            let mut answer = decide(&q.req, &domain, rbook, state, q.ttl_ms, q.now_ms)?;
            if let Ok(Authorization::Allowed(h)) = &answer
                && let Some(denied) = crate::notify::evaluate::blocked(
                    &blocks,
                    tree.as_ref(),
                    &q.req.account,
                    h.amount,
                )
            {
                answer = Ok(denied);
            }
            // Issue 27: then the budget of every node above (and of the account itself when
            // it has sub-accounts), nearest first; the first that does not fit denies.
            let charged = match (&answer, &tree) {
                (Ok(Authorization::Allowed(_)), Some(tree)) => {
                    let org = (&**book, tree);
                    let at = (label.as_str(), now_ms);
                    let seen = (&mut budgets, placed.as_slice());
                    self.charge_node_budgets((&mut *tx, books), org, at, seen, &q.req, &mut answer)
                        .await?
                }
                _ => Vec::new(),
            };
            if let Ok(Authorization::Allowed(h)) = &answer {
                for id in charged {
                    if let Some(Some(b)) = budgets.get_mut(&id) {
                        b.held += h.amount;
                    }
                }
                add_hold(&mut state.spent, h);
                state.holds.push(h.clone());
                placed.push(h.clone());
            }
            answers.push(answer);
        }
        Ok((answers, placed))
    }

    /// The budget of every node above `req`'s account (and of the account itself when it has
    /// sub-accounts), nearest first, each read once per group into `budgets`: the first that
    /// does not fit the allowed hold in `answer` turns it into a denial. Returns the nodes
    /// whose budgets the hold counts against (all of them when it stays allowed).
    async fn charge_node_budgets(
        &self,
        (tx, books): (&mut dyn Conn, &crate::pricing::books::Books),
        (book, tree): (&PriceBook, &Tree<'_>),
        (label, now_ms): (&str, i64),
        (budgets, placed): (&mut HashMap<String, Option<NodeBudget>>, &[Hold]),
        req: &HoldRequest,
        answer: &mut Result<Authorization, HoldError>,
    ) -> Result<Vec<String>, HoldError> {
        let nodes = tree.budget_nodes(&req.account);
        let mut charged = Vec::with_capacity(nodes.len());
        for node in nodes {
            let Ok(Authorization::Allowed(h)) = &*answer else {
                break;
            };
            let id = billing_core::domain::Domain {
                account: node,
                region: req.region.as_deref(),
            }
            .id()
            .into_owned();
            if !budgets.contains_key(&id) {
                let at = (id.as_str(), label, now_ms);
                let budget =
                    node_budget((&mut *tx, self.backend), books, (book, tree), at, placed).await?;
                budgets.insert(id.clone(), budget);
            }
            let Some(b) = budgets.get(&id).and_then(Option::as_ref) else {
                continue;
            };
            let used = b.spent + b.held;
            if used + h.amount > b.limit {
                *answer = Ok(Authorization::Denied {
                    node: node.to_string(),
                    quota: "spend_limit".into(),
                    used: cents(used),
                    requested: h.amount,
                    limit: cents(b.limit),
                });
            } else {
                charged.push(id);
            }
        }
        Ok(charged)
    }

    /// After a group's commit: keeps the holds of `cached` if it `committed`, forgets the rest.
    fn keep_held(&self, committed: bool, cached: Cached, mut stale: Vec<String>) {
        let mut cache = self.held_cache.lock().unwrap_or_else(|e| e.into_inner());
        if committed {
            for (account, rev, holds) in cached {
                cache.insert(account, (rev, holds));
            }
        } else {
            stale.extend(cached.into_iter().map(|c| c.0));
        }
        for account in stale {
            cache.remove(&account);
        }
    }
}

/// The rows of the holds a group placed.
fn hold_rows(placed: &[Hold]) -> Vec<Vec<Val>> {
    placed
        .iter()
        .map(|h| {
            vec![
                Val::Text(h.id.as_str().to_string()),
                Val::Text(h.account.clone()),
                Val::Text(h.sku.clone()),
                Val::Text(h.quantity.to_string()),
                Val::I64(h.seconds),
                Val::Text(h.amount.to_string()),
                Val::OptText(h.lease.clone()),
                Val::Text(crate::quota::holds::HoldStatus::Live.as_str().into()),
                Val::I64(h.created_at_ms),
                Val::I64(h.expires_at_ms),
            ]
        })
        .collect()
}

/// Holds kept in memory after a group: (account, revision, its live holds).
type Cached = Vec<(String, i64, Vec<Hold>)>;

/// Every account that got a hold moves its revision, in account order. When nothing else
/// moved it since it was read, this group's view (holds read + holds placed) is the stored
/// one and stays cached; otherwise (`stale`) the next group reads again.
async fn bump_revisions(
    tx: &mut crate::conn::db::Tx,
    accounts: HashMap<String, Option<AccountState>>,
    placed: &[Hold],
) -> Result<(Cached, Vec<String>)> {
    let mut cached: Cached = Vec::new();
    let mut stale: Vec<String> = Vec::new();
    let mut accounts: Vec<(String, Option<AccountState>)> = accounts.into_iter().collect();
    accounts.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (account, state) in accounts.iter_mut() {
        let Some(state) = state.as_mut() else {
            continue;
        };
        if !placed.iter().any(|h| &h.account == account) {
            continue;
        }
        let rev = bump_hold_rev(tx, account).await?;
        if rev == state.rev + 1 {
            cached.push((account.clone(), rev, std::mem::take(&mut state.holds)));
        } else {
            stale.push(account.clone());
        }
    }
    Ok((cached, stale))
}

/// A hold id: `hold_` and 96 random bits.
fn new_hold_id() -> Result<crate::quota::holds::HoldId> {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes)
        .map_err(|e| StoreError::Corrupt(format!("the OS random number generator failed: {e}")))?;
    Ok(crate::quota::holds::HoldId::new(format!(
        "hold_{}",
        hex::encode(bytes)
    )))
}

/// One authorization against an account's state: the policy is `billing_core::quota`'s; this
/// finds the rate and makes the hold.
fn decide(
    req: &HoldRequest,
    domain: &str,
    book: &PriceBook,
    state: &AccountState,
    ttl_ms: i64,
    now_ms: i64,
) -> Result<Result<Authorization, HoldError>> {
    // The rate a hold reserves at is the core's rule (`billing_core::quota::hold_rate`).
    let Some(rate) = billing_core::quota::hold_rate(book, &req.sku) else {
        return Ok(Err(HoldError::UnknownSku(req.sku.clone())));
    };
    let amount = match billing_core::quota::authorize(
        &state.quotas,
        &state.spent,
        &req.sku,
        req.quantity,
        req.seconds,
        rate,
    ) {
        Verdict::Allowed { amount } => amount,
        Verdict::Denied {
            quota,
            used,
            requested,
            limit,
        } => {
            return Ok(Ok(Authorization::Denied {
                node: req.account.clone(),
                quota,
                used,
                requested,
                limit,
            }));
        }
    };
    Ok(Ok(Authorization::Allowed(Hold {
        id: new_hold_id()?,
        account: domain.to_string(),
        sku: req.sku.clone(),
        quantity: req.quantity.normalize(),
        seconds: req.seconds,
        amount,
        lease: req.lease.clone(),
        status: crate::quota::holds::HoldStatus::Live,
        created_at_ms: now_ms,
        expires_at_ms: now_ms + ttl_ms,
    })))
}

/// Money shown with two decimals, as the core's denials show it.
fn cents(mut d: rust_decimal::Decimal) -> rust_decimal::Decimal {
    d.rescale(2);
    d
}

/// The message for a region `book` does not name.
pub(crate) fn unknown_region(book: &PriceBook, region: &str) -> String {
    format!(
        "region = {region:?}: not a region of the price book (regions: {})",
        book.regions.keys().cloned().collect::<Vec<_>>().join(", ")
    )
}

/// Records an authorization's latency (`gpubill_authorize_duration_seconds`) when dropped,
/// so that every return of `Store::authorize` is counted, an error's too.
struct AuthorizeTimer(std::time::Instant);

impl Drop for AuthorizeTimer {
    fn drop(&mut self) {
        metrics::histogram!("gpubill_authorize_duration_seconds")
            .record(self.0.elapsed().as_secs_f64());
    }
}
