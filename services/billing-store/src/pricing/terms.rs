//! Account terms as commands (issue 10): `account_terms` holds each (account, kind, term id)'s
//! current body; every change is a `terms.put` / `terms.delete` command on the commands topic,
//! made under the writer lock (what folds and closes rate changes with it, as with a price
//! book upload) and re-rating every stored provisional cost in its transaction.
//!
//! Terms are merged into every price book version where they are read
//! ([`merge`](crate::pricing::terms_merge::merge)): the newest version must accept them all (a PUT is
//! validated against it, an upload of a version that would not accept them is refused); an
//! older version takes the terms it accepts (a term naming an sku an older version lacks stays
//! out of it: usage of that sku is unpriced under that version anyway).
//!
//! A closed period is re-rated (adjustments, `gpubill verify`) with the terms as they stood at
//! its close, plus the later changes of terms dated into it (issue 24.1,
//! [`TermHistory`](crate::pricing::terms_merge::TermHistory),
//! `billing_core::term_changes::terms_for_closed_period`).

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::AdminHandle;
use crate::conn::store::Store;
use crate::events::commands::Command;
use crate::pricing::books::{Books, BooksKey};
use crate::pricing::issued::issued_credits;
use crate::pricing::terms_merge::load_terms;
use billing_core::pricebook::{AccountTerm, ParsedTerm, PriceBook, PriceBookError, TermKind};
use billing_core::term_changes::{Consumed, check_change, ended_subscription_cycles};
use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::{Map, Value};

/// Longest term id, in bytes: a term id has the account id grammar (`A-Z a-z 0-9 . _ -`,
/// the core's `billing_core::event::is_account_id`) and its limit.
pub const MAX_TERM_ID_LEN: usize = billing_core::limits::MAX_STRING_BYTES;
/// Longest term body, in bytes of JSON.
pub const MAX_TERM_BODY_BYTES: usize = 16 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum TermError {
    #[error("unknown account {0:?}")]
    UnknownAccount(String),
    #[error("{0}")]
    UnknownTerm(String),
    #[error("no price book uploaded yet: account terms are validated against the latest one")]
    NoPriceBook,
    #[error("invalid term: {0}")]
    Invalid(String),
    #[error("invalid term: {0}")]
    PriceBook(#[from] PriceBookError),
    #[error("{0}")]
    Conflict(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for TermError {
    fn from(e: sqlx::Error) -> Self {
        TermError::Store(e.into())
    }
}

/// A live term as `GET /v1/admin/accounts/{id}/terms` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredTerm {
    pub kind: TermKind,
    pub term_id: String,
    pub body: Map<String, Value>,
    pub rev: i64,
    pub updated_at_ms: i64,
}

fn check_term_id(term_id: &str) -> Result<(), TermError> {
    if billing_core::event::is_account_id(term_id) {
        Ok(())
    } else {
        Err(TermError::Invalid(format!(
            "term id {:?} must be 1 to {MAX_TERM_ID_LEN} characters of A-Z a-z 0-9 . _ -",
            term_id.chars().take(64).collect::<String>()
        )))
    }
}

/// What issued invoices drew from the credit `id` of `account` in `book` (zero: none).
async fn credit_drawn(
    conn: &mut dyn Conn,
    book: &PriceBook,
    account: &str,
    id: &str,
) -> Result<Decimal> {
    let Some(c) = book
        .credit_terms
        .iter()
        .find(|c| c.account == account && c.id.as_deref() == Some(id))
    else {
        return Ok(Decimal::ZERO);
    };
    let issued = issued_credits(conn, crate::conn::sql::ONE_ACCOUNT, &account.into()).await?;
    let pool = billing_core::credits::CreditPool::after_labelled(
        book,
        account,
        crate::pricing::issued::labelled(issued.get(account).map_or(&[][..], Vec::as_slice)),
    );
    Ok(c.amount - pool.remaining_of(c.index).unwrap_or(c.amount))
}

/// Every closed period as `[start, end)` Unix seconds (a charge dated into one was invoiced; a
/// move of an account from one would change it).
async fn closed_periods(conn: &mut dyn Conn) -> Result<Vec<(i64, i64)>> {
    let rows = crate::conn::db::query(include_str!(
        "../../queries/shared/select_closed_periods.sql"
    ))
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get("start_s"), r.get("end_s")))
        .collect())
}

