//! `gpubill demo`: the README's first command. Starts the embedded engine in a fresh data
//! directory, creates three accounts (a reservation, a discount, a credit, an off-peak window),
//! sends a simulated day of a small fleet through the HTTP API, closes November and prints the
//! invoices. `--keep-serving` keeps the API up and prints how to query it.

use crate::serve::{Application, ServeArgs, Settings};
use anyhow::Context;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use clap::Args;
use gpubill_fleet::{FleetSpec, generate};
use http_body_util::BodyExt;
use serde_json::Value;
use std::net::SocketAddr;
use std::path::PathBuf;
use tower::ServiceExt;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Keep serving the API and the web console after the tour (the default when stdout is a
    /// terminal: a person ran it and will open the console).
    #[arg(long)]
    pub keep_serving: bool,
    /// End after the tour, even in a terminal.
    #[arg(long, conflicts_with = "keep_serving")]
    pub no_serve: bool,
    /// Address for --keep-serving.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Data directory (default: a new one under ./data).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// GPUs in the simulated fleet.
    #[arg(long, default_value_t = 24)]
    pub gpus: u32,
}

/// The demo's own book: the example book (examples/pricebook.toml) plus the rental rules of billing-semantics part 2
/// (state rates, SLA, a trial package, an expiring voucher) for acct-3.
const RENTAL_BOOK: &str = include_str!("../../../examples/pricebook-rental.toml");

/// acct-3's rental story on 2026-11-03 to 05 (Asia/Shanghai): a lease whose GPU ran 2 h (the
/// free trial covers it) and was then stopped, its 500 GB volume billed at the stopped rate
/// for 70 h; a spot lease preempted after 40 minutes (waived); a training lease whose node
/// failed for 30 minutes (compensated 5 x onto the credit balance).
fn rental_events() -> Vec<String> {
    let usage = |id: &str,
                 source: &str,
                 lease: &str,
                 sku: &str,
                 class: &str,
                 q: &str,
                 start: &str,
                 end: &str| {
        serde_json::json!({"specversion":"1.0","id":id,"source":source,"type":"gpu.usage","subject":"acct-3",
            "data":{"lease":lease,"resource":format!("{lease}-0"),"sku":sku,"class":class,"quantity":q,
                    "start":start,"end":end}})
        .to_string()
    };
    let state = |id: &str, lease: &str, state: &str, at: &str| {
        serde_json::json!({"specversion":"1.0","id":id,"source":"ctl/1","type":"lease.state","subject":"acct-3",
            "data":{"lease":lease,"state":state,"at":at}})
        .to_string()
    };
    vec![
        usage("r1", "node/3", "L-vol", "gpu.h100-80g", "on_demand", "1", "2026-11-03T08:00:00+08:00", "2026-11-03T10:00:00+08:00"),
        state("r2", "L-vol", "stopped", "2026-11-03T10:00:00+08:00"),
        usage("r3", "node/vol", "L-vol", "storage.ssd", "on_demand", "500", "2026-11-03T08:00:00+08:00", "2026-11-04T08:00:00+08:00"),
        usage("r4", "node/vol", "L-vol", "storage.ssd", "on_demand", "500", "2026-11-04T08:00:00+08:00", "2026-11-05T08:00:00+08:00"),
        usage("r5", "node/vol", "L-vol", "storage.ssd", "on_demand", "500", "2026-11-05T08:00:00+08:00", "2026-11-06T08:00:00+08:00"),
        usage("r6", "node/spot", "L-spot", "gpu.h100-80g", "spot", "1", "2026-11-04T09:00:00+08:00", "2026-11-04T09:40:00+08:00"),
        state("r7", "L-spot", "preempted", "2026-11-04T09:40:00+08:00"),
        usage("r8", "node/7", "L-train", "gpu.h100-80g", "on_demand", "1", "2026-11-05T10:00:00+08:00", "2026-11-05T11:00:00+08:00"),
        usage("r9", "node/7b", "L-train", "gpu.h100-80g", "on_demand", "1", "2026-11-05T11:30:00+08:00", "2026-11-05T13:00:00+08:00"),
        serde_json::json!({"specversion":"1.0","id":"f1","source":"mon/1","type":"node.fault","subject":"platform",
            "data":{"node":"node/7","start":"2026-11-05T11:00:00+08:00","end":"2026-11-05T11:30:00+08:00"}})
        .to_string(),
    ]
}

