//! Issue 13: `/openapi.json` is a document an independent validator accepts, and a client
//! generated from it by a standard generator works against a running server.
//!
//! The tools are Python's `openapi-spec-validator` and `openapi-python-client`, pinned in
//! `tests/openapi/requirements.txt` and installed by `./scripts/services.sh python-tools` into
//! `${XDG_CACHE_HOME:-$HOME/.cache}/gpubill/venv-openapi`. A missing or stale tool fails the
//! test with how to install it; nothing is skipped.
//!
//! The generated client drives a real HTTP server (the app of [`TestApp`], served on a port of
//! 127.0.0.1; its clock is 2026-12-02, after November ended) through
//! `tests/openapi/use_client.py`; what it reads must equal what the API answers directly, and
//! every answer must match its schema in the document with every object closed to fields the
//! schema does not name (the schemas of `openapi.rs` mirror the JSON by hand: this is what
//! keeps them exact). The admin, key, audit, quota, hold, profile and wallet routes are checked
//! the same way directly, request bodies against their request schemas too.

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ACCOUNT: &str = "oa-acme";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The venv `scripts/services.sh python-tools` makes.
fn venv() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache")
        });
    cache.join("gpubill").join("venv-openapi")
}

const INSTALL: &str = "install them with ./scripts/services.sh python-tools (./scripts/test does)";

/// A program of the venv; panics when it is missing or not the pinned version.
fn tool(name: &str) -> PathBuf {
    let bin = venv().join("bin").join(name);
    assert!(bin.is_file(), "{} is missing: {INSTALL}", bin.display());
    bin
}

/// `name==version` of tests/openapi/requirements.txt.
fn pinned(name: &str) -> String {
    let path = repo().join("tests/openapi/requirements.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}==")))
        .unwrap_or_else(|| panic!("{name} is not pinned in {}", path.display()))
        .trim()
        .to_string()
}

