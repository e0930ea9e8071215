//! Route handlers (the usage query is in `usage.rs`).

use crate::auth::Principal;
use crate::auth::generate_secret;
use crate::error::ApiError;
use crate::query::PeriodQuery;
use crate::state::AppState;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use billing_core::export::{CsvCreditNote, CsvInvoice, CsvReference};
use billing_store::{CloseError, IssuedInvoice, MAX_BATCH_RECORDS, Outcome, hash_key};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub async fn healthz() -> &'static str {
    "ok"
}

/// `GET /metrics`: Prometheus text format.
pub async fn metrics(State(s): State<AppState>) -> Response {
    match &s.metrics {
        Some(h) => (
            [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
            h.render(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no metrics recorder installed").into_response(),
    }
}

pub async fn readyz(State(s): State<AppState>) -> Response {
    if s.store.ping().await {
        (StatusCode::OK, "ready").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "database unreachable").into_response()
    }
}

/// Per-event results of an ingest call.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct IngestResult {
    pub accepted: usize,
    pub duplicates: usize,
    pub rejected: usize,
    /// One per event, in request order: `{"status":"accepted"}`, `{"status":"duplicate"}` or
    /// `{"status":"rejected","reason":"...","detail":"..."}`.
    #[schema(value_type = Vec<crate::openapi::schemas::EventOutcome>)]
    pub results: Vec<Outcome>,
}

/// Splits an ingest body into raw event records by content type. A binary-mode CloudEvent
/// (a `ce-specversion` header, attributes in `ce-*` headers, the data as the body) is one
/// record: its structured form, or a stand-in that is dead-lettered with the reason it could
/// not be converted ([`billing_core::binary_mode::record`]).
fn records(headers: &HeaderMap, body: &[u8]) -> Result<Vec<Vec<u8>>, ApiError> {
    use billing_core::binary_mode::{Binding, is_binary, record};
    let pairs = || headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes()));
    if is_binary(Binding::Http, pairs()) {
        return Ok(vec![record(Binding::Http, pairs(), body)]);
    }
    let ctype = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json");
    let mime = ctype
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let trimmed = body.trim_ascii();
    match mime.as_str() {
        "application/cloudevents+json" => Ok(vec![trimmed.to_vec()]),
        "application/cloudevents-batch+json" | "application/json" => {
            if mime == "application/json" && trimmed.starts_with(b"{") {
                return Ok(vec![trimmed.to_vec()]);
            }
            // Record by record: a record that is not valid JSON is one dead letter
            // (`malformed_json`), never the whole batch's 400 that a retrying agent would loop
            // on. Only a body that is not an array of elements at all is refused.
            let items = billing_core::json::split_array(body, MAX_BATCH_RECORDS).map_err(|e| {
                if e.what == "more elements than one batch takes" {
                    ApiError::TooLarge(format!(
                        "more than {MAX_BATCH_RECORDS} events in one request"
                    ))
                } else {
                    ApiError::BadRequest(format!("body is not a JSON array of events: {e}"))
                }
            })?;
            Ok(items.into_iter().map(<[u8]>::to_vec).collect())
        }
        other => Err(ApiError::BadRequest(format!(
            "unsupported content type {other:?}: use application/cloudevents+json, application/cloudevents-batch+json or application/json"
        ))),
    }
}

