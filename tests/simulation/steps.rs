//! The schedule's steps: setup, faults, ingest, admin commands, authorizations and releases.

use crate::records::{hostile_record, price_book, usage, valid_event};
use crate::{Expected, NOV_1_S, Req, SKUS, Sim};
use axum::http::StatusCode;
use gpubill_tests::*;
use serde_json::{Value, json};
use std::time::Duration;

/// Accounts, the first price book and one valid event per account (every account is billed).
pub(crate) async fn setup(sim: &mut Sim, exp: &mut Expected, accounts: &[&str]) {
    for a in accounts {
        let (s, v) = sim
            .admin(
                "POST",
                "/v1/admin/accounts".into(),
                json!({"id": a}).to_string(),
                format!("account-{a}"),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
    }
    upload_book(sim, exp, accounts, u64::MAX).await;
    let first: Vec<String> = accounts
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let s = NOV_1_S + 3600 * i as i64;
            usage(
                1,
                &format!("first-{a}"),
                a,
                ["L0", "g0", "gpu.h100", "1"],
                (s, s + 600),
            )
        })
        .collect();
    send_batch(sim, exp, first, 0).await;
}

/// Before a step, the seed may restart the engine (perhaps losing the next answer), arm a
/// fail point (the engine dies inside a transaction), a connection cut or a stall on the
/// PostgreSQL link, crash PostgreSQL (it restarts while the step runs), or take the broker
/// down (Kafka mode) for a number of failed requests.
pub(crate) async fn fault(sim: &mut Sim) {
    sim.restarted().await;
    sim.crashes_before_step = sim.stats.pg_restarts;
    if sim.rng.permille(80) {
        sim.restart().await;
    }
    if sim.rng.permille(100) {
        let points = billing_store::FAIL_POINTS;
        let point = points[sim.rng.below(points.len() as u64) as usize];
        let skip = sim.rng.below(3);
        sim.app().state.store.arm_failpoint(point, skip).unwrap();
        sim.stats.failpoints_armed += 1;
    }
    if sim.rng.permille(60) {
        sim.lose_next = true;
    }
    if let Some(p) = &sim.proxy {
        if sim.rng.permille(250) {
            p.cut_after(1 + sim.rng.below(40) as i64);
            sim.stats.cuts_armed += 1;
        }
        if sim.rng.permille(80) {
            p.stall_after(1 + sim.rng.below(40) as i64);
            sim.stats.stalls_armed += 1;
        }
    }
    if let Some(pg) = sim.server.clone()
        && sim.rng.permille(60)
    {
        let delay = Duration::from_millis(sim.rng.below(20));
        sim.stats.pg_restarts += 1;
        sim.restarting = Some(tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            tokio::task::spawn_blocking(move || pg.restart())
                .await
                .unwrap();
        }));
    }
    if let Some(rig) = sim.rig.as_mut()
        && sim.rng.permille(150)
    {
        rig.down(1 + sim.rng.below(4) as u32);
    }
}

pub(crate) async fn ingest(
    sim: &mut Sim,
    exp: &mut Expected,
    accounts: &[&str],
    n: &mut u64,
    step: u64,
) {
    let mut records = Vec::new();
    for _ in 0..1 + sim.rng.below(30) {
        *n += 1;
        let now_s = sim.now_ms() / 1000;
        records.push(valid_event(&mut sim.rng, *n, accounts, now_s));
    }
    // Exact redeliveries of anything sent before.
    let sent: Vec<String> = exp.valid.values().cloned().collect();
    for _ in 0..sim.rng.below(6) {
        if !sent.is_empty() {
            records.push(sent[sim.rng.below(sent.len() as u64) as usize].clone());
        }
    }
    // Conflicting redeliveries: an acknowledged event's identity with other content.
    let mut bad = 0;
    for _ in 0..sim.rng.below(3) {
        if !exp.acked.is_empty() {
            let who = exp.acked[sim.rng.below(exp.acked.len() as u64) as usize].clone();
            let mut v: Value = serde_json::from_str(&exp.valid[&who]).unwrap();
            v["data"]["quantity"] = json!(format!("{}", 16 + sim.rng.below(100)));
            records.push(v.to_string());
            bad += 1;
        }
    }
    let mut alone = Vec::new();
    for k in 0..sim.rng.below(4) {
        match hostile_record(&mut sim.rng, step * 10 + k) {
            (true, r) => alone.push(r),
            (false, r) => {
                records.push(r);
                bad += 1;
            }
        }
    }
    shuffle(&mut records, sim.rng.next());
    send_batch(sim, exp, records, bad).await;
    for r in alone {
        send_one_hostile(sim, exp, r).await;
    }
}

