//! Operations (issue 13): the Prometheus alert rules, the Grafana dashboard and
//! docker-compose.yml, checked with the real tools (promtool from Debian's prometheus package,
//! Debian's docker-compose; `./scripts/services.sh ops-tools` installs both, as
//! `./scripts/test` does) and against the metrics gpubill really exports: the metric families
//! of the source, confirmed by the `/metrics` of an engine run in-process.

use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ALERTS: &str = "deploy/prometheus/gpubill-alerts.yml";
const ALERT_TESTS: &str = "deploy/prometheus/gpubill-alerts.test.yml";
const PROMETHEUS_CONFIG: &str = "deploy/prometheus/prometheus.yml";
const DASHBOARD: &str = "deploy/grafana/gpubill-dashboard.json";
const COMPOSE: &str = "docker-compose.yml";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

fn read(path: &str) -> String {
    let p = repo().join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Runs one of the ops tools in the repository root. A missing tool fails the test, saying
/// how to install it: these checks are never skipped.
fn run(tool: &str, args: &[&str], configure: impl FnOnce(&mut Command)) -> Output {
    let mut cmd = Command::new(tool);
    cmd.args(args).current_dir(repo());
    configure(&mut cmd);
    cmd.output().unwrap_or_else(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            panic!(
                "{tool} is not installed: run ./scripts/services.sh ops-tools (Debian's packages \
                 prometheus, for promtool, and docker-compose), as ./scripts/test does"
            )
        }
        panic!("cannot run {tool}: {e}")
    })
}

fn assert_success(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---- What gpubill exports -------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// One metric family: its kind and label names, and where the source records it.
#[derive(Debug, Clone)]
struct Family {
    kind: Kind,
    labels: BTreeSet<String>,
    at: String,
}

/// Every `metrics::counter!/gauge!/histogram!("gpubill_...", "label" => ...)` under
/// services/*/src: name, kind and label names.
fn source_families() -> BTreeMap<String, Family> {
    let mut files = Vec::new();
    for service in std::fs::read_dir(repo().join("services")).unwrap() {
        rust_files(&service.unwrap().path().join("src"), &mut files);
    }
    let mut out: BTreeMap<String, Family> = BTreeMap::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let at = file.strip_prefix(repo()).unwrap().display().to_string();
        for (kind, macro_name) in [
            (Kind::Counter, "counter!("),
            (Kind::Gauge, "gauge!("),
            (Kind::Histogram, "histogram!("),
        ] {
            for (start, _) in text.match_indices(macro_name) {
                let before = text[..start].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let (name, labels) = macro_args(&text[start + macro_name.len()..], &at);
                let family = out.entry(name.clone()).or_insert(Family {
                    kind,
                    labels: BTreeSet::new(),
                    at: at.clone(),
                });
                assert_eq!(family.kind, kind, "{name}: two kinds ({at}, {})", family.at);
                family.labels.extend(labels);
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The metric name and label names of one macro call (`args` starts after its `(`).
fn macro_args(args: &str, at: &str) -> (String, Vec<String>) {
    let mut strings = Vec::new();
    let mut depth = 1;
    let mut chars = args.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '(' => depth += 1,
            ')' if depth == 1 => break,
            ')' => depth -= 1,
            '"' => {
                let mut s = String::new();
                for (_, c) in chars.by_ref() {
                    if c == '"' {
                        break;
                    }
                    s.push(c);
                }
                let rest = args[i + 1 + s.len() + 1..].trim_start();
                strings.push((s, rest.starts_with("=>")));
            }
            _ => {}
        }
    }
    let first = args.trim_start();
    assert!(
        first.starts_with('"'),
        "{at}: a metric whose name is not a string literal ({}): name it literally so that \
         tests/ops.rs can check the dashboard and alerts against it",
        &first[..first.len().min(60)]
    );
    let name = strings[0].0.clone();
    assert!(
        name.starts_with("gpubill_"),
        "{at}: metric {name} lacks the gpubill_ prefix"
    );
    let labels = strings
        .into_iter()
        .skip(1)
        .filter(|(_, is_key)| *is_key)
        .map(|(s, _)| s)
        .collect();
    (name, labels)
}

/// A Prometheus text exposition: each family's type, and each series name's label names.
#[derive(Debug, Default)]
struct Exposition {
    types: BTreeMap<String, String>,
    series: BTreeMap<String, BTreeSet<String>>,
}

fn parse_exposition(text: &str) -> Exposition {
    let mut out = Exposition::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, ty) = rest.split_once(' ').expect("# TYPE name type");
            out.types.insert(name.into(), ty.trim().into());
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let selector = line.rsplit_once(' ').expect("a sample has a value").0;
        let refs = promql_refs(selector);
        assert_eq!(refs.selectors.len(), 1, "sample line {line:?}");
        let (name, labels) = refs.selectors.into_iter().next().unwrap();
        out.series
            .entry(name.expect("a sample has a metric name"))
            .or_default()
            .extend(labels);
    }
    out
}

