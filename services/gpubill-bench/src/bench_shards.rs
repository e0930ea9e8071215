//! `gpubill-bench bench-kafka --shards N` (issue 29): a month of a fleet's usage folded by one
//! shard, then by N shards at once (databases alternating between two PostgreSQL servers,
//! `--postgres` and `--postgres-second`), each shard in its own consumer group reading every
//! partition and folding only its trees; then the largest tree of shard 0 is moved to shard 1
//! and the move timed. Every figure beside the bare consume rate of the same topic.
//!
//! Needs the broker and both servers: `./scripts/services.sh postgres postgres-second kafka`.

use crate::kafka_kit::*;
use billing_store::Store;
use billing_store::shard::Shard;
use gpubill_fleet::FleetSpec;
use sqlx::Row;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// CPU seconds so far of a process and its reaped children (`/proc/PID/stat`: utime, stime,
/// cutime, cstime, in clock ticks of 1/100 s), or 0 when it cannot be read.
fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // The command (field 2) may hold spaces: the fields after its closing parenthesis, where
    // the state is index 0 and utime (field 14) index 11.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (tick(11) + tick(12) + tick(13) + tick(14)) / 100.0
}

/// The PostgreSQL server's postmaster: the parent of a backend of ours.
async fn postmaster_of(server: &str) -> anyhow::Result<u32> {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&format!("{server}/postgres")).await?;
    let backend: i32 = sqlx::query("select pg_backend_pid() as pid")
        .fetch_one(&mut conn)
        .await?
        .get("pid");
    let stat = std::fs::read_to_string(format!("/proc/{backend}/stat"))?;
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    Ok(rest
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0))
}

/// The broker's process (tansu on this machine), if one runs here.
fn broker_pid() -> u32 {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                let c = String::from_utf8_lossy(&c);
                c.contains("tansu") && c.contains("broker")
            })
        })
        .unwrap_or(0)
}

/// CPU seconds of the engines (this process), each PostgreSQL server and the broker.
#[derive(Clone, Copy, Default)]
struct Cpu {
    engine: f64,
    servers: [f64; 2],
    broker: f64,
}

struct Meters {
    servers: [u32; 2],
    broker: u32,
}

impl Meters {
    fn read(&self) -> Cpu {
        Cpu {
            engine: cpu_seconds(std::process::id()),
            servers: [cpu_seconds(self.servers[0]), cpu_seconds(self.servers[1])],
            broker: cpu_seconds(self.broker),
        }
    }

    /// Prints what the phase since `before` cost, once its closed backends had time to exit
    /// and be reaped.
    async fn print(&self, what: &str, before: Cpu, wall: f64) {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let now = self.read();
        println!(
            "  CPU seconds of {what} ({wall:.1} s wall, 2 cores = {:.1}): engines {:.1}, PostgreSQL :5432 {:.1}, :5433 {:.1}, broker {:.1}",
            2.0 * wall,
            now.engine - before.engine,
            now.servers[0] - before.servers[0],
            now.servers[1] - before.servers[1],
            now.broker - before.broker
        );
    }
}

/// One shard's part of a run.
struct ShardRun {
    store: Arc<Store>,
    url: String,
    /// Distinct events it holds.
    events: i64,
    /// From its first folded batch to its last record.
    seconds: f64,
}

