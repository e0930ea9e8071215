//! Loading the live account terms and their revisions, and merging terms into price book
//! versions (see `terms.rs` for how terms are changed).

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use billing_core::pricebook::{AccountTerm, PriceBook, TermKind};
use serde_json::Map;

/// The live terms (sorted by account, kind, term id) and the latest revision.
pub(crate) async fn load_terms(conn: &mut dyn Conn) -> Result<(i64, Vec<AccountTerm>)> {
    let rev: i64 =
        crate::conn::db::query(include_str!("../../queries/shared/select_terms_rev.sql"))
            .fetch_one(&mut *conn)
            .await?
            .get("rev");
    let rows = crate::conn::db::query(include_str!("../../queries/shared/select_live_terms.sql"))
        .fetch_all(&mut *conn)
        .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let kind: String = r.get("kind");
        let body: String = r.get("body");
        out.push(AccountTerm {
            account: r.get("account"),
            kind: crate::conn::error::stored(
                TermKind::parse(&kind),
                "account_terms",
                "kind",
                &kind,
            )?,
            term_id: r.get("term_id"),
            fields: serde_json::from_str(&body)
                .map_err(|e| StoreError::Corrupt(format!("account term body: {e}")))?,
        });
    }
    out.sort_by(|a, b| (&a.account, a.kind, &a.term_id).cmp(&(&b.account, b.kind, &b.term_id)));
    Ok((rev, out))
}

/// The versions (newest first) with the terms merged: strictly into the newest, leniently
/// into the others (see the module header).
pub(crate) fn merge(books: Vec<PriceBook>, terms: &[AccountTerm]) -> Result<Vec<PriceBook>> {
    if terms.is_empty() {
        return Ok(books);
    }
    books
        .into_iter()
        .enumerate()
        .map(|(i, b)| {
            if i == 0 {
                return b.with_account_terms(terms).map_err(|e| {
                    StoreError::Corrupt(format!("stored account terms and price book: {e}"))
                });
            }
            Ok(merge_lenient(&b, terms).unwrap_or(b))
        })
        .collect()
}

/// `book` with the terms it accepts merged in (a term it refuses, e.g. naming an sku it lacks,
/// stays out); None when there are no terms (the book as it is).
pub(crate) fn merge_lenient(book: &PriceBook, terms: &[AccountTerm]) -> Option<PriceBook> {
    if terms.is_empty() {
        return None;
    }
    // All at once first (one copy of the book); term by term only when one fails.
    if let Ok(merged) = book.with_account_terms(terms) {
        return Some(merged);
    }
    Some(terms.iter().fold(book.clone(), |acc, t| {
        acc.with_account_terms(std::slice::from_ref(t))
            .unwrap_or(acc)
    }))
}

/// Every revision of every account term (migration 0021), to tell the terms as they stood at
/// any revision: a closed period is re-rated with the terms of the revision it was closed at
/// (issue 24.1, `billing_core::term_changes::terms_for_closed_period`).
pub(crate) struct TermHistory {
    /// (rev, account, kind, term id, body; None: ended), in revision order.
    changes: Vec<(i64, AccountTerm, bool)>,
}

impl TermHistory {
    pub(crate) async fn load(conn: &mut dyn Conn) -> Result<TermHistory> {
        let rows = crate::conn::db::query(include_str!(
            "../../queries/shared/select_term_revisions.sql"
        ))
        .bind(i64::MAX)
        .fetch_all(&mut *conn)
        .await?;
        let mut changes = Vec::with_capacity(rows.len());
        for r in rows {
            let kind: String = r.get("kind");
            let body: Option<String> = r.get("body");
            let fields = match &body {
                Some(b) => serde_json::from_str(b)
                    .map_err(|e| StoreError::Corrupt(format!("account term revision: {e}")))?,
                None => Map::new(),
            };
            let term = AccountTerm {
                account: r.get("account"),
                kind: crate::conn::error::stored(
                    TermKind::parse(&kind),
                    "account_term_revisions",
                    "kind",
                    &kind,
                )?,
                term_id: r.get("term_id"),
                fields,
            };
            changes.push((r.get("rev"), term, body.is_some()));
        }
        Ok(TermHistory { changes })
    }

    /// The live terms at revision `rev` (every change up to it applied), sorted by (account,
    /// kind, term id) as [`load_terms`] sorts them.
    pub(crate) fn at(&self, rev: i64) -> Vec<AccountTerm> {
        let mut live: std::collections::BTreeMap<(&str, TermKind, &str), Option<&AccountTerm>> =
            std::collections::BTreeMap::new();
        for (r, t, alive) in &self.changes {
            if *r > rev {
                break;
            }
            live.insert(
                (t.account.as_str(), t.kind, t.term_id.as_str()),
                alive.then_some(t),
            );
        }
        live.into_values().flatten().cloned().collect()
    }
}