/// One requested change, before it is applied.
struct Change<'a> {
    account: &'a str,
    kind: TermKind,
    term_id: &'a str,
    /// None: end the term.
    fields: Option<Map<String, Value>>,
    now_ms: i64,
    /// Whether the started/consumed rules apply (not for a replayed command: it was allowed
    /// once, in the same state).
    checked: bool,
}

impl AdminHandle<'_> {
    /// Sets (creates or replaces) an account term. `Ok(false)`: the same body was set already,
    /// nothing changed and no command was recorded.
    pub async fn put_term(
        &self,
        account: &str,
        kind: TermKind,
        term_id: &str,
        fields: Map<String, Value>,
        now_ms: i64,
    ) -> Result<bool, TermError> {
        self.change_term(Change {
            account,
            kind,
            term_id,
            fields: Some(fields),
            now_ms,
            checked: true,
        })
        .await
    }

    /// Ends an account term set by a command (a started subscription keeps its started
    /// cycles). `Ok(false)`: it had ended already.
    pub async fn end_term(
        &self,
        account: &str,
        kind: TermKind,
        term_id: &str,
        now_ms: i64,
    ) -> Result<bool, TermError> {
        self.change_term(Change {
            account,
            kind,
            term_id,
            fields: None,
            now_ms,
            checked: true,
        })
        .await
    }

    /// The live terms of `account` set by commands.
    pub async fn account_terms(&self, account: &str) -> Result<Vec<StoredTerm>, TermError> {
        if !self.account_exists(account).await? {
            return Err(TermError::UnknownAccount(account.to_string()));
        }
        let rows = crate::conn::db::query(include_str!(
            "../../queries/shared/select_account_terms.sql"
        ))
        .bind(account)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                let body: String = r.get("body");
                let kind: String = r.get("kind");
                Ok(StoredTerm {
                    kind: crate::conn::error::stored(
                        TermKind::parse(&kind),
                        "account_terms",
                        "kind",
                        &kind,
                    )?,
                    term_id: r.get("term_id"),
                    body: serde_json::from_str(&body)
                        .map_err(|e| StoreError::Corrupt(format!("account term body: {e}")))?,
                    rev: r.get("rev"),
                    updated_at_ms: r.get("updated_at_ms"),
                })
            })
            .collect()
    }

    /// The one path of every change (see [`Change`]).
    async fn change_term(&self, c: Change<'_>) -> Result<bool, TermError> {
        check_term_id(c.term_id)?;
        if let Some(f) = &c.fields {
            let len = serde_json::to_string(f).map_or(usize::MAX, |s| s.len());
            if len > MAX_TERM_BODY_BYTES {
                return Err(TermError::Invalid(format!(
                    "the body is {len} bytes, over {MAX_TERM_BODY_BYTES}"
                )));
            }
        }
        if !self.account_exists(c.account).await? {
            return Err(TermError::UnknownAccount(c.account.to_string()));
        }
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        let Some(fields) = self.resolve_change(&mut tx, &c).await? else {
            return Ok(false);
        };
        // Only a shard reads the versions before (a store of one database compiles none).
        let before = match self.shard {
            Some(_) => Some(self.books(&mut tx).await?),
            None => None,
        };
        let books = self.write_term(&mut tx, &c, fields).await?;
        if let (Some(before), Some(new)) = (&before, books.1.latest()) {
            self.keep_trees_whole(&mut tx, before.1.latest(), new)
                .await?;
        }
        tx.commit().await?;
        // Committed: the next reader finds the latest version compiled with the new terms.
        self.books.install(&books.1);
        Ok(true)
    }

    /// Validates the change and decides the body to store (None: nothing changes).
    async fn resolve_change(
        &self,
        conn: &mut dyn Conn,
        c: &Change<'_>,
    ) -> Result<Option<Option<Map<String, Value>>>, TermError> {
        let stored = stored_body(conn, c).await?;
        let (_, all) = load_terms(conn).await?;
        let latest = &self.raw_latest(conn).await?.ok_or(TermError::NoPriceBook)?;
        let term_of = |fields: &Map<String, Value>| AccountTerm {
            account: c.account.to_string(),
            kind: c.kind,
            term_id: c.term_id.to_string(),
            fields: fields.clone(),
        };
        let same =
            |t: &AccountTerm| t.account == c.account && t.kind == c.kind && t.term_id == c.term_id;
        if no_op(conn, c, &stored, latest).await? {
            return Ok(None);
        }
        let merged_now = latest.with_account_terms(&all).map_err(StoreError::from)?;
        let old = match &stored {
            Some(o) => Some(latest.parse_account_term(&term_of(o))?),
            None => merged_now.account_term(c.account, c.kind, c.term_id),
        };
        let new = match &c.fields {
            Some(f) => Some(latest.parse_account_term(&term_of(f))?),
            None => None,
        };
        let mut fields = c.fields.clone();
        if c.checked {
            let now = c.now_ms.div_euclid(1000);
            let drawn = match c.kind {
                TermKind::Credits => credit_drawn(conn, &merged_now, c.account, c.term_id).await?,
                _ => Decimal::ZERO,
            };
            let closed = match c.kind {
                // A charge dated into a closed period; a move of an account from one.
                TermKind::Charges | TermKind::Accounts => closed_periods(conn).await?,
                _ => Vec::new(),
            };
            let invoiced = match c.kind {
                TermKind::Accounts => !self
                    .finance()
                    .invoices(Some(c.account), None)
                    .await?
                    .is_empty(),
                _ => false,
            };
            let consumed = Consumed {
                drawn,
                closed: &closed,
                invoiced,
            };
            check_change(old.as_ref(), new.as_ref(), now, latest.timezone, consumed)
                .map_err(|e| TermError::Conflict(e.0))?;
            if let (None, Some(ParsedTerm::Subscription(s)), Some(o)) = (&fields, &old, &stored)
                && let Some(cycles) = ended_subscription_cycles(s, latest.timezone, now)
            {
                // Ending a started subscription drops only its future cycles (the core's
                // rule: none started, the term goes).
                let mut kept = o.clone();
                kept.insert("cycles".into(), cycles.into());
                fields = Some(kept);
            }
        }
        let mut next: Vec<AccountTerm> = all.into_iter().filter(|t| !same(t)).collect();
        if let Some(f) = &fields {
            next.push(term_of(f));
        }
        next.sort_by(|a, b| {
            (&a.account, a.kind, &a.term_id).cmp(&(&b.account, b.kind, &b.term_id))
        });
        latest.with_account_terms(&next)?;
        if fields.is_some() && fields == stored {
            return Ok(None);
        }
        Ok(Some(fields))
    }

    /// Stores the body (None: ended), records the command and re-rates provisional costs;
    /// answers the versions it re-rated with (to keep once committed).
    async fn write_term(
        &self,
        tx: &mut crate::conn::db::Tx,
        c: &Change<'_>,
        fields: Option<Map<String, Value>>,
    ) -> Result<std::sync::Arc<(BooksKey, Books)>, TermError> {
        let rev: i64 = crate::conn::db::query(include_str!(
            "../../queries/shared/select_next_terms_rev.sql"
        ))
        .fetch_one(&mut **tx)
        .await?
        .get("rev");
        let body = match &fields {
            Some(f) => {
                Some(serde_json::to_string(f).map_err(|e| StoreError::Corrupt(e.to_string()))?)
            }
            None => None,
        };
        crate::conn::db::query(include_str!("../../queries/shared/upsert_account_term.sql"))
            .bind(c.account)
            .bind(c.kind.as_str())
            .bind(c.term_id)
            .bind(body.clone())
            .bind(rev)
            .bind(c.now_ms)
            .execute(&mut **tx)
            .await?;
        // Every revision is kept: closed periods are re-rated with the terms of theirs.
        crate::conn::db::query(include_str!(
            "../../queries/shared/insert_term_revision.sql"
        ))
        .bind(rev)
        .bind(c.account)
        .bind(c.kind.as_str())
        .bind(c.term_id)
        .bind(body)
        .bind(c.now_ms)
        .execute(&mut **tx)
        .await?;
        let command = match fields {
            Some(body) => Command::PutTerm {
                account: c.account.to_string(),
                kind: c.kind.as_str().to_string(),
                term_id: c.term_id.to_string(),
                body,
                rev,
                at_ms: c.now_ms,
            },
            None => Command::DeleteTerm {
                account: c.account.to_string(),
                kind: c.kind.as_str().to_string(),
                term_id: c.term_id.to_string(),
                rev,
                at_ms: c.now_ms,
            },
        };
        self.record_command(tx, &command, c.now_ms).await?;
        // What the ledger rates to changed: every provisional cost is re-rated.
        let books = Books::load(tx, &self.books, false).await?;
        crate::pricing::provisional::refresh_all(tx, self.backend, &books.1, c.now_ms).await?;
        Ok(books)
    }
}

