//! Printable documents and the profiles printed on them (issue 12).
//!
//! - `PUT` / `GET /v1/admin/accounts/{id}/profile` and `PUT` / `GET /v1/admin/seller`, admin
//!   token only: the buyer's and the seller's 增值税发票 fields ([`Profile`]; the seller's is
//!   stored under [`SELLER_PROFILE`]). A bad field is a 400 naming it, and nothing is stored.
//! - `GET /v1/invoices/{id}.html?lang=en|zh` (the customer's key, like the JSON): the document
//!   as one self-contained A4 page (inline CSS, no script, no external resource), labels in
//!   English (the default) or Chinese. It is rendered from the issued document as JSON (a
//!   [`Value`]), not from a fixed struct, so fields the store adds (`adjustments`,
//!   `amount_due`, a credit note's `amount` and `references`) print without a change here;
//!   every value is HTML-escaped, and every figure carries a stable `id` (the JSON key:
//!   `id="total"`) or attribute (`data-line-amount`) to be read back.
//! - `GET /v1/invoices/{id}.pdf?lang=...`: that page printed by headless Chromium
//!   (`--print-to-pdf`, A4). The binary is `GPUBILL_CHROMIUM` when set, else the first of
//!   `chromium`, `chromium-browser`, `google-chrome` on `PATH`; without one the answer is 503
//!   saying so (Debian: `apt-get install chromium`; `scripts/services.sh chromium` installs it
//!   with pdftotext and CJK fonts). At most [`PDF_RENDERS_MAX`] Chromiums run at once, each for
//!   at most [`PDF_TIMEOUT_SECONDS`], in a temporary directory removed afterwards.

use crate::{ApiError, AppState, Principal};
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use billing_core::profile::Profile;
use billing_store::{ProfileStoreError, SELLER_PROFILE, StoredProfile};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::{Path as FsPath, PathBuf};
use std::time::Duration;

/// Longest wait for one PDF: for a free rendering slot, then for Chromium to print. A page
/// prints in about a second; a Chromium still running after this is stuck and is killed.
pub const PDF_TIMEOUT_SECONDS: u64 = 30;
/// Most Chromiums printing at once (each takes a few hundred MB of memory).
pub const PDF_RENDERS_MAX: usize = 2;
/// Largest profile request body: seven short fields fit many times over.
pub const PROFILE_BODY_BYTES_MAX: usize = 16 * 1024;

impl From<ProfileStoreError> for ApiError {
    fn from(e: ProfileStoreError) -> Self {
        match e {
            ProfileStoreError::UnknownAccount(_) => ApiError::NotFound(e.to_string()),
            ProfileStoreError::Invalid(_) => ApiError::BadRequest(e.to_string()),
            ProfileStoreError::Store(s) => s.into(),
        }
    }
}

// ---- profiles -----------------------------------------------------------------------------

fn parse_profile(body: &[u8]) -> Result<Profile, ApiError> {
    if body.len() > PROFILE_BODY_BYTES_MAX {
        return Err(ApiError::TooLarge(format!(
            "a profile is at most {PROFILE_BODY_BYTES_MAX} bytes, this one is {}",
            body.len()
        )));
    }
    Profile::from_json(body).map_err(|e| ApiError::BadRequest(format!("invalid profile: {e}")))
}

async fn put(s: &AppState, key: &str, body: &[u8]) -> Result<Json<Value>, ApiError> {
    let profile = parse_profile(body)?;
    let changed = s.store.put_profile(key, &profile, (s.clock)()).await?;
    Ok(Json(json!({ "profile": profile, "changed": changed })))
}

fn shown(stored: Option<StoredProfile>) -> Value {
    match stored {
        Some(p) => json!({ "profile": p.profile, "updated_at_ms": p.updated_at_ms }),
        None => json!({ "profile": null, "updated_at_ms": null }),
    }
}

/// `PUT /v1/admin/accounts/{id}/profile`: the buyer's fields; `changed` is false when the
/// account had this profile already (no command recorded).
pub async fn put_account_profile(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    let Json(mut v) = put(&s, &account, &body).await?;
    v["account"] = json!(account);
    Ok(Json(v))
}