pub async fn run(args: &BenchKafkaArgs, shards: u32) -> anyhow::Result<()> {
    anyhow::ensure!(
        (2..=64).contains(&shards),
        "--shards must be 2 to 64 (1 is the baseline every run measures)"
    );
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis();
    let topic = format!("gpubill-bench-shards-{stamp}");
    create_topic(&args.brokers, &topic, args.partitions).await?;
    let events = month_fleet(args.events)?;
    println!(
        "topic {topic} ({} partitions), {} events of 30 days (5-min heartbeats), {} cores",
        args.partitions,
        events.len(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    produce_all(&args.brokers, &topic, &events).await?;
    let bare = bare_consume(&args.brokers, &topic, events.len()).await?;
    println!("bare consume:     {bare:>9.0} records/s (one reader of every partition)");
    let total = events.len() as i64;

    let meters = Meters {
        servers: [
            postmaster_of(&args.postgres).await?,
            postmaster_of(&args.postgres_second).await?,
        ],
        broker: broker_pid(),
    };
    // A phase's backends are closed before it is measured: their CPU is then the postmaster's
    // (reaped children).
    let before = meters.read();
    let (one, one_wall) = fold(args, &topic, stamp, 1, total).await?;
    for r in &one {
        r.store.close().await;
    }
    meters.print("1 shard", before, one_wall).await;
    let base = one[0].events as f64 / one[0].seconds;
    println!(
        "1 shard:  {:>9.0} events/s ({} events, {:.1} s)",
        base, one[0].events, one_wall
    );
    let before = meters.read();
    let (many, wall) = fold(args, &topic, stamp, shards, total).await?;
    for r in &many {
        r.store.close().await;
    }
    let held: i64 = many.iter().map(|r| r.events).sum();
    for (i, r) in many.iter().enumerate() {
        let rate = r.events as f64 / r.seconds;
        println!(
            "shard {i}/{shards} ({}): {rate:>9.0} events/s of its own ({} events, {:.1} s, reading all {} records: {:.0} records/s), {:.2} of one shard's",
            server_of(&r.url),
            r.events,
            r.seconds,
            total,
            total as f64 / r.seconds,
            rate / base
        );
    }
    println!(
        "{shards} shards together: {:>9.0} events/s ({held} events, {wall:.1} s wall), {:.2} of one shard",
        held as f64 / wall,
        held as f64 / wall / base
    );
    meters
        .print(&format!("{shards} shards"), before, wall)
        .await;

    // The move: shard 0's largest tree to shard 1, the engines stopped (nothing to fold).
    let (root, its_events) = largest_account(&many[0].url).await?;
    let open = async |r: &ShardRun, index: u32| -> anyhow::Result<Store> {
        Ok(Store::open(&r.url).await?.with_shard(Shard {
            index,
            count: shards,
        }))
    };
    let (source, target) = (open(&many[0], 0).await?, open(&many[1], 1).await?);
    let t = Instant::now();
    let report = billing_store::shard::move_tree(&source, &target, &root, &topic, now_ms()).await?;
    let moved = t.elapsed().as_secs_f64();
    let rows: u64 = report.rows.values().sum();
    println!(
        "move of {root} ({its_events} events of 30 days, {rows} rows over {} tables) from shard 0 to shard 1: {moved:.2} s",
        report.rows.len()
    );
    source.close().await;
    target.close().await;
    Ok(())
}

/// `n` events of 30 days: one GPU per lease, 5-minute heartbeats, over 64 accounts.
fn month_fleet(n: usize) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let per_gpu = 30 * 288 * 11 / 10;
    let spec = FleetSpec {
        gpus: (n / per_gpu + 1) as u32,
        gpus_per_lease: 1,
        accounts: 64,
        seconds: 30 * 86_400,
        interval: 300,
        ..FleetSpec::default()
    };
    keyed_fleet(&spec, n)
}

fn server_of(url: &str) -> &str {
    url.rsplit_once('/').map_or(url, |(server, _)| server)
}

/// Folds the topic with `count` shards at once until each has read every record; answers
/// each shard's run and the wall time from the first batch to the last shard done.
async fn fold(
    args: &BenchKafkaArgs,
    topic: &str,
    stamp: u128,
    count: u32,
    total: i64,
) -> anyhow::Result<(Vec<ShardRun>, f64)> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut runs = Vec::new();
    let mut tasks = Vec::new();
    for i in 0..count {
        let server = if i % 2 == 0 {
            &args.postgres
        } else {
            &args.postgres_second
        };
        let db = format!("gpubill_bench_{stamp}_{i}of{count}");
        {
            use sqlx::Connection;
            let mut conn = sqlx::PgConnection::connect(&format!("{server}/postgres")).await?;
            sqlx::query(&format!("create database {db}"))
                .execute(&mut conn)
                .await?;
        }
        let url = format!("{server}/{db}");
        let store = Arc::new(
            Store::open(&url)
                .await?
                .with_dedupe_horizon(100 * 365 * 86_400)
                .with_ledger_cache_keys(args.ledger_cache_keys)
                .with_shard(Shard { index: i, count }),
        );
        store.admin().put_pricebook(EXAMPLE_BOOK, now_ms()).await?;
        let mut settings = engine_settings(args, topic);
        settings.group = format!("{topic}-{i}of{count}");
        tasks.push(tokio::spawn(billing_kafka::run(
            store.clone(),
            settings,
            now_ms,
            stop_rx.clone(),
        )));
        runs.push(ShardRun {
            store,
            url,
            events: 0,
            seconds: 0.0,
        });
    }
    let mut first: Vec<Option<Instant>> = vec![None; runs.len()];
    let mut done: Vec<bool> = vec![false; runs.len()];
    let mut wall_start = None;
    while done.iter().any(|d| !d) {
        for (i, r) in runs.iter_mut().enumerate() {
            if done[i] {
                continue;
            }
            let read = folded(&r.store, topic, args.partitions).await?;
            if read > 0 {
                let t = *first[i].get_or_insert_with(Instant::now);
                wall_start.get_or_insert(t);
            }
            if read >= total {
                r.seconds = first[i].map_or(0.0, |f| f.elapsed().as_secs_f64());
                done[i] = true;
            }
        }
        for t in &tasks {
            anyhow::ensure!(!t.is_finished(), "a shard's engine stopped");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let wall = wall_start.map_or(0.0, |t: Instant| t.elapsed().as_secs_f64());
    stop_tx.send(true)?;
    for t in tasks {
        t.await??;
    }
    for r in &mut runs {
        r.events = r.store.log().event_count().await?;
    }
    Ok((runs, wall))
}

/// The account with the most events in the shard database `url`.
async fn largest_account(url: &str) -> anyhow::Result<(String, i64)> {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await?;
    let row = sqlx::query(
        "select account, count(*) as n from events group by account order by n desc, account limit 1",
    )
    .fetch_one(&mut conn)
    .await?;
    Ok((row.get("account"), row.get("n")))
}