/// acct-4's commercial terms (billing-semantics part 3) in November: two RTX 5090 runs billed
/// by the started hour (10:00-10:20 and 10:40-11:05: two runs, three hours) under a capped
/// launch subsidy, a yearly plan ended early with its prorata refund, a one-off migration
/// fee, and three H100 hours in the cn-east-1 region, invoiced apart in CNY.
fn part3_events() -> Vec<String> {
    let usage = |id: &str, sku: &str, region: Option<&str>, start: &str, end: &str| {
        let mut data = serde_json::json!({"lease":"L-p3","resource":format!("{id}-0"),"sku":sku,
            "start":start,"end":end});
        if let Some(r) = region {
            data["region"] = Value::String(r.to_string());
        }
        serde_json::json!({"specversion":"1.0","id":id,"source":"node/p3","type":"gpu.usage",
            "subject":"acct-4","data":data})
        .to_string()
    };
    vec![
        usage(
            "p1",
            "gpu.rtx5090",
            None,
            "2026-11-10T10:00:00+08:00",
            "2026-11-10T10:20:00+08:00",
        ),
        usage(
            "p2",
            "gpu.rtx5090",
            None,
            "2026-11-10T10:40:00+08:00",
            "2026-11-10T11:05:00+08:00",
        ),
        usage(
            "p3",
            "gpu.h100-80g",
            Some("cn-east-1"),
            "2026-11-12T09:00:00+08:00",
            "2026-11-12T12:00:00+08:00",
        ),
    ]
}

/// Section 18: the enterprise `acme` pays for its two teams, `acme-train` and `acme-infer`;
/// their leases are tagged by project. H100 hours pool on acme's one invoice, whose
/// allocation splits it by team and by project to the cent.
fn organization_events() -> Vec<String> {
    let usage = |id: &str, team: &str, lease: &str, start: &str, end: &str| {
        serde_json::json!({"specversion":"1.0","id":id,"source":"node/org","type":"gpu.usage",
            "subject":team,"data":{"lease":lease,"resource":format!("{lease}-gpu0"),
            "sku":"gpu.h100-80g","start":start,"end":end,"quantity":"8"}})
        .to_string()
    };
    let tags = |id: &str, team: &str, lease: &str, project: &str, at: &str| {
        serde_json::json!({"specversion":"1.0","id":id,"source":"ctl/org","type":"lease.tags",
            "subject":team,"data":{"lease":lease,"tags":{"project":project},"at":at}})
        .to_string()
    };
    vec![
        tags(
            "o1",
            "acme-train",
            "T-1",
            "llm-pretrain",
            "2026-11-05T00:00:00+08:00",
        ),
        usage(
            "o2",
            "acme-train",
            "T-1",
            "2026-11-05T08:00:00+08:00",
            "2026-11-05T20:00:00+08:00",
        ),
        // The lease moves to another project at 14:00: its seconds after go there.
        tags(
            "o3",
            "acme-train",
            "T-1",
            "rl-finetune",
            "2026-11-05T14:00:00+08:00",
        ),
        tags(
            "o4",
            "acme-infer",
            "I-1",
            "chatbot",
            "2026-11-06T00:00:00+08:00",
        ),
        usage(
            "o5",
            "acme-infer",
            "I-1",
            "2026-11-06T09:00:00+08:00",
            "2026-11-06T21:00:00+08:00",
        ),
    ]
}

