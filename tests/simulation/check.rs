//! The invariants every run ends with.

use crate::{Expected, Sim};
use billing_store::Store;
use gpubill_tests::*;
use rust_decimal::Decimal;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// Checks every invariant; returns how many holds and quota decisions the run left.
pub(crate) async fn check(sim: &Sim, exp: &Expected) -> (u64, u64) {
    let store = &sim.app().state.store;
    // (a) November's invoices equal `gpubill rate` over the events its close saw, with the
    // book and credit terms then in force.
    let (nov_book, nov_events) = exp.november.clone().expect("November was closed");
    let issued_nov = issued(store, "2026-11").await;
    for i in &issued_nov {
        assert!(i.get("adjustments").is_none(), "{i}");
    }
    let offline = offline_invoices(&nov_book, &nov_events, "2026-11");
    assert_eq!(
        issued_nov.len(),
        offline.len(),
        "accounts differ: {issued_nov:?}"
    );
    for (got, want) in issued_nov.iter().zip(&offline) {
        assert_eq!(got, want, "November's invoice differs from gpubill rate");
    }
    // (a') December's invoices equal `gpubill rate` over December's events (all accepted),
    // and their adjustment lines add up, per account, to `gpubill rate` over all November
    // events (with November's book) minus what November's invoice said.
    let all: Vec<String> = exp.valid.values().cloned().collect();
    let dec_offline = offline_invoices(&exp.book_with_credits(), &all, "2026-12");
    let nov_again = offline_invoices(&nov_book, &all, "2026-11");
    let mut dec = issued(store, "2026-12").await;
    assert_eq!(dec.len(), dec_offline.len(), "accounts differ: {dec:?}");
    for (i, (got, want)) in dec.iter_mut().zip(&dec_offline).enumerate() {
        let adjustments = got.as_object_mut().unwrap().remove("adjustments");
        got.as_object_mut().unwrap().remove("credit_note");
        assert_eq!(&*got, want, "December's invoice differs from gpubill rate");
        let sum: Decimal = adjustments
            .iter()
            .flat_map(|a| a.as_array().unwrap().iter())
            .map(|l| {
                assert_eq!(l["period"], "2026-11", "{l}");
                l["amount"].as_str().unwrap().parse::<Decimal>().unwrap()
            })
            .sum();
        assert_eq!(want["account"], issued_nov[i]["account"]);
        let total = |v: &Value| v["total"].as_str().unwrap().parse::<Decimal>().unwrap();
        assert_eq!(
            sum,
            total(&nov_again[i]) - total(&issued_nov[i]),
            "{}: November's adjustments",
            want["account"]
        );
    }
    // (b) Every distinct valid event accepted once; the dead letters are the hostile and
    // conflicting records, each with a reason, none of them an accepted event's content.
    assert_eq!(
        store.log().event_count().await.unwrap(),
        exp.valid.len() as i64
    );
    let mut dead = Vec::new();
    loop {
        let after = dead.last().map_or(0, |d: &billing_store::DeadLetter| d.seq);
        let page = store.log().dead_letters(after, 1000).await.unwrap();
        if page.is_empty() {
            break;
        }
        dead.extend(page);
    }
    let n = dead.len() as u64;
    assert!(
        exp.dead_sure <= n && n <= exp.dead_sure + exp.dead_maybe,
        "{n} dead letters, expected {} (+ up to {} from unanswered attempts)",
        exp.dead_sure,
        exp.dead_maybe
    );
    for d in &dead {
        assert!(!d.reason.as_str().is_empty(), "{d:?}");
        if let (Some(src), Some(id)) = (&d.source, &d.event_id)
            && let Some(content) = exp.valid.get(&(src.clone(), id.clone()))
        {
            let a: Option<Value> = serde_json::from_str(content).ok();
            let b: Option<Value> = serde_json::from_str(&d.payload).ok();
            assert_ne!(a, b, "accepted and dead-lettered: {d:?}");
        }
    }
    // (c) Holds: each granted one exists once; ours released are released; holds we never
    // heard of come from unanswered authorizations, and nobody released them.
    let rows = billing_store::db::query("select id, status from holds")
        .fetch_all(store.pool())
        .await
        .unwrap();
    let mut holds: HashMap<String, String> = HashMap::new();
    for r in rows {
        let id: String = r.get(0);
        assert!(
            holds.insert(id.clone(), r.get(1)).is_none(),
            "hold {id} twice"
        );
    }
    for id in &exp.granted {
        let Some(status) = holds.get(id) else {
            assert!(
                crate::may_be_lost(sim, exp, id),
                "hold {id} lost (durable holds: {})",
                sim.durable_holds
            );
            continue;
        };
        if exp.released.contains(id) {
            assert_eq!(status, "released", "hold {id}");
        } else {
            assert!(
                ["live", "captured", "expired", "released"].contains(&status.as_str()),
                "hold {id}: {status}"
            );
        }
    }
    let holds_n = holds.len() as u64;
    let unknown: Vec<_> = holds
        .iter()
        .filter(|(id, _)| !exp.granted.contains(*id))
        .collect();
    assert!(
        unknown.len() as u64 <= exp.authorize_unanswered,
        "{} holds nobody was told of, {} unanswered authorizations",
        unknown.len(),
        exp.authorize_unanswered
    );
    for (id, status) in unknown {
        assert_ne!(status, "released", "hold {id} released by nobody");
    }
    // (d) Quota decisions: ids unique, and no level decided twice in a row.
    let rows = billing_store::db::query(
        "select id, account, quota, period, kind from quota_decisions order by seq",
    )
    .fetch_all(store.pool())
    .await
    .unwrap();
    let mut ids = BTreeSet::new();
    let mut last: HashMap<(String, String, String), String> = HashMap::new();
    for r in rows {
        let id: String = r.get(0);
        assert!(ids.insert(id.clone()), "decision {id} twice");
        let kind: String = r.get(4);
        let prev = last.insert((r.get(1), r.get(2), r.get(3)), kind.clone());
        assert_ne!(
            prev.as_deref(),
            Some(kind.as_str()),
            "decision {id}: {kind} twice in a row"
        );
    }
    // The auditor's recomputation agrees.
    let report = store.finance().verify(None).await.unwrap();
    assert!(
        report.differences.is_empty(),
        "verify: {:?}",
        report.differences
    );
    (holds_n, ids.len() as u64)
}

/// A period's issued invoices reduced to the section 6 fields (and the adjustment lines and
/// credit note a December invoice may carry), by account.
async fn issued(store: &Store, period: &str) -> Vec<Value> {
    let mut issued: Vec<Value> = store
        .finance()
        .invoices(None, Some(period))
        .await
        .unwrap()
        .iter()
        .map(|i| section6(&serde_json::to_value(i).unwrap()))
        .collect();
    issued.sort_by(|a, b| a["account"].as_str().cmp(&b["account"].as_str()));
    issued
}