/// `GET /v1/admin/accounts/{id}/profile`: `profile` is null when none was set.
pub async fn get_account_profile(
    principal: Principal,
    State(s): State<AppState>,
    Path(account): Path<String>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    let mut v = shown(s.store.profile(&account).await?);
    v["account"] = json!(account);
    Ok(Json(v))
}

/// `PUT /v1/admin/seller`: the platform's own fields, printed as the seller (销售方).
pub async fn put_seller(
    principal: Principal,
    State(s): State<AppState>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    put(&s, SELLER_PROFILE, &body).await
}

/// `GET /v1/admin/seller`: `profile` is null when none was set.
pub async fn get_seller(
    principal: Principal,
    State(s): State<AppState>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    Ok(Json(shown(s.store.profile(SELLER_PROFILE).await?)))
}

// ---- the invoice route's printable suffixes -------------------------------------------------

/// A printable form of `GET /v1/invoices/{id}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Pdf,
}

impl Format {
    /// Splits `inv_x.html` into `("inv_x", Html)`; None for any other suffix.
    pub fn split(id: &str) -> Option<(&str, Format)> {
        if let Some(i) = id.strip_suffix(".html") {
            Some((i, Format::Html))
        } else {
            id.strip_suffix(".pdf").map(|i| (i, Format::Pdf))
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    /// `lang` of a raw query string: absent is English; anything but `en` or `zh` is a 400.
    pub fn from_query(query: Option<&str>) -> Result<Lang, ApiError> {
        let mut lang = Lang::En;
        let mut seen = false;
        for pair in query.unwrap_or("").split('&') {
            let Some(v) = pair.strip_prefix("lang=") else {
                continue;
            };
            if seen {
                return Err(ApiError::BadRequest("lang is given twice".into()));
            }
            seen = true;
            lang = match v {
                "en" => Lang::En,
                "zh" => Lang::Zh,
                other => {
                    return Err(ApiError::BadRequest(format!(
                        "lang {:?} is neither en nor zh",
                        other.chars().take(32).collect::<String>()
                    )));
                }
            };
        }
        Ok(lang)
    }

    fn html_tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh-CN",
        }
    }
}

/// Answers `GET /v1/invoices/{id}.html` and `.pdf` (`id` without the suffix): the document is
/// the one the JSON route answers for `id` ([`crate::finance::document`], as JSON), so the
/// page shows exactly its figures, and a document the caller may not see is the same 404.
pub async fn invoice(
    principal: Principal,
    s: AppState,
    id: String,
    format: Format,
    query: Option<String>,
) -> Result<Response, ApiError> {
    let lang = Lang::from_query(query.as_deref())?;
    let account = principal.customer()?;
    let doc = crate::finance::document(&s, &id, Some(account))
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no invoice {id:?}")))?
        .to_value()?;
    let seller = s.store.profile(SELLER_PROFILE).await?.map(|p| p.profile);
    let buyer = s.store.profile(account).await?.map(|p| p.profile);
    let page = render_value(&doc, seller.as_ref(), buyer.as_ref(), lang);
    match format {
        Format::Html => Ok((
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CONTENT_SECURITY_POLICY, CSP),
            ],
            page,
        )
            .into_response()),
        Format::Pdf => {
            let pdf = print_to_pdf(&page).await?;
            let disposition = format!("inline; filename=\"{}.pdf\"", file_stem(&doc));
            Ok((
                [
                    (header::CONTENT_TYPE, "application/pdf".to_string()),
                    (header::CONTENT_DISPOSITION, disposition),
                ],
                pdf,
            )
                .into_response())
        }
    }
}

/// The page loads nothing: inline styles only, no script, no image, no font from elsewhere.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'";

