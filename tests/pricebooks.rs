//! Issue 24.9, what a price book version costs: only the versions that can still rate a
//! period stay compiled (the latest, and a few older ones compiled on demand from the stored
//! TOML), so memory does not grow with every upload, and invoices are the same as ever.

use billing_store::Store;
use gpubill_tests::*;
use rust_decimal::Decimal;
use serde_json::json;

const DAY_MS: i64 = 86_400_000;
const FEB_2_2027_MS: i64 = JAN_2_2027_MS + 31 * DAY_MS;
/// The latest version and two older ones compiled on demand.
const HELD_MAX: usize = 3;

/// One sku at `rate` per hour; `head` goes before the tables (e.g. `effective_from`).
fn book(head: &str, rate: u32) -> String {
    format!(
        "{head}currency = \"USD\"\ntimezone = \"UTC\"\n\n[skus.\"gpu.h100\"]\nrate_per_hour = \"{rate}.00\"\n"
    )
}

/// One hour of usage of `acme` starting at `start` (RFC 3339, whole hour).
fn hour(id: &str, day: &str) -> Vec<u8> {
    json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage","subject":"acme",
        "data":{"lease":format!("L-{id}"),"resource":"g0","sku":"gpu.h100",
            "start":format!("{day}T00:00:00Z"),"end":format!("{day}T01:00:00Z")}})
    .to_string()
    .into_bytes()
}

fn accepted(o: billing_store::Outcome) {
    assert!(matches!(o, billing_store::Outcome::Accepted), "{o:?}");
}

fn dec(s: &str) -> Decimal {
    s.parse().unwrap()
}

async fn provisional_total(store: &Store, period: &str, now_ms: i64) -> Decimal {
    store
        .finance()
        .provisional("acme", period, now_ms)
        .await
        .unwrap()
        .unwrap()
        .invoice
        .total
}

/// Six versions at 10, 20, ..., 60 per hour: November closed with version 1, December rated
/// by version 6, a late November hour re-rated at the December close with version 1 (compiled
/// again on demand), January rated by version 6 while a version 7 effective from February
/// waits. The store never holds more than the latest and two older versions compiled.
async fn only_the_versions_that_rate_a_period_stay_compiled(db: Db) {
    let store = Store::open(&fresh_db(db).await).await.unwrap();
    store
        .admin()
        .put_pricebook(&book("", 10), DEC_2_2026_MS)
        .await
        .unwrap();
    store
        .log()
        .ingest(vec![hour("n1", "2026-11-10")], DEC_2_2026_MS)
        .await
        .unwrap()
        .into_iter()
        .for_each(accepted);
    let nov = store
        .finance()
        .close_period("2026-11", DEC_2_2026_MS)
        .await
        .unwrap();
    assert_eq!(nov[0].invoice.total, dec("10.00"));
    assert_eq!(nov[0].pricebook_version, 1);

    // December's usage first: every upload re-rates its provisional cost.
    store
        .log()
        .ingest(vec![hour("d1", "2026-12-01")], DEC_2_2026_MS)
        .await
        .unwrap()
        .into_iter()
        .for_each(accepted);
    let mut upload_compiles = Vec::new();
    for rate in [20, 30, 40, 50, 60] {
        let before = store.pricebook_compiles();
        store
            .admin()
            .put_pricebook(&book("", rate), DEC_2_2026_MS)
            .await
            .unwrap();
        upload_compiles.push(store.pricebook_compiles() - before);
        assert!(
            store.compiled_pricebooks() <= HELD_MAX,
            "{} versions held after uploading {rate}",
            store.compiled_pricebooks()
        );
    }
    let before = store.pricebook_compiles();
    store
        .log()
        .ingest(vec![hour("d2", "2026-12-02")], DEC_2_2026_MS)
        .await
        .unwrap()
        .into_iter()
        .for_each(accepted);
    let ingest_compiles = store.pricebook_compiles() - before;
    assert!(
        store.compiled_pricebooks() <= HELD_MAX,
        "{} versions held after an ingest",
        store.compiled_pricebooks()
    );
    // Each upload compiles the new version, never the earlier ones again; an ingest after
    // them compiles nothing (the upload left the latest compiled).
    assert_eq!(upload_compiles, [1, 1, 1, 1, 1]);
    assert_eq!(ingest_compiles, 0);
    assert_eq!(
        provisional_total(&store, "2026-12", DEC_2_2026_MS).await,
        dec("120.00")
    );

    // A late November hour: the December close re-rates November with version 1.
    store
        .log()
        .ingest(vec![hour("n2", "2026-11-11")], JAN_2_2027_MS)
        .await
        .unwrap()
        .into_iter()
        .for_each(accepted);
    let before = store.pricebook_compiles();
    let decm = store
        .finance()
        .close_period("2026-12", JAN_2_2027_MS)
        .await
        .unwrap();
    assert!(
        store.pricebook_compiles() > before,
        "version 1 compiled again"
    );
    assert!(store.compiled_pricebooks() <= HELD_MAX);
    assert_eq!(decm[0].pricebook_version, 6);
    assert_eq!(decm[0].invoice.total, dec("120.00"));
    assert_eq!(
        serde_json::to_value(&decm[0].adjustments).unwrap(),
        json!([{"period":"2026-11","invoice_id":nov[0].id,"invoice_number":nov[0].number,
                "component":"on_demand","amount":"10.00"}])
    );
    assert_eq!(decm[0].amount_due, dec("130.00"));

    // Version 7 rates from February: January is still rated by version 6.
    store
        .admin()
        .put_pricebook(
            &book("effective_from = \"2027-02-01T00:00:00Z\"\n", 70),
            JAN_2_2027_MS,
        )
        .await
        .unwrap();
    store
        .log()
        .ingest(vec![hour("j1", "2027-01-01")], JAN_2_2027_MS)
        .await
        .unwrap()
        .into_iter()
        .for_each(accepted);
    assert!(store.compiled_pricebooks() <= HELD_MAX);
    assert_eq!(
        provisional_total(&store, "2027-01", JAN_2_2027_MS).await,
        dec("60.00")
    );
    let jan = store
        .finance()
        .close_period("2027-01", FEB_2_2027_MS)
        .await
        .unwrap();
    assert_eq!(jan[0].pricebook_version, 6);
    assert_eq!(jan[0].invoice.total, dec("60.00"));
    assert!(jan[0].adjustments.is_empty());
    store
        .log()
        .ingest(vec![hour("f1", "2027-02-01")], FEB_2_2027_MS)
        .await
        .unwrap()
        .into_iter()
        .for_each(accepted);
    assert_eq!(
        provisional_total(&store, "2027-02", FEB_2_2027_MS).await,
        dec("70.00")
    );
    assert!(store.compiled_pricebooks() <= HELD_MAX);
}
on_both!(only_the_versions_that_rate_a_period_stay_compiled);
