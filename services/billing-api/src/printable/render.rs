//! The printable page: one self-contained A4 HTML document rendered from the issued
//! document's JSON, every value escaped (see `printable.rs`).

use crate::error::ApiError;
use billing_core::profile::Profile;
use serde_json::Value;
use std::fmt::Write as _;

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

/// Every label on the page, in both languages.
#[derive(Debug, Clone, Copy)]
pub(super) enum L {
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
pub(super) fn key_label(key: &str, lang: Lang) -> String {
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
pub(super) fn text_of(v: &Value) -> String {
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
pub(super) fn field(doc: &Value, key: &str) -> Option<String> {
    doc.get(key).filter(|v| !v.is_null()).map(text_of)
}

pub(super) fn unit_label(unit: &str, lang: Lang) -> &str {
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
pub(super) fn status_label(status: &str, lang: Lang) -> &str {
    match (status, lang) {
        (_, Lang::En) => status,
        ("issued", Lang::Zh) => "已开具",
        ("paid", Lang::Zh) => "已付清",
        ("overdue", Lang::Zh) => "逾期未付",
        ("credited", Lang::Zh) => "已入账",
        (other, Lang::Zh) => other,
    }
}

pub(super) const STYLE: &str = r#"
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

/// A local date as the page prints it: `November 1, 2026` or `2026年11月1日`.
fn local_date(d: chrono::NaiveDate, lang: Lang) -> String {
    use chrono::Datelike;
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    match lang {
        Lang::En => format!("{} {}, {}", MONTHS[d.month0() as usize], d.day(), d.year()),
        Lang::Zh => format!("{}年{}月{}日", d.year(), d.month(), d.day()),
    }
}

/// An invoice's period `[start, end)` (RFC 3339 instants) as the local dates of its first and
/// last day in `tz` (issue 24.14): the end is exclusive, so the last day is the one before
/// it (`2026-10-31T16:00:00Z – 2026-11-30T16:00:00Z` in Asia/Shanghai is November 1, 2026 –
/// November 30, 2026). None when either end is not an instant.
pub fn local_period(start: &str, end: &str, tz: chrono_tz::Tz, lang: Lang) -> Option<String> {
    use billing_core::timestamp::Timestamp;
    let day = |secs: i64| {
        chrono::DateTime::from_timestamp(secs, 0).map(|t| t.with_timezone(&tz).date_naive())
    };
    let first = day(Timestamp::parse_rfc3339(start)?.floor_secs())?;
    let end = Timestamp::parse_rfc3339(end)?.ceil_secs();
    let last = day(end - 1)?;
    Some(format!(
        "{} – {}",
        local_date(first, lang),
        local_date(last.max(first), lang)
    ))
}

pub(super) fn head_meta(h: &mut String, doc: &Value, lang: Lang) {
    // The invoice's timezone (its price book version's, set by `invoice`); UTC without one.
    let tz = doc
        .pointer("/period/timezone")
        .and_then(Value::as_str)
        .and_then(|z| z.parse::<chrono_tz::Tz>().ok())
        .unwrap_or(chrono_tz::Tz::UTC);
    let period = doc.get("period").map(|p| {
        match (
            p.get("start").and_then(Value::as_str),
            p.get("end").and_then(Value::as_str),
        ) {
            (Some(a), Some(b)) => {
                local_period(a, b, tz, lang).unwrap_or_else(|| format!("{a} – {b}"))
            }
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
            let zone = if id == "period" {
                format!(" data-timezone=\"{}\"", escape(tz.name()))
            } else {
                String::new()
            };
            let _ = write!(
                h,
                "<tr><th>{}</th><td id=\"{id}\"{zone}>{}</td></tr>",
                label.text(lang),
                escape(&v)
            );
        }
    }
    h.push_str("</table>");
}

/// A seller or buyer block: `side` prefixes its ids (`buyer-name`, `buyer-tax_id`).
pub(super) fn party(
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

pub(super) fn lines(h: &mut String, doc: &Value, lang: Lang) {
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
pub(super) fn column_rank(key: &str) -> (usize, &str) {
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
pub(super) fn entries(h: &mut String, doc: &Value, key: &str, heading: L, lang: Lang) {
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

pub(super) fn totals(h: &mut String, doc: &Value, lang: Lang) {
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