/// The document's number (or id) as a file name: `A-Z a-z 0-9 . _ -` only.
fn file_stem(doc: &Value) -> String {
    let base = field(doc, "number")
        .filter(|n| !n.is_empty())
        .or_else(|| field(doc, "id"))
        .unwrap_or_else(|| "document".into());
    base.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

// ---- the page -----------------------------------------------------------------------------

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Every label on the page, in both languages.
#[derive(Debug, Clone, Copy)]
enum L {
    Invoice,
    CreditNote,
    Number,
    DocumentId,
    IssueDate,
    Period,
    Account,
    Seller,
    Buyer,
    Name,
    TaxId,
    AddressPhone,
    BankAccount,
    Email,
    Lines,
    Component,
    SkuOrDest,
    Quantity,
    Unit,
    Amount,
    Adjustments,
    References,
    Subtotal,
    Discount,
    Credit,
    Tax,
    Total,
    AmountDue,
    Status,
    Currency,
    OriginalInvoice,
    OriginalNumber,
    Net,
    Difference,
    Description,
    NotSet,
    NoLines,
}

impl L {
    fn text(self, lang: Lang) -> &'static str {
        let (en, zh) = match self {
            L::Invoice => ("Invoice", "发票"),
            L::CreditNote => ("Credit note", "贷项通知单"),
            L::Number => ("Number", "号码"),
            L::DocumentId => ("Document id", "单据标识"),
            L::IssueDate => ("Issue date", "开票日期"),
            L::Period => ("Billing period", "计费期间"),
            L::Account => ("Account", "账户"),
            L::Seller => ("Seller", "销售方"),
            L::Buyer => ("Buyer", "购买方"),
            L::Name => ("Name", "名称"),
            L::TaxId => ("Tax id", "纳税人识别号"),
            L::AddressPhone => ("Address & phone", "地址、电话"),
            L::BankAccount => ("Bank & account", "开户行及账号"),
            L::Email => ("Email", "电子邮箱"),
            L::Lines => ("Lines", "明细"),
            L::Component => ("Item", "项目"),
            L::SkuOrDest => ("SKU or destination", "规格型号"),
            L::Quantity => ("Quantity", "数量"),
            L::Unit => ("Unit", "单位"),
            L::Amount => ("Amount", "金额"),
            L::Adjustments => ("Adjustments", "调整"),
            L::References => ("References", "关联单据"),
            L::Subtotal => ("Subtotal", "小计"),
            L::Discount => ("Discount", "折扣"),
            L::Credit => ("Credit", "抵扣"),
            L::Tax => ("Tax", "税额"),
            L::Total => ("Total", "价税合计"),
            L::AmountDue => ("Amount due", "应付金额"),
            L::Status => ("Status", "状态"),
            L::Currency => ("Currency", "币种"),
            L::OriginalInvoice => ("Original invoice", "原发票"),
            L::OriginalNumber => ("Original number", "原发票号码"),
            L::Net => ("Net", "净额"),
            L::Difference => ("Difference", "差额"),
            L::Description => ("Description", "说明"),
            L::NotSet => ("—", "—"),
            L::NoLines => ("No lines", "无明细"),
        };
        match lang {
            Lang::En => en,
            Lang::Zh => zh,
        }
    }
}

/// The label of a key of an adjustment entry (an unknown key prints as it is).
fn key_label(key: &str, lang: Lang) -> String {
    let l = match key {
        "amount" => L::Amount,
        "original_invoice" | "invoice" | "invoice_id" => L::OriginalInvoice,
        "invoice_number" | "original_number" => L::OriginalNumber,
        "net" => L::Net,
        "difference" => L::Difference,
        "reason" | "description" => L::Description,
        "period" => L::Period,
        "component" => L::Component,
        "sku" | "dest" => L::SkuOrDest,
        "quantity" => L::Quantity,
        "unit" => L::Unit,
        "account" => L::Account,
        "status" => L::Status,
        _ => return key.to_string(),
    };
    l.text(lang).to_string()
}

