//! Organizations over the API (issue 27, billing-semantics section 18): an account's place in
//! its tree, `parent` and `pays`, set when it is created (`POST /v1/admin/accounts`) or moved
//! later (`PATCH /v1/admin/accounts/{id}`). Either is the account's `accounts` term set by
//! command (`PUT /v1/admin/accounts/{id}/terms/accounts/{id}` says the same): recorded on the
//! commands topic with its actor, replayed by `gpubill replay`, validated against the price
//! book (no cycle, at most 8 accounts root to leaf, discounts and credits still on payers:
//! a 409 naming the cycle or the path otherwise). A move takes effect from a period on
//! (`effective_from`: a month `YYYY-MM` or the instant a period starts) and never changes a
//! closed period; without `effective_from` it reaches every period not yet closed. Earlier
//! periods keep their payer: the term keeps the account's places over time as `moves`
//! (`choices.rs`, "Organizations in the engine").

use crate::auth::Principal;
use crate::error::ApiError;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use billing_core::period::Period;
use billing_core::pricebook::TermKind;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Who pays for an account (section 18).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pays {
    /// The account pays for itself (the default).
    #[serde(rename = "self")]
    Itself,
    /// Its parent's payer pays for it.
    Parent,
}

/// `PATCH /v1/admin/accounts/{id}`: where the account moves.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountMove {
    /// The new parent (null: a root).
    pub parent: Option<String>,
    /// Who pays for the account from then on (default `self`).
    pub pays: Option<Pays>,
    /// From which period the move takes effect: a month (`2026-12`) or the instant a period
    /// of the account starts (`2026-12-01T00:00:00+08:00`). An account has one place per
    /// period, so an instant inside a period is refused (400 naming the period's start).
    /// Absent: every period not yet closed.
    pub effective_from: Option<String>,
}

/// The `accounts` term's fields for `parent` and `pays`, keeping the other settings stored
/// (the timezone).
pub(crate) fn placement(
    mut kept: Map<String, Value>,
    parent: Option<&str>,
    pays: Option<Pays>,
) -> Map<String, Value> {
    kept.remove("parent");
    kept.remove("pays");
    if let Some(p) = parent {
        kept.insert("parent".into(), Value::String(p.to_string()));
    }
    if pays == Some(Pays::Parent) {
        kept.insert("pays".into(), Value::String("parent".into()));
    }
    kept
}

/// `account`'s settings as an `accounts` term body: its stored term, else its `[[accounts]]`
/// entry in the price book rating the current period (a term replaces that entry whole, so
/// it starts from it), else nothing.
async fn stored_settings(s: &AppState, account: &str) -> Result<Map<String, Value>, ApiError> {
    if let Some(t) = s
        .store
        .admin()
        .account_terms(account)
        .await?
        .into_iter()
        .find(|t| t.kind == TermKind::Accounts && t.term_id == account)
    {
        return Ok(t.body);
    }
    let now_s = (s.clock)().div_euclid(1000);
    let book = s.store.admin().pricebook_at(now_s).await?;
    Ok(book
        .and_then(|b| {
            b.account_settings
                .iter()
                .find(|a| a.id == account)
                .map(settings_body)
        })
        .unwrap_or_default())
}

/// An `[[accounts]]` entry as the body of an `accounts` term.
fn settings_body(a: &billing_core::pricebook::AccountSettings) -> Map<String, Value> {
    let pays = |p: bool| Some(if p { Pays::Parent } else { Pays::Itself });
    let mut body = placement(Map::new(), a.parent.as_deref(), pays(a.pays_parent));
    if let Some(tz) = a.timezone {
        body.insert("timezone".into(), Value::String(tz.name().to_string()));
    }
    let moves: Vec<Value> = a
        .moves
        .iter()
        .map(|m| move_entry(&m.from, m.parent.as_deref(), pays(m.pays_parent)))
        .collect();
    if !moves.is_empty() {
        body.insert("moves".into(), Value::Array(moves));
    }
    body
}

/// Where a move puts the account, and from when.
pub(crate) struct Place<'a> {
    pub parent: Option<&'a str>,
    pub pays: Option<Pays>,
    /// The month the move takes effect from (None: every period not yet closed).
    pub from: Option<String>,
}

