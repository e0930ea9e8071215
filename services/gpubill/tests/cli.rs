//! `gpubill rate` end to end, as a process: worked example 1, stderr, exit codes.

use rust_decimal::Decimal;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

fn gpubill(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpubill"))
        .args(args)
        .output()
        .expect("run gpubill")
}

/// JSON with every decimal string replaced by its normalized value, so `"1"` equals `"1.00"`
/// for quantities and multipliers; amounts are checked for their 2 decimals separately.
fn normalized(v: &Value) -> Value {
    match v {
        Value::String(s) => match s.parse::<Decimal>() {
            Ok(d) => Value::String(d.normalize().to_string()),
            Err(_) => v.clone(),
        },
        Value::Array(a) => Value::Array(a.iter().map(normalized).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), normalized(v))).collect())
        }
        _ => v.clone(),
    }
}

fn amounts_have_two_decimals(v: &Value) {
    for inv in v.as_array().unwrap() {
        for k in ["subtotal", "discount", "credit", "tax", "total"] {
            let s = inv[k].as_str().unwrap();
            assert_eq!(s.split('.').nth(1).map(str::len), Some(2), "{k} = {s}");
        }
        for l in inv["lines"].as_array().unwrap() {
            let s = l["amount"].as_str().unwrap();
            assert_eq!(s.split('.').nth(1).map(str::len), Some(2), "amount {s}");
        }
    }
}