/// The series names a family is exported as and the labels each may carry (besides the
/// `instance` and `job` Prometheus adds), histograms as `rendering` ("summary" or
/// "histogram") says.
fn series_of(name: &str, family: &Family, rendering: &str) -> Vec<(String, BTreeSet<String>)> {
    let mut labels = family.labels.clone();
    labels.extend(["instance".to_string(), "job".to_string()]);
    let with = |extra: &str| {
        let mut l = labels.clone();
        l.insert(extra.to_string());
        l
    };
    match (family.kind, rendering) {
        (Kind::Counter | Kind::Gauge, _) => vec![(name.to_string(), labels)],
        (Kind::Histogram, "summary") => vec![
            (name.to_string(), with("quantile")),
            (format!("{name}_sum"), labels.clone()),
            (format!("{name}_count"), labels),
        ],
        (Kind::Histogram, _) => vec![
            (format!("{name}_bucket"), with("le")),
            (format!("{name}_sum"), labels.clone()),
            (format!("{name}_count"), labels),
        ],
    }
}

/// An engine in-process (SQLite) after some traffic of every kind a single engine without
/// Kafka makes: events accepted and dead-lettered through the HTTP ingest group commit, a
/// quota crossed, an authorization. Returns its `/metrics`.
async fn metrics_after_traffic() -> String {
    let t = TestApp::fresh(Db::Sqlite).await;
    t.put_pricebook("currency = \"CNY\"\n[skus.\"gpu.h100-80g\"]\nrate_per_hour = \"36\"\n")
        .await;
    t.account("acme").await;
    let (s, v) = t
        .admin(
            "PUT",
            "/v1/admin/accounts/acme/quotas",
            json!({"spend_limit": "100"}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let event = |id: &str, hour: u32, quantity: &str| {
        format!(
            r#"{{"specversion":"1.0","id":"{id}","source":"node-1","type":"gpu.usage","subject":"acme","data":{{"lease":"L","resource":"gpu-0","sku":"gpu.h100-80g","start":"2026-12-01T{hour:02}:00:00Z","end":"2026-12-01T{:02}:00:00Z","quantity":"{quantity}"}}}}"#,
            hour + 1
        )
    };
    // 36 CNY an hour against a spend limit of 100: the third hour warns, the fourth limits.
    for hour in 0..4 {
        t.ingest(&[
            event(&format!("e{hour}"), hour, "1"),
            event(&format!("bad{hour}"), hour, "0"),
        ])
        .await;
    }
    let (s, v) = t
        .call(
            "POST",
            "/v1/authorize",
            Some(INGEST),
            "application/json",
            json!({"account": "acme", "sku": "gpu.h100-80g", "quantity": "1", "seconds": 100})
                .to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, body) = t.raw("GET", "/metrics", None, "", "").await;
    assert_eq!(s, StatusCode::OK);
    String::from_utf8(body).unwrap()
}

/// Families the traffic of `metrics_after_traffic` must show on `/metrics`. The others
/// (consumer lag, outbox relay, automatic close) need Kafka or `serve`'s timers and are
/// known from the source alone.
const SEEN_LIVE: [&str; 7] = [
    "gpubill_events_total",
    "gpubill_dead_letters_total",
    "gpubill_batch_duration_seconds",
    "gpubill_ingest_group_requests",
    "gpubill_quota_decisions_total",
    "gpubill_ledger_cache_total",
    "gpubill_authorize_duration_seconds",
];

/// Every series name a query may use, with the label names it may carry: gpubill's (from
/// the source, checked against a live `/metrics`) and Prometheus' own `up`.
async fn exported_series() -> BTreeMap<String, BTreeSet<String>> {
    let families = source_families();
    let live = parse_exposition(&metrics_after_traffic().await);
    for name in SEEN_LIVE {
        assert!(
            live.types.contains_key(name),
            "{name} is not on /metrics: {live:#?}"
        );
    }
    let mut rendering = BTreeSet::new();
    for (name, ty) in &live.types {
        let family = families.get(name).unwrap_or_else(|| {
            panic!("{name} is on /metrics but tests/ops.rs did not find it in services/*/src")
        });
        let kind = match ty.as_str() {
            "counter" => Kind::Counter,
            "gauge" => Kind::Gauge,
            "summary" | "histogram" => {
                rendering.insert(ty.clone());
                Kind::Histogram
            }
            other => panic!("{name}: unexpected type {other}"),
        };
        assert_eq!(
            kind, family.kind,
            "{name}: /metrics says {ty}, {}",
            family.at
        );
    }
    assert_eq!(
        rendering.len(),
        1,
        "histograms rendered two ways: {rendering:?}"
    );
    let rendering = rendering.pop_first().unwrap();
    let mut out = BTreeMap::new();
    for (name, family) in &families {
        for (series, labels) in series_of(name, family, &rendering) {
            if let Some(seen) = live.series.get(&series) {
                assert!(
                    seen.is_subset(&labels),
                    "{series}: /metrics has labels {seen:?}, the source {labels:?} ({})",
                    family.at
                );
            }
            out.insert(series, labels);
        }
    }
    out.insert("up".into(), ["instance", "job"].map(String::from).into());
    out
}

// ---- PromQL, as far as names go -------------------------------------------------------------

/// The metric selectors (name, label names matched) and the grouping labels (`by`,
/// `without`, `on`, `ignoring`, `group_left/right`) of a PromQL expression. Not a parser:
/// promtool checks the syntax; this finds the names to check against what gpubill exports.
#[derive(Debug, Default)]
struct Refs {
    selectors: Vec<(Option<String>, Vec<String>)>,
    grouping: Vec<String>,
}

const PROMQL_WORDS: [&str; 17] = [
    "sum",
    "min",
    "max",
    "avg",
    "group",
    "stddev",
    "stdvar",
    "count",
    "count_values",
    "bottomk",
    "topk",
    "quantile",
    "and",
    "or",
    "unless",
    "bool",
    "offset",
];
const GROUPING_WORDS: [&str; 6] = [
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
];

fn promql_refs(expr: &str) -> Refs {
    let s: Vec<char> = expr.chars().collect();
    let mut refs = Refs::default();
    let mut i = 0;
    let skip_ws = |mut i: usize| {
        while i < s.len() && s[i].is_whitespace() {
            i += 1;
        }
        i
    };
    while i < s.len() {
        let c = s[i];
        if c == '"' || c == '\'' || c == '`' {
            i = skip_string(&s, i);
        } else if c == '#' {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
        } else if c.is_ascii_digit() || c == '$' {
            i += 1;
            while i < s.len() && (s[i].is_alphanumeric() || s[i] == '_' || s[i] == '.') {
                i += 1;
            }
        } else if c == '{' {
            let (labels, end) = matchers(&s, i);
            refs.selectors.push((None, labels));
            i = end;
        } else if c.is_alphabetic() || c == '_' || c == ':' {
            let start = i;
            while i < s.len() && (s[i].is_alphanumeric() || s[i] == '_' || s[i] == ':') {
                i += 1;
            }
            let word: String = s[start..i].iter().collect();
            let next = skip_ws(i);
            if GROUPING_WORDS.contains(&word.as_str()) {
                if s.get(next) == Some(&'(') {
                    let end = s[next..].iter().position(|&c| c == ')').unwrap() + next;
                    let list: String = s[next + 1..end].iter().collect();
                    refs.grouping.extend(
                        list.split(',')
                            .map(|l| l.trim().to_string())
                            .filter(|l| !l.is_empty()),
                    );
                    i = end + 1;
                }
            } else if PROMQL_WORDS.contains(&word.as_str()) || s.get(next) == Some(&'(') {
                // an aggregation, a keyword or a function call
            } else if s.get(next) == Some(&'{') {
                let (labels, end) = matchers(&s, next);
                refs.selectors.push((Some(word), labels));
                i = end;
            } else {
                refs.selectors.push((Some(word), Vec::new()));
            }
        } else {
            i += 1;
        }
    }
    refs
}

/// The index after the string literal starting at `i`.
fn skip_string(s: &[char], i: usize) -> usize {
    let quote = s[i];
    let mut j = i + 1;
    while j < s.len() && s[j] != quote {
        j += if s[j] == '\\' && quote != '`' { 2 } else { 1 };
    }
    j + 1
}

/// The label names of the matchers `{a="x", b=~"y"}` starting at `open`, and the index
/// after its `}`.
fn matchers(s: &[char], open: usize) -> (Vec<String>, usize) {
    let mut labels = Vec::new();
    let mut i = open + 1;
    let mut name = String::new();
    while i < s.len() && s[i] != '}' {
        let c = s[i];
        if c == '"' || c == '\'' || c == '`' {
            i = skip_string(s, i);
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            name.push(c);
        } else if !name.is_empty() {
            labels.push(std::mem::take(&mut name));
        }
        i += 1;
        if c == '=' || c == '!' {
            // the operator, then the value: skip to its string
            while i < s.len() && !matches!(s[i], '"' | '\'' | '`') {
                i += 1;
            }
        }
    }
    (labels, i + 1)
}

/// What is wrong with the names `expr` uses (empty when nothing is).
fn name_problems(expr: &str, exported: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let refs = promql_refs(expr);
    let mut problems = Vec::new();
    let mut usable = BTreeSet::new();
    for (name, labels) in &refs.selectors {
        let Some(name) = name else {
            problems.push(format!("a selector without a metric name: {labels:?}"));
            continue;
        };
        let Some(allowed) = exported.get(name) else {
            problems.push(format!("{name} is not a metric gpubill exports"));
            continue;
        };
        for label in labels {
            if !allowed.contains(label) {
                problems.push(format!("{name} has no label {label} (it has {allowed:?})"));
            }
        }
        usable.extend(allowed.iter().cloned());
    }
    for label in &refs.grouping {
        if !usable.contains(label) {
            problems.push(format!(
                "grouping by {label}, which none of its metrics has"
            ));
        }
    }
    if refs.selectors.is_empty() {
        problems.push("no metric at all".into());
    }
    problems
}

// ---- The files --------------------------------------------------------------------------------

/// Each rule of a Prometheus rules file: its name and `expr`, inline or a block scalar.
/// promtool checks the YAML itself; this reads the shapes gpubill-alerts.yml uses.
fn rule_exprs(yaml: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut out = Vec::new();
    let mut name = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        if let Some(n) = line
            .strip_prefix("- alert:")
            .or(line.strip_prefix("- record:"))
        {
            name = Some(n.trim().to_string());
        }
        if let Some(value) = line.strip_prefix("expr:") {
            let indent = lines[i].len() - line.len();
            let value = value.trim();
            let expr = if value == "|" || value == ">" {
                let mut block = Vec::new();
                while i + 1 < lines.len()
                    && (lines[i + 1].trim().is_empty()
                        || lines[i + 1].len() - lines[i + 1].trim_start().len() > indent)
                {
                    i += 1;
                    block.push(lines[i].trim());
                }
                block.join("\n")
            } else {
                value.trim_matches(|c| c == '"' || c == '\'').to_string()
            };
            out.push((name.take().expect("an expr belongs to a rule"), expr));
        }
        i += 1;
    }
    out
}

fn alert_names() -> Vec<String> {
    read(ALERTS)
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("- alert:"))
        .map(|n| n.trim().to_string())
        .collect()
}

