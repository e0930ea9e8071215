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

use crate::auth::Principal;
use crate::error::ApiError;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use billing_core::profile::Profile;
use billing_store::{ProfileStoreError, SELLER_PROFILE, StoredProfile};
use serde_json::{Value, json};

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
    let changed = s
        .store
        .admin()
        .put_profile(key, &profile, (s.clock)())
        .await?;
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
    crate::json_body::JsonBody(body): crate::json_body::JsonBody<Box<serde_json::value::RawValue>>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    let Json(mut v) = put(&s, &account, body?.get().as_bytes()).await?;
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
    let mut v = shown(s.store.admin().profile(&account).await?);
    v["account"] = json!(account);
    Ok(Json(v))
}

/// `PUT /v1/admin/seller`: the platform's own fields, printed as the seller (销售方).
pub async fn put_seller(
    principal: Principal,
    State(s): State<AppState>,
    crate::json_body::JsonBody(body): crate::json_body::JsonBody<Box<serde_json::value::RawValue>>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    put(&s, SELLER_PROFILE, body?.get().as_bytes()).await
}

/// `GET /v1/admin/seller`: `profile` is null when none was set.
pub async fn get_seller(
    principal: Principal,
    State(s): State<AppState>,
) -> Result<Json<Value>, ApiError> {
    principal.admin()?;
    Ok(Json(shown(s.store.admin().profile(SELLER_PROFILE).await?)))
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

/// Answers `GET /v1/invoices/{id}.html` and `.pdf` (`id` without the suffix): the document is
/// the one the JSON route answers for `id` ([`crate::finance::document`], as JSON), so the
/// page shows exactly its figures, and a document the caller may not see is the same 404.
pub async fn invoice(
    account: String,
    s: AppState,
    id: String,
    format: Format,
    query: Option<String>,
) -> Result<Response, ApiError> {
    let lang = Lang::from_query(query.as_deref())?;
    let account = account.as_str();
    let mut doc = crate::finance::document(&s, &id, Some(account))
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no invoice {id:?}")))?
        .to_value()?;
    // An invoice's period prints as local dates in its price book version's timezone.
    let version = doc.get("pricebook_version").and_then(Value::as_i64);
    if let Some(v) = version
        && doc.get("period").is_some_and(Value::is_object)
        && let Some(book) = s.store.admin().uploaded_pricebook(Some(v)).await?
    {
        let book = billing_core::PriceBook::from_toml(&book.toml)
            .map_err(|e| ApiError::Internal(format!("stored price book {v}: {e}")))?;
        doc["period"]["timezone"] = json!(book.timezone.name());
    }
    let seller = s
        .store
        .admin()
        .profile(SELLER_PROFILE)
        .await?
        .map(|p| p.profile);
    let buyer = s.store.admin().profile(account).await?.map(|p| p.profile);
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

mod pdf;
mod render;
pub use pdf::*;
pub use render::*;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path as FsPath;

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
    fn the_period_prints_as_local_dates_in_the_invoice_timezone() {
        let mut d = doc();
        d["period"]["timezone"] = json!("Asia/Shanghai");
        for (lang, want) in [
            (Lang::En, "November 1, 2026 – November 30, 2026"),
            (Lang::Zh, "2026年11月1日 – 2026年11月30日"),
        ] {
            let page = render_value(&d, None, None, lang);
            let td = format!("<td id=\"period\" data-timezone=\"Asia/Shanghai\">{want}</td>");
            assert!(page.contains(&td), "{lang:?} lacks {td}");
        }
        // Without a timezone, UTC: the same instants fall on October 31 and November 30.
        let page = render_value(&doc(), None, None, Lang::En);
        assert!(page.contains(">October 31, 2026 – November 30, 2026</td>"));
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