/// Sets `account`'s place: its `accounts` term, stored settings kept. The parent must be a
/// registered account (404 naming it).
pub(crate) async fn place(s: &AppState, account: &str, to: Place<'_>) -> Result<bool, ApiError> {
    if let Some(p) = to.parent
        && !s.store.admin().account_exists(p).await?
    {
        return Err(ApiError::NotFound(format!("no parent account {p:?}")));
    }
    if to.pays == Some(Pays::Parent) && to.parent.is_none() {
        return Err(ApiError::BadRequest(
            "pays = \"parent\" needs a parent".into(),
        ));
    }
    let kept = stored_settings(s, account).await?;
    let last_closed = s.store.finance().closed_labels().await?.pop();
    let fields = moved(kept, &to, last_closed.as_deref());
    s.store
        .admin()
        .put_term(account, TermKind::Accounts, account, fields, (s.clock)())
        .await
        .map_err(|e| match e {
            // The tree refused (a cycle, more than 8 levels, a discount or credit left on an
            // account that would no longer pay for itself): a conflict with the accounts as
            // they are, naming it.
            billing_store::TermError::PriceBook(_) => ApiError::Conflict(e.to_string()),
            other => other.into(),
        })
}

/// One move of the `moves` list, as the term body holds it.
fn move_entry(from: &str, parent: Option<&str>, pays: Option<Pays>) -> Value {
    let mut m = placement(Map::new(), parent, pays);
    m.insert("from".into(), Value::String(from.to_string()));
    Value::Object(m)
}

/// The month after `label` (`YYYY-MM`).
fn month_after(label: &str) -> Option<String> {
    let p = Period::month(label, chrono_tz::UTC).ok()?;
    Period::containing(p.end, chrono_tz::UTC).map(|n| n.label)
}