/// A record that cannot share a batch, sent alone as a structured CloudEvent.
pub(crate) async fn send_one_hostile(sim: &mut Sim, exp: &mut Expected, record: String) {
    sim.stats.records_sent += 1;
    let req = Req {
        method: "POST",
        uri: "/v1/events".into(),
        token: INGEST,
        ctype: "application/cloudevents+json",
        body: record.clone(),
        key: None,
    };
    let (mut sure, mut maybe) = (0, 0);
    let (s, v) = sim
        .send(&req, |answered, _, _| {
            if answered {
                sure += 1;
            } else {
                maybe += 1;
            }
        })
        .await;
    exp.dead_sure += sure;
    exp.dead_maybe += maybe;
    assert_eq!(
        (s, v["rejected"].as_u64()),
        (StatusCode::OK, Some(1)),
        "{record}: {v}"
    );
}

/// Sends one batch (`bad` of its records must be dead-lettered) until answered; remembers
/// what it holds.
pub(crate) async fn send_batch(sim: &mut Sim, exp: &mut Expected, records: Vec<String>, bad: u64) {
    for r in &records {
        let Ok(v) = serde_json::from_str::<Value>(r) else {
            continue;
        };
        if let (Some(src), Some(id)) = (v["source"].as_str(), v["id"].as_str())
            && src.starts_with("node/")
            && !src.ends_with('9')
        {
            exp.valid
                .entry((src.to_string(), id.to_string()))
                .or_insert_with(|| r.clone());
        }
    }
    sim.stats.records_sent += records.len() as u64;
    let req = Req {
        method: "POST",
        uri: "/v1/events".into(),
        token: INGEST,
        ctype: "application/cloudevents-batch+json",
        body: format!("[{}]", records.join(",")),
        key: None,
    };
    let (mut sure, mut maybe) = (0, 0);
    let (s, v) = sim
        .send(&req, |answered, _, _| {
            if answered {
                sure += bad;
            } else {
                maybe += bad;
            }
        })
        .await;
    exp.dead_sure += sure;
    exp.dead_maybe += maybe;
    assert_eq!(s, StatusCode::OK, "{v}");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), records.len(), "{v}");
    for (r, record) in results.iter().zip(&records) {
        let status = r["status"].as_str().unwrap_or_default();
        let identity = serde_json::from_str::<Value>(record).ok().and_then(|e| {
            Some((
                e["source"].as_str()?.to_string(),
                e["id"].as_str()?.to_string(),
            ))
        });
        match identity
            .as_ref()
            .and_then(|i| exp.valid.get(i).map(|c| (i, c)))
        {
            Some((i, content)) if content == record => {
                assert!(
                    status == "accepted" || status == "duplicate",
                    "{record}: {r}"
                );
                if !exp.acked.contains(i) {
                    exp.acked.push(i.clone());
                }
            }
            // Kafka mode settles conflicts when it folds (then dead-lettered).
            Some(_) if sim.rig.is_some() => assert_eq!(status, "accepted", "{record}: {r}"),
            Some(_) => assert_eq!(r["reason"], "conflict", "{record}: {r}"),
            None => {
                assert_eq!(status, "rejected", "{record}: {r}");
                assert!(r["reason"].as_str().is_some_and(|x| !x.is_empty()), "{r}");
            }
        }
    }
}

pub(crate) async fn upload_book(sim: &mut Sim, exp: &mut Expected, accounts: &[&str], step: u64) {
    let book = price_book(&mut sim.rng, accounts);
    let r = Req {
        method: "PUT",
        uri: "/v1/admin/pricebook".into(),
        token: ADMIN,
        ctype: "application/toml",
        body: book.clone(),
        key: Some(format!("book-{step}")),
    };
    let (s, v) = sim.send(&r, |_, _, _| {}).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    exp.book = Some(book);
}