/// Every panel of the dashboard, rows' nested panels included.
fn dashboard_panels(dashboard: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        out.extend(panel["panels"].as_array().into_iter().flatten().cloned());
        out.push(panel.clone());
    }
    out
}

/// (panel title, refId, expr) of every query of the dashboard.
fn dashboard_exprs() -> Vec<(String, String, String)> {
    let dashboard: Value = serde_json::from_str(&read(DASHBOARD)).expect("the dashboard is JSON");
    let mut out = Vec::new();
    for panel in dashboard_panels(&dashboard) {
        for target in panel["targets"].as_array().into_iter().flatten() {
            out.push((
                panel["title"].as_str().unwrap_or_default().to_string(),
                target["refId"].as_str().unwrap_or_default().to_string(),
                target["expr"].as_str().unwrap_or_default().to_string(),
            ));
        }
    }
    out
}

/// A dashboard query as Prometheus would get it: Grafana's interval macros and the
/// dashboard's variables replaced by values.
fn as_prometheus_gets_it(expr: &str) -> String {
    let out = expr
        .replace("$__rate_interval", "1m")
        .replace("$__interval", "30s")
        .replace("$__range", "6h")
        .replace("${instance}", ".*")
        .replace("$instance", ".*");
    assert!(!out.contains('$'), "an unknown Grafana variable in {expr}");
    out
}