/// A JSON value as text: strings as they are, numbers and booleans written out, arrays
/// joined with commas, objects as `key: value` pairs, null as nothing.
fn text_of(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(a) => a.iter().map(text_of).collect::<Vec<_>>().join(", "),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| format!("{k}: {}", text_of(v)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// `doc[key]` as text, when present and not null.
fn field(doc: &Value, key: &str) -> Option<String> {
    doc.get(key).filter(|v| !v.is_null()).map(text_of)
}

fn unit_label(unit: &str, lang: Lang) -> &str {
    match (unit, lang) {
        ("unit_seconds", Lang::En) => "unit-seconds",
        ("unit_seconds", Lang::Zh) => "单位·秒",
        ("gb", _) => "GB",
        ("package", Lang::En) => "package",
        ("package", Lang::Zh) => "套餐",
        (other, _) => other,
    }
}

/// A document status in the page's language (an unknown one prints as it is).
fn status_label(status: &str, lang: Lang) -> &str {
    match (status, lang) {
        (_, Lang::En) => status,
        ("issued", Lang::Zh) => "已开具",
        ("paid", Lang::Zh) => "已付清",
        ("overdue", Lang::Zh) => "逾期未付",
        ("credited", Lang::Zh) => "已入账",
        (other, Lang::Zh) => other,
    }
}

const STYLE: &str = r#"
@page { size: A4; margin: 14mm; }
* { box-sizing: border-box; }
html { background: #fff; color: #111; }
body { margin: 0 auto; max-width: 182mm; padding: 8mm 0; font: 10.5pt/1.45 "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei", "Helvetica Neue", Arial, sans-serif; }
h1 { font-size: 20pt; margin: 0 0 2mm; letter-spacing: .05em; }
h2 { font-size: 11pt; margin: 6mm 0 2mm; border-bottom: 1px solid #999; padding-bottom: 1mm; }
.head { display: flex; justify-content: space-between; align-items: flex-start; gap: 8mm; }
.meta { border-collapse: collapse; }
.meta th { text-align: left; font-weight: normal; color: #555; padding: 0 4mm 0 0; }
.parties { display: flex; gap: 6mm; margin-top: 5mm; }
.party { flex: 1; border: 1px solid #999; padding: 3mm; }
.party h3 { margin: 0 0 2mm; font-size: 10.5pt; }
.party dl { margin: 0; display: grid; grid-template-columns: auto 1fr; gap: .5mm 3mm; }
.party dt { color: #555; }
.party dd { margin: 0; overflow-wrap: anywhere; }
table.grid { width: 100%; border-collapse: collapse; }
table.grid th, table.grid td { border: 1px solid #bbb; padding: 1mm 2mm; vertical-align: top; }
table.grid th { background: #f0f0f0; text-align: left; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.detail { color: #666; font-size: 8.5pt; }
table.totals { margin: 4mm 0 0 auto; border-collapse: collapse; min-width: 70mm; }
table.totals th { text-align: left; font-weight: normal; padding: .6mm 6mm .6mm 0; }
table.totals td { padding: .6mm 0; }
table.totals tr.total th, table.totals tr.total td { font-weight: bold; border-top: 2px solid #111; padding-top: 1.5mm; }
@media print {
  body { padding: 0; max-width: none; }
  tr, .party { break-inside: avoid; }
  thead { display: table-header-group; }
}
"#;

/// The page of an issued document (invoice or credit note) as its JSON, with its seller and
/// buyer: what it does not know it leaves out or prints as it is, never fails on.
pub fn render_value(
    doc: &Value,
    seller: Option<&Profile>,
    buyer: Option<&Profile>,
    lang: Lang,
) -> String {
    let credit_note = doc.get("kind").and_then(Value::as_str) == Some("credit_note");
    let title = if credit_note {
        L::CreditNote
    } else {
        L::Invoice
    }
    .text(lang);
    let mut h = String::with_capacity(16 * 1024);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"{}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>{} {}</title><style>{STYLE}</style></head><body>\n",
        lang.html_tag(),
        escape(title),
        escape(&field(doc, "number").unwrap_or_default()),
    );
    let _ = write!(
        h,
        "<div class=\"head\"><div><h1 id=\"title\" data-kind=\"{}\">{}</h1></div>",
        if credit_note {
            "credit_note"
        } else {
            "invoice"
        },
        escape(title)
    );
    head_meta(&mut h, doc, lang);
    h.push_str("</div>\n<div class=\"parties\">");
    party(&mut h, "seller", L::Seller, seller, None, lang);
    party(
        &mut h,
        "buyer",
        L::Buyer,
        buyer,
        field(doc, "account").as_deref(),
        lang,
    );
    h.push_str("</div>\n");
    lines(&mut h, doc, lang);
    entries(&mut h, doc, "adjustments", L::Adjustments, lang);
    entries(&mut h, doc, "references", L::References, lang);
    totals(&mut h, doc, lang);
    h.push_str("</body></html>\n");
    h
}

fn head_meta(h: &mut String, doc: &Value, lang: Lang) {
    let period = doc.get("period").map(|p| {
        match (
            p.get("start").and_then(Value::as_str),
            p.get("end").and_then(Value::as_str),
        ) {
            (Some(a), Some(b)) => format!("{a} – {b}"),
            _ => text_of(p),
        }
    });
    let status = field(doc, "status").map(|st| status_label(&st, lang).to_string());
    let rows = [
        (L::Number, "number", field(doc, "number")),
        (L::DocumentId, "id", field(doc, "id")),
        (L::IssueDate, "issued_at", field(doc, "issued_at")),
        (L::Period, "period", period),
        (L::Status, "status", status),
        (L::Currency, "currency", field(doc, "currency")),
    ];
    h.push_str("<table class=\"meta\">");
    for (label, id, value) in rows {
        if let Some(v) = value {
            let _ = write!(
                h,
                "<tr><th>{}</th><td id=\"{id}\">{}</td></tr>",
                label.text(lang),
                escape(&v)
            );
        }
    }
    h.push_str("</table>");
}

/// A seller or buyer block: `side` prefixes its ids (`buyer-name`, `buyer-tax_id`).
fn party(
    h: &mut String,
    side: &str,
    heading: L,
    p: Option<&Profile>,
    account: Option<&str>,
    lang: Lang,
) {
    let none = L::NotSet.text(lang);
    let joined = |a: &Option<String>, b: &Option<String>| {
        let parts: Vec<&str> = [a, b].into_iter().flatten().map(String::as_str).collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    };
    let rows: [(L, &str, Option<String>); 5] = match p {
        Some(p) => [
            (L::Name, "name", Some(p.name.clone())),
            (L::TaxId, "tax_id", p.tax_id.clone()),
            (
                L::AddressPhone,
                "address_phone",
                joined(&p.address, &p.phone),
            ),
            (
                L::BankAccount,
                "bank_account",
                joined(&p.bank, &p.bank_account),
            ),
            (L::Email, "email", p.email.clone()),
        ],
        None => [
            (L::Name, "name", None),
            (L::TaxId, "tax_id", None),
            (L::AddressPhone, "address_phone", None),
            (L::BankAccount, "bank_account", None),
            (L::Email, "email", None),
        ],
    };
    let _ = write!(
        h,
        "<section class=\"party\" id=\"{side}\"><h3>{}</h3><dl>",
        heading.text(lang)
    );
    if let Some(a) = account {
        let _ = write!(
            h,
            "<dt>{}</dt><dd id=\"{side}-account\">{}</dd>",
            L::Account.text(lang),
            escape(a)
        );
    }
    for (label, key, value) in rows {
        let _ = write!(
            h,
            "<dt>{}</dt><dd id=\"{side}-{key}\">{}</dd>",
            label.text(lang),
            value.as_deref().map_or_else(|| none.to_string(), escape)
        );
    }
    h.push_str("</dl></section>");
}

fn lines(h: &mut String, doc: &Value, lang: Lang) {
    let Some(lines) = doc.get("lines").and_then(Value::as_array) else {
        return;
    };
    let _ = write!(
        h,
        "<h2>{}</h2><table class=\"grid\" id=\"lines\"><thead><tr><th>{}</th><th>{}</th>\
         <th class=\"num\">{}</th><th>{}</th><th class=\"num\">{}</th></tr></thead><tbody>",
        L::Lines.text(lang),
        L::Component.text(lang),
        L::SkuOrDest.text(lang),
        L::Quantity.text(lang),
        L::Unit.text(lang),
        L::Amount.text(lang),
    );
    if lines.is_empty() {
        let _ = write!(
            h,
            "<tr><td colspan=\"5\">{}</td></tr>",
            L::NoLines.text(lang)
        );
    }
    for l in lines {
        let what = ["sku", "dest", "package", "subscription"]
            .iter()
            .find_map(|k| field(l, k))
            .unwrap_or_default();
        let detail: Vec<String> = [
            ("tier", "tier "),
            ("multiplier", "×"),
            ("price", "@"),
            ("compensation", "+"),
        ]
        .iter()
        .filter_map(|(k, prefix)| field(l, k).map(|v| format!("{prefix}{v}")))
        .collect();
        let unit = field(l, "unit").unwrap_or_default();
        let _ = write!(
            h,
            "<tr data-line><td>{}<div class=\"detail\">{}</div></td><td>{}</td>\
             <td class=\"num\" data-line-quantity>{}</td><td>{}</td>\
             <td class=\"num\" data-line-amount>{}</td></tr>",
            escape(&field(l, "component").unwrap_or_default()),
            escape(&detail.join(" · ")),
            escape(&what),
            escape(&field(l, "quantity").unwrap_or_default()),
            escape(unit_label(&unit, lang)),
            escape(&field(l, "amount").unwrap_or_default()),
        );
    }
    h.push_str("</tbody></table>\n");
}

/// Where a key of an entry stands among the columns: what names the original first, the
/// figures last, any other key between them (by name).
fn column_rank(key: &str) -> (usize, &str) {
    const FIRST: [&str; 11] = [
        "period",
        "original_invoice",
        "invoice",
        "invoice_id",
        "original_number",
        "invoice_number",
        "component",
        "sku",
        "dest",
        "description",
        "reason",
    ];
    const LAST: [&str; 3] = ["difference", "net", "amount"];
    if let Some(i) = FIRST.iter().position(|k| *k == key) {
        (i, "")
    } else if let Some(i) = LAST.iter().position(|k| *k == key) {
        (FIRST.len() + 1 + i, "")
    } else {
        (FIRST.len(), key)
    }
}

/// A list of entries (`adjustments`, a credit note's `references`), whatever their shape: one
/// column per key any entry has (see [`column_rank`]), a figure marked `data-{list}-{key}`
/// (`data-adjustments-amount`); entries that are not objects print as text.
fn entries(h: &mut String, doc: &Value, key: &str, heading: L, lang: Lang) {
    let list = match doc.get(key) {
        Some(Value::Array(a)) if !a.is_empty() => a.as_slice(),
        Some(v) if !v.is_null() && !v.is_array() => std::slice::from_ref(v),
        _ => return,
    };
    let mut keys: Vec<&str> = Vec::new();
    for e in list {
        if let Some(o) = e.as_object() {
            for k in o.keys() {
                if !keys.contains(&k.as_str()) {
                    keys.push(k);
                }
            }
        }
    }
    keys.sort_by_key(|k| column_rank(k));
    let _ = write!(
        h,
        "<h2>{}</h2><table class=\"grid\" id=\"{key}\"><thead><tr>",
        heading.text(lang)
    );
    for k in &keys {
        let _ = write!(h, "<th>{}</th>", escape(&key_label(k, lang)));
    }
    h.push_str("</tr></thead><tbody>");
    for e in list {
        let _ = write!(h, "<tr data-{key}-entry>");
        if e.is_object() {
            for k in &keys {
                let attr = if matches!(*k, "amount" | "net" | "difference") {
                    format!(" class=\"num\" data-{key}-{k}")
                } else {
                    String::new()
                };
                let _ = write!(
                    h,
                    "<td{attr}>{}</td>",
                    escape(&field(e, k).unwrap_or_default())
                );
            }
        } else {
            let _ = write!(
                h,
                "<td colspan=\"{}\">{}</td>",
                keys.len().max(1),
                escape(&text_of(e))
            );
        }
        h.push_str("</tr>");
    }
    h.push_str("</tbody></table>\n");
}

fn totals(h: &mut String, doc: &Value, lang: Lang) {
    let rows = [
        (L::Subtotal, "subtotal"),
        (L::Discount, "discount"),
        (L::Credit, "credit"),
        (L::Tax, "tax"),
        (L::Total, "total"),
        (L::Amount, "amount"),
        (L::AmountDue, "amount_due"),
    ];
    let currency = field(doc, "currency").unwrap_or_default();
    h.push_str("<table class=\"totals\" id=\"totals\">");
    for (label, key) in rows {
        let Some(v) = doc.get(key).filter(|v| v.is_string() || v.is_number()) else {
            continue;
        };
        let class = if matches!(key, "total" | "amount_due") {
            " class=\"total\""
        } else {
            ""
        };
        let _ = write!(
            h,
            "<tr{class}><th>{} ({})</th><td class=\"num\" id=\"{key}\">{}</td></tr>",
            label.text(lang),
            escape(&currency),
            escape(&text_of(v))
        );
    }
    h.push_str("</table>\n");
}

// ---- PDF through headless Chromium ----------------------------------------------------------

/// Chromium's binary: `GPUBILL_CHROMIUM` when set (a path or a name on `PATH`), else the first
/// of `chromium`, `chromium-browser`, `google-chrome` found on `PATH`.
pub fn chromium() -> Option<PathBuf> {
    if let Some(c) = std::env::var_os("GPUBILL_CHROMIUM").filter(|c| !c.is_empty()) {
        return find_program(&PathBuf::from(c));
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|n| find_program(FsPath::new(n)))
}

fn is_executable(p: &FsPath) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `name` itself when it is a path, else its first executable on `PATH`.
fn find_program(name: &FsPath) -> Option<PathBuf> {
    if name.components().count() > 1 {
        return is_executable(name).then(|| name.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

static RENDERS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(PDF_RENDERS_MAX);

/// Prints `html` to an A4 PDF with headless Chromium (see the module header).
pub async fn print_to_pdf(html: &str) -> Result<Vec<u8>, ApiError> {
    print_with(chromium(), html).await
}

async fn print_with(bin: Option<PathBuf>, html: &str) -> Result<Vec<u8>, ApiError> {
    let Some(bin) = bin else {
        return Err(ApiError::Unavailable(
            "PDF needs Chromium, which is not installed on this server: install it (Debian: \
             apt-get install chromium) or set GPUBILL_CHROMIUM to its path; the .html form \
             works without it"
                .into(),
        ));
    };
    let limit = Duration::from_secs(PDF_TIMEOUT_SECONDS);
    let _permit = tokio::time::timeout(limit, RENDERS.acquire())
        .await
        .map_err(|_| {
            ApiError::Unavailable(format!(
                "{PDF_RENDERS_MAX} PDFs are being printed; retry in a few seconds"
            ))
        })?
        .map_err(|e| ApiError::Internal(format!("PDF semaphore: {e}")))?;
    let dir = std::env::temp_dir().join(format!("gpubill-pdf-{}", crate::generate_secret("")));
    let result = print_in(&bin, &dir, html, limit).await;
    let _ = tokio::fs::remove_dir_all(&dir).await;
    result
}

async fn print_in(
    bin: &FsPath,
    dir: &FsPath,
    html: &str,
    limit: Duration,
) -> Result<Vec<u8>, ApiError> {
    let io = |what: &str, e: std::io::Error| ApiError::Internal(format!("PDF: {what}: {e}"));
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(|e| io("temporary directory", e))?;
    let page = dir.join("invoice.html");
    let out = dir.join("invoice.pdf");
    tokio::fs::write(&page, html)
        .await
        .map_err(|e| io("write the page", e))?;
    let mut cmd = tokio::process::Command::new(bin);
    cmd.arg("--headless")
        .arg("--no-sandbox")
        .arg("--disable-gpu")
        .arg("--disable-dev-shm-usage")
        .arg("--no-first-run")
        .arg("--no-pdf-header-footer")
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--print-to-pdf={}", out.display()))
        .arg(format!("file://{}", page.display()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let child = cmd
        .spawn()
        .map_err(|e| io(&format!("start {}", bin.display()), e))?;
    let output = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .map_err(|_| {
            ApiError::Unavailable(format!(
                "Chromium did not print the PDF within {PDF_TIMEOUT_SECONDS} s; retry"
            ))
        })?
        .map_err(|e| io("wait for Chromium", e))?;
    let pdf = tokio::fs::read(&out).await.unwrap_or_default();
    if !output.status.success() || !pdf.starts_with(b"%PDF") {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: String = stderr.lines().rev().take(5).collect::<Vec<_>>().join(" | ");
        return Err(ApiError::Internal(format!(
            "Chromium ({}) exited with {} and {} bytes of PDF: {tail}",
            bin.display(),
            output.status,
            pdf.len()
        )));
    }
    Ok(pdf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        json!({
            "id": "inv_0123", "number": "INV-2026-000007", "status": "issued",
            "issued_at": "2026-12-02T00:00:00Z", "pricebook_version": 1,
            "account": "acme", "currency": "CNY",
            "period": {"start": "2026-10-31T16:00:00Z", "end": "2026-11-30T16:00:00Z"},
            "lines": [{"component": "on_demand", "sku": "gpu.h100-80g", "tier": 0, "multiplier": "0.70",
                       "quantity": "3600", "unit": "unit_seconds", "amount": "16.80"}],
            "subtotal": "16.80", "discount": "0.00", "credit": "0.00", "tax": "1.01", "total": "17.81"
        })
    }

    #[test]
    fn escape_turns_markup_into_text() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
        assert_eq!(escape("北京算力科技有限公司"), "北京算力科技有限公司");
    }

    #[test]
    fn a_script_in_a_profile_name_prints_as_text() {
        let evil = Profile {
            name: "<script>alert(1)</script>".into(),
            tax_id: Some("91110108MA01ABCD2X".into()),
            ..Profile::default()
        };
        let page = render_value(&doc(), None, Some(&evil), Lang::En);
        assert!(!page.contains("<script"), "{page}");
        assert!(page.contains("<dd id=\"buyer-name\">&lt;script&gt;alert(1)&lt;/script&gt;</dd>"));
    }

    #[test]
    fn the_page_marks_every_figure_in_both_languages() {
        for (lang, label) in [(Lang::En, "Total"), (Lang::Zh, "价税合计")] {
            let page = render_value(&doc(), None, None, lang);
            for needle in [
                "<td class=\"num\" id=\"total\">17.81</td>",
                "<td class=\"num\" id=\"subtotal\">16.80</td>",
                "<td class=\"num\" id=\"tax\">1.01</td>",
                "<td id=\"number\">INV-2026-000007</td>",
                "<td class=\"num\" data-line-amount>16.80</td>",
                label,
            ] {
                assert!(page.contains(needle), "{lang:?} lacks {needle}");
            }
            assert!(
                !page.contains("id=\"amount_due\""),
                "absent fields print nothing"
            );
        }
    }

    #[test]
    fn a_credit_note_prints_its_title_amount_references_and_adjustments() {
        let mut d = doc();
        d["kind"] = json!("credit_note");
        d["amount"] = json!("-5.00");
        d["amount_due"] = json!("0.00");
        d["references"] = json!([{"period": "2026-10", "invoice_id": "inv_0042", "net": "-5.00"}]);
        d["adjustments"] = json!([{"period": "2026-10", "invoice_id": "inv_0042",
            "invoice_number": "INV-2026-000042", "component": "on_demand", "amount": "-5.00"}]);
        let page = render_value(&d, None, None, Lang::Zh);
        for needle in [
            "data-kind=\"credit_note\">贷项通知单</h1>",
            "<td class=\"num\" id=\"amount\">-5.00</td>",
            "<td class=\"num\" id=\"amount_due\">0.00</td>",
            "<tr data-references-entry><td>2026-10</td><td>inv_0042</td><td class=\"num\" data-references-net>-5.00</td></tr>",
            "<tr data-adjustments-entry><td>2026-10</td><td>inv_0042</td><td>INV-2026-000042</td>\
             <td>on_demand</td><td class=\"num\" data-adjustments-amount>-5.00</td></tr>",
            "<th>原发票</th><th>原发票号码</th>",
        ] {
            assert!(page.contains(needle), "lacks {needle}");
        }
    }

    #[test]
    fn lang_is_en_by_default_and_nothing_but_en_or_zh() {
        assert_eq!(Lang::from_query(None).unwrap(), Lang::En);
        assert_eq!(Lang::from_query(Some("a=1&lang=zh")).unwrap(), Lang::Zh);
        for bad in ["lang=fr", "lang=", "lang=en&lang=zh", "lang=ZH"] {
            assert!(Lang::from_query(Some(bad)).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn without_chromium_a_pdf_is_a_503_saying_how_to_install_it() {
        let e = print_with(None, "<p>x</p>").await.unwrap_err();
        assert!(matches!(e, ApiError::Unavailable(_)), "{e:?}");
        assert!(e.to_string().contains("apt-get install chromium"), "{e}");
        assert_eq!(find_program(FsPath::new("/nonexistent/chromium")), None);
    }

    #[test]
    fn printable_suffixes_split_off() {
        assert_eq!(Format::split("inv_1.html"), Some(("inv_1", Format::Html)));
        assert_eq!(Format::split("inv_1.pdf"), Some(("inv_1", Format::Pdf)));
        assert_eq!(Format::split("inv_1.csv"), None);
    }
}
