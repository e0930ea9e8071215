//! Finance routes (issue 12): wallet top-ups and refunds, invoice payments, the documents
//! list with credit notes and invoice statuses, and the adjustments preview.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::json_body::JsonBody;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use billing_core::domain::Domain;
use billing_store::{
    AdminMovement, CloseError, CreditNote, IssuedInvoice, PendingAdjustment, WalletError,
};
use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::{Value, json};

impl From<WalletError> for ApiError {
    fn from(e: WalletError) -> Self {
        match e {
            WalletError::UnknownAccount(_) | WalletError::UnknownInvoice(_) => {
                ApiError::NotFound(e.to_string())
            }
            WalletError::Invalid(_) => ApiError::BadRequest(e.to_string()),
            WalletError::ReferenceConflict { .. }
            | WalletError::InsufficientBalance { .. }
            | WalletError::AlreadyPaid(_)
            | WalletError::EmptyWallet { .. }
            | WalletError::Overpayment { .. } => ApiError::Conflict(e.to_string()),
            WalletError::NotPayable(_) => ApiError::Unprocessable(e.to_string()),
            WalletError::Store(s) => s.into(),
        }
    }
}

/// A decimal amount as the API takes it: a JSON string (or number) of a plain decimal.
fn amount_of(v: Option<&Value>, field: &str) -> Result<Option<Decimal>, ApiError> {
    let text = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
        Some(other) => {
            return Err(ApiError::BadRequest(format!(
                "{field} must be a decimal string such as \"100.00\", got {other}"
            )));
        }
    };
    billing_core::decimal::parse_money(&text)
        .map(Some)
        .map_err(|e| ApiError::BadRequest(format!("{field} {text:?}: {e}")))
}

/// The body of a top-up, refund or payment: `{"amount", "reference"}`, nothing else.
fn money_body(body: &Value, amount_required: bool) -> Result<(Option<Decimal>, String), ApiError> {
    money_body_with(body, amount_required, &[])
}

/// [`money_body`] taking the fields `extra` too (read by the caller).
fn money_body_with(
    body: &Value,
    amount_required: bool,
    extra: &[&str],
) -> Result<(Option<Decimal>, String), ApiError> {
    let obj = body.as_object().ok_or_else(|| {
        ApiError::BadRequest("the body must be a JSON object {\"amount\", \"reference\"}".into())
    })?;
    if let Some(k) = obj
        .keys()
        .find(|k| !["amount", "reference"].contains(&k.as_str()) && !extra.contains(&k.as_str()))
    {
        let mut known = vec!["\"amount\"".to_string(), "\"reference\"".to_string()];
        known.extend(extra.iter().map(|e| format!("{e:?}")));
        return Err(ApiError::BadRequest(format!(
            "unknown field {k:?}: the body takes {}",
            known.join(", ")
        )));
    }
    let amount = amount_of(obj.get("amount"), "amount")?;
    if amount_required && amount.is_none() {
        return Err(ApiError::BadRequest("amount is missing".into()));
    }
    let reference = match obj.get("reference") {
        Some(Value::String(r)) => r.clone(),
        Some(other) => {
            return Err(ApiError::BadRequest(format!(
                "reference must be a string, got {other}"
            )));
        }
        None => {
            return Err(ApiError::BadRequest(
                "reference is missing: it makes the call idempotent".into(),
            ));
        }
    };
    Ok((amount, reference))
}

async fn movement(
    s: &AppState,
    account: &str,
    kind: AdminMovement,
    body: &Value,
) -> Result<Response, ApiError> {
    let (amount, reference) = money_body_with(body, true, &["region", "currency"])?;
    let (wallet_id, currency) = wallet_of(s, account, body).await?;
    let made = s
        .store
        .finance()
        .wallet_movement(
            &wallet_id,
            kind,
            amount.unwrap_or_default(),
            &reference,
            (s.clock)(),
        )
        .await?;
    let wallet = s.store.finance().wallet(&wallet_id).await?;
    let status = if made.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(json!({
            "movement": made.movement,
            "created": made.created,
            "settled": made.settled,
            "balance": wallet.balance,
            "region": Domain::parse(&wallet_id).region,
            "currency": currency,
        })),
    )
        .into_response())
}