/// `POST /v1/events`: answers once the batch is durable; idempotent under retries.
pub async fn ingest(
    principal: Principal,
    State(s): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<IngestResult>, ApiError> {
    principal.ingest()?;
    let recs = records(&headers, &body)?;
    let results = match &s.sink {
        None => s.store.log().ingest(recs, (s.clock)()).await?,
        Some(sink) => hand_off(sink.as_ref(), recs).await?,
    };
    let count = |f: fn(&Outcome) -> bool| results.iter().filter(|o| f(o)).count();
    Ok(Json(IngestResult {
        accepted: count(|o| matches!(o, Outcome::Accepted)),
        duplicates: count(|o| matches!(o, Outcome::Duplicate)),
        rejected: count(|o| matches!(o, Outcome::Rejected { .. })),
        results,
    }))
}

/// Kafka mode: every record goes to the usage topic, keyed by its account (invalid ones too:
/// the consumer dead-letters them, nothing is dropped here). A valid record is `accepted`
/// (handed off; duplicates are settled by the consumer), an invalid one `rejected` with its
/// reason. 503 unless the broker acknowledged all of them.
async fn hand_off(
    sink: &dyn billing_store::EventSink,
    recs: Vec<Vec<u8>>,
) -> Result<Vec<Outcome>, ApiError> {
    let mut outcomes = Vec::with_capacity(recs.len());
    let mut keyed = Vec::with_capacity(recs.len());
    for r in recs {
        let (key, outcome) = match billing_core::event::decode_any(&r) {
            Ok(e) => (e.subject.to_string(), Outcome::Accepted),
            Err(rej) => (
                String::new(),
                Outcome::Rejected {
                    reason: rej.reason,
                    detail: rej.detail,
                },
            ),
        };
        outcomes.push(outcome);
        keyed.push((key, r));
    }
    sink.publish(keyed).await.map_err(|e| {
        ApiError::Unavailable(format!(
            "the event log did not acknowledge the batch: {e}; retry it"
        ))
    })?;
    Ok(outcomes)
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct NewAccount {
    /// 1 to 256 characters of `A-Z a-z 0-9 . _ -`.
    pub id: String,
    /// Section 18: the account's parent in its organization (a registered account).
    #[serde(default)]
    pub parent: Option<String>,
    /// Section 18: `self` (default) or `parent` (its parent's payer pays for it).
    #[serde(default)]
    pub pays: Option<crate::accounts::Pays>,
}

/// `POST /v1/admin/accounts`: the API key is shown once.
pub async fn create_account(
    principal: Principal,
    State(s): State<AppState>,
    crate::json_body::JsonBody(req): crate::json_body::JsonBody<NewAccount>,
) -> Result<Response, ApiError> {
    principal.admin()?;
    let req = req?;
    // The account-id grammar is the core's (`billing_core::event::is_account_id`): the one
    // event subjects and authorizations are checked against.
    if !billing_core::event::is_account_id(&req.id) {
        return Err(ApiError::BadRequest(format!(
            "account id {:?} must be 1 to 256 characters of A-Z a-z 0-9 . _ -",
            req.id
        )));
    }
    if let Some(p) = &req.parent
        && !s.store.admin().account_exists(p).await?
    {
        return Err(ApiError::NotFound(format!("no parent account {p:?}")));
    }
    let key = generate_secret("gbk_");
    s.store
        .admin()
        .create_account(&req.id, &hash_key(&key), (s.clock)())
        .await?;
    if req.parent.is_some() || req.pays.is_some() {
        // The account exists from here on; a place the price book refuses is an error
        // naming why, and the account stays a root.
        let to = crate::accounts::Place {
            parent: req.parent.as_deref(),
            pays: req.pays,
            from: None,
        };
        crate::accounts::place(&s, &req.id, to).await?;
    }
    Ok((
        StatusCode::CREATED,
        Json(json!({ "id": req.id, "api_key": key, "parent": req.parent })),
    )
        .into_response())
}

/// `PUT /v1/admin/pricebook`: a TOML body, validated, stored as a new version.
pub async fn put_pricebook(
    principal: Principal,
    State(s): State<AppState>,
    body: Bytes,
) -> Result<Response, ApiError> {
    principal.admin()?;
    let text = std::str::from_utf8(&body)
        .map_err(|_| ApiError::BadRequest("price book is not UTF-8".into()))?;
    let version = s.store.admin().put_pricebook(text, (s.clock)()).await?;
    Ok((StatusCode::CREATED, Json(json!({ "version": version }))).into_response())
}

/// `POST /v1/admin/invoices/close?period=YYYY-MM`
pub async fn close_period(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<PeriodQuery>,
) -> Result<Json<Vec<IssuedInvoice>>, ApiError> {
    principal.admin()?;
    let period = q.required_period()?;
    match s.store.finance().close_period(&period, (s.clock)()).await {
        Ok(v) => Ok(Json(v)),
        Err(
            e @ (CloseError::Unpriced { .. }
            | CloseError::NoPriceBook(_)
            | CloseError::NotEnded { .. }),
        ) => Err(ApiError::Conflict(e.to_string())),
        Err(CloseError::Store(e)) => Err(e.into()),
        Err(e) => Err(ApiError::Internal(e.to_string())),
    }
}

/// Invoices and credit notes as CSV (issue 12: finance reconciles to the cent): one row per
/// line, per adjustment line (`adjustment:<component>`, `reference` naming the original
/// invoice's number, or its period when none was issued), then the totals, what is due and
/// paid; a credit note has a row per original it credits and its amount. The rows and their
/// quoting are the core's (`billing_core::export::invoices_csv`); this only lends it the
/// store's documents.
pub fn csv(invoices: &[IssuedInvoice], notes: &[billing_store::CreditNote]) -> String {
    let invoices: Vec<CsvInvoice<'_>> = invoices
        .iter()
        .map(|i| CsvInvoice {
            id: &i.id,
            number: i.number.as_str(),
            status: i.status.as_str(),
            invoice: &i.invoice,
            adjustments: &i.adjustments,
            amount_due: i.amount_due,
            paid: i.paid,
        })
        .collect();
    let notes: Vec<CsvCreditNote<'_>> = notes
        .iter()
        .map(|n| CsvCreditNote {
            id: &n.id,
            number: n.number.as_str(),
            status: n.status.as_str(),
            account: &n.account,
            currency: &n.currency,
            references: n
                .references
                .iter()
                .map(|r| CsvReference {
                    invoice_number: r.invoice_number.as_ref().map(|n| n.as_str()),
                    period: &r.period,
                    amount: r.amount,
                })
                .collect(),
            invoice_number: n.invoice_number.as_str(),
            amount: n.amount,
        })
        .collect();
    billing_core::export::invoices_csv(&invoices, &notes)
}

/// `GET /v1/admin/exports/invoices?period=YYYY-MM&format=csv|jsonl`: the period's invoices
/// (status on the clock) and the credit notes its close issued.
pub async fn export_invoices(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<PeriodQuery>,
) -> Result<Response, ApiError> {
    principal.admin()?;
    let period = q.required_period()?;
    let now = (s.clock)();
    let invoices: Vec<IssuedInvoice> = s
        .store
        .finance()
        .invoices(None, Some(&period))
        .await?
        .into_iter()
        .map(|i| i.at(now, s.store.payment_days()))
        .collect();
    let notes = s.store.finance().credit_notes(None, Some(&period)).await?;
    match q.format.as_deref().unwrap_or("jsonl") {
        "csv" => Ok((
            [(header::CONTENT_TYPE, "text/csv; charset=utf-8")],
            csv(&invoices, &notes),
        )
            .into_response()),
        "jsonl" => {
            let mut body = String::new();
            let json =
                |v: serde_json::Result<String>| v.map_err(|e| ApiError::Internal(e.to_string()));
            for i in &invoices {
                body.push_str(&json(serde_json::to_string(i))?);
                body.push('\n');
            }
            for n in &notes {
                body.push_str(&json(serde_json::to_string(n))?);
                body.push('\n');
            }
            Ok(([(header::CONTENT_TYPE, "application/jsonl")], body).into_response())
        }
        other => Err(ApiError::BadRequest(format!(
            "format {other:?} is neither csv nor jsonl"
        ))),
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Return items after this sequence number.
    pub after: Option<i64>,
    /// At most this many (1 to 1000, default 100).
    pub limit: Option<i64>,
}

/// A page size from the query (default 100), refused outside 1 to `max`.
pub(crate) fn page_limit(limit: Option<i64>, max: i64) -> Result<i64, ApiError> {
    let limit = limit.unwrap_or(100);
    if !(1..=max).contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "limit {limit} is not between 1 and {max}"
        )));
    }
    Ok(limit)
}

