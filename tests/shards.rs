//! Issue 29, shards of whole organization trees: two shards on two PostgreSQL servers consume
//! one usage topic, each in its own consumer group, and fold only the trees whose root hashes
//! to them. Checked against one unsharded store fed the same records: every invoice of the
//! deployment is issued by exactly one shard, equal to the unsharded one's; each record is
//! folded by exactly one shard (platform events by every shard, an undecodable record by
//! shard 0 alone); a tree is never split.

use billing_store::shard::{Shard, shard_of_root};
use gpubill_tests::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// 2026-11-01T00:00:00Z (the book's timezone is UTC).
const NOV_1: i64 = 1_793_491_200;

/// `corp` pays for `ml` and `web` (one tree, pooled tiers); the `t-*` accounts pay for
/// themselves.
const BOOK: &str = r#"
currency = "CNY"
timezone = "UTC"

[skus."gpu.o"]
tiers = [ { up_to_hours = 10, rate_per_hour = "30.00" }, { rate_per_hour = "20.00" } ]
spot_rate_per_hour = "12.00"

[[accounts]]
id = "corp"

[[accounts]]
id = "ml"
parent = "corp"
pays = "parent"

[[accounts]]
id = "web"
parent = "corp"
pays = "parent"
"#;

fn usage(id: &str, account: &str, start_h: i64, hours: i64) -> String {
    let start = NOV_1 + start_h * 3600;
    json!({"specversion":"1.0","id":id,"source":"node/1","type":"gpu.usage",
        "subject":account,"data":{"lease":format!("L-{account}"),"resource":"r1","sku":"gpu.o",
        "start":rfc(start),"end":rfc(start + hours * 3600),"quantity":"1"}})
    .to_string()
}

/// A platform event: it names a zone, not an account, and every shard folds it.
fn spot_price(id: &str) -> String {
    json!({"specversion":"1.0","id":id,"source":"market/gz","type":"spot.price","subject":"gz-a",
        "data":{"sku":"gpu.o","price_per_hour":"7.5","from":"2026-11-01T00:00:00Z"}})
    .to_string()
}

/// Folds `topic` into `t` with the consumer group `group` until its stored positions add up
/// to `records` (each shard reads every partition).
async fn consume_all(t: &TestApp, topic: &str, group: &str, records: i64) {
    let (stop, task) = engine(t, topic, group);
    wait_stored(t, topic, records).await;
    stop.send(true).unwrap();
    task.await.unwrap().unwrap();
}