/// `POST /v1/admin/accounts/{id}/topups` `{"amount","reference"}`: 201 when credited, 200
/// with the stored movement when the reference was used already for the same top-up.
/// `settled` lists the unpaid invoices the top-up paid, oldest first (issue 24.2).
pub async fn topup(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
    JsonBody(body): JsonBody<Value>,
) -> Result<Response, ApiError> {
    principal.admin()?;
    let body = body?;
    movement(&s, &account, AdminMovement::Topup, &body).await
}

/// `POST /v1/admin/accounts/{id}/refunds` `{"amount","reference"}`: never below a zero
/// balance.
pub async fn refund(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
    JsonBody(body): JsonBody<Value>,
) -> Result<Response, ApiError> {
    principal.admin()?;
    let body = body?;
    movement(&s, &account, AdminMovement::Refund, &body).await
}

/// `POST /v1/admin/invoices/{id}/payments` `{"amount"?, "reference"}`: records a payment made
/// outside the wallet (without `amount`: all the invoice still owes).
pub async fn pay_invoice(
    principal: Principal,
    State(s): State<AppState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<Value>,
) -> Result<Response, ApiError> {
    principal.admin()?;
    let body = body?;
    let (amount, reference) = money_body(&body, false)?;
    let now = (s.clock)();
    let (payment, created) = s
        .store
        .finance()
        .pay_invoice(&id, amount, &reference, now)
        .await?;
    let invoice = s
        .store
        .finance()
        .invoice(&id, None)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no invoice {id:?}")))?
        .at(now, s.store.payment_days());
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(json!({ "payment": payment, "created": created, "invoice": invoice })),
    )
        .into_response())
}

/// `POST /v1/admin/invoices/{id}/settle` (no body): pays the invoice from its account's
/// wallet as far as the balance goes (issue 24.2). 201 with the payment, the wallet's
/// movement, the balance left and the invoice; 404 unknown invoice, 409 paid already or an
/// empty wallet, 422 a credit note.
pub async fn settle_invoice(
    principal: Principal,
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    principal.admin()?;
    let now = (s.clock)();
    let made = s.store.finance().settle_invoice(&id, now).await?;
    let invoice = s
        .store
        .finance()
        .invoice(&id, None)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no invoice {id:?}")))?
        .at(now, s.store.payment_days());
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "payment": made.payment,
            "movement": made.movement,
            "balance": made.balance,
            "invoice": invoice,
        })),
    )
        .into_response())
}