/// Fails unless the venv holds the versions requirements.txt pins.
fn check_pinned_tools() {
    let python = tool("python");
    for name in ["openapi-spec-validator", "openapi-python-client"] {
        let out = run(Command::new(&python)
            .args([
                "-c",
                "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))",
            ])
            .arg(name));
        let installed = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(
            out.status.success() && installed == pinned(name),
            "{name} {installed:?} in {} is not the pinned {}: {INSTALL}\n{}",
            venv().display(),
            pinned(name),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}; {INSTALL}"))
}

fn text(out: &Output) -> String {
    format!(
        "{}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A fresh directory under the system's temporary one, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir =
            std::env::temp_dir().join(format!("gpubill-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn document(t: &TestApp) -> Value {
    let (s, doc) = t.call("GET", "/openapi.json", None, "", "").await;
    assert_eq!(s, StatusCode::OK, "{doc}");
    doc
}

fn validate_file(path: &Path) -> Output {
    run(Command::new(tool("openapi-spec-validator")).arg(path))
}

#[tokio::test]
async fn the_openapi_document_passes_openapi_spec_validator() {
    check_pinned_tools();
    let t = TestApp::fresh(Db::Sqlite).await;
    let doc = document(&t).await;
    let dir = TempDir::new("openapi-validate");
    let path = dir.0.join("openapi.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let out = validate_file(&path);
    assert!(
        out.status.success(),
        "openapi-spec-validator rejects /openapi.json: {}",
        text(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("OK"),
        "{}",
        text(&out)
    );
    // The validator does look: a path parameter the path does not declare is an error (the
    // document once declared every query parameter as one).
    let mut broken = doc.clone();
    broken["paths"]["/v1/usage"]["get"]["parameters"][0]["in"] = json!("path");
    std::fs::write(&path, serde_json::to_vec_pretty(&broken).unwrap()).unwrap();
    let out = validate_file(&path);
    assert!(
        !out.status.success(),
        "a broken document passed: {}",
        text(&out)
    );
}

// ---- bodies and answers against their schemas ----------------------------------------------

/// `schema` with references into `#/components/schemas` turned into `#/$defs` of one JSON
/// Schema document; with `close`, every object schema that names properties closed to others.
fn rewritten(schema: &Value, close: bool) -> Value {
    match schema {
        Value::Object(m) => {
            let mut out: serde_json::Map<String, Value> = m
                .iter()
                .map(|(k, v)| (k.clone(), rewritten(v, close)))
                .collect();
            if let Some(Value::String(r)) = out.get("$ref") {
                let r = r.replace("#/components/schemas/", "#/$defs/");
                out.insert("$ref".into(), Value::String(r));
            }
            if close && out.contains_key("properties") && !out.contains_key("additionalProperties")
            {
                out.insert("additionalProperties".into(), Value::Bool(false));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|v| rewritten(v, close)).collect()),
        other => other.clone(),
    }
}

/// What is wrong with `instance` by `schema` (a schema of the document).
fn problems(doc: &Value, schema: &Value, close: bool, instance: &Value) -> Vec<String> {
    assert!(schema.is_object(), "no schema");
    let mut root = rewritten(schema, close);
    root["$defs"] = rewritten(&doc["components"]["schemas"], close);
    let validator = jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("{root}: {e}"));
    validator
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

/// Asserts `answer` matches the `application/json` schema of `method path`'s `status` answer,
/// every object closed: a field the server writes and the schema does not name fails.
fn conforms(doc: &Value, method: &str, path: &str, status: u16, answer: &Value) {
    let schema = &doc["paths"][path][method]["responses"][status.to_string()]["content"]["application/json"]
        ["schema"];
    assert!(
        schema.is_object(),
        "{method} {path} {status}: no JSON schema in the document"
    );
    let errors = problems(doc, schema, true, answer);
    assert!(
        errors.is_empty(),
        "{} {path} {status}: the answer does not match its schema:\n{}\n{answer:#}",
        method.to_uppercase(),
        errors.join("\n")
    );
}

/// Asserts `body` (one the server takes) matches `method path`'s JSON request schema.
fn takes(doc: &Value, method: &str, path: &str, body: &Value) {
    let schema =
        &doc["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"];
    let errors = problems(doc, schema, false, body);
    assert!(
        errors.is_empty(),
        "{} {path}: the document refuses a body the server takes:\n{}\n{body:#}",
        method.to_uppercase(),
        errors.join("\n")
    );
}

/// `method uri` with the admin token and a JSON body; asserts `status`, checks the body and
/// the answer against `path`'s schemas.
async fn admin_call(
    t: &TestApp,
    doc: &Value,
    (method, path, uri): (&str, &str, &str),
    body: Option<Value>,
    status: StatusCode,
) -> Value {
    if let Some(b) = &body {
        takes(doc, &method.to_lowercase(), path, b);
    }
    let text = body.map(|b| b.to_string()).unwrap_or_default();
    let (s, v) = t.admin(method, uri, text).await;
    assert_eq!(s, status, "{method} {uri}: {v}");
    if status != StatusCode::NO_CONTENT {
        conforms(doc, &method.to_lowercase(), path, status.as_u16(), &v);
    }
    v
}

#[tokio::test]
async fn the_admin_and_quota_routes_answer_as_their_schemas_say() {
    let t = TestApp::fresh(Db::Sqlite).await;
    let doc = document(&t).await;
    t.put_pricebook(&fixture("worked-1/pricebook.toml")).await;
    let created = admin_call(
        &t,
        &doc,
        ("POST", "/v1/admin/accounts", "/v1/admin/accounts"),
        Some(json!({"id": ACCOUNT})),
        StatusCode::CREATED,
    )
    .await;
    let key = created["api_key"].as_str().unwrap();
    let list = ("GET", "/v1/admin/accounts", "/v1/admin/accounts");
    let accounts = admin_call(&t, &doc, list, None, StatusCode::OK).await;
    assert_eq!(accounts["accounts"][0]["quotas"], Value::Null, "{accounts}");
    let quotas =
        json!({"spend_limit": "100.00", "gpu_hours": {"gpu.h100-80g": "10"}, "warn_at": "0.5"});
    let at = "/v1/admin/accounts/oa-acme/quotas";
    let q = ("PUT", "/v1/admin/accounts/{id}/quotas", at);
    admin_call(&t, &doc, q, Some(quotas), StatusCode::OK).await;
    let accounts = admin_call(&t, &doc, list, None, StatusCode::OK).await;
    assert_eq!(accounts["accounts"][0]["quotas"]["spend_limit"], "100.00");

    // Keys: another one, the list, a revocation; the audit log of it all.
    let keys = "/v1/admin/accounts/oa-acme/keys";
    let added = admin_call(
        &t,
        &doc,
        ("POST", "/v1/admin/accounts/{id}/keys", keys),
        None,
        StatusCode::CREATED,
    )
    .await;
    admin_call(
        &t,
        &doc,
        ("GET", "/v1/admin/accounts/{id}/keys", keys),
        None,
        StatusCode::OK,
    )
    .await;
    let revoke = format!("{keys}/{}", added["key_id"].as_str().unwrap());
    let path = "/v1/admin/accounts/{id}/keys/{key_id}";
    admin_call(
        &t,
        &doc,
        ("DELETE", path, &revoke),
        None,
        StatusCode::NO_CONTENT,
    )
    .await;
    let audit = ("GET", "/v1/admin/audit", "/v1/admin/audit");
    let log = admin_call(&t, &doc, audit, None, StatusCode::OK).await;
    assert!(log["entries"].as_array().unwrap().len() >= 3, "{log}");

    // A hold, allowed, extended and released.
    let ask = json!({"account": ACCOUNT, "sku": "gpu.h100-80g", "quantity": "1", "seconds": 3600});
    let authorize = ("POST", "/v1/authorize", "/v1/authorize");
    let allowed = admin_call(&t, &doc, authorize, Some(ask), StatusCode::OK).await;
    assert_eq!(allowed["decision"], "allowed", "{allowed}");
    let hold = allowed["hold"].as_str().unwrap();
    let extend = format!("/v1/holds/{hold}/extend");
    let path = "/v1/holds/{id}/extend";
    admin_call(
        &t,
        &doc,
        ("POST", path, &extend),
        Some(json!({"ttl_seconds": 600})),
        StatusCode::OK,
    )
    .await;
    let release = format!("/v1/holds/{hold}/release");
    admin_call(
        &t,
        &doc,
        ("POST", "/v1/holds/{id}/release", &release),
        None,
        StatusCode::OK,
    )
    .await;
    let too_much =
        json!({"account": ACCOUNT, "sku": "gpu.h100-80g", "quantity": "8", "seconds": 86400});
    let denied = admin_call(&t, &doc, authorize, Some(too_much), StatusCode::OK).await;
    assert_eq!(denied["decision"], "denied", "{denied}");

    // Profiles, the wallet.
    let profile = "/v1/admin/accounts/oa-acme/profile";
    let p = ("PUT", "/v1/admin/accounts/{id}/profile", profile);
    admin_call(
        &t,
        &doc,
        p,
        Some(json!({"name": "Acme", "email": null})),
        StatusCode::OK,
    )
    .await;
    let p = ("GET", "/v1/admin/accounts/{id}/profile", profile);
    admin_call(&t, &doc, p, None, StatusCode::OK).await;
    let seller = ("GET", "/v1/admin/seller", "/v1/admin/seller");
    let none = admin_call(&t, &doc, seller, None, StatusCode::OK).await;
    assert_eq!(none["profile"], Value::Null);
    let money = json!({"amount": "20.00", "reference": "wire-2"});
    let topup = (
        "POST",
        "/v1/admin/accounts/{id}/topups",
        "/v1/admin/accounts/oa-acme/topups",
    );
    admin_call(&t, &doc, topup, Some(money), StatusCode::CREATED).await;
    let money = json!({"amount": "5.00", "reference": "refund-1"});
    let refund = (
        "POST",
        "/v1/admin/accounts/{id}/refunds",
        "/v1/admin/accounts/oa-acme/refunds",
    );
    admin_call(&t, &doc, refund, Some(money), StatusCode::CREATED).await;
    // Settling from the wallet (issue 24.2): an unknown invoice.
    let settle = (
        "POST",
        "/v1/admin/invoices/{id}/settle",
        "/v1/admin/invoices/inv_nope/settle",
    );
    admin_call(&t, &doc, settle, None, StatusCode::NOT_FOUND).await;

    // Errors: no token, a bad body.
    let (s, v) = t.call("GET", "/v1/usage", None, "", "").await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    conforms(&doc, "get", "/v1/usage", 401, &v);
    let (s, v) = t
        .get("/v1/usage?from=nope&to=2026-12-01T00:00:00Z", key)
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    conforms(&doc, "get", "/v1/usage", 400, &v);
}

// ---- the generated client against a running server ------------------------------------------

/// Serves `t`'s app over HTTP on a free port of 127.0.0.1; the server lives as long as the
/// test's runtime.
async fn serve(t: &TestApp) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = t.app.clone();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn generate_client(doc: &Value, dir: &Path) -> PathBuf {
    let file = dir.join("openapi.json");
    std::fs::write(&file, serde_json::to_vec_pretty(doc).unwrap()).unwrap();
    let out = run(Command::new(tool("openapi-python-client"))
        .arg("generate")
        .arg("--path")
        .arg(&file)
        .arg("--output-path")
        .arg(dir.join("gpubill_client"))
        .args(["--meta", "none", "--fail-on-warning", "--config"])
        .arg(repo().join("tests/openapi/client-config.json")));
    assert!(
        out.status.success(),
        "openapi-python-client generate failed: {}",
        text(&out)
    );
    assert!(
        dir.join("gpubill_client/api/default/ingest.py").is_file(),
        "{}",
        text(&out)
    );
    dir.to_path_buf()
}

/// Runs tests/openapi/use_client.py against `url` with the generated package on its path;
/// its JSON output.
async fn use_client(package_root: PathBuf, url: String) -> Value {
    let script = repo().join("tests/openapi/use_client.py");
    let out = tokio::task::spawn_blocking(move || {
        run(Command::new(tool("python"))
            .arg(&script)
            .env("PYTHONPATH", &package_root)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("GPUBILL_URL", &url)
            .env("GPUBILL_ADMIN_TOKEN", ADMIN)
            .env(
                "GPUBILL_PRICEBOOK",
                repo().join("tests/fixtures/worked-1/pricebook.toml"),
            )
            .env("GPUBILL_ACCOUNT", ACCOUNT))
    })
    .await
    .unwrap();
    assert!(out.status.success(), "use_client.py failed: {}", text(&out));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("use_client.py printed no JSON ({e}): {}", text(&out)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_python_client_bills_an_account_as_the_api_does() {
    check_pinned_tools();
    let t = TestApp::fresh(Db::Sqlite).await;
    let doc = document(&t).await;
    let dir = TempDir::new("openapi-client");
    let root = generate_client(&doc, &dir.0);
    let url = serve(&t).await;
    let printed = use_client(root, url).await;
    let answers = &printed["answers"];
    let figures = &printed["figures"];

    // What the client was told when it created the account and changed things.
    let key = answers["create_account"]["api_key"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(answers["create_account"]["id"], ACCOUNT);
    assert!(key.starts_with("gbk_"), "{key}");
    conforms(
        &doc,
        "post",
        "/v1/admin/accounts",
        201,
        &answers["create_account"],
    );
    assert_eq!(answers["put_pricebook"], json!({"version": 1}));
    conforms(
        &doc,
        "put",
        "/v1/admin/pricebook",
        201,
        &answers["put_pricebook"],
    );
    assert_eq!(answers["ingest"]["accepted"], 3, "{}", answers["ingest"]);
    assert_eq!(answers["ingest"]["duplicates"], 1);
    assert_eq!(answers["ingest"]["rejected"], 1);
    assert_eq!(answers["ingest"]["results"][4]["reason"], "empty_interval");
    conforms(&doc, "post", "/v1/events", 200, &answers["ingest"]);

    // The same calls again, directly: idempotent ones answer the same.
    let (s, topup) = t
        .admin(
            "POST",
            &format!("/v1/admin/accounts/{ACCOUNT}/topups"),
            r#"{"amount":"10.00","reference":"wire-openapi-1"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{topup}");
    assert_eq!(topup["movement"], answers["topup"]["movement"]);
    assert_eq!(topup["created"], false);
    assert_eq!(answers["topup"]["created"], true);
    conforms(
        &doc,
        "post",
        "/v1/admin/accounts/{id}/topups",
        201,
        &answers["topup"],
    );
    conforms(&doc, "post", "/v1/admin/accounts/{id}/topups", 200, &topup);
    let closed_again = t.close("2026-11").await;
    assert_eq!(answers["close"], closed_again);
    conforms(&doc, "post", "/v1/admin/invoices/close", 200, &closed_again);
    let events: Vec<String> = printed["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect();
    let again = t.ingest(&events).await;
    assert_eq!(again["duplicates"], 4, "{again}");
    conforms(&doc, "post", "/v1/events", 200, &again);

    // What the account's key reads, directly and through the client.
    let direct = [
        (
            "usage",
            "/v1/usage",
            "/v1/usage?from=2026-11-01T00:00:00Z&to=2026-12-01T00:00:00Z&granularity=day",
        ),
        ("cost_current", "/v1/cost/current", "/v1/cost/current"),
        ("invoices", "/v1/invoices", "/v1/invoices?period=2026-11"),
    ];
    for (name, path, uri) in direct {
        let (s, v) = t.get(uri, &key).await;
        assert_eq!(s, StatusCode::OK, "{uri}: {v}");
        assert_eq!(answers[name], v, "{uri}: the client read otherwise");
        conforms(&doc, "get", path, 200, &v);
    }
    // Issue 27: the organization view (a lone account: one node, its cost by project).
    let (s, v) = t.get("/v1/organization?period=2026-11", &key).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["nodes"][0]["id"], ACCOUNT, "{v}");
    conforms(&doc, "get", "/v1/organization", 200, &v);
    let id = answers["invoice"]["id"].as_str().unwrap();
    let (s, invoice) = t.get(&format!("/v1/invoices/{id}"), &key).await;
    assert_eq!(s, StatusCode::OK, "{invoice}");
    assert_eq!(answers["invoice"], invoice);
    conforms(&doc, "get", "/v1/invoices/{id}", 200, &invoice);
    let (s, missing) = t.get("/v1/invoices/inv_nope", &key).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert_eq!(answers["missing_invoice"], missing);
    conforms(&doc, "get", "/v1/invoices/{id}", 404, &missing);

    // The figures the client's typed models carry are the API's.
    let lines: Vec<Value> = invoice["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            json!({"component": l["component"], "sku": l["sku"], "tier": l["tier"],
                   "quantity": l["quantity"], "unit": l["unit"], "amount": l["amount"]})
        })
        .collect();
    assert_eq!(figures["lines"], json!(lines));
    for field in [
        "account",
        "currency",
        "subtotal",
        "discount",
        "credit",
        "tax",
        "total",
        "amount_due",
        "paid",
        "status",
        "number",
    ] {
        assert_eq!(figures[field], invoice[field], "{field}");
    }
    assert_eq!(
        figures["period"],
        json!([invoice["period"]["start"], invoice["period"]["end"]])
    );
    let (_, usage) = t
        .get(
            "/v1/usage?from=2026-11-01T00:00:00Z&to=2026-12-01T00:00:00Z&granularity=day",
            &key,
        )
        .await;
    for g in usage["groups"].as_array().unwrap() {
        let sum: rust_decimal::Decimal = g["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                b["unit_seconds"]
                    .as_str()
                    .unwrap()
                    .parse::<rust_decimal::Decimal>()
                    .unwrap()
            })
            .sum();
        let key = g["key"].as_str().unwrap();
        assert_eq!(
            figures["usage_unit_seconds"][key],
            sum.normalize().to_string(),
            "{key}"
        );
    }
    // 2 h + 1.5 h of one H100 each, 6 h of a quarter T4.
    assert_eq!(figures["usage_unit_seconds"]["gpu.h100-80g"], "12600");
    assert_eq!(figures["usage_unit_seconds"]["vgpu.t4-quarter"], "5400");
    assert_eq!(figures["wallet_balance_after_topup"], "10.00");
    assert_eq!(figures["error"], "not_found");
    let (_, cost) = t.get("/v1/cost/current", &key).await;
    assert_eq!(figures["cost_current_total"], cost["invoice"]["total"]);

    // And they are the offline rater's (section 6), paid in part from the wallet.
    let book =
        std::fs::read_to_string(repo().join("tests/fixtures/worked-1/pricebook.toml")).unwrap();
    let offline = offline_invoices(&book, &events, "2026-11");
    let ours: Vec<&Value> = offline.iter().filter(|i| i["account"] == ACCOUNT).collect();
    assert_eq!(ours.len(), 1, "{offline:?}");
    let mut section = section6(&invoice);
    section.as_object_mut().unwrap().remove("adjustments");
    assert_eq!(&section, ours[0]);
    assert_eq!(invoice["paid"], "10.00", "{invoice}");
    assert_eq!(invoice["status"], "issued", "{invoice}");
}

// ---- who the key is, the price book read back, the price list (issue 24.11, 24.15) ----------

/// `method uri` with `token`: the status, the headers and the body's bytes.
async fn answer(
    t: &TestApp,
    uri: &str,
    token: &str,
) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let req = axum::http::Request::builder()
        .uri(uri)
        .header("authorization", format!("Bearer {token}"))
        .body(axum::body::Body::empty())
        .unwrap();
    let resp = t.app.clone().oneshot(req).await.unwrap();
    let (status, headers) = (resp.status(), resp.headers().clone());
    let body = resp
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    (status, headers, body)
}

/// `GET /v1/me` answers every token who it is, as its schema says: a customer key its
/// account and key id (the one the key list shows), the admin and ingest tokens their role.
#[tokio::test]
async fn me_names_the_role_account_and_key_of_every_token() {
    let t = TestApp::fresh(Db::Sqlite).await;
    let doc = document(&t).await;
    let key = t.account("me-acme").await;
    let (s, me) = t.get("/v1/me", &key).await;
    assert_eq!(s, StatusCode::OK, "{me}");
    conforms(&doc, "get", "/v1/me", 200, &me);
    let (_, keys) = t.admin("GET", "/v1/admin/accounts/me-acme/keys", "").await;
    assert_eq!(me["role"], "customer");
    assert_eq!(me["account"], "me-acme");
    assert_eq!(me["key_id"], keys["keys"][0]["key_id"], "{keys}");
    assert_eq!(me["name"], me["key_id"]);
    for (token, role) in [(ADMIN, "admin"), (INGEST, "ingest")] {
        let (s, me) = t.get("/v1/me", token).await;
        assert_eq!(s, StatusCode::OK, "{me}");
        conforms(&doc, "get", "/v1/me", 200, &me);
        assert_eq!((&me["role"], &me["account"]), (&json!(role), &Value::Null));
    }
    let (s, v) = t.get("/v1/me", "gbk_nobody").await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{v}");
}

/// A price book version reads back byte for byte (CRLF, comments, a trailing space, Chinese
/// text) with its version, upload time, effective date and SHA-256 in headers; an unknown
/// version is a 404, a malformed one a 400; a customer key is refused.
async fn the_price_book_reads_back_as_uploaded(db: Db) {
    let t = TestApp::fresh(db).await;
    let (s, _, body) = answer(&t, "/v1/admin/pricebook", ADMIN).await;
    assert_eq!(
        s,
        StatusCode::NOT_FOUND,
        "{}",
        String::from_utf8_lossy(&body)
    );
    let first = fixture("worked-1/pricebook.toml");
    t.put_pricebook(&first).await;
    let second = "# 第二版 price book \r\ncurrency = \"CNY\"   \r\ntimezone = \"Asia/Shanghai\"\r\n\
                  effective_from = \"2027-01-01T00:00:00+08:00\"\r\n\r\n[skus.\"gpu.h100-80g\"]\r\n\
                  rate_per_hour = \"22.50\"  # cheaper\r\n";
    t.put_pricebook(second).await;
    for (uri, want, version) in [
        ("/v1/admin/pricebook", second, "2"),
        ("/v1/admin/pricebook?version=2", second, "2"),
        ("/v1/admin/pricebook?version=1", first.as_str(), "1"),
    ] {
        let (s, h, body) = answer(&t, uri, ADMIN).await;
        assert_eq!(
            s,
            StatusCode::OK,
            "{uri}: {}",
            String::from_utf8_lossy(&body)
        );
        assert_eq!(body, want.as_bytes(), "{uri}: byte for byte");
        assert!(
            h["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/toml")
        );
        assert_eq!(h["x-pricebook-version"], version, "{uri}");
        assert_eq!(h["x-uploaded-at"], "2026-12-02T00:00:00Z", "{uri}");
        let sha = h["x-content-sha256"].to_str().unwrap();
        assert_eq!(sha.len(), 64);
        assert_eq!(h["etag"].to_str().unwrap(), format!("\"{sha}\""));
        let effective = h.get("x-effective-from").map(|v| v.to_str().unwrap());
        let expected = (version == "2").then_some("2026-12-31T16:00:00Z");
        assert_eq!(effective, expected, "{uri}");
    }
    let (_, h1, _) = answer(&t, "/v1/admin/pricebook?version=1", ADMIN).await;
    let (_, h2, _) = answer(&t, "/v1/admin/pricebook?version=2", ADMIN).await;
    assert_ne!(h1["x-content-sha256"], h2["x-content-sha256"]);
    for (uri, status) in [
        ("/v1/admin/pricebook?version=3", StatusCode::NOT_FOUND),
        ("/v1/admin/pricebook?version=0", StatusCode::BAD_REQUEST),
        ("/v1/admin/pricebook?version=x", StatusCode::BAD_REQUEST),
        ("/v1/admin/pricebook?version=-1", StatusCode::BAD_REQUEST),
    ] {
        let (s, v) = t.admin("GET", uri, "").await;
        assert_eq!(s, status, "{uri}: {v}");
        assert!(v["message"].is_string(), "{uri}: {v}");
    }
    let key = t.account("pb-acme").await;
    let (s, _) = t.get("/v1/admin/pricebook", &key).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
}
on_both!(the_price_book_reads_back_as_uploaded);

/// `GET /v1/prices` of the worked example's price book (issue 24.15), worked by hand: the
/// H100's two tiers (24.00 up to 2 h, then 20.00), its off-peak rates 22:00–06:00 at 0.70
/// (16.80 and 14.00), its spot price (9.60 from the book, then 7.50 from a spot price point
/// before now, not 5.00 from one after), its 60 s minimum; the quarter T4 at 2.40 (off-peak
/// 1.68, no spot); egress to the internet free up to 100 GB, then 0.80; beta's 10 % discount;
/// then each region of a two-region book in its own currency.
#[tokio::test]
async fn prices_show_what_the_price_book_says_worked_by_hand() {
    let t = TestApp::fresh(Db::Sqlite).await;
    let doc = document(&t).await;
    let key = t.account("beta").await;
    let (s, v) = t.get("/v1/prices", &key).await;
    assert_eq!(s, StatusCode::CONFLICT, "no price book yet: {v}");
    t.put_pricebook(&fixture("worked-1/pricebook.toml")).await;
    let (s, p) = t.get("/v1/prices", &key).await;
    assert_eq!(s, StatusCode::OK, "{p}");
    conforms(&doc, "get", "/v1/prices", 200, &p);
    assert_eq!(p["as_of"], "2026-12-02T00:00:00Z");
    assert_eq!(p["period_label"], "2026-12");
    assert_eq!(p["currency"], "CNY");
    assert_eq!(p["timezone"], "Asia/Shanghai");
    assert_eq!(p["tax_rate"], "0.06");
    assert_eq!(p["discount_percent"], "10");
    let h100 = json!({
        "sku": "gpu.h100-80g", "family": "gpu", "unit": "card_hour",
        "on_demand": [{"up_to_hours": "2", "rate_per_hour": "24.00"}, {"up_to_hours": null, "rate_per_hour": "20.00"}],
        "tier_mode": "graduated",
        "offpeak": [{"from": "22:00", "to": "06:00", "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
                     "multiplier": "0.70", "rates_per_hour": ["16.80", "14.00"]}],
        "spot_rate_per_hour": "9.60", "minimum_seconds": 60, "state_rates": {}
    });
    let t4 = json!({
        "sku": "vgpu.t4-quarter", "family": "vgpu", "unit": "unit_hour",
        "on_demand": [{"up_to_hours": null, "rate_per_hour": "2.40"}], "tier_mode": "graduated",
        "offpeak": [{"from": "22:00", "to": "06:00", "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
                     "multiplier": "0.70", "rates_per_hour": ["1.68"]}],
        "spot_rate_per_hour": null, "minimum_seconds": null, "state_rates": {}
    });
    assert_eq!(p["skus"], json!([h100, t4]), "{p:#}");
    assert_eq!(
        p["egress"],
        json!([{"dest": "internet", "tiers": [{"up_to_gb": "100", "rate_per_gb": "0.00"}, {"up_to_gb": null, "rate_per_gb": "0.80"}]}])
    );
    // Spot price points: the latest one at or before now sets the price; a later one not yet.
    let point = |id: &str, price: &str, from: &str| {
        json!({"specversion":"1.0","id":id,"source":"market/gz","type":"spot.price","subject":"gz-a",
            "data":{"sku":"gpu.h100-80g","price_per_hour":price,"from":from}})
        .to_string()
    };
    t.ingest(&[
        point("p1", "7.5", "2026-12-01T00:00:00Z"),
        point("p2", "5.00", "2026-12-03T00:00:00Z"),
    ])
    .await;
    let (_, p) = t.get("/v1/prices", &key).await;
    assert_eq!(p["skus"][0]["spot_rate_per_hour"], "7.50", "{p}");
    // The admin reads them too, with an account's discount or none; the ingest token not.
    let (s, p) = t.admin("GET", "/v1/prices", "").await;
    assert_eq!(
        (s, &p["discount_percent"]),
        (StatusCode::OK, &json!("0")),
        "{p}"
    );
    let (s, _) = t.get("/v1/prices", INGEST).await;
    assert_eq!(s, StatusCode::FORBIDDEN);

    // Section 19 (issue 26): a book without regions lists none; with two, each region lists
    // its own skus, off-peak rates (3.20 x 0.50 = 1.60 on weekend nights in Singapore), spot
    // price (its book's 1.50: the home curve's 7.50 is not its), egress and tax, in its
    // currency, and the home prices stay exactly as they were.
    let (_, home) = t.get("/v1/prices", &key).await;
    assert_eq!(home["regions"], json!([]), "{home}");
    let regions = r#"
[regions."ap-singapore"]
currency = "USD"
timezone = "Asia/Singapore"
[regions."ap-singapore".skus."gpu.h100-80g"]
rate_per_hour = "3.20"
spot_rate_per_hour = "1.50"
[[regions."ap-singapore".offpeak]]
from = "00:00"
to = "06:00"
days = ["sat", "sun"]
multiplier = "0.50"
[regions."ap-singapore".tax]
rate = "0.09"

[regions."eu-frankfurt"]
currency = "EUR"
timezone = "Europe/Berlin"
[regions."eu-frankfurt".skus."gpu.h100-80g"]
tier_mode = "volume"
tiers = [ { up_to_hours = 100, rate_per_hour = "2.90" }, { rate_per_hour = "2.50" } ]
[regions."eu-frankfurt".skus."storage.ssd"]
rate_per_hour = "0.0001"
[regions."eu-frankfurt".egress.internet]
rate_per_gb = "0.05"
"#;
    t.put_pricebook(&format!(
        "{}\n{regions}",
        fixture("worked-1/pricebook.toml")
    ))
    .await;
    let (s, p) = t.get("/v1/prices", &key).await;
    assert_eq!(s, StatusCode::OK, "{p}");
    conforms(&doc, "get", "/v1/prices", 200, &p);
    let mut unchanged = p.clone();
    unchanged["regions"] = json!([]);
    assert_eq!(unchanged, home);
    let singapore = json!({
        "region": "ap-singapore", "currency": "USD", "timezone": "Asia/Singapore", "tax_rate": "0.09",
        "skus": [{
            "sku": "gpu.h100-80g", "family": "gpu", "unit": "card_hour",
            "on_demand": [{"up_to_hours": null, "rate_per_hour": "3.20"}], "tier_mode": "graduated",
            "offpeak": [{"from": "00:00", "to": "06:00", "days": ["sat", "sun"], "multiplier": "0.50",
                         "rates_per_hour": ["1.60"]}],
            "spot_rate_per_hour": "1.50", "minimum_seconds": null, "state_rates": {}
        }],
        "egress": []
    });
    let frankfurt = json!({
        "region": "eu-frankfurt", "currency": "EUR", "timezone": "Europe/Berlin", "tax_rate": "0",
        "skus": [{
            "sku": "gpu.h100-80g", "family": "gpu", "unit": "card_hour",
            "on_demand": [{"up_to_hours": "100", "rate_per_hour": "2.90"}, {"up_to_hours": null, "rate_per_hour": "2.50"}],
            "tier_mode": "volume", "offpeak": [],
            "spot_rate_per_hour": null, "minimum_seconds": null, "state_rates": {}
        }, {
            "sku": "storage.ssd", "family": "storage", "unit": "gb_hour",
            "on_demand": [{"up_to_hours": null, "rate_per_hour": "0.0001"}], "tier_mode": "graduated",
            "offpeak": [], "spot_rate_per_hour": null, "minimum_seconds": null, "state_rates": {}
        }],
        "egress": [{"dest": "internet", "tiers": [{"up_to_gb": null, "rate_per_gb": "0.05"}]}]
    });
    assert_eq!(p["regions"], json!([singapore, frankfurt]), "{p:#}");
}