impl Change<'_> {
    /// Whether the latest price book itself has this term (credits, packages, subscriptions
    /// have ids there).
    fn kind_has_book_term(&self, book: &PriceBook) -> bool {
        book.account_term(self.account, self.kind, self.term_id)
            .is_some()
    }
}

/// The stored live body of the term (None: never set, or ended).
async fn stored_body(conn: &mut dyn Conn, c: &Change<'_>) -> Result<Option<Map<String, Value>>> {
    let row = crate::conn::db::query(include_str!("../../queries/shared/select_term_body.sql"))
        .bind(c.account)
        .bind(c.kind.as_str())
        .bind(c.term_id)
        .fetch_optional(&mut *conn)
        .await?;
    match row.and_then(|r| r.get::<Option<String>, _>("body")) {
        None => Ok(None),
        Some(b) => serde_json::from_str(&b)
            .map(Some)
            .map_err(|e| StoreError::Corrupt(format!("account term body: {e}"))),
    }
}

/// Whether the change leaves the terms as they are; an error when it ends no command's term.
async fn no_op(
    conn: &mut dyn Conn,
    c: &Change<'_>,
    stored: &Option<Map<String, Value>>,
    latest: &PriceBook,
) -> Result<bool, TermError> {
    match (&c.fields, stored) {
        (Some(n), Some(o)) if n == o => Ok(true),
        (None, None) if c.kind_has_book_term(latest) => Err(TermError::Conflict(format!(
            "{} {:?} of account {:?} is in the price book, not set by a command: upload a price book without it",
            c.kind.as_str(),
            c.term_id,
            c.account
        ))),
        (None, None) if stored_row_exists(conn, c).await? => Ok(true),
        (None, None) => Err(TermError::UnknownTerm(format!(
            "no {} {:?} for account {:?}",
            c.kind.as_str(),
            c.term_id,
            c.account
        ))),
        _ => Ok(false),
    }
}

