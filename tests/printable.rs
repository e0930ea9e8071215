//! Printable invoices and the buyer's and seller's profiles (issue 12), on SQLite and on
//! PostgreSQL: `GET /v1/invoices/{id}.html` rendered by a real headless Chromium (Debian's
//! `chromium`, installed by `scripts/services.sh chromium`) and read back from its DOM, the
//! `.pdf` read back with `pdftotext`, and malformed profiles refused with nothing stored.
//! Without Chromium or pdftotext these tests fail, saying how to install them; they never
//! skip. Screenshots and PDFs are kept in `target/test-artifacts/`.

use axum::http::StatusCode;
use gpubill_tests::*;
use rust_decimal::Decimal;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

const BUYER_NAME: &str = "北京算力科技有限公司";
const BUYER_TAX_ID: &str = "91110108MA01ABCD2X";
const SELLER_NAME: &str = "上海云算力服务有限公司";
const SELLER_TAX_ID: &str = "91310000MA1FL0XY3K";

fn lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
        .collect()
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The Chromium the server uses too: `GPUBILL_CHROMIUM`, else the first on `PATH`.
fn chromium() -> PathBuf {
    if let Some(c) = std::env::var_os("GPUBILL_CHROMIUM").filter(|c| !c.is_empty()) {
        return PathBuf::from(c);
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|n| on_path(n))
        .unwrap_or_else(|| {
            panic!(
                "headless Chromium is needed to render the printable invoices and is not on PATH: \
                 run ./scripts/services.sh chromium (Debian: apt-get install chromium poppler-utils fonts-noto-cjk)"
            )
        })
}

fn pdftotext() -> PathBuf {
    on_path("pdftotext").unwrap_or_else(|| {
        panic!(
            "pdftotext is needed to read the PDF invoices back and is not on PATH: run \
             ./scripts/services.sh chromium (Debian: apt-get install poppler-utils)"
        )
    })
}

/// `target/test-artifacts`, where screenshots and PDFs are kept for a look.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs headless Chromium on `page` with `args` (its own profile directory, so tests run
/// side by side); returns its standard output.
fn run_chromium(page: &Path, args: &[String]) -> String {
    let profile = page.with_extension("profile");
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", chromium().display()));
    let _ = std::fs::remove_dir_all(&profile);
    assert!(
        out.status.success(),
        "chromium {args:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// The text of the first element opened by a tag holding `marker` (an attribute like
/// `id="total"` or `data-line-amount`), up to its first child or end.
fn texts_after(dom: &str, marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = dom;
    while let Some(at) = rest.find(marker) {
        let tail = &rest[at..];
        let open = tail.find('>').expect("a tag closes") + 1;
        let close = tail[open..].find('<').map_or(tail.len(), |c| open + c);
        out.push(unescape(&tail[open..close]));
        rest = &tail[close..];
    }
    out
}

fn by_id(dom: &str, id: &str) -> String {
    texts_after(dom, &format!("id=\"{id}\""))
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no element id={id} in the rendered page"))
}

fn dec(v: &Value) -> Decimal {
    v.as_str()
        .unwrap_or_else(|| panic!("{v} is not a decimal string"))
        .parse()
        .unwrap()
}

/// acme's November invoice of the worked example (total 806.85), with the seller's and
/// acme's profiles set; returns the app, acme's key and the invoice id.
async fn closed_with_profiles(db: Db) -> (TestApp, String, String) {
    let t = TestApp::fresh(db).await;
    t.put_pricebook(&fixture("worked-1/pricebook.toml")).await;
    let acme = t.account("acme").await;
    t.account("beta").await;
    t.ingest(&lines(&fixture("worked-1/events.jsonl"))).await;
    let closed = t.close("2026-11").await;
    let id = closed
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["account"] == "acme")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let seller = json!({"name": SELLER_NAME, "tax_id": SELLER_TAX_ID, "address": "上海市浦东新区世纪大道100号",
        "phone": "021-50001234", "bank": "招商银行上海分行", "bank_account": "1219 0000 0000 001", "email": "billing@example.cn"});
    let (s, v) = t.admin("PUT", "/v1/admin/seller", seller.to_string()).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let buyer = json!({"name": BUYER_NAME, "tax_id": BUYER_TAX_ID, "address": "北京市海淀区中关村大街1号",
        "phone": "010-62345678", "bank": "中国工商银行北京中关村支行", "bank_account": "0200 0012 3456 7890 123"});
    let (s, v) = t
        .admin("PUT", "/v1/admin/accounts/acme/profile", buyer.to_string())
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["changed"], true, "{v}");
    // The same profile again changes nothing.
    let (s, v) = t
        .admin("PUT", "/v1/admin/accounts/acme/profile", buyer.to_string())
        .await;
    assert_eq!((s, &v["changed"]), (StatusCode::OK, &json!(false)), "{v}");
    let (_, got) = t.admin("GET", "/v1/admin/accounts/acme/profile", "").await;
    assert_eq!(got["profile"], buyer, "{got}");
    (t, acme, id)
}