/// Section 18 in the tour: acme's invoice allocated by project and by team, as acme's key
/// reads it, and what a team's own key sees.
async fn organization_tour(client: &Client, acme: &str, team: (&str, &str)) -> anyhow::Result<()> {
    println!(
        "
acme pays for acme-train and acme-infer (created with \"parent\":\"acme\",\"pays\":\"parent\"): one invoice,"
    );
    println!("allocated to (team, project) to the cent (GET /v1/allocation):");
    for by in ["tag", "account"] {
        let (s, v) = client
            .call(
                "GET",
                &format!("/v1/allocation?period=2026-11&group_by={by}"),
                acme,
                "",
                "application/json",
            )
            .await?;
        anyhow::ensure!(s == StatusCode::OK, "allocation by {by}: {v}");
        println!(
            "  by {by} (invoice total {}):",
            v["invoice_total"].as_str().unwrap_or("")
        );
        for r in v["rows"].as_array().into_iter().flatten() {
            let name = match by {
                "tag" => r["tag"]
                    .as_str()
                    .filter(|t| !t.is_empty())
                    .unwrap_or("(untagged)"),
                _ => r["account"].as_str().unwrap_or(""),
            };
            println!(
                "    {:<14} subtotal {:>9}  discount {:>7}  tax {:>6}  total {:>9}",
                name,
                r["subtotal"].as_str().unwrap_or(""),
                r["discount"].as_str().unwrap_or(""),
                r["tax"].as_str().unwrap_or(""),
                r["total"].as_str().unwrap_or("")
            );
        }
    }
    let (s, v) = client
        .call(
            "GET",
            "/v1/allocation?period=2026-11",
            team.1,
            "",
            "application/json",
        )
        .await?;
    anyhow::ensure!(s == StatusCode::OK, "allocation of {}: {v}", team.0);
    println!(
        "  {}'s own key sees only its rows: {} row(s), total {}",
        team.0,
        v["rows"].as_array().map_or(0, Vec::len),
        v["total"].as_str().unwrap_or("")
    );
    Ok(())
}

/// 2026-12-02T00:00:00Z and 2027-01-02T00:00:00Z: the tour's two closes.
const DEC_2_2026_MS: i64 = 1_796_169_600_000;
const JAN_2_2027_MS: i64 = DEC_2_2026_MS + 31 * 86_400_000;

/// Section 7 in the tour: usage of November reported after November was invoiced is issued
/// as adjustment lines on December's invoice, naming the original.
async fn late_usage_tour(client: &Client, admin: &str) -> anyhow::Result<()> {
    let late = serde_json::json!({"specversion":"1.0","id":"late-1","source":"node/late",
        "type":"gpu.usage","subject":"acct-1",
        "data":{"lease":"L-late","resource":"L-late-0","sku":"gpu.h100-80g",
                "start":"2026-11-30T10:00:00+08:00","end":"2026-11-30T12:00:00+08:00"}});
    let (s, v) = client
        .call(
            "POST",
            "/v1/events",
            admin,
            late.to_string(),
            "application/cloudevents+json",
        )
        .await?;
    anyhow::ensure!(s == StatusCode::OK, "late event: {v}");
    let (s, v) = client
        .call(
            "POST",
            "/v1/admin/invoices/close?period=2026-12",
            admin,
            "",
            "application/json",
        )
        .await?;
    anyhow::ensure!(s == StatusCode::OK, "closing 2026-12 failed: {v}");
    let inv = v
        .as_array()
        .into_iter()
        .flatten()
        .find(|i| i["account"] == "acct-1")
        .context("acct-1 December invoice")?;
    println!(
        "
Late usage: acct-1's 2 H100 hours of 2026-11-30, reported after November was invoiced,
are adjusted on its December invoice {} (total {}, November's invoice unchanged):",
        inv["number"].as_str().unwrap_or(""),
        inv["total"].as_str().unwrap_or("")
    );
    for a in inv["adjustments"].as_array().into_iter().flatten() {
        println!(
            "  adjustment of {} ({}) {:<12} {:>10}",
            a["invoice_number"].as_str().unwrap_or("-"),
            a["period"].as_str().unwrap_or(""),
            a["component"].as_str().unwrap_or(""),
            a["amount"].as_str().unwrap_or("")
        );
    }
    println!("  amount due {}", inv["amount_due"].as_str().unwrap_or(""));
    Ok(())
}

/// Issue 28 in the tour: acme's budget crossings (from the batches), then the arrears
/// sequence of acct-1, whose November invoice is unpaid 30 days after issue: started on 2
/// January, stopped a day later, cleared by a top-up that pays it; every notification as the
/// admin lists them.
async fn notifications_tour(at: &dyn Fn(i64) -> Client, admin: &str) -> anyhow::Result<()> {
    const DAY_MS: i64 = 86_400_000;
    let jan = at(JAN_2_2027_MS);
    let (s, v) = jan
        .call(
            "PUT",
            "/v1/admin/accounts/acct-1/arrears",
            admin,
            r#"{"grace_seconds":86400,"release_after_seconds":1296000}"#,
            "application/json",
        )
        .await?;
    anyhow::ensure!(s == StatusCode::OK, "arrears policy: {v}");
    for day in [0, 1] {
        let (s, v) = at(JAN_2_2027_MS + day * DAY_MS + 1000)
            .call(
                "POST",
                "/v1/admin/notify/tick",
                admin,
                "",
                "application/json",
            )
            .await?;
        anyhow::ensure!(s == StatusCode::OK, "tick: {v}");
    }
    let (s, v) = jan
        .call(
            "GET",
            "/v1/accounts/acct-1/notify",
            admin,
            "",
            "application/json",
        )
        .await?;
    anyhow::ensure!(s == StatusCode::OK, "notify state: {v}");
    let next = match v["arrears"]["next"].as_array().map(Vec::as_slice) {
        Some([step, when]) => format!(
            ", next: {} at {}",
            step.as_str().unwrap_or(""),
            billing_core::timestamp::format_secs(when.as_i64().unwrap_or(0))
        ),
        _ => String::new(),
    };
    let phase = v["arrears"]["phase"]
        .as_str()
        .unwrap_or("clear")
        .to_string();
    let (s, v) = at(JAN_2_2027_MS + 2 * DAY_MS)
        .call(
            "POST",
            "/v1/admin/accounts/acct-1/topups",
            admin,
            r#"{"amount":"1000.00","reference":"demo-arrears"}"#,
            "application/json",
        )
        .await?;
    anyhow::ensure!(s.is_success(), "top-up: {v}");
    let (s, v) = jan
        .call(
            "GET",
            "/v1/notifications?limit=100",
            admin,
            "",
            "application/json",
        )
        .await?;
    anyhow::ensure!(s == StatusCode::OK, "notifications: {v}");
    println!(
        "
Notifications (issue 28): acme's budget of 600.00 on its node, crossed by the batches; acct-1's"
    );
    println!(
        "November invoice unpaid after 30 days: arrears sequence ({phase} on 2027-01-03{next}), cleared by a top-up:"
    );
    for n in v["notifications"].as_array().into_iter().flatten() {
        let data = &n["body"]["data"];
        let what = match n["type"].as_str().unwrap_or("") {
            "budget.crossed" | "budget.resolved" => format!(
                "{}% of {} ({}): cost {}",
                data["threshold_percent"].as_str().unwrap_or(""),
                data["amount"].as_str().unwrap_or(""),
                data["measure"].as_str().unwrap_or(""),
                data["cost"].as_str().unwrap_or("")
            ),
            _ => format!(
                "phase {}, balance {}, overdue {}{}",
                data["phase"].as_str().unwrap_or(""),
                data["balance"].as_str().unwrap_or(""),
                data["overdue"],
                data["decision"]
                    .as_str()
                    .map(|d| format!(", decision {d}"))
                    .unwrap_or_default()
            ),
        };
        println!(
            "  {:<8} #{:<2} {:<16} {}  {what}",
            n["account"].as_str().unwrap_or(""),
            n["seq"],
            n["type"].as_str().unwrap_or(""),
            n["body"]["timestamp"].as_str().unwrap_or("")
        );
    }
    Ok(())
}

struct Client {
    app: axum::Router,
}

impl Client {
    async fn call(
        &self,
        method: &str,
        uri: &str,
        token: &str,
        body: impl Into<Body>,
        ctype: &str,
    ) -> anyhow::Result<(StatusCode, Value)> {
        let req = Request::builder()
            .method(method)
            .uri(uri)
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", ctype)
            .body(body.into())?;
        let resp = self.app.clone().oneshot(req).await?;
        let status = resp.status();
        let bytes = resp.into_body().collect().await?.to_bytes();
        let v = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        Ok((status, v))
    }
}

pub async fn run(args: DemoArgs) -> anyhow::Result<()> {
    let data_dir = args.data_dir.clone().unwrap_or_else(|| {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        PathBuf::from("data").join(format!("demo-{ms}"))
    });
    let mut serve = ServeArgs {
        data_dir: Some(data_dir.clone()),
        listen: Some(args.listen),
        ..ServeArgs::default()
    };
    // The demo's fleet is dated November 2026: a century of dedupe horizon keeps it
    // accepted (not `too_late`) whenever the tour runs.
    serve.intake.dedupe_horizon_days = 100 * 365;
    let settings = Settings::resolve(&serve)?;
    let app = Application::build(&settings).await?;
    let admin = app.admin_token.expose().to_string();
    // The tour runs on its own clock, so that it reads the same whenever it runs: November is
    // invoiced on 2026-12-02, December on 2027-01-02.
    let at = |ms: i64| Client {
        app: billing_api::router(billing_api::AppState {
            clock: std::sync::Arc::new(move || ms),
            ..app.state.clone()
        }),
    };
    let client = at(DEC_2_2026_MS);
    println!(
        "gpubill demo: embedded engine (SQLite) in {}",
        data_dir.display()
    );

    let (s, v) = client
        .call(
            "PUT",
            "/v1/admin/pricebook",
            &admin,
            RENTAL_BOOK,
            "application/toml",
        )
        .await?;
    anyhow::ensure!(s == StatusCode::CREATED, "price book refused: {v}");
    println!(
        "  price book v{} uploaded: H100 3.29/h in 3 graduated tiers, 30% off 22:00-06:00 Asia/Shanghai,",
        v["version"]
    );
    println!(
        "  spot 1.32/h, egress 100 GB free then 0.09/GB; acct-0 reserves 4 GPUs, acct-1 has 10% off, acct-2 a 25.00 credit;"
    );
    println!(
        "  acct-3 rents: a 2 h free trial, a 5.00 voucher expiring 11-15, stopped volumes at half rate, node faults compensated 5x"
    );
    println!(
        "  acct-4 (part 3): RTX 5090 by the started hour with a 30% launch subsidy capped at 0.25, a yearly plan ended early"
    );
    println!(
        "  with a prorata refund, an 80.00 migration fee, and H100 hours in region cn-east-1 invoiced in CNY"
    );
    let mut keys = Vec::new();
    for id in ["acct-0", "acct-1", "acct-2", "acct-3", "acct-4"] {
        let (s, v) = client
            .call(
                "POST",
                "/v1/admin/accounts",
                &admin,
                format!("{{\"id\":\"{id}\"}}"),
                "application/json",
            )
            .await?;
        anyhow::ensure!(s == StatusCode::CREATED, "account {id}: {v}");
        keys.push((id, v["api_key"].as_str().unwrap_or_default().to_string()));
    }
    // Section 18: an enterprise and its two teams, created under it.
    let mut org_keys = Vec::new();
    for (id, place) in [
        ("acme", String::new()),
        (
            "acme-train",
            r#","parent":"acme","pays":"parent""#.to_string(),
        ),
        (
            "acme-infer",
            r#","parent":"acme","pays":"parent""#.to_string(),
        ),
    ] {
        let (s, v) = client
            .call(
                "POST",
                "/v1/admin/accounts",
                &admin,
                format!("{{\"id\":\"{id}\"{place}}}"),
                "application/json",
            )
            .await?;
        anyhow::ensure!(s == StatusCode::CREATED, "account {id}: {v}");
        org_keys.push((id, v["api_key"].as_str().unwrap_or_default().to_string()));
    }

    // Issue 28: acme's budget on its node (both teams' cost), as acme's own key sets it;
    // its crossings are computed with the batches that make them.
    let (s, v) = client
        .call(
            "PUT",
            "/v1/accounts/acme/budgets/org-monthly",
            &org_keys[0].1,
            r#"{"amount":"600","thresholds":["50","80","100"],"scope":{"node":"acme"}}"#,
            "application/json",
        )
        .await?;
    anyhow::ensure!(s == StatusCode::OK, "acme's budget: {v}");

    let spec = FleetSpec {
        gpus: args.gpus,
        accounts: 3,
        start: "2026-11-02T00:00:00+08:00".into(),
        interval: 60,
        overlap: 10,
        shuffle_window: 500,
        churn_seconds: 6 * 3600,
        egress_every: 1800,
        ..FleetSpec::default()
    };
    let mut events = Vec::new();
    generate(&spec, |line| events.push(line.to_string()))?;
    events.extend(rental_events());
    events.extend(part3_events());
    events.extend(organization_events());
    let (mut accepted, mut duplicates, mut rejected) = (0, 0, 0);
    for chunk in events.chunks(1000) {
        let body = format!("[{}]", chunk.join(","));
        let (s, v) = client
            .call(
                "POST",
                "/v1/events",
                &admin,
                body,
                "application/cloudevents-batch+json",
            )
            .await?;
        anyhow::ensure!(s == StatusCode::OK, "ingest failed: {v}");
        accepted += v["accepted"].as_u64().unwrap_or(0);
        duplicates += v["duplicates"].as_u64().unwrap_or(0);
        rejected += v["rejected"].as_u64().unwrap_or(0);
    }
    println!(
        "  simulated 2026-11-02 for {} GPUs (heartbeats every 60 s, overlapping, 10% redelivered, shuffled): {} events sent, {accepted} accepted, {duplicates} duplicates, {rejected} rejected",
        args.gpus,
        events.len()
    );

    let (s, v) = client
        .call(
            "POST",
            "/v1/admin/invoices/close?period=2026-11",
            &admin,
            "",
            "application/json",
        )
        .await?;
    anyhow::ensure!(s == StatusCode::OK, "closing 2026-11 failed: {v}");
    println!("\nInvoices for 2026-11 (one per account and region, each in its currency):\n");
    println!(
        "{:<8} {:<10} {:<4} {:<18} {:>6} {:>10} {:>9} {:>9} {:>8} {:>10}",
        "account",
        "region",
        "cur",
        "invoice",
        "lines",
        "subtotal",
        "discount",
        "credit",
        "tax",
        "total"
    );
    for inv in v.as_array().context("invoices")? {
        println!(
            "{:<8} {:<10} {:<4} {:<18} {:>6} {:>10} {:>9} {:>9} {:>8} {:>10}",
            inv["account"].as_str().unwrap_or(""),
            inv["region"].as_str().unwrap_or("home"),
            inv["currency"].as_str().unwrap_or(""),
            inv["number"].as_str().unwrap_or(""),
            inv["lines"].as_array().map_or(0, Vec::len),
            inv["subtotal"].as_str().unwrap_or(""),
            inv["discount"].as_str().unwrap_or(""),
            inv["credit"].as_str().unwrap_or(""),
            inv["tax"].as_str().unwrap_or(""),
            inv["total"].as_str().unwrap_or("")
        );
    }
    let shown = v
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| matches!(i["account"].as_str(), Some("acct-0" | "acct-3" | "acct-4")));
    for first in shown {
        println!(
            "\nLines of {} ({}, {}):",
            first["account"].as_str().unwrap_or(""),
            first["region"].as_str().unwrap_or("home"),
            first["currency"].as_str().unwrap_or("")
        );
        for l in first["lines"].as_array().into_iter().flatten() {
            println!(
                "  {:<20} {:<18} tier {} x{:<5} {:>14} {:<12} {:>10}",
                l["component"].as_str().unwrap_or(""),
                l["sku"].as_str().or(l["dest"].as_str()).unwrap_or(""),
                l["tier"],
                l["multiplier"].as_str().unwrap_or("-"),
                l["quantity"].as_str().unwrap_or(""),
                l["unit"].as_str().unwrap_or(""),
                l["amount"].as_str().unwrap_or("")
            );
            for extra in [
                "package",
                "price",
                "compensation",
                "subscription",
                "refund",
                "charge",
                "description",
            ] {
                if let Some(x) = l[extra].as_str() {
                    println!("  {:<20} {extra}: {x}", "");
                }
            }
        }
    }

    organization_tour(
        &client,
        &org_keys[0].1,
        (org_keys[1].0, org_keys[1].1.as_str()),
    )
    .await?;

    late_usage_tour(&at(JAN_2_2027_MS), &admin).await?;
    notifications_tour(&at, &admin).await?;

    let base = format!("http://{}", args.listen);
    let (id0, key0) = &keys[0];
    println!("\nQuery the API as {id0} (the key is its only credential):");
    println!("  curl -s -H 'Authorization: Bearer {key0}' '{base}/v1/invoices'");
    println!(
        "  curl -s -H 'Authorization: Bearer {key0}' '{base}/v1/usage?from=2026-11-02T00:00:00Z&to=2026-11-03T00:00:00Z&granularity=hour&group_by=sku'"
    );
    println!(
        "  curl -s -H 'Authorization: Bearer {admin}' '{base}/v1/admin/exports/invoices?period=2026-11&format=csv'"
    );
    use std::io::IsTerminal;
    if args.keep_serving || (!args.no_serve && std::io::stdout().is_terminal()) {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        println!("\nServing on {base} (Ctrl-C to stop); OpenAPI at {base}/openapi.json");
        println!(
            "\nWeb console: {base}/\n  sign in as {id0} with its API key {key0}\n  (the admin token {admin} is the other sign-in: accounts, dead letters, closing)"
        );
        axum::serve(listener, billing_api::router(app.state.clone()))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
    } else {
        println!(
            "\n(run `cargo run --release -- demo --keep-serving`, or the demo in a terminal, to keep the API and its web console up and try these)"
        );
    }
    app.state.store.close().await;
    Ok(())
}