/// Invoices of a close by account, in section 6's terms (no numbers: each shard numbers its
/// own series).
fn by_account(closed: &Value) -> BTreeMap<String, Value> {
    closed
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["account"].as_str().unwrap().to_string(), section6(i)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_shards_on_two_servers_fold_disjoint_trees_and_issue_the_whole_deployments_invoices() {
    let topic = topic_with_partitions(4).await;
    create_topic(&format!("{topic}.dlq"), 1).await;
    let standalone: Vec<String> = (0..16).map(|i| format!("t-{i}")).collect();
    let mut events = vec![
        usage("c1", "corp", 0, 2),
        usage("m1", "ml", 1, 6),
        usage("m2", "ml", 30, 3),
        usage("w1", "web", 2, 4),
        spot_price("sp1"),
    ];
    for (i, a) in standalone.iter().enumerate() {
        events.push(usage(&format!("{a}-u1"), a, i as i64, 1 + i as i64 % 5));
        events.push(usage(&format!("{a}-u2"), a, 40 + i as i64, 11));
    }
    // Every event once on a spread of partitions, a third of them twice (a redelivery on
    // another partition), and one record no shard can decode.
    let mut records: Vec<(i32, String)> = vec![(2, "not an event".to_string())];
    for (i, e) in events.iter().enumerate() {
        records.push(((i % 4) as i32, e.clone()));
        if i % 3 == 0 {
            records.push((((i + 1) % 4) as i32, e.clone()));
        }
    }
    produce(&topic, &records).await;
    let total = records.len() as i64;

    let whole = TestApp::fresh(Db::Postgres).await;
    let shards = [
        TestApp::open_shard(&fresh_db_at(&postgres_base()).await, "0/2".parse().unwrap()).await,
        TestApp::open_shard(
            &fresh_db_at(&postgres_second_base()).await,
            "1/2".parse().unwrap(),
        )
        .await,
    ];
    for t in std::iter::once(&whole).chain(&shards) {
        t.put_pricebook(BOOK).await;
    }
    consume_all(&whole, &topic, &format!("{topic}-whole"), total).await;
    for (i, t) in shards.iter().enumerate() {
        consume_all(t, &topic, &format!("{topic}-shard-{i}"), total).await;
    }

    // Each tree on the shard its root hashes to, whole: the usage events of its accounts.
    let home = |account: &str| {
        let root = if ["ml", "web"].contains(&account) {
            "corp"
        } else {
            account
        };
        shard_of_root(root, 2) as usize
    };
    let per_shard = |s: usize| {
        events
            .iter()
            .filter(|e| {
                let v: Value = serde_json::from_str(e).unwrap();
                v["type"] == "spot.price" || home(v["subject"].as_str().unwrap()) == s
            })
            .count() as i64
    };
    for (s, t) in shards.iter().enumerate() {
        assert_eq!(
            t.state.store.log().event_count().await.unwrap(),
            per_shard(s),
            "shard {s}'s identities: its trees' events and the spot price"
        );
        assert!(per_shard(s) > 5, "both shards hold some trees");
    }
    assert_eq!(
        whole.state.store.log().event_count().await.unwrap(),
        events.len() as i64
    );
    // Every record is folded by one shard and left by the other, except the spot price,
    // which both fold (it was produced once or twice: sp1 is event 4, produced once).
    let left: u64 = shards
        .iter()
        .map(|t| t.state.store.records_for_other_shards())
        .sum();
    assert_eq!(
        left as i64,
        total - 1,
        "each record left by exactly one shard"
    );
    // The undecodable record is dead-lettered once, by shard 0.
    let dead: Vec<usize> = dead_letter_counts(&shards).await;
    assert_eq!(dead, [1, 0]);
    // The platform event reached both shards.
    for t in &shards {
        let (_, p) = t.admin("GET", "/v1/prices", "").await;
        assert_eq!(p["skus"][0]["spot_rate_per_hour"], "7.50", "{p}");
    }

    // The invoices: the unsharded store's, each issued by exactly one shard, equal.
    let expected = by_account(&whole.close("2026-11").await);
    let mut issued: BTreeMap<String, Value> = BTreeMap::new();
    for (s, t) in shards.iter().enumerate() {
        for (account, invoice) in by_account(&t.close("2026-11").await) {
            assert_eq!(home(&account), s, "{account} invoiced on shard {s}");
            assert!(
                issued.insert(account.clone(), invoice).is_none(),
                "{account} invoiced twice"
            );
        }
    }
    assert_eq!(issued, expected);
    assert_eq!(
        expected.len(),
        1 + standalone.len(),
        "corp pays for ml and web"
    );
    assert!(
        expected["corp"]["lines"].as_array().unwrap().len() >= 2,
        "{}",
        expected["corp"]
    );
}

async fn dead_letter_counts(shards: &[TestApp]) -> Vec<usize> {
    let mut out = Vec::new();
    for t in shards {
        out.push(t.state.store.log().dead_letters(0, 10).await.unwrap().len());
    }
    out
}

#[test]
fn a_shard_flag_names_its_form_when_wrong() {
    for bad in ["2", "2/2", "x/2"] {
        let e = bad.parse::<Shard>().unwrap_err().to_string();
        assert!(e.contains("INDEX/COUNT"), "{e}");
    }
}

/// Folds `topic` into `t` in the group `group` until `stop`, on a task (the engine running).
fn engine(
    t: &TestApp,
    topic: &str,
    group: &str,
) -> (
    tokio::sync::watch::Sender<bool>,
    tokio::task::JoinHandle<Result<(), billing_kafka::KafkaError>>,
) {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut settings = billing_kafka::ConsumerSettings::new(brokers(), topic);
    settings.group = group.to_string();
    settings.dead_letter_topic = Some(format!("{topic}.dlq"));
    settings.batch_max = 7;
    let task = tokio::spawn(billing_kafka::run(
        t.state.store.clone(),
        settings,
        || DEC_2_2026_MS,
        stop_rx,
    ));
    (stop_tx, task)
}

async fn wait_stored(t: &TestApp, topic: &str, records: i64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    while stored_positions(&t.state.store, topic).await < records {
        assert!(
            std::time::Instant::now() < deadline,
            "{} of {records} records folded in 90 s",
            stored_positions(&t.state.store, topic).await
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// A month of the `corp` tree and of the others, in three waves on the four partitions.
fn wave(n: i64) -> Vec<(i32, String)> {
    let mut out = Vec::new();
    for (i, a) in ["corp", "ml", "web", "t-1", "t-2", "t-3", "t-4"]
        .iter()
        .enumerate()
    {
        for k in 0..6 {
            let start_h = n * 200 + k * 30 + i as i64;
            let e = usage(&format!("{a}-w{n}-{k}"), a, start_h, 1 + k % 3);
            out.push((((i as i64 + k) % 4) as i32, e.clone()));
            if k == 2 {
                // Redelivered on another partition: the shard that folds it finds it held.
                out.push((((i as i64 + k + 1) % 4) as i32, e));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_tree_moves_to_another_shard_while_usage_flows_and_bills_as_if_it_never_moved() {
    let topic = topic_with_partitions(4).await;
    create_topic(&format!("{topic}.dlq"), 1).await;
    let whole = TestApp::fresh(Db::Postgres).await;
    let home = shard_of_root("corp", 2);
    let other = 1 - home;
    let url = |i: u32| {
        if i == 0 {
            postgres_base()
        } else {
            postgres_second_base()
        }
    };
    let mut shards = Vec::new();
    for i in 0..2u32 {
        let shard = Shard { index: i, count: 2 };
        shards.push(TestApp::open_shard(&fresh_db_at(&url(i)).await, shard).await);
    }
    for t in std::iter::once(&whole).chain(&shards) {
        t.put_pricebook(BOOK).await;
    }
    // The tree's account, key and wallet, where it is held: they move with it.
    for t in [&whole, &shards[home as usize]] {
        t.account("corp").await;
        let (s, _) = t
            .admin(
                "POST",
                "/v1/admin/accounts/corp/topups",
                json!({"amount":"500.00","reference":"bank-1"}).to_string(),
            )
            .await;
        assert!(s.is_success(), "{s}");
    }
    let mut sent = 0i64;
    let first = wave(0);
    sent += first.len() as i64;
    produce(&topic, &first).await;
    let engines: Vec<_> = shards
        .iter()
        .enumerate()
        .map(|(i, t)| engine(t, &topic, &format!("{topic}-s{i}")))
        .collect();
    let whole_engine = engine(&whole, &topic, &format!("{topic}-whole"));
    for t in &shards {
        wait_stored(t, &topic, sent).await;
    }
    // The second wave is produced while the tree moves; the engines keep running.
    let second = wave(1);
    sent += second.len() as i64;
    let producing = {
        let topic = topic.clone();
        tokio::spawn(async move {
            for chunk in second.chunks(5) {
                produce(&topic, chunk).await;
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        })
    };
    let (source, target) = (&shards[home as usize], &shards[other as usize]);
    let move_corp = || move_corp(source, target, &topic);
    let report = move_corp().await.unwrap();
    assert_eq!((report.from, report.to), (home, other));
    assert_eq!(report.accounts, ["corp", "ml", "web"]);
    for table in [
        "events",
        "ledger_keys",
        "usage_facts",
        "wallets",
        "wallet_movements",
    ] {
        assert!(report.rows.get(table).is_some_and(|n| *n > 0), "{report:?}");
    }
    producing.await.unwrap();
    // The third wave, and the first wave's records of the tree again: the target holds their
    // identities now, so they are duplicates there, not new usage.
    let mut third = wave(2);
    third.extend(
        first
            .iter()
            .filter(|(_, e)| {
                ["\"corp\"", "\"ml\"", "\"web\""]
                    .iter()
                    .any(|a| e.contains(a))
            })
            .cloned(),
    );
    sent += third.len() as i64;
    produce(&topic, &third).await;
    for t in std::iter::once(&whole).chain(&shards) {
        wait_stored(t, &topic, sent).await;
    }
    for (stop, task) in engines.into_iter().chain([whole_engine]) {
        stop.send(true).unwrap();
        task.await.unwrap().unwrap();
    }
    // Every event held once, by the shard that held its tree when it was folded, then moved.
    let counts: Vec<i64> = event_counts(&shards).await;
    assert_eq!(
        counts.iter().sum::<i64>(),
        whole.state.store.log().event_count().await.unwrap()
    );
    // Moving it again to where it is now, or from where it is not, is refused by name.
    let again = move_corp().await.unwrap_err().to_string();
    assert!(
        again.contains("\"corp\"") && again.contains("does not hold it"),
        "{again}"
    );

    let expected = by_account(&whole.close("2026-11").await);
    let mut issued: BTreeMap<String, Value> = BTreeMap::new();
    for (s, t) in shards.iter().enumerate() {
        for (account, invoice) in by_account(&t.close("2026-11").await) {
            let holder = if account == "corp" {
                other
            } else {
                shard_of_root(&account, 2)
            };
            assert_eq!(holder as usize, s, "{account} invoiced on shard {s}");
            issued.insert(account, invoice);
        }
    }
    assert_eq!(issued, expected);
    // The wallet moved with its movements: corp's balance is the same as the whole's.
    let balance = |t: &TestApp| {
        let store = t.state.store.clone();
        async move { store.finance().wallet("corp").await.unwrap() }
    };
    assert_eq!(balance(target).await, balance(&whole).await);
    // The auditor's check passes on both shards.
    for t in &shards {
        let report = t.state.store.finance().verify(None).await.unwrap();
        assert!(report.differences.is_empty(), "{:?}", report.differences);
    }
}

async fn event_counts(shards: &[TestApp]) -> Vec<i64> {
    let mut out = Vec::new();
    for t in shards {
        out.push(t.state.store.log().event_count().await.unwrap());
    }
    out
}

/// Moves the tree `corp` from `source` to `target`, the cutover at `topic`'s positions.
async fn move_corp(
    source: &TestApp,
    target: &TestApp,
    topic: &str,
) -> Result<billing_store::shard::MoveReport, billing_store::StoreError> {
    billing_store::shard::move_tree(
        &source.state.store,
        &target.state.store,
        "corp",
        topic,
        DEC_2_2026_MS,
    )
    .await
}

/// Serves `router` on a port of its own; answers its base URL.
async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn any_shards_api_answers_for_every_tree_by_forwarding_to_its_holder() {
    use axum::http::StatusCode;
    use billing_store::shard::directory::Directory;
    let directory_url = fresh_db_at(&postgres_base()).await;
    let directory = Directory::open(&directory_url).await.unwrap();
    let mut shards = Vec::new();
    for i in 0..2u32 {
        let base = if i == 0 {
            postgres_base()
        } else {
            postgres_second_base()
        };
        let url = fresh_db_at(&base).await;
        let shard = Shard { index: i, count: 2 };
        let mut t = TestApp::open_shard(&url, shard).await;
        t.put_pricebook(BOOK).await;
        t.state.shards = Some(std::sync::Arc::new(billing_api::shards::ShardRoutes::new(
            shard,
            Directory::open(&directory_url).await.unwrap(),
        )));
        t.app = billing_api::router(t.state.clone());
        let api = serve(t.app.clone()).await;
        directory.put_shard(shard, &url, &api).await.unwrap();
        shards.push(t);
    }
    let home = shard_of_root("corp", 2) as usize;
    let other = 1 - home;
    let (h, o) = (&shards[home], &shards[other]);

    // Made through the shard that does not hold the tree: it is made on the holder.
    let (s, made) = o
        .admin(
            "POST",
            "/v1/admin/accounts",
            json!({"id":"corp"}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{made}");
    let key = made["api_key"].as_str().unwrap().to_string();
    let known = |t: &TestApp| {
        let store = t.state.store.clone();
        async move { store.admin().known_accounts().await.unwrap() }
    };
    assert!(known(h).await.contains("corp"));
    assert!(!known(o).await.contains("corp"));
    // The key lives with its account: the other shard forwards the key's requests.
    let (s, me) = o.get("/v1/me", &key).await;
    assert_eq!(
        (s, me["account"].as_str()),
        (StatusCode::OK, Some("corp")),
        "{me}"
    );
    let direct = h.admin("GET", "/v1/admin/accounts/ml/terms", "").await;
    let forwarded = o.admin("GET", "/v1/admin/accounts/ml/terms", "").await;
    assert_eq!(direct, forwarded, "ml is in corp's tree");
    // A tree the shard holds is answered there.
    let own = (0..50)
        .map(|i| format!("t-{i}"))
        .find(|a| shard_of_root(a, 2) as usize == other)
        .unwrap();
    let (s, _) = o
        .admin("POST", "/v1/admin/accounts", json!({"id": own}).to_string())
        .await;
    assert_eq!(s, StatusCode::CREATED);
    assert!(known(o).await.contains(&own) && !known(h).await.contains(&own));
    // A key no shard holds is refused as everywhere.
    let (s, _) = o.get("/v1/me", &format!("gbk_{}", "0".repeat(64))).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);

    // Once the tree moved, the former holder forwards its requests to the new one.
    let report = billing_store::shard::move_tree(
        &h.state.store,
        &o.state.store,
        "corp",
        "gpu.usage.v1",
        DEC_2_2026_MS,
    )
    .await
    .unwrap();
    directory
        .placed("corp", report.to, report.moves, DEC_2_2026_MS)
        .await
        .unwrap();
    assert!(known(o).await.contains("corp") && !known(h).await.contains("corp"));
    let (s, me) = h.get("/v1/me", &key).await;
    assert_eq!(
        (s, me["account"].as_str()),
        (StatusCode::OK, Some("corp")),
        "{me}"
    );
    let (s, _) = h.admin("GET", "/v1/admin/accounts/corp/terms", "").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(directory.holder("corp", 2).await.unwrap() as usize, other);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_tree_with_issued_invoices_moves_with_their_numbers_and_both_shards_verify() {
    let topic = topic_with_partitions(4).await;
    create_topic(&format!("{topic}.dlq"), 1).await;
    let home = shard_of_root("corp", 2) as usize;
    let other = 1 - home;
    let mut shards = Vec::new();
    for (i, base) in [postgres_base(), postgres_second_base()].iter().enumerate() {
        let shard = Shard {
            index: i as u32,
            count: 2,
        };
        let t = TestApp::open_shard(&fresh_db_at(base).await, shard).await;
        t.put_pricebook(BOOK).await;
        shards.push(t);
    }
    // November, closed on both shards: each numbers its own series.
    let november = wave(0);
    produce(&topic, &november).await;
    let mut sent = november.len() as i64;
    for (i, t) in shards.iter().enumerate() {
        consume_all(t, &topic, &format!("{topic}-{i}"), sent).await;
    }
    // Each tree numbers its own series, whichever shard issues: its first invoice is its 1.
    let mut numbers: BTreeMap<String, String> = BTreeMap::new();
    for t in &shards {
        for inv in t.close("2026-11").await.as_array().unwrap() {
            let (account, number) = (
                inv["account"].as_str().unwrap(),
                inv["number"].as_str().unwrap(),
            );
            assert_eq!(number, format!("INV-{account}-2026-000001"));
            numbers.insert(account.into(), number.into());
        }
    }
    let report = billing_store::shard::move_tree(
        &shards[home].state.store,
        &shards[other].state.store,
        "corp",
        &topic,
        DEC_2_2026_MS,
    )
    .await
    .unwrap();
    assert_eq!(report.rows.get("invoices"), Some(&1), "{report:?}");
    // The tree's series went with it: the new holder continues it, the old one has none.
    let series = async |t: &TestApp| -> Vec<(String, i64)> {
        billing_store::db::query(
            "select series, last from number_series where series like 'INV-corp%' order by 1",
        )
        .fetch_all(t.state.store.pool())
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.get("series"), r.get("last")))
        .collect()
    };
    assert_eq!(series(&shards[other]).await, [("INV-corp".to_string(), 1)]);
    assert!(series(&shards[home]).await.is_empty());
    // The moved invoice keeps its number, and each shard's auditor's check passes.
    let moved = shards[other]
        .state
        .store
        .finance()
        .invoices(Some("corp"), None)
        .await
        .unwrap();
    assert_eq!(moved.len(), 1);
    assert_eq!(moved[0].number.as_str(), numbers["corp"]);
    for t in &shards {
        let report = t.state.store.finance().verify(None).await.unwrap();
        assert!(report.differences.is_empty(), "{:?}", report.differences);
    }
    // December on the new holder, which continues the tree's series (issued in 2027).
    let december: Vec<(i32, String)> = ["corp", "ml", "t-1"]
        .iter()
        .enumerate()
        .map(|(i, a)| (i as i32, usage(&format!("{a}-dec"), a, 30 * 24 + 2, 3)))
        .collect();
    produce(&topic, &december).await;
    sent += december.len() as i64;
    for (i, t) in shards.iter().enumerate() {
        consume_all(t, &topic, &format!("{topic}-{i}"), sent).await;
    }
    let shards: Vec<TestApp> = shards.into_iter().map(|t| t.at(JAN_2_2027_MS)).collect();
    let december = shards[other].close("2026-12").await;
    let corp = december
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["account"] == "corp")
        .unwrap();
    // The number a run that never moved the tree gives it: the tree's series, not the
    // shard's.
    assert_eq!(corp["number"], "INV-corp-2027-000001", "{corp}");
    shards[home].close("2026-12").await;
    for t in &shards {
        let report = t.state.store.finance().verify(None).await.unwrap();
        assert!(report.differences.is_empty(), "{:?}", report.differences);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_cannot_join_a_tree_another_shard_holds() {
    use axum::http::StatusCode;
    let mut shards = Vec::new();
    for i in 0..2u32 {
        let t = TestApp::open_shard(
            &fresh_db_at(&postgres_base()).await,
            Shard { index: i, count: 2 },
        )
        .await;
        t.put_pricebook(BOOK).await;
        shards.push(t);
    }
    let corp = shard_of_root("corp", 2) as usize;
    let elsewhere: Vec<String> = (0..50)
        .map(|i| format!("t-{i}"))
        .filter(|a| shard_of_root(a, 2) as usize != corp)
        .take(2)
        .collect();
    let (stranger, neighbour) = (&elsewhere[0], &elsewhere[1]);
    let t = &shards[1 - corp];
    t.account(stranger).await;
    t.account(neighbour).await;
    let reparent = |account: &str, parent: &str| {
        (
            format!("/v1/admin/accounts/{account}/terms/accounts/{account}"),
            json!({"parent": parent, "pays": "parent"}).to_string(),
        )
    };
    let (uri, body) = reparent(stranger, "corp");
    let (s, v) = t.admin("PUT", &uri, body).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    let text = v.to_string();
    assert!(
        text.contains(stranger.as_str())
            && text.contains("corp")
            && text.contains("gpubill shards move"),
        "{text}"
    );
    // Within the trees one shard holds, an account may change parents.
    let (uri, body) = reparent(stranger, neighbour);
    let (s, v) = t.admin("PUT", &uri, body).await;
    assert!(s.is_success(), "{s}: {v}");
    // A price book that puts an account of one shard under a tree of the other is refused by
    // the shard holding the account's data.
    let split = format!("{BOOK}\n[[accounts]]\nid = \"{neighbour}\"\nparent = \"ml\"\n");
    {
        let (s, v) = t
            .call(
                "PUT",
                "/v1/admin/pricebook",
                Some(ADMIN),
                "application/toml",
                split.clone(),
            )
            .await;
        assert_eq!(s, StatusCode::CONFLICT, "{v}");
    }
}

/// Two shards on the two servers, each relaying its commands to a topic of its own, with
/// the book: (shard, server, app).
async fn replayable_shards(topics: &billing_store::Topics) -> Vec<(Shard, String, TestApp)> {
    let mut shards = Vec::new();
    for (i, base) in [postgres_base(), postgres_second_base()].iter().enumerate() {
        let shard = Shard {
            index: i as u32,
            count: 2,
        };
        create_topic(&shard.own(&topics.commands), 1).await;
        let t = TestApp::open_shard_with(&fresh_db_at(base).await, shard, topics.clone()).await;
        t.put_pricebook(BOOK).await;
        shards.push((shard, base.clone(), t));
    }
    shards
}

/// `shard` replayed from its commands and the usage `topic` into a fresh database on `base`;
/// the replay folded recorded folds.
async fn replayed(
    shard: Shard,
    base: &str,
    topics: &billing_store::Topics,
    topic: &str,
) -> TestApp {
    let b = TestApp::open_shard_with(&fresh_db_at(base).await, shard, topics.clone()).await;
    let report = billing_kafka::replay(
        b.state.store.clone(),
        billing_kafka::ReplaySettings::new(brokers(), topic, &shard.own(&topics.commands)),
        || JAN_2_2027_MS,
    )
    .await
    .unwrap();
    assert!(report.folds > 0, "{report:?}");
    b
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_shard_replays_from_its_own_commands_into_byte_identical_projections() {
    let (topic, topics) = replayable_topics().await;
    let shards = replayable_shards(&topics).await;
    let records = wave(0);
    produce(&topic, &records).await;
    for (shard, _, t) in &shards {
        consume_all(
            t,
            &topic,
            &format!("{topic}-{}", shard.suffix()),
            records.len() as i64,
        )
        .await;
        t.close("2026-11").await;
        relay_all(t).await;
    }
    for (shard, base, a) in &shards {
        let b = replayed(*shard, base, &topics, &topic).await;
        assert_eq!(
            projections(&a.state.store).await,
            projections(&b.state.store).await,
            "shard {shard}"
        );
        assert!(b.state.store.records_for_other_shards() > 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_move_that_fails_is_abandoned_or_finished_and_bills_as_if_it_never_moved() {
    let topic = topic_with_partitions(4).await;
    create_topic(&format!("{topic}.dlq"), 1).await;
    let whole = TestApp::fresh(Db::Postgres).await;
    let (home, other) = (
        shard_of_root("corp", 2) as usize,
        1 - shard_of_root("corp", 2) as usize,
    );
    let mut shards = Vec::new();
    for (i, base) in [postgres_base(), postgres_second_base()].iter().enumerate() {
        let shard = Shard {
            index: i as u32,
            count: 2,
        };
        shards.push(TestApp::open_shard(&fresh_db_at(base).await, shard).await);
    }
    for t in std::iter::once(&whole).chain(&shards) {
        t.put_pricebook(BOOK).await;
    }
    let first = wave(0);
    produce(&topic, &first).await;
    let mut sent = first.len() as i64;
    consume_all(&whole, &topic, &format!("{topic}-whole"), sent).await;
    for (i, t) in shards.iter().enumerate() {
        consume_all(t, &topic, &format!("{topic}-{i}"), sent).await;
    }
    let (source, target) = (&shards[home], &shards[other]);
    let move_corp = || move_corp(source, target, &topic);
    let known = |t: &TestApp| {
        let store = t.state.store.clone();
        async move { store.admin().known_accounts().await.unwrap() }
    };
    // Dies after the target committed the rows, before the source let go: abandoned.
    source
        .state
        .store
        .arm_failpoint("move.before_source_commit", 0)
        .unwrap();
    let e = move_corp().await.unwrap_err().to_string();
    assert!(e.contains("move.before_source_commit"), "{e}");
    assert!(
        known(target).await.contains("ml"),
        "the target committed the rows"
    );
    assert!(
        known(source).await.contains("ml"),
        "the source still holds them"
    );
    billing_store::shard::abandon_move(
        &source.state.store,
        &target.state.store,
        "corp",
        JAN_2_2027_MS,
    )
    .await
    .unwrap();
    assert!(!known(target).await.contains("ml"));
    // Dies after the source let go, before the target took the records: finished by moving
    // again (abandoning is refused then).
    source
        .state
        .store
        .arm_failpoint("move.before_activate", 0)
        .unwrap();
    let e = move_corp().await.unwrap_err().to_string();
    assert!(e.contains("move.before_activate"), "{e}");
    let refused = billing_store::shard::abandon_move(
        &source.state.store,
        &target.state.store,
        "corp",
        JAN_2_2027_MS,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(refused.contains("let go"), "{refused}");
    let finished = move_corp().await.unwrap();
    assert_eq!((finished.moves, finished.rows.len()), (1, 0));
    assert!(known(target).await.contains("ml") && !known(source).await.contains("ml"));

    let second = wave(1);
    produce(&topic, &second).await;
    sent += second.len() as i64;
    consume_all(&whole, &topic, &format!("{topic}-whole"), sent).await;
    for (i, t) in shards.iter().enumerate() {
        consume_all(t, &topic, &format!("{topic}-{i}"), sent).await;
    }
    let expected = by_account(&whole.close("2026-11").await);
    let mut issued = BTreeMap::new();
    for t in &shards {
        issued.extend(by_account(&t.close("2026-11").await));
    }
    assert_eq!(issued, expected);
    assert!(by_account(&target.close("2026-11").await).contains_key("corp"));
}

/// Nothing is shared between shards: with shard 0's database locked for writing (its writer
/// advisory lock held, as a close or a move holds it), shard 1 folds all of its records, and
/// shard 0 folds its own once the lock goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_shard_held_up_holds_up_no_other_shard() {
    use sqlx::Connection;
    let topic = topic_with_partitions(4).await;
    create_topic(&format!("{topic}.dlq"), 1).await;
    let urls = [
        fresh_db_at(&postgres_base()).await,
        fresh_db_at(&postgres_second_base()).await,
    ];
    let mut shards = Vec::new();
    for (i, url) in urls.iter().enumerate() {
        let shard = Shard {
            index: i as u32,
            count: 2,
        };
        let t = TestApp::open_shard(url, shard).await;
        t.put_pricebook(BOOK).await;
        shards.push(t);
    }
    // The writer lock of billing-store's `conn/locks.rs` (0x0067_7075_6269_6c6c, "gpubill"),
    // held exclusively for the session.
    let mut blocker = sqlx::PgConnection::connect(&urls[0]).await.unwrap();
    sqlx::query("select pg_advisory_lock(29115572065758316)")
        .execute(&mut blocker)
        .await
        .unwrap();
    let records = wave(0);
    produce(&topic, &records).await;
    let total = records.len() as i64;
    let engines: Vec<_> = shards
        .iter()
        .enumerate()
        .map(|(i, t)| engine(t, &topic, &format!("{topic}-{i}")))
        .collect();
    wait_stored(&shards[1], &topic, total).await;
    assert!(shards[1].state.store.log().event_count().await.unwrap() > 0);
    assert_eq!(
        stored_positions(&shards[0].state.store, &topic).await,
        0,
        "shard 0 waits for its lock"
    );
    sqlx::query("select pg_advisory_unlock(29115572065758316)")
        .execute(&mut blocker)
        .await
        .unwrap();
    wait_stored(&shards[0], &topic, total).await;
    assert!(shards[0].state.store.log().event_count().await.unwrap() > 0);
    for (stop, task) in engines {
        stop.send(true).unwrap();
        task.await.unwrap().unwrap();
    }
}

/// Folds everything produced so far (`sent` records) into each shard.
async fn fold_on_each(shards: &[(Shard, String, TestApp)], topic: &str, sent: i64) {
    for (shard, _, t) in shards {
        consume_all(t, topic, &format!("{topic}-{}", shard.suffix()), sent).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shards_replay_across_moves_and_an_abandoned_one_into_byte_identical_projections() {
    let (topic, topics) = replayable_topics().await;
    let home = shard_of_root("corp", 2) as usize;
    let other = 1 - home;
    let shards = replayable_shards(&topics).await;
    let mut sent = 0;
    for n in 0..4 {
        let records = wave(n);
        produce(&topic, &records).await;
        sent += records.len() as i64;
        fold_on_each(&shards, &topic, sent).await;
        let (home_app, other_app) = (&shards[home].2, &shards[other].2);
        match n {
            // The tree goes to the other shard, its records from the cutover on with it.
            0 => {
                move_corp(home_app, other_app, &topic).await.unwrap();
            }
            // It comes back to its hash home.
            1 => {
                move_corp(other_app, home_app, &topic).await.unwrap();
            }
            // It goes away again, but the first attempt dies after the target wrote the rows,
            // and is abandoned; the second is made to the end. The tree stays away: a replay
            // that ignored the moves would leave its history on its hash home.
            2 => {
                home_app
                    .state
                    .store
                    .arm_failpoint("move.before_source_commit", 0)
                    .unwrap();
                move_corp(home_app, other_app, &topic).await.unwrap_err();
                billing_store::shard::abandon_move(
                    &home_app.state.store,
                    &other_app.state.store,
                    "corp",
                    JAN_2_2027_MS,
                )
                .await
                .unwrap();
                move_corp(home_app, other_app, &topic).await.unwrap();
            }
            _ => {}
        }
    }
    for (_, _, t) in &shards {
        t.close("2026-11").await;
        relay_all(t).await;
    }
    for (shard, base, a) in &shards {
        let b = replayed(*shard, base, &topics, &topic).await;
        let live = projections(&a.state.store).await;
        // The tree's whole usage is on the shard that holds it at the end, not its hash home.
        assert_eq!(
            live.iter().any(|l| l.starts_with("fact|corp|")),
            shard.index as usize == other,
            "shard {shard}"
        );
        assert_eq!(live, projections(&b.state.store).await, "shard {shard}");
    }
    // The live shards' books: the tree's invoice on its holder only, and verify passes.
    for (_, _, t) in &shards {
        let report = t.state.store.finance().verify(None).await.unwrap();
        assert!(report.differences.is_empty(), "{:?}", report.differences);
    }
}