/// The HTML invoice, rendered by headless Chromium in English and in Chinese, shows the JSON
/// invoice's number, lines, subtotal, tax and total (acme: 806.85) and both parties' names and
/// tax ids; a screenshot of each A4 page (1240 x 1754, 150 dpi) is kept.
async fn html_invoice_in_chromium_shows_the_json_totals_in_both_languages(db: Db) {
    let (t, acme, id) = closed_with_profiles(db).await;
    let (s, json) = t.get(&format!("/v1/invoices/{id}"), &acme).await;
    assert_eq!(s, StatusCode::OK, "{json}");
    assert_eq!(json["total"], "806.85");
    let dir = artifacts();
    for (lang, total_label, buyer_label) in [("en", "Total", "Buyer"), ("zh", "价税合计", "购买方")]
    {
        let (s, body) = t
            .raw(
                "GET",
                &format!("/v1/invoices/{id}.html?lang={lang}"),
                Some(&acme),
                "application/json",
                "",
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
        let page = dir.join(format!("invoice-{lang}-{db:?}.html").to_lowercase());
        std::fs::write(&page, &body).unwrap();
        let dom = run_chromium(&page, &["--dump-dom".to_string()]);
        assert!(dom.contains("</html>"), "chromium rendered nothing: {dom}");
        // amount_due: once the store answers it (issue 12's payments), the page shows it too.
        let optional = ["amount_due"]
            .into_iter()
            .filter(|k| json.get(*k).is_some());
        for key in ["number", "subtotal", "discount", "credit", "tax", "total"]
            .into_iter()
            .chain(optional)
        {
            assert_eq!(
                by_id(&dom, key),
                json[key].as_str().unwrap(),
                "{lang}: {key} on the page and in the JSON"
            );
        }
        let amounts: Vec<Decimal> = texts_after(&dom, "data-line-amount")
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        let json_amounts: Vec<Decimal> = json["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| dec(&l["amount"]))
            .collect();
        assert_eq!(amounts, json_amounts, "{lang}: the lines' amounts");
        assert_eq!(
            amounts.iter().sum::<Decimal>(),
            dec(&json["subtotal"]),
            "{lang}: the lines add up to the subtotal"
        );
        // The period in the invoice's timezone (the price book's, Asia/Shanghai), as local
        // dates; its end is exclusive, so the last day shown is November 30th (issue 24.14).
        let period = match lang {
            "zh" => "2026年11月1日 – 2026年11月30日",
            _ => "November 1, 2026 – November 30, 2026",
        };
        assert_eq!(by_id(&dom, "period"), period, "{lang}: the period");
        assert_eq!(by_id(&dom, "buyer-name"), BUYER_NAME);
        assert_eq!(by_id(&dom, "buyer-tax_id"), BUYER_TAX_ID);
        assert_eq!(by_id(&dom, "buyer-account"), "acme");
        assert_eq!(by_id(&dom, "seller-name"), SELLER_NAME);
        assert_eq!(by_id(&dom, "seller-tax_id"), SELLER_TAX_ID);
        assert!(
            dom.contains(total_label) && dom.contains(buyer_label),
            "{lang}: labels {total_label}, {buyer_label}"
        );
        let shot = dir.join(format!("invoice-{lang}-{db:?}.png").to_lowercase());
        let _ = std::fs::remove_file(&shot);
        run_chromium(
            &page,
            &[
                format!("--screenshot={}", shot.display()),
                "--window-size=1240,1754".into(),
            ],
        );
        let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("{}: {e}", shot.display()));
        assert!(png.starts_with(b"\x89PNG"), "{} is no PNG", shot.display());
    }
}
on_both!(html_invoice_in_chromium_shows_the_json_totals_in_both_languages);

/// The PDF is a PDF (printed by the server's headless Chromium) and its text, read with
/// pdftotext, holds the total, the tax, the number and the buyer's tax id.
async fn pdf_invoice_has_the_totals_in_its_text(db: Db) {
    let (t, acme, id) = closed_with_profiles(db).await;
    let (_, json) = t.get(&format!("/v1/invoices/{id}"), &acme).await;
    chromium(); // fail here, clearly, when the server would answer 503
    for lang in ["en", "zh"] {
        let (s, pdf) = t
            .raw(
                "GET",
                &format!("/v1/invoices/{id}.pdf?lang={lang}"),
                Some(&acme),
                "application/json",
                "",
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{}", String::from_utf8_lossy(&pdf));
        assert!(
            pdf.starts_with(b"%PDF"),
            "not a PDF: {:?}",
            &pdf[..pdf.len().min(64)]
        );
        let file = artifacts().join(format!("invoice-{lang}-{db:?}.pdf").to_lowercase());
        std::fs::write(&file, &pdf).unwrap();
        let out = Command::new(pdftotext())
            .arg("-layout")
            .arg(&file)
            .arg("-")
            .output()
            .unwrap();
        assert!(out.status.success(), "pdftotext: {:?}", out);
        let text = String::from_utf8_lossy(&out.stdout);
        for want in [
            json["total"].as_str().unwrap(),
            json["tax"].as_str().unwrap(),
            json["number"].as_str().unwrap(),
            BUYER_TAX_ID,
        ] {
            assert!(
                text.contains(want),
                "{lang}: {want} is not in the PDF's text:\n{text}"
            );
        }
        let period = match lang {
            "zh" => "2026年11月1日 – 2026年11月30日",
            _ => "November 1, 2026 – November 30, 2026",
        };
        assert!(
            text.contains(period),
            "{lang}: the period {period} is not in the PDF's text:\n{text}"
        );
        if lang == "zh" {
            assert!(
                text.contains(BUYER_NAME),
                "the buyer's Chinese name in the PDF:\n{text}"
            );
        }
    }
}
on_both!(pdf_invoice_has_the_totals_in_its_text);

/// Who may print what: the owner only (another account's invoice is the JSON route's 404),
/// not the admin token; `lang` is en or zh.
async fn printable_invoice_routes_refuse_what_json_refuses(db: Db) {
    let (t, acme, id) = closed_with_profiles(db).await;
    // Any other customer: a new account.
    let other = t.account("gamma").await;
    for suffix in [".html", ".pdf"] {
        let (s, printed) = t.get(&format!("/v1/invoices/{id}{suffix}"), &other).await;
        let (s_json, json) = t.get(&format!("/v1/invoices/{id}"), &other).await;
        assert_eq!((s, s_json), (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND));
        assert_eq!(printed, json, "the same 404 as the JSON route");
        let (s, v) = t.get(&format!("/v1/invoices/{id}{suffix}"), ADMIN).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{v}");
        for bad in ["fr", "", "EN"] {
            let (s, v) = t
                .get(&format!("/v1/invoices/{id}{suffix}?lang={bad}"), &acme)
                .await;
            assert_eq!(s, StatusCode::BAD_REQUEST, "lang={bad}: {v}");
            assert!(v["message"].as_str().unwrap().contains("lang"), "{v}");
        }
        let (s, _) = t
            .get(&format!("/v1/invoices/{id}.csv{suffix}"), &acme)
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND);
    }
}
on_both!(printable_invoice_routes_refuse_what_json_refuses);

/// Malformed profiles: each a 400 (404 for an unknown account) whose message names the field,
/// and nothing stored: no profile, no command; a later bad one leaves the good one in place.
async fn malformed_profiles_get_a_clear_4xx_and_nothing_is_stored(db: Db) {
    let t = TestApp::fresh(db).await;
    let acme = t.account("acme").await;
    let long_name = "算".repeat(201);
    let cases: Vec<(String, &str)> = vec![
        (
            json!({"name": "Acme", "tax_id": "12345"}).to_string(),
            "tax_id",
        ),
        (
            json!({"name": "Acme", "tax_id": "91110108ma01abcd2x"}).to_string(),
            "tax_id",
        ),
        (json!({"name": "Acme\u{7}Ltd"}).to_string(), "name"),
        (
            json!({"name": "Acme", "address": "line 1\nline 2"}).to_string(),
            "address",
        ),
        (
            json!({"name": "Acme", "vat_number": "x"}).to_string(),
            "vat_number",
        ),
        (json!({"name": long_name}).to_string(), "name"),
        (json!({"tax_id": BUYER_TAX_ID}).to_string(), "name"),
        (json!({"name": "Acme", "phone": 10086}).to_string(), "phone"),
        (
            json!({"name": "Acme", "email": "finance"}).to_string(),
            "email",
        ),
        (
            json!({"name": "Acme", "bank_account": "12/34"}).to_string(),
            "bank_account",
        ),
    ];
    for uri in ["/v1/admin/accounts/acme/profile", "/v1/admin/seller"] {
        for (body, field) in &cases {
            let (s, v) = t.admin("PUT", uri, body.clone()).await;
            assert_eq!(s, StatusCode::BAD_REQUEST, "{uri} {body}: {v}");
            let message = v["message"].as_str().unwrap();
            assert!(
                message.contains(field),
                "{uri} {body}: {message} names no {field}"
            );
        }
        let (s, v) = t.admin("PUT", uri, "{\"name\":").await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
        let (_, got) = t.admin("GET", uri, "").await;
        assert_eq!(got["profile"], Value::Null, "{uri}: nothing stored: {got}");
    }
    // An unknown account: 404 naming it, for a valid profile too.
    let valid = json!({"name": BUYER_NAME, "tax_id": BUYER_TAX_ID}).to_string();
    let (s, v) = t
        .admin("PUT", "/v1/admin/accounts/nobody/profile", valid.clone())
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    assert!(v["message"].as_str().unwrap().contains("nobody"), "{v}");
    let (s, _) = t
        .admin("GET", "/v1/admin/accounts/nobody/profile", "")
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    // A customer key may not set profiles, not even its own.
    let (s, _) = t
        .call(
            "PUT",
            "/v1/admin/accounts/acme/profile",
            Some(&acme),
            "application/json",
            valid.clone(),
        )
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let profile_commands = |rows: Vec<billing_store::OutboxRow>| {
        rows.iter()
            .filter(|r| r.payload.contains("\"profile.put\""))
            .count()
    };
    let pending = t.state.store.log().outbox_pending(10_000).await.unwrap();
    assert_eq!(
        profile_commands(pending),
        0,
        "no command for refused profiles"
    );
    // A good profile, then a bad one: the good one stays.
    let (s, v) = t
        .admin("PUT", "/v1/admin/accounts/acme/profile", valid.clone())
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, _) = t
        .admin("PUT", "/v1/admin/accounts/acme/profile", cases[0].0.clone())
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (_, got) = t.admin("GET", "/v1/admin/accounts/acme/profile", "").await;
    assert_eq!(got["profile"]["tax_id"], BUYER_TAX_ID, "{got}");
    let pending = t.state.store.log().outbox_pending(10_000).await.unwrap();
    assert_eq!(profile_commands(pending), 1);
}
on_both!(malformed_profiles_get_a_clear_4xx_and_nothing_is_stored);