/// The cursor of the next page: the last item's, when the page is full.
pub(crate) fn next_after<T, C>(items: &[T], limit: i64, cursor: impl Fn(&T) -> C) -> Option<C> {
    (items.len() as i64 == limit)
        .then(|| items.last().map(cursor))
        .flatten()
}

/// `GET /v1/admin/dead-letters`
pub async fn dead_letters(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<PageQuery>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    let limit = page_limit(q.limit, 1000)?;
    let items = s
        .store
        .log()
        .dead_letters(q.after.unwrap_or(0), limit)
        .await?;
    let next = next_after(&items, limit, |d| d.seq);
    Ok(Json(json!({ "dead_letters": items, "next_after": next })))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AccountsQuery {
    /// Return accounts whose id sorts after this one (the previous page's `next_after`).
    pub after: Option<String>,
    /// At most this many (1 to 1000, default 100).
    pub limit: Option<i64>,
}

/// `GET /v1/admin/accounts`: registered accounts in id order with their quotas (issue 13: the
/// console's admin pages).
pub async fn list_accounts(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<AccountsQuery>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    let limit = page_limit(q.limit, billing_store::MAX_ACCOUNTS_PAGE)?;
    let items = s.store.admin().accounts(q.after.as_deref(), limit).await?;
    let next = next_after(&items, limit, |a| a.id.clone());
    let accounts: Vec<Value> = items
        .into_iter()
        .map(|a| {
            json!({
                "id": a.id,
                "created_at": billing_core::timestamp::format_secs(a.created_at_ms.div_euclid(1000)),
                "quotas": a.quotas,
                "quotas_updated_at": a.quotas_updated_at_ms
                    .map(|ms| billing_core::timestamp::format_secs(ms.div_euclid(1000))),
            })
        })
        .collect();
    Ok(Json(json!({ "accounts": accounts, "next_after": next })))
}

/// `GET /v1/cost/current`: the current period rated so far, shaped like an invoice. It reads
/// the provisional cost the engine keeps up to date as batches land (see
/// `billing_store::Provisional`): `position` is the batch it was computed at (null when no
/// batch touched the period yet and it was rated on read).
///
/// With `as_known_at=T` (RFC 3339, not in the future): what the route said at `T`, from only
/// the events ingested by then (issue 12; `crate::finance::known_at`).
pub async fn cost_current(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<crate::finance::KnownAtQuery>,
    Query(r): Query<crate::query::RegionQuery>,
    Query(a): Query<crate::query::AccountQuery>,
) -> Result<Json<Value>, ApiError> {
    let home = principal
        .scoped(&s, a.account.as_deref(), crate::auth::Action::Cost)
        .await?;
    // Section 19: `?region=` answers the region's billing domain (its invoice, currency).
    let account = crate::finance::domain_of(&s, &home, r.region.as_deref()).await?;
    let now_ms = (s.clock)();
    if let Some(t_ms) = crate::finance::known_at(q.as_known_at.as_ref(), now_ms)? {
        return crate::finance::cost_known_at(&s, &account, t_ms).await;
    }
    let now_s = now_ms.div_euclid(1000);
    let label = s
        .store
        .finance()
        .period_label_at(now_ms)
        .await?
        .ok_or_else(|| ApiError::Conflict("no price book has been uploaded yet".into()))?;
    let p = s
        .store
        .finance()
        .provisional(&account, &label, now_ms)
        .await?
        .ok_or_else(|| {
            ApiError::Conflict(format!(
                "no price book applies to {}: upload one with PUT /v1/admin/pricebook",
                label
            ))
        })?;
    Ok(Json(json!({
        "as_of": billing_core::timestamp::format_secs(now_s),
        "period_label": label,
        "provisional": true,
        "position": p.position,
        "updated_at": billing_core::timestamp::format_secs(p.updated_at_ms.div_euclid(1000)),
        "invoice": p.invoice,
    })))
}

/// `GET /v1/invoices?period=YYYY-MM`: the caller's invoices (with their status on the
/// clock) and credit notes.
pub async fn list_invoices(
    principal: Principal,
    State(s): State<AppState>,
    Query(q): Query<PeriodQuery>,
    Query(a): Query<crate::query::AccountQuery>,
) -> Result<Json<Vec<Value>>, ApiError> {
    let account = principal
        .scoped(&s, a.account.as_deref(), crate::auth::Action::Invoices)
        .await?;
    let account = account.as_str();
    let period = q.period.as_deref();
    Ok(Json(crate::finance::documents(
        s.store.finance().invoices(Some(account), period).await?,
        s.store
            .finance()
            .credit_notes(Some(account), period)
            .await?,
        (s.clock)(),
        s.store.payment_days(),
    )?))
}

/// `GET /v1/invoices/{id}` and `GET /v1/invoices/{id}.csv`. Another account's invoice is
/// answered exactly like one that does not exist. `.html` and `.pdf` print what this route
/// answers in JSON (`printable.rs`).
pub async fn get_invoice(
    principal: Principal,
    State(s): State<AppState>,
    Path(id): Path<String>,
    Query(a): Query<crate::query::AccountQuery>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Result<Response, ApiError> {
    let account = principal
        .scoped(&s, a.account.as_deref(), crate::auth::Action::Invoices)
        .await?;
    if let Some((id, format)) = crate::printable::Format::split(&id) {
        return crate::printable::invoice(account, s, id.to_string(), format, query).await;
    }
    let account = account.as_str();
    let (id, as_csv) = match id.strip_suffix(".csv") {
        Some(i) => (i.to_string(), true),
        None => (id, false),
    };
    let (invoices, notes) = crate::finance::document(&s, &id, Some(account))
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no invoice {id:?}")))?
        .split();
    if as_csv {
        Ok((
            [(header::CONTENT_TYPE, "text/csv; charset=utf-8")],
            csv(&invoices, &notes),
        )
            .into_response())
    } else {
        match (invoices.into_iter().next(), notes.into_iter().next()) {
            (Some(i), _) => Ok(Json(i).into_response()),
            (None, Some(n)) => Ok(Json(n).into_response()),
            (None, None) => Err(ApiError::NotFound(format!("no invoice {id:?}"))),
        }
    }
}
