//! Issue 11, bounded storage: the dedupe horizon (`too_late`) and compaction of identities.

use billing_store::{Outcome, Store};
use gpubill_tests::*;
use serde_json::json;

const BOOK: &str = r#"
currency = "USD"
timezone = "UTC"

[skus."gpu.h100"]
rate_per_hour = "36.00"
"#;

const DAY_MS: i64 = 86_400_000;

fn usage(id: &str, start: &str, end: &str) -> Vec<u8> {
    usage_of("acme", id, start, end)
}

fn usage_of(account: &str, id: &str, start: &str, end: &str) -> Vec<u8> {
    json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage","subject":account,
        "data":{"lease":"L1","resource":"g0","sku":"gpu.h100","start":start,"end":end}})
    .to_string()
    .into_bytes()
}

fn statuses(out: &[Outcome]) -> Vec<String> {
    out.iter()
        .map(|o| match o {
            Outcome::Accepted => "accepted".to_string(),
            Outcome::Duplicate => "duplicate".to_string(),
            Outcome::Rejected { reason, .. } => reason.to_string(),
        })
        .collect()
}

async fn compaction_never_changes_an_invoice_nor_lets_an_event_count_twice(db: Db) {
    let store = Store::open(&fresh_db(db).await)
        .await
        .unwrap()
        .with_dedupe_horizon(90 * 86_400);
    store.put_pricebook(BOOK, DEC_2_2026_MS).await.unwrap();
    let nov = usage("n1", "2026-11-03T00:00:00Z", "2026-11-03T01:00:00Z");
    let dec = usage("d1", "2026-12-01T00:00:00Z", "2026-12-01T01:00:00Z");
    let old = usage_of(
        "oldco",
        "o1",
        "2026-11-04T00:00:00Z",
        "2026-11-04T01:00:00Z",
    );
    let out = store
        .ingest(vec![nov.clone(), dec.clone(), old], DEC_2_2026_MS)
        .await
        .unwrap();
    assert_eq!(statuses(&out), ["accepted", "accepted", "accepted"]);
    let issued = store.close_period("2026-11", DEC_2_2026_MS).await.unwrap();
    let before: Vec<String> = issued
        .iter()
        .map(|i| serde_json::to_string(&i.invoice).unwrap())
        .collect();
    // Inside the horizon nothing is dropped and a redelivery is a duplicate.
    assert_eq!(store.compact(DEC_2_2026_MS).await.unwrap(), 0);
    let out = store
        .ingest(vec![nov.clone()], DEC_2_2026_MS)
        .await
        .unwrap();
    assert_eq!(statuses(&out), ["duplicate"]);
    // 100 days on: November's identity goes (its period is closed and past the horizon),
    // December's stays (December is open).
    let later = DEC_2_2026_MS + 100 * DAY_MS;
    assert_eq!(store.compact(later).await.unwrap(), 2);
    assert_eq!(store.event_count().await.unwrap(), 1);
    // An account whose every identity is gone is still known (later periods invoice it).
    assert!(store.known_accounts().await.unwrap().contains("oldco"));
    // A redelivery of the compacted event is refused, never counted again.
    let out = store.ingest(vec![nov], later).await.unwrap();
    assert_eq!(statuses(&out), ["too_late"]);
    let after: Vec<String> = store
        .invoices(None, Some("2026-11"))
        .await
        .unwrap()
        .iter()
        .map(|i| serde_json::to_string(&i.invoice).unwrap())
        .collect();
    assert_eq!(before, after);
    let ledger = store.account_ledger("acme").await.unwrap();
    let seconds: i64 = ledger.usage().map(|(_, r)| r.covered_seconds()).sum();
    assert_eq!(seconds, 7200, "the ledger keeps both hours");
}
on_both!(compaction_never_changes_an_invoice_nor_lets_an_event_count_twice);