#[test]
fn worked_example_1_rates_to_the_expected_invoices() {
    let dir = fixture("worked-1");
    let out = gpubill(&[
        "rate",
        "--prices",
        dir.join("pricebook.toml").to_str().unwrap(),
        "--events",
        dir.join("events.jsonl").to_str().unwrap(),
        "--period",
        "2026-11",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let want: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    assert_eq!(normalized(&got), normalized(&want));
    amounts_have_two_decimals(&got);
    // The duplicate a1 is neither an error nor billed twice: stderr holds no rejection.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether `got` shows every figure `want` lists: each key of an object of `want` is present
/// in `got` with an equal value (decimal strings compared as numbers), arrays element by
/// element with the same length. `got` may carry more keys (`unit`, `tier`, ...).
fn shows(got: &Value, want: &Value, at: &str) {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            for (k, wv) in w {
                let gv = g
                    .get(k)
                    .unwrap_or_else(|| panic!("{at}.{k} is missing (want {wv})"));
                shows(gv, wv, &format!("{at}.{k}"));
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            assert_eq!(g.len(), w.len(), "{at}: got {got:#}, want {want:#}");
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                shows(gv, wv, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(normalized(got), normalized(want), "{at}"),
    }
}

fn rate_fixture(dir: &std::path::Path, events: &str, period: &str) -> Value {
    let out = gpubill(&[
        "rate",
        "--prices",
        dir.join("pricebook.toml").to_str().unwrap(),
        "--events",
        dir.join(events).to_str().unwrap(),
        "--period",
        period,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    amounts_have_two_decimals(&got);
    got
}

/// A worked example of part 3 (`expected.json` with `rate` per period and `variants` per
/// events file): every figure it lists, for every period and variant.
fn check_worked_example(name: &str) {
    let dir = fixture(name);
    let want: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let periods: Vec<String> = std::fs::read_to_string(dir.join("period"))
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect();
    let rate = want["rate"].as_object().unwrap();
    assert_eq!(
        rate.keys().collect::<Vec<_>>(),
        periods.iter().collect::<Vec<_>>()
    );
    for (period, invoices) in rate {
        let got = rate_fixture(&dir, "events.jsonl", period);
        shows(&got, invoices, &format!("{name} {period}"));
    }
    for (events, by_period) in want["variants"].as_object().into_iter().flatten() {
        for (period, invoices) in by_period.as_object().unwrap() {
            let got = rate_fixture(&dir, events, period);
            shows(&got, invoices, &format!("{name} {events} {period}"));
        }
    }
}

#[test]
fn worked_example_3_increments_rates_to_the_expected_figures() {
    check_worked_example("worked-3-increments");
}

#[test]
fn worked_example_3_organization_rates_to_the_expected_figures() {
    // Section 18: one invoice, the payer's, with its allocation to (member, project) cells.
    check_worked_example("worked-3-organization");
}

#[test]
fn account_of_a_member_paid_by_its_parent_is_a_usage_error() {
    let dir = fixture("worked-3-organization");
    let rate = |account: &str| {
        gpubill(&[
            "rate",
            "--prices",
            dir.join("pricebook.toml").to_str().unwrap(),
            "--events",
            dir.join("events.jsonl").to_str().unwrap(),
            "--period",
            "2026-11",
            "--account",
            account,
        ])
    };
    let out = rate("acme-ml");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("\"acme-ml\"") && err.contains("\"acme\""),
        "names the account and its payer: {err}"
    );
    let out = rate("acme");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got.as_array().unwrap().len(), 1);
    assert_eq!(got[0]["total"], "357.45");
    assert_eq!(got[0]["allocation"].as_array().unwrap().len(), 5);
}

#[test]
fn account_filter_and_stdin_events() {
    let dir = fixture("worked-1");
    let events = std::fs::read(dir.join("events.jsonl")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpubill"))
        .args([
            "rate",
            "--prices",
            dir.join("pricebook.toml").to_str().unwrap(),
            "--events",
            "-",
            "--period",
            "2026-11",
            "--account",
            "beta",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(&events).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got.as_array().unwrap().len(), 1);
    assert_eq!(got[0]["account"], "beta");
    assert_eq!(got[0]["total"], "52.61");
}

#[test]
fn rejected_and_unpriced_events_go_to_stderr_with_reasons_and_exit_0() {
    let dir = std::env::temp_dir().join(format!("gpubill-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let events = dir.join("events.jsonl");
    std::fs::write(
        &events,
        [
            r#"{"specversion":"1.0","id":"a1","source":"n","type":"gpu.usage","subject":"acme","data":{"lease":"L","resource":"g","sku":"gpu.h100-80g","start":"2026-11-02T05:00:00Z","end":"2026-11-02T06:00:00Z"}}"#,
            r#"{"specversion":"1.0","id":"a1","source":"n","type":"gpu.usage","subject":"acme","data":{"lease":"L","resource":"g","sku":"gpu.h100-80g","start":"2026-11-02T05:00:00Z","end":"2026-11-02T07:00:00Z"}}"#,
            "not json",
            "",
            r#"{"specversion":"1.0","id":"a2","source":"n","type":"gpu.usage","subject":"acme","data":{"lease":"L","resource":"g","sku":"gpu.h100-80g","start":"2026-11-02T05:00:00Z","end":"2026-11-04T06:00:00Z"}}"#,
            r#"{"specversion":"1.0","id":"a3","source":"n","type":"gpu.usage","subject":"acme","data":{"lease":"L","resource":"g","sku":"gpu.unknown","start":"2026-11-02T05:00:00Z","end":"2026-11-02T06:00:00Z"}}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let out = gpubill(&[
        "rate",
        "--prices",
        fixture("worked-1").join("pricebook.toml").to_str().unwrap(),
        "--events",
        events.to_str().unwrap(),
        "--period",
        "2026-11",
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let reasons: Vec<(Option<u64>, &str)> = lines
        .iter()
        .map(|v| (v["line"].as_u64(), v["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        reasons,
        [
            (Some(2), "conflict"),
            (Some(3), "malformed_json"),
            (Some(5), "interval_too_long"),
            (None, "unpriced")
        ]
    );
    assert_eq!(lines[0]["id"], "a1");
    assert_eq!(lines[3]["sku"], "gpu.unknown");
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The first a1 stands: 1 h at 24.00, no reservation on that day... (reservation is 11-02 local).
    assert_eq!(got[0]["account"], "acme");
}

#[test]
fn an_invalid_price_book_exits_2_naming_the_key() {
    let dir = std::env::temp_dir().join(format!("gpubill-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let book = dir.join("bad.toml");
    std::fs::write(&book, "currency = \"CNY\"\ntimezone = \"Mars/Olympus\"\n").unwrap();
    let out = gpubill(&[
        "rate",
        "--prices",
        book.to_str().unwrap(),
        "--events",
        fixture("worked-1").join("events.jsonl").to_str().unwrap(),
        "--period",
        "2026-11",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("timezone") && err.contains("Mars/Olympus"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn an_unreadable_file_exits_2() {
    let out = gpubill(&[
        "rate",
        "--prices",
        "/nonexistent/book.toml",
        "--events",
        "/nonexistent/e.jsonl",
        "--period",
        "2026-11",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/book.toml"));
    let out = gpubill(&[
        "rate",
        "--prices",
        fixture("worked-1").join("pricebook.toml").to_str().unwrap(),
        "--events",
        "/nonexistent/e.jsonl",
        "--period",
        "2026-11",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/e.jsonl"));
}

/// The benchmark and load tools are the binary `gpubill-bench` (services/gpubill-bench), not
/// subcommands of the production binary (issue 25).
#[test]
fn the_production_binary_has_no_benchmark_subcommands() {
    for sub in ["bench", "bench-kafka", "load"] {
        let out = gpubill(&[sub, "--help"]);
        assert_eq!(out.status.code(), Some(2), "gpubill {sub} still exists");
        assert!(String::from_utf8_lossy(&out.stderr).contains("unrecognized subcommand"));
    }
    let out = gpubill(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("simulate"), "{help}");
    assert!(!help.contains("bench"), "{help}");
}

#[test]
fn simulate_output_rates_without_rejections() {
    let dir = std::env::temp_dir().join(format!("gpubill-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let events = dir.join("fleet.jsonl");
    let out = gpubill(&[
        "simulate",
        "--gpus",
        "16",
        "--seconds",
        "3600",
        "--shuffle-window",
        "50",
        "--churn-seconds",
        "1800",
        "--out",
        events.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let book = dir.join("book.toml");
    std::fs::write(
        &book,
        "currency = \"CNY\"\n[skus.\"gpu.h100-80g\"]\nrate_per_hour = \"24\"\nspot_rate_per_hour = \"9.6\"\n[skus.\"vgpu.h100-quarter\"]\nrate_per_hour = \"7\"\nspot_rate_per_hour = \"3\"\n[egress.internet]\nrate_per_gb = \"0.5\"\n[egress.cross_region]\nrate_per_gb = \"0.1\"\n",
    )
    .unwrap();
    let out = gpubill(&[
        "rate",
        "--prices",
        book.to_str().unwrap(),
        "--events",
        events.to_str().unwrap(),
        "--period",
        "2026-11",
    ]);
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got.as_array().unwrap().len(), 2); // 16 GPUs = 2 leases over 8 accounts
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "gpubill-{name}-{}-{}",
        std::process::id(),
        free_port()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn demo_runs_the_embedded_engine_end_to_end() {
    let dir = temp_dir("demo");
    let out = gpubill(&[
        "demo",
        "--data-dir",
        dir.join("data").to_str().unwrap(),
        "--gpus",
        "16",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Invoices for 2026-11"), "{text}");
    for account in ["acct-0", "acct-1", "acct-2", "acct-3", "acct-4"] {
        assert!(text.contains(account), "{text}");
    }
    // Section 18: acme pays for its two teams: one invoice (8 GPUs x 12 h each, pooled), and
    // its allocation by project: the training lease moved projects at 14:00 (6 h each side).
    for line in [
        "acme     home       USD  INV-2026-000007         1     631.68      0.00      0.00    37.90     669.58",
        "    chatbot        subtotal    315.84  discount    0.00  tax  18.95  total    334.79",
        "    llm-pretrain   subtotal    157.92  discount    0.00  tax   9.48  total    167.40",
        "    rl-finetune    subtotal    157.92  discount    0.00  tax   9.47  total    167.39",
        "  acme-train's own key sees only its rows: 2 row(s), total 334.79",
    ] {
        assert!(text.contains(line), "missing {line:?} in {text}");
    }
    // acct-3's rental story (billing-semantics part 2), with its worked numbers: 70 h of a
    // 500 GB volume stopped at 0.0000685/GB-h = 2.40; 40 min of spot waived; 30 min of node
    // fault x 5 x 3.29/h = 8.23 credited; the 2 h trial covering 7,200 GPU-seconds.
    for line in [
        "state:stopped        storage.ssd        tier 0 x-          126000000 unit_seconds       2.40",
        "spot_interrupted     gpu.h100-80g       tier 0 x-               2400 unit_seconds       0.00",
        "sla_compensation     gpu.h100-80g       tier 0 x-               1800 unit_seconds       0.00",
        "compensation: 8.23",
        "package_usage        gpu.h100-80g       tier 0 x-               7200 unit_seconds       0.00",
        "acct-3   home       USD  INV-2026-000004         7      10.77      0.00     10.77     0.00       0.00",
        // acct-4's part-3 terms: two RTX 5090 runs (20 and 25 minutes) billed as started
        // hours; the yearly plan ended on 11-16 refunds 46 of 365 days of 1,200.00; the
        // migration fee; three H100 hours in cn-east-1 at 23.00 CNY, tax 6%.
        "increment            gpu.rtx5090        tier 0 x-               4500 unit_seconds       0.86",
        "refund: 151.23",
        "charge: migration-2026-11",
        "acct-4   cn-east-1  CNY  INV-2026-000006         1      69.00      0.00      0.00     4.14      73.14",
    ] {
        assert!(text.contains(line), "{line:?} not in {text}");
    }
    assert!(text.contains("0 rejected"), "{text}");
    // Issue 28: acme's node budget crossed by the batches, acct-1's arrears sequence.
    for line in [
        "acme     #3 budget.crossed   2026-11-06T12:59:59Z  100% of 600.00 (actual): cost 669.58",
        "acct-1   #1 arrears.started  2027-01-02T00:00:01Z  phase started, balance 0.00, overdue true",
        "acct-1   #2 arrears.stopped  2027-01-03T00:00:01Z  phase stopped, balance 0.00, overdue true, decision stop",
        "acct-1   #3 arrears.cleared  2027-01-04T00:00:00Z  phase clear, balance 412.25, overdue false, decision clear",
    ] {
        assert!(text.contains(line), "{line:?} not in {text}");
    }
    assert!(dir.join("data/admin-token").exists());
    // The late event turned into an adjustment of November's invoice.
    assert!(
        text.contains("adjustment of INV-2026-000002 (2026-11) on_demand"),
        "{text}"
    );
    // The auditor's check (issue 14): clean, then with a corrupted invoice and ledger row.
    let db = format!("sqlite://{}", dir.join("data/gpubill.db").display());
    let out = gpubill(&["verify", "--database", &db]);
    let report = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{report}");
    assert!(report.contains(": 0 differences"), "{report}");
    let corrupt = |sql: &str| {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let pool = sqlx::SqlitePool::connect(&db).await.unwrap();
            let done = sqlx::query(sql).execute(&pool).await.unwrap();
            assert!(done.rows_affected() > 0, "{sql}");
            pool.close().await;
        });
    };
    corrupt(
        "update invoices set body = replace(body, '\"total\":\"', '\"total\":\"1') where account = 'acct-2'",
    );
    corrupt(
        "update ledger_keys set runs = '[[1796169600,1796169660,\"9\"]]' where rowid = (select min(rowid) from ledger_keys where account = 'acct-1')",
    );
    let out = gpubill(&["verify", "--database", &db, "--period", "2026-11"]);
    let report = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(report.contains("invoice acct-2"), "{report}");
    assert!(report.contains("ledger acct-1"), "{report}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json["differences"].as_array().unwrap().len() >= 2, "{json}");
}

/// Kills the server when the test ends, however it ends.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn serve_takes_a_posted_fleet_and_prints_its_admin_token_once() {
    let dir = temp_dir("serve");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let start = || {
        Command::new(env!("CARGO_BIN_EXE_gpubill"))
            .args([
                "serve",
                "--dedupe-horizon-days",
                "36500",
                "--data-dir",
                dir.to_str().unwrap(),
                "--listen",
                &format!("127.0.0.1:{port}"),
            ])
            .env_remove("GPUBILL_ADMIN_TOKEN")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let wait_ready = || {
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("gpubill serve did not come up on {port}");
    };
    let server = Server(start());
    wait_ready();
    let token = std::fs::read_to_string(dir.join("admin-token"))
        .unwrap()
        .trim()
        .to_string();
    assert!(token.starts_with("gba_"));
    let out = gpubill(&[
        "simulate",
        "--gpus",
        "8",
        "--seconds",
        "600",
        "--post",
        &base,
        "--token",
        &token,
        "--batch",
        "100",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("0 rejected") && text.contains("events/s"),
        "{text}"
    );
    drop(server);
    // A restart keeps the token (and prints nothing about it).
    let mut again = Server(start());
    wait_ready();
    let _ = again.0.kill();
    let _ = again.0.wait();
    let mut err = String::new();
    use std::io::Read;
    again
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(
        !err.contains(&token),
        "the token is printed only at first start: {err}"
    );
    // A wrong token is refused.
    let server = Server(start());
    wait_ready();
    let out = gpubill(&[
        "simulate",
        "--gpus",
        "8",
        "--seconds",
        "60",
        "--post",
        &base,
        "--token",
        "wrong",
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("401"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(server);
}

/// A stand-in OpenTelemetry collector: accepts OTLP/HTTP posts and hands (path, body) over.
fn fake_collector() -> (u16, std::sync::mpsc::Receiver<(String, Vec<u8>)>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                    let mut length = 0;
                    loop {
                        let mut h = String::new();
                        reader.read_line(&mut h).unwrap();
                        if h.trim().is_empty() {
                            break;
                        }
                        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    let _ = tx.send((path, body));
                    let _ = stream
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n");
                }
            });
        }
    });
    (port, rx)
}

#[test]
fn batch_spans_are_exported_over_otlp_when_the_endpoint_is_set() {
    let (collector, received) = fake_collector();
    let dir = temp_dir("otel");
    let port = free_port();
    let server = Server(
        serve_command(&dir, port)
            .env("GPUBILL_ADMIN_TOKEN", "otel-admin-token-0123456789abcdef")
            .env(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("http://127.0.0.1:{collector}"),
            )
            .env("OTEL_BSP_SCHEDULE_DELAY", "100")
            .spawn()
            .unwrap(),
    );
    wait_for_port(port);
    let out = gpubill(&[
        "simulate",
        "--gpus",
        "2",
        "--seconds",
        "120",
        "--post",
        &format!("http://127.0.0.1:{port}"),
        "--token",
        "otel-admin-token-0123456789abcdef",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let contains =
        |hay: &[u8], needle: &str| hay.windows(needle.len()).any(|w| w == needle.as_bytes());
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let (path, body) = received
            .recv_timeout(left)
            .expect("no OTLP export with a fold_batch span within 30 s");
        assert_eq!(path, "/v1/traces");
        if contains(&body, "fold_batch") {
            // The span carries the batch's figures and the service's name.
            for field in [
                "gpubill",
                "records",
                "accepted",
                "duplicates",
                "dead_letters",
                "latency_ms",
            ] {
                assert!(contains(&body, field), "span without {field}");
            }
            break;
        }
    }
    drop(server);
}

/// GET `path` from the server on `port` with a bearer token: (status line, body).
fn http_get(port: u16, path: &str, token: &str) -> (String, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

/// Issue 12: `serve --close-grace` closes a period by itself once its end plus the grace has
/// passed on the server's clock (November 2026 has; the grace here is 0 and the check every
/// second), and says so on `/metrics`.
#[test]
fn serve_closes_ended_periods_by_itself_with_close_grace() {
    let dir = temp_dir("autoclose");
    let port = free_port();
    let token = "autoclose-admin-token-0123456789";
    let _server = Server(
        serve_command(&dir, port)
            .args([
                "--prices",
                PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../../examples/pricebook.toml")
                    .to_str()
                    .unwrap(),
                "--close-grace",
                "0s",
                "--close-check-seconds",
                "1",
            ])
            .env("GPUBILL_ADMIN_TOKEN", token)
            .spawn()
            .unwrap(),
    );
    wait_for_port(port);
    let out = gpubill(&[
        "simulate",
        "--gpus",
        "8",
        "--seconds",
        "600",
        "--start",
        "2026-11-10T00:00:00Z",
        "--post",
        &format!("http://127.0.0.1:{port}"),
        "--token",
        token,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let export = "/v1/admin/exports/invoices?period=2026-11&format=jsonl";
    let mut body = String::new();
    for _ in 0..100 {
        let (status, b) = http_get(port, export, token);
        assert!(status.contains("200"), "{status} {b}");
        if !b.trim().is_empty() {
            body = b;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        body.contains("\"account\":\"acct-"),
        "November was not closed automatically: {body:?}"
    );
    let (_, metrics) = http_get(port, "/metrics", token);
    assert!(
        metrics.contains("gpubill_periods_closed_automatically_total"),
        "{metrics}"
    );
}

/// `gpubill serve` on `port` with its data in `dir` (a century's dedupe horizon), to add
/// arguments and environment to.
fn serve_command(dir: &std::path::Path, port: u16) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpubill"));
    c.args([
        "serve",
        "--dedupe-horizon-days",
        "36500",
        "--data-dir",
        dir.to_str().unwrap(),
        "--listen",
        &format!("127.0.0.1:{port}"),
    ])
    .stderr(std::process::Stdio::null());
    c
}

/// Waits up to 10 s for a server to listen on `port`; panics if none does.
fn wait_for_port(port: u16) {
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("gpubill serve did not come up on {port}");
}