/// Credit terms: November's until its close, then December's (a closed period's terms are
/// left alone).
pub(crate) async fn credit(sim: &mut Sim, exp: &mut Expected, accounts: &[&str], step: u64) {
    let a = accounts[sim.rng.below(accounts.len() as u64) as usize];
    let amount = format!("{}.{:02}", sim.rng.below(80), sim.rng.below(100));
    let (id, from, to, terms) = match exp.november {
        None => ("sim", "2026-11-01", "2026-12-01", &mut exp.credits),
        Some(_) => ("sim-dec", "2026-12-01", "2027-01-01", &mut exp.dec_credits),
    };
    let body = json!({"amount": amount, "from": format!("{from}T00:00:00Z"), "to": format!("{to}T00:00:00Z")});
    let (s, v) = sim
        .admin(
            "PUT",
            format!("/v1/admin/accounts/{a}/terms/credits/{id}-{a}"),
            body.to_string(),
            format!("credit-{step}"),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    terms.insert(a.to_string(), amount);
}

pub(crate) async fn quotas(sim: &mut Sim, accounts: &[&str], step: u64) {
    let a = accounts[sim.rng.below(accounts.len() as u64) as usize];
    let body = json!({
        "prepaid_balance": format!("{}.00", 50 + sim.rng.below(500)),
        "gpu_hours": {"gpu.h100": format!("{}", 1 + sim.rng.below(40))},
    });
    let (s, v) = sim
        .admin(
            "PUT",
            format!("/v1/admin/accounts/{a}/quotas"),
            body.to_string(),
            format!("quotas-{step}"),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
}

pub(crate) async fn authorize(sim: &mut Sim, exp: &mut Expected, accounts: &[&str]) {
    let a = accounts[sim.rng.below(accounts.len() as u64) as usize];
    let mut body = json!({"account": a, "sku": SKUS[sim.rng.below(2) as usize],
        "quantity": format!("{}", 1 + sim.rng.below(8)), "seconds": 60 + sim.rng.below(3600)});
    if sim.rng.permille(500) {
        body["lease"] = json!(format!("L-{a}-{}", sim.rng.below(3)));
    }
    let r = Req {
        method: "POST",
        uri: "/v1/authorize".into(),
        token: INGEST,
        ctype: "application/json",
        body: body.to_string(),
        key: None,
    };
    // Not idempotent: every attempt but the last answered one may have left a hold.
    let mut attempts = 0;
    let (s, v) = sim.send(&r, |_, _, _| attempts += 1).await;
    exp.authorize_unanswered += attempts - 1;
    assert_eq!(s, StatusCode::OK, "{v}");
    match v["decision"].as_str() {
        Some("allowed") => {
            let id = v["hold"].as_str().unwrap().to_string();
            exp.grant_epoch.insert(id.clone(), sim.crashes_before_step);
            exp.granted.insert(id);
        }
        Some("denied") => {}
        _ => panic!("authorize: {v}"),
    }
}

pub(crate) async fn release(sim: &mut Sim, exp: &mut Expected) {
    let open: Vec<&String> = exp
        .granted
        .iter()
        .filter(|h| !exp.released.contains(*h) && !exp.lost.contains(*h))
        .collect();
    if open.is_empty() {
        return;
    }
    let id = open[sim.rng.below(open.len() as u64) as usize].clone();
    let r = Req {
        method: "POST",
        uri: format!("/v1/holds/{id}/release"),
        token: INGEST,
        ctype: "application/json",
        body: String::new(),
        key: None,
    };
    let mut released = false;
    let (s, v) = sim
        .send(&r, |_, s, v| {
            released |= s == StatusCode::OK && v["status"] == "released"
        })
        .await;
    if s == StatusCode::NOT_FOUND && may_be_lost(sim, exp, &id) {
        exp.lost.insert(id);
        return;
    }
    assert!(
        s == StatusCode::OK || s == StatusCode::CONFLICT,
        "release {id}: {s} {v}"
    );
    if released {
        exp.released.insert(id);
    }
}

/// Whether a PostgreSQL crash may have taken hold `id` away (see `Expected::grant_epoch`).
pub(crate) fn may_be_lost(sim: &Sim, exp: &Expected, id: &str) -> bool {
    !sim.durable_holds && sim.stats.pg_restarts > exp.grant_epoch[id]
}