/// Profile changes are commands: applied to an empty store, they give the same profiles.
async fn profiles_replay_from_the_commands_topic(db: Db) {
    let (t, _, _) = closed_with_profiles(db).await;
    let commands: Vec<billing_store::Command> = t
        .state
        .store
        .log()
        .outbox_pending(10_000)
        .await
        .unwrap()
        .iter()
        .filter(|r| r.topic == t.state.store.topics().commands)
        .map(|r| serde_json::from_str(&r.payload).unwrap())
        .filter(|c| {
            matches!(
                c,
                billing_store::Command::CreateAccount { .. }
                    | billing_store::Command::PutProfile { .. }
            )
        })
        .collect();
    assert_eq!(
        commands.len(),
        4,
        "two accounts, two profiles: {commands:?}"
    );
    let replayed = TestApp::fresh(db).await;
    for c in &commands {
        replayed.state.store.log().apply_command(c).await.unwrap();
    }
    for uri in ["/v1/admin/accounts/acme/profile", "/v1/admin/seller"] {
        let (_, a) = t.admin("GET", uri, "").await;
        let (_, b) = replayed.admin("GET", uri, "").await;
        assert_eq!(a, b, "{uri}");
        assert!(a["profile"]["name"].is_string(), "{a}");
    }
}
on_both!(profiles_replay_from_the_commands_topic);

#[tokio::test]
async fn openapi_lists_the_profile_and_seller_routes() {
    let t = TestApp::fresh(Db::Sqlite).await;
    let (s, doc) = t.call("GET", "/openapi.json", None, "", "").await;
    assert_eq!(s, StatusCode::OK);
    for (path, methods) in [
        ("/v1/admin/accounts/{id}/profile", ["put", "get"]),
        ("/v1/admin/seller", ["put", "get"]),
    ] {
        for m in methods {
            assert!(
                doc["paths"][path].get(m).is_some(),
                "{m} {path} missing from the OpenAPI document"
            );
        }
    }
    let params = doc["paths"]["/v1/invoices/{id}"]["get"]["parameters"].to_string();
    assert!(params.contains("lang"), "{params}");
}