/// Invoices (with their status on the clock) and credit notes as one list, by period, then
/// invoices before credit notes, then number.
pub fn documents(
    invoices: Vec<IssuedInvoice>,
    notes: Vec<CreditNote>,
    now_ms: i64,
    payment_days: i64,
) -> Result<Vec<Value>, ApiError> {
    let mut out: Vec<(String, u8, String, Value)> = Vec::new();
    for i in invoices {
        let i = i.at(now_ms, payment_days);
        let (period, number) = (i.invoice.period.start.clone(), i.number.clone());
        let v = serde_json::to_value(&i).map_err(|e| ApiError::Internal(e.to_string()))?;
        out.push((period, 0, number.into_string(), v));
    }
    let starts: std::collections::HashMap<String, String> = out
        .iter()
        .filter_map(|(start, _, _, v)| Some((v["id"].as_str()?.to_string(), start.clone())))
        .collect();
    for n in notes {
        let period = starts.get(&n.invoice_id).cloned().unwrap_or_default();
        let v = serde_json::to_value(&n).map_err(|e| ApiError::Internal(e.to_string()))?;
        out.push((period, 1, n.number.as_str().to_string(), v));
    }
    out.sort_by(|a, b| (&a.0, a.1, &a.2).cmp(&(&b.0, b.1, &b.2)));
    Ok(out.into_iter().map(|(_, _, _, v)| v).collect())
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AdjustmentsQuery {
    /// A closed period `YYYY-MM`; every closed period when absent.
    pub period: Option<String>,
    /// One account; every account with late usage (or no invoice) when absent.
    pub account: Option<String>,
}

/// `GET /v1/admin/adjustments?period=YYYY-MM`: what the next close will issue as adjustment
/// lines (billing-semantics.md section 7): per account and closed period with late usage (or
/// named by `account`), the effective and the recomputed totals and the lines.
pub async fn pending_adjustments(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<AdjustmentsQuery>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    let late = s.store.log().late_usage(q.period.as_deref()).await?;
    let mut pairs: Vec<(String, String)> = late
        .iter()
        .map(|l| (l.account.clone(), l.period.clone()))
        .collect();
    if let Some(account) = &q.account {
        pairs.retain(|(a, _)| a == account);
        if let Some(p) = &q.period {
            pairs.push((account.clone(), p.clone()));
        }
    }
    pairs.sort();
    pairs.dedup();
    let mut adjustments = Vec::new();
    for (account, period) in pairs {
        let p: PendingAdjustment = s
            .store
            .finance()
            .pending_adjustment(&account, &period)
            .await
            .map_err(|e| match e {
                CloseError::Store(e) => e.into(),
                CloseError::NoPriceBook(_) | CloseError::NotClosed(_) => {
                    ApiError::Conflict(e.to_string())
                }
                other => ApiError::Internal(other.to_string()),
            })?;
        let events: Vec<_> = late
            .iter()
            .filter(|l| l.account == account && l.period == period)
            .collect();
        adjustments.push(json!({
            "account": account,
            "period": period,
            "original_invoice": p.invoice_id,
            "original_number": p.invoice_number,
            "issued_total": p.effective_total,
            "recomputed_total": p.recomputed.total,
            "difference": p.recomputed.total - p.effective_total,
            "lines": p.lines,
            "events": events,
        }));
    }
    Ok(Json(json!({ "pending_adjustments": adjustments })))
}

/// One document of the invoices route: an invoice (status on the clock) or a credit note.
#[derive(Debug, Clone)]
pub enum Document {
    Invoice(Box<IssuedInvoice>),
    CreditNote(Box<CreditNote>),
}

impl Document {
    /// As the lists `handlers::csv` takes.
    pub fn split(self) -> (Vec<IssuedInvoice>, Vec<CreditNote>) {
        match self {
            Document::Invoice(i) => (vec![*i], vec![]),
            Document::CreditNote(n) => (vec![], vec![*n]),
        }
    }

    /// The document's JSON, as `GET /v1/invoices/{id}` answers it.
    pub fn to_value(&self) -> Result<Value, ApiError> {
        match self {
            Document::Invoice(i) => serde_json::to_value(i),
            Document::CreditNote(n) => serde_json::to_value(n),
        }
        .map_err(|e| ApiError::Internal(e.to_string()))
    }
}

/// The invoice or credit note `id` (credit notes' ids start with `cn_`), when it belongs to
/// `account` (when given); another account's document is answered like a missing one.
pub async fn document(
    s: &AppState,
    id: &str,
    account: Option<&str>,
) -> Result<Option<Document>, ApiError> {
    if id.starts_with("cn_") {
        return Ok(s
            .store
            .finance()
            .credit_note(id, account)
            .await?
            .map(|n| Document::CreditNote(Box::new(n))));
    }
    Ok(s.store
        .finance()
        .invoice(id, account)
        .await?
        .map(|i| Document::Invoice(Box::new(i.at((s.clock)(), s.store.payment_days())))))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct KnownAtQuery {
    /// RFC 3339, not in the future: the answer as it was then, from only the events ingested
    /// by that instant.
    pub as_known_at: Option<String>,
}

/// `as_known_at` as Unix milliseconds (None: absent); 400 when it is not RFC 3339 or is after
/// `now_ms` (the future is not known yet).
pub fn known_at(text: Option<&String>, now_ms: i64) -> Result<Option<i64>, ApiError> {
    let Some(text) = text else {
        return Ok(None);
    };
    let t = billing_core::timestamp::Timestamp::parse_rfc3339(text).ok_or_else(|| {
        ApiError::BadRequest(format!("as_known_at {text:?} is not an RFC 3339 time"))
    })?;
    let ms = t
        .secs
        .saturating_mul(1000)
        .saturating_add(i64::from(t.nanos / 1_000_000));
    if ms > now_ms {
        return Err(ApiError::BadRequest(format!(
            "as_known_at {text:?} is in the future: nothing is known of it yet"
        )));
    }
    Ok(Some(ms))
}

/// `GET /v1/cost/current?as_known_at=T`: the period holding `T` rated from the events
/// ingested by `T`, shaped like the route's answer now.
pub async fn cost_known_at(
    s: &AppState,
    account: &str,
    t_ms: i64,
) -> Result<Json<Value>, ApiError> {
    let (label, invoice) = s
        .store
        .finance()
        .cost_known_at(account, t_ms)
        .await
        .map_err(|e| match e {
            CloseError::Store(e) => e.into(),
            other => ApiError::Conflict(other.to_string()),
        })?
        .ok_or_else(|| ApiError::Conflict("no price book applied at as_known_at".into()))?;
    Ok(Json(json!({
        "as_of": billing_core::timestamp::format_secs(t_ms.div_euclid(1000)),
        "as_known_at": billing_core::timestamp::format_secs(t_ms.div_euclid(1000)),
        "period_label": label,
        "provisional": true,
        "invoice": invoice,
    })))
}

/// `GET /v1/admin/exports/journal?period=YYYY-MM&format=csv|jsonl`: the closed period's
/// documents as double-entry lines (`billing_core::journal`), each document balanced.
pub async fn export_journal(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<crate::query::PeriodQuery>,
) -> Result<Response, ApiError> {
    principal.admin()?;
    let period = q.required_period()?;
    let entries = s
        .store
        .finance()
        .journal(&period)
        .await
        .map_err(|e| match e {
            CloseError::Store(e) => e.into(),
            CloseError::NotClosed(_) => ApiError::Conflict(format!(
                "period {period} is not closed: its journal is written at its close"
            )),
            other => ApiError::Internal(other.to_string()),
        })?;
    if !billing_core::journal::balanced(&entries) {
        return Err(ApiError::Internal(format!(
            "the journal of {period} does not balance"
        )));
    }
    match q.format.as_deref().unwrap_or("jsonl") {
        "csv" => {
            let body = billing_core::journal::journal_csv(&entries);
            Ok((
                [(axum::http::header::CONTENT_TYPE, "text/csv; charset=utf-8")],
                body,
            )
                .into_response())
        }
        "jsonl" => {
            let mut body = String::new();
            for e in &entries {
                body.push_str(
                    &serde_json::to_string(e).map_err(|e| ApiError::Internal(e.to_string()))?,
                );
                body.push('\n');
            }
            Ok((
                [(axum::http::header::CONTENT_TYPE, "application/jsonl")],
                body,
            )
                .into_response())
        }
        other => Err(ApiError::BadRequest(format!(
            "format {other:?} is neither csv nor jsonl"
        ))),
    }
}

/// `GET /v1/admin/exports/focus?period=YYYY-MM`: the closed period's invoices as a FinOps
/// FOCUS 1.0 CSV (issue 27; the rows are `billing_core::focus`'s): one row per line, or per
/// allocation row's line when the invoice carries an allocation (section 18), then the
/// discount, credit and tax, then the adjustment lines. Provider, publisher and invoice issuer
/// are the seller's profile name (else `gpubill`), account names their profiles' names.
pub async fn export_focus(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<crate::query::PeriodQuery>,
) -> Result<Response, ApiError> {
    use billing_core::focus::{FocusContext, FocusInvoice, billed_total, focus_csv, focus_rows};
    use std::collections::BTreeMap;
    principal.admin()?;
    let period = q.required_period()?;
    if !s.store.finance().period_closed(&period).await? {
        return Err(ApiError::Conflict(format!(
            "period {period} is not closed: its FOCUS export is its issued invoices, written at its close"
        )));
    }
    let invoices = s.store.finance().invoices(None, Some(&period)).await?;
    let name = |p: Option<billing_store::StoredProfile>| p.map(|p| p.profile.name);
    let issuer = name(
        s.store
            .admin()
            .profile(billing_store::SELLER_PROFILE)
            .await?,
    )
    .unwrap_or_else(|| billing_core::focus::DEFAULT_ISSUER.to_string());
    // Every account a row names: payers, and the members of their allocations.
    let mut names = BTreeMap::new();
    let mut tags: BTreeMap<i64, Option<String>> = BTreeMap::new();
    for i in &invoices {
        let members = i.invoice.allocation.iter().flatten().map(|a| &a.account);
        for account in std::iter::once(&i.invoice.account).chain(members) {
            if names.contains_key(account) {
                continue;
            }
            match s.store.admin().profile(account).await {
                Ok(p) => {
                    if let Some(n) = name(p) {
                        names.insert(account.clone(), n);
                    }
                }
                // An account named by events only: no profile, its id is its name.
                Err(billing_store::ProfileStoreError::UnknownAccount(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        if i.invoice.allocation.is_some() && !tags.contains_key(&i.pricebook_version) {
            let v = i.pricebook_version;
            let book = s
                .store
                .admin()
                .uploaded_pricebook(Some(v))
                .await?
                .ok_or_else(|| ApiError::Internal(format!("price book version {v} is missing")))?;
            let book = billing_core::PriceBook::from_toml(&book.toml)
                .map_err(|e| ApiError::Internal(format!("stored price book {v}: {e}")))?;
            tags.insert(v, book.allocation_tag);
        }
    }
    let mut rows = Vec::new();
    for i in &invoices {
        let f = FocusInvoice {
            invoice: &i.invoice,
            number: Some(i.number.as_str()),
            adjustments: &i.adjustments,
        };
        let ctx = FocusContext {
            issuer: &issuer,
            allocation_tag: tags.get(&i.pricebook_version).and_then(|t| t.as_deref()),
            names: &names,
        };
        let mine = focus_rows(&f, &ctx);
        let billed: Decimal = mine.iter().map(|r| r.billed_cost).sum();
        if billed != billed_total(&f) {
            return Err(ApiError::Internal(format!(
                "the FOCUS rows of invoice {} bill {billed}, not its {}",
                i.id,
                billed_total(&f)
            )));
        }
        rows.extend(mine);
    }
    Ok((
        [(axum::http::header::CONTENT_TYPE, "text/csv; charset=utf-8")],
        focus_csv(&rows),
    )
        .into_response())
}

/// Section 19: the currency of `region` (`None`: home) in the price book in force (`None`
/// before any price book); a 422 naming the region and the book's regions when the book does
/// not name it.
pub(crate) async fn region_currency(
    s: &AppState,
    region: Option<&str>,
) -> Result<Option<String>, ApiError> {
    let now_s = (s.clock)().div_euclid(1000);
    let book = s.store.admin().pricebook_at(now_s).await?;
    match (&book, region) {
        (None, None) => Ok(None),
        (None, Some(r)) => Err(ApiError::Unprocessable(format!(
            "region {r:?} is not a region of the price book (no price book is in force)"
        ))),
        (Some(book), r) => match book.for_region(r) {
            Some(b) => Ok(Some(b.currency.clone())),
            None => Err(ApiError::Unprocessable(format!(
                "region {:?} is not a region of the price book (regions: {})",
                r.unwrap_or_default(),
                book.regions.keys().cloned().collect::<Vec<_>>().join(", ")
            ))),
        },
    }
}

/// Section 19: the billing domain `account` has in `region` (`None`: home), after checking
/// that the price book in force names the region (else a 422 naming it): `account` or
/// `account@region`, the id its cost, usage, quotas, holds and wallet are kept under.
pub(crate) async fn domain_of(
    s: &AppState,
    account: &str,
    region: Option<&str>,
) -> Result<String, ApiError> {
    if region.is_some() {
        region_currency(s, region).await?;
    }
    Ok(Domain { account, region }.id().into_owned())
}

/// Section 19 wallets: an account has a wallet per billing domain, home or a region, each in
/// that domain's currency (a USD invoice is never settled from a CNY balance). The body's
/// optional `region` (a region of the price book in force; absent: home) picks the wallet;
/// its optional `currency` must be that wallet's. Answers the wallet's id (`account` or
/// `account@region`) and currency (`None` before any price book).
async fn wallet_of(
    s: &AppState,
    account: &str,
    body: &Value,
) -> Result<(String, Option<String>), ApiError> {
    let text = |name: &str| -> Result<Option<String>, ApiError> {
        match body.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(v)) => Ok(Some(v.clone())),
            Some(other) => Err(ApiError::BadRequest(format!(
                "{name} must be a string, got {other}"
            ))),
        }
    };
    if !billing_core::event::is_account_id(account) {
        return Err(ApiError::BadRequest(format!(
            "account {account:?} is not an account id (letters, digits, '.', '_' and '-'; a region's wallet is chosen with \"region\")"
        )));
    }
    let (region, currency) = (text("region")?, text("currency")?);
    let wallet_currency = region_currency(s, region.as_deref()).await?;
    if let (Some(given), Some(held)) = (&currency, &wallet_currency)
        && given != held
    {
        return Err(ApiError::Unprocessable(format!(
            "currency {given:?} is not the currency of the wallet ({held:?}, {}): a wallet holds one currency; a region's wallet is chosen with \"region\"",
            region
                .as_deref()
                .map_or("home".to_string(), |r| format!("region {r:?}"))
        )));
    }
    let id = Domain {
        account,
        region: region.as_deref(),
    }
    .id()
    .into_owned();
    Ok((id, wallet_currency))
}