async fn stored_row_exists(conn: &mut dyn Conn, c: &Change<'_>) -> Result<bool> {
    Ok(
        crate::conn::db::query(include_str!("../../queries/shared/select_term_exists.sql"))
            .bind(c.account)
            .bind(c.kind.as_str())
            .bind(c.term_id)
            .fetch_optional(&mut *conn)
            .await?
            .is_some(),
    )
}

impl AdminHandle<'_> {
    /// The latest price book version as uploaded (no terms merged), compiled now; None
    /// before the first upload.
    async fn raw_latest(&self, conn: &mut dyn Conn) -> Result<Option<PriceBook>> {
        let Some(row) = crate::conn::db::query(include_str!(
            "../../queries/shared/select_latest_pricebook.sql"
        ))
        .fetch_optional(&mut *conn)
        .await?
        else {
            return Ok(None);
        };
        self.books
            .compile_stored(row.get("version"), &row.get::<String, _>("toml"))
            .map(Some)
    }
}

impl Store {
    /// Applies a replayed `terms.put` / `terms.delete`, which must become revision `rev` again
    /// (revisions are store-wide: a gap means the commands topic lost a change).
    pub(crate) async fn apply_term(
        &self,
        account: &str,
        kind: &str,
        term_id: &str,
        fields: Option<Map<String, Value>>,
        (rev, now_ms): (i64, i64),
    ) -> Result<()> {
        let kind = TermKind::parse(kind)
            .ok_or_else(|| StoreError::Corrupt(format!("replayed term kind {kind:?}")))?;
        let next: i64 = crate::conn::db::query(include_str!(
            "../../queries/shared/select_next_terms_rev.sql"
        ))
        .fetch_one(&self.pool)
        .await?
        .get("rev");
        if next != rev {
            return Err(StoreError::Corrupt(format!(
                "replayed account term would become revision {next}, was {rev}: the commands topic is missing a change"
            )));
        }
        let change = Change {
            account,
            kind,
            term_id,
            fields,
            now_ms,
            checked: false,
        };
        match self.admin().change_term(change).await {
            Ok(_) => Ok(()),
            Err(TermError::Store(e)) => Err(e),
            Err(e) => Err(StoreError::Corrupt(format!("replayed account term: {e}"))),
        }
    }
}