// ---- Tests ----------------------------------------------------------------------------------

#[test]
fn alert_rules_pass_promtool_check() {
    let out = run("promtool", &["check", "rules", ALERTS], |_| {});
    assert_success(&out, &format!("promtool check rules {ALERTS}"));
}

#[test]
fn every_alert_fires_and_stays_quiet_in_the_promtool_unit_tests() {
    let out = run("promtool", &["test", "rules", ALERT_TESTS], |_| {});
    assert_success(&out, &format!("promtool test rules {ALERT_TESTS}"));
    // promtool runs the cases it has; that every alert has both kinds is checked here.
    let tests = read(ALERT_TESTS);
    let (mut fires, mut quiet) = (BTreeSet::new(), BTreeSet::new());
    for case in tests.split("- eval_time:").skip(1) {
        let name = case
            .lines()
            .find_map(|l| l.trim().strip_prefix("alertname:"))
            .expect("a case names its alert")
            .trim()
            .to_string();
        if case.contains("exp_alerts: []") {
            quiet.insert(name);
        } else {
            fires.insert(name);
        }
    }
    for alert in alert_names() {
        assert!(fires.contains(&alert), "no unit test where {alert} fires");
        assert!(
            quiet.contains(&alert),
            "no unit test where {alert} stays quiet"
        );
    }
}

