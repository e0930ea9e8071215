//! Issue 11: ledgers kept in memory between batches (`ledger_cache`). A batch re-rates an
//! account from memory only while nobody else wrote it and the batch that left it there
//! committed; these tests make both happen and compare every stored provisional cost with a
//! fresh rating of the ledger in the database.

use billing_store::{Outcome, Position, Store, StoreError};
use gpubill_tests::*;
use serde_json::json;

const BOOK: &str = r#"
currency = "USD"
timezone = "UTC"

[skus."gpu.h100"]
minimum_seconds = 600
tiers = [{ up_to_hours = 3, rate_per_hour = "36.00" }, { rate_per_hour = "18.00" }]
"#;

/// An hour of `g{resource}` on the 3rd of November from `hour`, as `source`.
fn usage(id: &str, resource: u32, hour: u32) -> Vec<u8> {
    json!({"specversion":"1.0","id":id,"source":format!("node/{resource}"),"type":"gpu.usage",
        "subject":"acme","data":{"lease":"L1","resource":format!("g{resource}"),"sku":"gpu.h100",
        "start":format!("2026-11-03T{hour:02}:00:00Z"),"end":format!("2026-11-03T{hour:02}:59:00Z")}})
    .to_string()
    .into_bytes()
}

fn at(expected_next: i64) -> Position<'static> {
    Position {
        consumer: "gpu.usage.v1",
        partition: 0,
        expected_next,
        dead_letter_topic: None,
    }
}

/// The stored provisional November of acme equals a fresh rating of the stored ledger, and
/// returns its total.
async fn check(store: &Store, step: &str) -> String {
    let stored = store
        .finance()
        .provisional("acme", "2026-11", DEC_2_2026_MS)
        .await
        .unwrap()
        .expect("a provisional cost");
    let (version, period) = store
        .admin()
        .pricebook_for("2026-11")
        .await
        .unwrap()
        .unwrap();
    let ledger = store.log().account_ledger("acme").await.unwrap();
    let ctx = billing_core::rating::RatingContext::new(&version.book, period);
    let fresh = billing_core::rating::rate_account(&ctx, "acme", Some(&ledger), 0.into()).unwrap();
    assert_eq!(stored.invoice, fresh.invoice, "{step}");
    stored.invoice.total.to_string()
}

async fn fold(store: &Store, offset: i64, record: &[u8]) -> Result<Vec<Outcome>, StoreError> {
    let refs: Vec<(i64, &[u8])> = vec![(offset, record)];
    store
        .log()
        .fold_partition(at(offset), &refs, DEC_2_2026_MS)
        .await
}

/// Seconds of `g{resource}` in `store`'s ledger.
async fn seconds_of(store: &Store, resource: u32) -> i64 {
    seconds_in(&store.log().account_ledger("acme").await.unwrap(), resource)
}

/// Seconds of `g{resource}` in November as the usage API reads them (from the kept ledger
/// when it is the committed one).
async fn usage_seconds_of(store: &Store, resource: u32) -> i64 {
    const NOV: (i64, i64) = (1_793_491_200, 1_796_083_200);
    seconds_in(
        &store
            .log()
            .usage_ledger("acme", NOV.0, NOV.1)
            .await
            .unwrap(),
        resource,
    )
}

fn seconds_in(ledger: &billing_core::ledger::AccountLedger, resource: u32) -> i64 {
    let name = format!("g{resource}");
    ledger
        .usage()
        .filter(|(k, _)| *k.resource == *name)
        .flat_map(|(_, runs)| runs.as_slice().iter().map(|r| r.to - r.from))
        .sum()
}

async fn a_rolled_back_batch_and_another_writer_never_reach_a_rating_from_memory(db: Db) {
    let url = fresh_db(db).await;
    let a = Store::open(&url).await.unwrap();
    let b = Store::open(&url).await.unwrap();
    a.admin().put_pricebook(BOOK, DEC_2_2026_MS).await.unwrap();

    // A folds two batches: the second is rated from the ledger A kept.
    assert_eq!(
        fold(&a, 0, &usage("e0", 0, 0)).await.unwrap(),
        [Outcome::Accepted]
    );
    assert!(a.ledger_cache_keys() >= 1);
    let one = check(&a, "after e0").await;
    fold(&a, 1, &usage("e1", 1, 1)).await.unwrap();
    let two = check(&a, "after e1").await;
    assert_ne!(one, two);

    // A batch that is fenced (its expected offset is wrong) rolls back after it was rated: the
    // ledger it left in memory has g1's second hour, which the database does not.
    let fenced = a
        .log()
        .fold_partition(at(7), &[(2, &usage("e2", 1, 2)[..])], DEC_2_2026_MS)
        .await;
    assert!(
        matches!(fenced, Err(StoreError::Fenced { .. })),
        "{fenced:?}"
    );
    assert_eq!(check(&a, "after the fenced batch").await, two);
    // g1 again: its stored runs must come from the database, not from the rolled-back memory.
    fold(&a, 2, &usage("e3", 1, 3)).await.unwrap();
    let three = check(&a, "after e3 (e2 must not count)").await;
    assert_eq!(seconds_of(&a, 1).await, 2 * 3540);

    // Another engine writes the account (its partition moved): A's next batch must see it,
    // in the rating and in g1's runs it writes back.
    fold(&b, 3, &usage("e4", 1, 4)).await.unwrap();
    let four = check(&b, "after B's e4").await;
    assert_eq!(
        usage_seconds_of(&a, 1).await,
        3 * 3540,
        "A's usage API after B's write"
    );
    fold(&a, 4, &usage("e5", 1, 5)).await.unwrap();
    let five = check(&a, "after e5 (B's e4 must count)").await;
    assert!(three != four && four != five, "{three} {four} {five}");
    assert_eq!(seconds_of(&a, 1).await, 4 * 3540);

    // A kept ledger serves the next batch of the same key (nobody else wrote): still exact.
    fold(&a, 5, &usage("e6", 1, 6)).await.unwrap();
    check(&a, "after e6").await;
    assert_eq!(seconds_of(&a, 1).await, 5 * 3540);
    assert_eq!(usage_seconds_of(&a, 1).await, 5 * 3540);

    // And with the cache disabled the figures are the same.
    let c = Store::open(&url).await.unwrap().with_ledger_cache_keys(0);
    fold(&c, 6, &usage("e7", 1, 7)).await.unwrap();
    check(&c, "after e7, no cache").await;
    assert_eq!(c.ledger_cache_keys(), 0);
    fold(&a, 7, &usage("e8", 2, 8)).await.unwrap();
    check(&a, "after e8").await;
    assert_eq!(seconds_of(&a, 1).await, 6 * 3540);
}
on_both!(a_rolled_back_batch_and_another_writer_never_reach_a_rating_from_memory);