/// The `accounts` term body after the move `to`, from `kept` (the stored body) and the last
/// closed period. From a month: the moves before it are kept, those from it on replaced by
/// this one. For every period not yet closed: the account's own `parent`/`pays` when no move
/// has reached a closed period yet (no moves kept), else a move from the month after the
/// last closed period, after the moves that closed periods hold.
pub(crate) fn moved(
    kept: Map<String, Value>,
    to: &Place<'_>,
    last_closed: Option<&str>,
) -> Map<String, Value> {
    let moves: Vec<Value> = match kept.get("moves") {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    let from_of = |m: &Value| m.get("from").and_then(Value::as_str).map(str::to_string);
    let (before, from): (Vec<Value>, Option<String>) = match &to.from {
        Some(f) => (
            moves
                .into_iter()
                .filter(|m| from_of(m).is_some_and(|x| x < *f))
                .collect(),
            Some(f.clone()),
        ),
        None => {
            let held: Vec<Value> = moves
                .into_iter()
                .filter(|m| {
                    last_closed.is_some_and(|c| from_of(m).is_some_and(|x| x.as_str() <= c))
                })
                .collect();
            let from = (!held.is_empty())
                .then(|| last_closed.and_then(month_after))
                .flatten();
            (held, from)
        }
    };
    let mut body = match &from {
        Some(_) => kept,
        None => placement(kept, to.parent, to.pays),
    };
    let mut list = before;
    if let Some(f) = &from {
        list.push(move_entry(f, to.parent, to.pays));
    }
    if list.is_empty() {
        body.remove("moves");
    } else {
        body.insert("moves".into(), Value::Array(list));
    }
    body
}

/// `effective_from` as a month: `YYYY-MM` as it is, or an RFC 3339 instant that starts a
/// period of `account` (in its payer's timezone, the price book's by default).
async fn effective_month(s: &AppState, account: &str, text: &str) -> Result<String, ApiError> {
    if let Ok(p) = Period::month(text, chrono_tz::UTC)
        && p.label == text
    {
        return Ok(p.label);
    }
    let bad = |why: String| {
        ApiError::BadRequest(format!(
            "effective_from {text:?} {why}: give a month (\"2026-12\") or the instant a period starts"
        ))
    };
    let at = billing_core::timestamp::Timestamp::parse_rfc3339(text)
        .ok_or_else(|| bad("is neither a month YYYY-MM nor an RFC 3339 time".into()))?;
    let book = s
        .store
        .admin()
        .pricebook_at(at.secs)
        .await?
        .ok_or_else(|| {
            ApiError::Conflict("no price book rates that period yet: upload one first".into())
        })?;
    let payer = book.payer_of(account).to_string();
    let tz = book.account_timezone(&payer).unwrap_or(book.timezone);
    let period = Period::containing(at.secs, tz).ok_or_else(|| bad("is out of range".into()))?;
    if period.start != at.secs || at.nanos != 0 {
        let next = Period::containing(period.end, tz).map(|p| p.label);
        return Err(bad(format!(
            "is inside period {} (an account has one place per period; in {tz} it starts at {} and the next, {}, at {})",
            period.label,
            billing_core::timestamp::format_secs(period.start),
            next.unwrap_or_default(),
            billing_core::timestamp::format_secs(period.end),
        )));
    }
    Ok(period.label)
}

/// `PATCH /v1/admin/accounts/{id}`: moves the account (or changes who pays for it) for every
/// period not yet closed.
pub async fn patch_account(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
    crate::json_body::JsonBody(req): crate::json_body::JsonBody<AccountMove>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    let req = req?;
    if !s.store.admin().account_exists(&account).await? {
        return Err(ApiError::NotFound(format!("no account {account:?}")));
    }
    let from = match req.effective_from.as_deref() {
        Some(text) => Some(effective_month(&s, &account, text).await?),
        None => None,
    };
    let to = Place {
        parent: req.parent.as_deref(),
        pays: req.pays,
        from: from.clone(),
    };
    let changed = place(&s, &account, to).await?;
    let pays = req.pays.unwrap_or(Pays::Itself);
    Ok(Json(json!({
        "id": account,
        "parent": req.parent,
        "pays": if pays == Pays::Parent { "parent" } else { "self" },
        "effective_from": from,
        "changed": changed,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn to<'a>(parent: Option<&'a str>, from: Option<&str>) -> Place<'a> {
        Place {
            parent,
            pays: parent.map(|_| Pays::Parent),
            from: from.map(str::to_string),
        }
    }

    #[test]
    fn a_move_from_a_month_keeps_the_earlier_moves_and_replaces_the_later() {
        let kept = body(
            json!({"parent": "a", "pays": "parent", "timezone": "Asia/Shanghai",
            "moves": [{"from": "2026-10", "parent": "b", "pays": "parent"},
                      {"from": "2027-01", "parent": "c", "pays": "parent"}]}),
        );
        let got = moved(kept, &to(Some("d"), Some("2026-12")), Some("2026-10"));
        assert_eq!(
            Value::Object(got),
            json!({"parent": "a", "pays": "parent", "timezone": "Asia/Shanghai",
                "moves": [{"from": "2026-10", "parent": "b", "pays": "parent"},
                          {"from": "2026-12", "parent": "d", "pays": "parent"}]})
        );
    }

    #[test]
    fn a_move_for_every_open_period_sets_the_place_or_follows_the_closed_moves() {
        // No move held by a closed period: the place itself, later moves dropped.
        let kept = body(json!({"parent": "a", "pays": "parent",
            "moves": [{"from": "2026-12", "parent": "b", "pays": "parent"}]}));
        let got = moved(kept.clone(), &to(None, None), Some("2026-11"));
        assert_eq!(Value::Object(got), json!({}));
        // A move from October is held by October's close: the new place starts in December.
        let kept = body(json!({"parent": "a", "pays": "parent",
            "moves": [{"from": "2026-10", "parent": "b", "pays": "parent"},
                      {"from": "2027-02", "parent": "c", "pays": "parent"}]}));
        let got = moved(kept, &to(Some("d"), None), Some("2026-11"));
        assert_eq!(
            Value::Object(got),
            json!({"parent": "a", "pays": "parent",
                "moves": [{"from": "2026-10", "parent": "b", "pays": "parent"},
                          {"from": "2026-12", "parent": "d", "pays": "parent"}]})
        );
        assert_eq!(month_after("2026-12").as_deref(), Some("2027-01"));
    }
}