#[test]
fn every_alert_has_a_severity_a_summary_a_description_and_a_for() {
    let rules = read(ALERTS);
    let names = alert_names();
    assert!(names.len() >= 6, "{names:?}");
    for rule in rules.split("- alert:").skip(1) {
        let name = rule.lines().next().unwrap().trim();
        for key in ["expr:", "for:", "summary:", "description:"] {
            assert!(rule.contains(key), "{name} has no {key}");
        }
        assert!(
            rule.contains("severity: warning") || rule.contains("severity: critical"),
            "{name}: severity must be warning or critical"
        );
    }
}

#[test]
fn prometheus_config_passes_promtool_check_with_the_job_the_alerts_expect() {
    let out = run("promtool", &["check", "config", PROMETHEUS_CONFIG], |_| {});
    assert_success(&out, &format!("promtool check config {PROMETHEUS_CONFIG}"));
    assert!(read(PROMETHEUS_CONFIG).contains("job_name: gpubill"));
    assert!(read(ALERTS).contains("up{job=\"gpubill\"}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dashboard_and_alerts_query_only_metrics_and_labels_gpubill_exports() {
    let exported = exported_series().await;
    let mut problems = Vec::new();
    let mut queries = dashboard_exprs()
        .into_iter()
        .map(|(title, r, expr)| (format!("dashboard panel {title:?} query {r}"), expr))
        .collect::<Vec<_>>();
    queries.extend(
        rule_exprs(&read(ALERTS))
            .into_iter()
            .map(|(name, expr)| (format!("alert {name}"), expr)),
    );
    let alerts = alert_names();
    assert_eq!(
        queries.len() - dashboard_exprs().len(),
        alerts.len(),
        "an alert without expr"
    );
    // The dashboard's variables: `label_values(metric, label)`.
    let dashboard: Value = serde_json::from_str(&read(DASHBOARD)).unwrap();
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        if variable["type"] != "query" {
            continue;
        }
        let query = variable["query"]["query"].as_str().unwrap_or_default();
        let args = query
            .strip_prefix("label_values(")
            .and_then(|q| q.strip_suffix(')'))
            .unwrap_or_else(|| panic!("variable query {query:?}: expected label_values(m, l)"));
        let (metric, label) = args.split_once(',').unwrap();
        let (metric, label) = (metric.trim(), label.trim());
        if !exported.get(metric).is_some_and(|l| l.contains(label)) {
            problems.push(format!("dashboard variable {}: {query}", variable["name"]));
        }
    }
    // The unit tests' input series must look like gpubill's too, or they prove nothing.
    for line in read(ALERT_TESTS).lines() {
        if let Some(series) = line.trim().strip_prefix("- series:") {
            let series = series.trim().trim_matches('\'').to_string();
            queries.push((format!("{ALERT_TESTS} series"), series));
        }
    }
    for (what, expr) in &queries {
        for p in name_problems(expr, &exported) {
            problems.push(format!("{what}: {p}\n    {expr}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{}\n(gpubill exports: {:#?})",
        problems.join("\n"),
        exported.keys()
    );
}

#[test]
fn dashboard_queries_parse_as_promql() {
    // promtool parses each query as the expression of a recording rule.
    let exprs = dashboard_exprs();
    assert!(exprs.len() >= 9, "{exprs:?}");
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (n, (_, _, expr)) in exprs.iter().enumerate() {
        let expr = serde_json::to_string(&as_prometheus_gets_it(expr)).unwrap();
        rules.push_str(&format!(
            "      - record: dashboard_query_{n}\n        expr: {expr}\n"
        ));
    }
    let dir = std::env::temp_dir().join(format!("gpubill-ops-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("dashboard-queries.yml");
    std::fs::write(&file, &rules).unwrap();
    let out = run(
        "promtool",
        &["check", "rules", file.to_str().unwrap()],
        |_| {},
    );
    let listing: Vec<String> = exprs
        .iter()
        .enumerate()
        .map(|(n, (title, r, expr))| format!("dashboard_query_{n}: {title:?} {r}: {expr}"))
        .collect();
    assert_success(
        &out,
        &format!(
            "promtool check rules on the dashboard's queries\n{}",
            listing.join("\n")
        ),
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn dashboard_panels_all_query_the_datasource_variable() {
    let dashboard: Value = serde_json::from_str(&read(DASHBOARD)).unwrap();
    assert!(dashboard["schemaVersion"].as_i64().unwrap() >= 36);
    let variables = dashboard["templating"]["list"].as_array().unwrap();
    assert!(
        variables.iter().any(|v| v["name"] == "datasource"
            && v["type"] == "datasource"
            && v["query"] == "prometheus"),
        "no Prometheus datasource variable"
    );
    let mut ids = BTreeSet::new();
    for panel in dashboard_panels(&dashboard) {
        let title = panel["title"].as_str().unwrap_or_default();
        assert!(
            ids.insert(panel["id"].as_i64().unwrap()),
            "{title}: duplicate id"
        );
        let grid = &panel["gridPos"];
        assert!(
            grid["x"].as_i64().unwrap() + grid["w"].as_i64().unwrap() <= 24,
            "{title}"
        );
        if panel["type"] == "row" {
            continue;
        }
        assert_eq!(panel["datasource"]["uid"], "${datasource}", "{title}");
        let targets = panel["targets"].as_array().unwrap();
        assert!(!targets.is_empty(), "{title}: no query");
        for target in targets {
            assert_eq!(target["datasource"]["uid"], "${datasource}", "{title}");
            assert!(
                !target["expr"].as_str().unwrap_or_default().is_empty(),
                "{title}"
            );
        }
    }
}

#[test]
fn docker_compose_config_is_valid_and_its_files_exist() {
    let out = run("docker-compose", &["-f", COMPOSE, "config", "-q"], |c| {
        c.env("GPUBILL_ADMIN_TOKEN", "ops-test-token");
    });
    assert_success(&out, &format!("docker-compose -f {COMPOSE} config -q"));
    // The files it mounts are this repository's (`config` does not look at them).
    let out = run(
        "docker-compose",
        &[
            "-f",
            COMPOSE,
            "--profile",
            "monitoring",
            "--profile",
            "shards",
            "config",
        ],
        |c| {
            c.env("GPUBILL_ADMIN_TOKEN", "ops-test-token");
        },
    );
    assert_success(&out, &format!("docker-compose -f {COMPOSE} config"));
    let resolved = String::from_utf8(out.stdout).unwrap();
    let root = repo().display().to_string();
    let mounts: Vec<&str> = resolved
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter(|l| l.starts_with(&root))
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert!(mounts.len() >= 6, "{resolved}");
    // The shards profile (issue 29): two shards, each with its database, and the directory.
    for service in [
        "gpubill-shard0:",
        "gpubill-shard1:",
        "postgres-shard1:",
        "shards-directory:",
    ] {
        assert!(resolved.contains(service), "{service} missing: {resolved}");
    }
    for path in mounts {
        assert!(
            Path::new(path).exists(),
            "{COMPOSE} mounts {path}, which does not exist"
        );
    }
}

#[test]
fn docker_compose_refuses_to_start_without_an_admin_token() {
    let empty = std::env::temp_dir().join(format!("gpubill-ops-{}.env", std::process::id()));
    std::fs::write(&empty, "").unwrap();
    let out = run(
        "docker-compose",
        &[
            "--env-file",
            empty.to_str().unwrap(),
            "-f",
            COMPOSE,
            "config",
            "-q",
        ],
        |c| {
            c.env_remove("GPUBILL_ADMIN_TOKEN");
        },
    );
    std::fs::remove_file(&empty).ok();
    assert!(
        !out.status.success(),
        "config passed without GPUBILL_ADMIN_TOKEN"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("GPUBILL_ADMIN_TOKEN"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_name_check_catches_unknown_metrics_labels_and_histogram_buckets() {
    let family = |kind, labels: &[&str]| Family {
        kind,
        labels: labels.iter().map(|l| l.to_string()).collect(),
        at: "here".into(),
    };
    let mut exported: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    exported.extend(series_of(
        "gpubill_events_total",
        &family(Kind::Counter, &["outcome"]),
        "summary",
    ));
    exported.extend(series_of(
        "gpubill_batch_duration_seconds",
        &family(Kind::Histogram, &[]),
        "summary",
    ));
    let problems = |expr: &str| name_problems(expr, &exported).join("; ");
    assert_eq!(
        problems(
            r#"sum by (outcome) (rate(gpubill_events_total{instance=~"$instance", outcome!="x"}[$__rate_interval])) / ignoring (outcome) group_left sum(rate(gpubill_events_total[5m]))"#
        ),
        ""
    );
    assert_eq!(
        problems(r#"max(gpubill_batch_duration_seconds{quantile="0.99"}) > 0.01"#),
        ""
    );
    assert!(problems("rate(gpubill_event_total[5m])").contains("not a metric"));
    assert!(
        problems("sum by (kind) (rate(gpubill_events_total[5m]))").contains("grouping by kind")
    );
    assert!(problems(r#"gpubill_events_total{reason="x"}"#).contains("no label reason"));
    assert!(
        problems("histogram_quantile(0.99, rate(gpubill_batch_duration_seconds_bucket[5m]))")
            .contains("gpubill_batch_duration_seconds_bucket is not a metric")
    );
    assert!(problems("vector(1)").contains("no metric at all"));
}
