//! A deterministic GPU fleet generator: nodes heartbeating usage of their GPUs as CloudEvents,
//! with overlapping intervals, redeliveries, vGPU shares, spot, lease churn and egress.
//! Used by `gpubill simulate` and `gpubill demo` (services/gpubill) and by `gpubill-bench bench`
//! and `gpubill-bench bench-kafka` (services/gpubill-bench); a library of its own so that the
//! benchmark binary and the production one share it.

use anyhow::Context;
use billing_core::timestamp::{Timestamp, format_secs};
use clap::Args;

/// splitmix64: small, fast, deterministic; quality is ample for workload generation.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `permille / 1000`.
    pub fn chance(&mut self, permille: u32) -> bool {
        self.below(1000) < permille as u64
    }
}

#[derive(Args, Debug, Clone)]
pub struct FleetSpec {
    /// Number of GPUs in the fleet.
    #[arg(long, default_value_t = 64)]
    pub gpus: u32,
    /// GPUs per lease (a lease belongs to one account).
    #[arg(long, default_value_t = 8)]
    pub gpus_per_lease: u32,
    /// Number of accounts the leases are spread over.
    #[arg(long, default_value_t = 8)]
    pub accounts: u32,
    /// Start of the simulated window (RFC 3339).
    #[arg(long, default_value = "2026-11-02T00:00:00Z")]
    pub start: String,
    /// Length of the simulated window in seconds.
    #[arg(long, default_value_t = 86_400)]
    pub seconds: i64,
    /// Heartbeat interval in seconds.
    #[arg(long, default_value_t = 30)]
    pub interval: i64,
    /// Seconds each heartbeat overlaps the previous one.
    #[arg(long, default_value_t = 5)]
    pub overlap: i64,
    /// Per mille of events delivered twice.
    #[arg(long, default_value_t = 100)]
    pub redeliver_permille: u32,
    /// Per mille of leases that run on spot.
    #[arg(long, default_value_t = 100)]
    pub spot_permille: u32,
    /// Per mille of leases that rent quarter vGPU shares.
    #[arg(long, default_value_t = 100)]
    pub vgpu_permille: u32,
    /// Lease churn: every lease ends and a new one starts after this many seconds (0 = never).
    #[arg(long, default_value_t = 0)]
    pub churn_seconds: i64,
    /// Emit an egress event per lease every this many seconds (0 = none).
    #[arg(long, default_value_t = 3600)]
    pub egress_every: i64,
    /// Hold back this many events and release them in random order (out-of-order delivery).
    #[arg(long, default_value_t = 0)]
    pub shuffle_window: usize,
    /// Seed of the generator: the same seed gives the same events.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

impl Default for FleetSpec {
    fn default() -> Self {
        FleetSpec {
            gpus: 64,
            gpus_per_lease: 8,
            accounts: 8,
            start: "2026-11-02T00:00:00Z".into(),
            seconds: 86_400,
            interval: 30,
            overlap: 5,
            redeliver_permille: 100,
            spot_permille: 100,
            vgpu_permille: 100,
            churn_seconds: 0,
            egress_every: 3600,
            shuffle_window: 0,
            seed: 42,
        }
    }
}

pub const SKU_GPU: &str = "gpu.h100-80g";
pub const SKU_VGPU: &str = "vgpu.h100-quarter";

/// Calls `emit` with every event (one JSON line, no newline), in delivery order.
pub fn generate(spec: &FleetSpec, mut emit: impl FnMut(&str)) -> anyhow::Result<()> {
    let start = Timestamp::parse_rfc3339(&spec.start)
        .with_context(|| format!("--start {:?} is not an RFC 3339 time", spec.start))?
        .secs;
    anyhow::ensure!(
        spec.interval > 0 && spec.overlap >= 0,
        "--interval must be positive"
    );
    anyhow::ensure!(
        spec.gpus_per_lease > 0 && spec.accounts > 0,
        "--gpus-per-lease and --accounts must be positive"
    );
    let mut rng = Rng::new(spec.seed);
    let leases = spec.gpus.div_ceil(spec.gpus_per_lease);
    let kinds: Vec<(bool, bool)> = (0..leases)
        .map(|_| {
            (
                rng.chance(spec.spot_permille),
                rng.chance(spec.vgpu_permille),
            )
        })
        .collect();
    let mut held: Vec<String> = Vec::with_capacity(spec.shuffle_window);
    let mut out = |line: String, rng: &mut Rng, emit: &mut dyn FnMut(&str)| {
        if spec.shuffle_window == 0 {
            emit(&line);
            return;
        }
        held.push(line);
        if held.len() > spec.shuffle_window {
            let i = rng.below(held.len() as u64) as usize;
            let l = held.swap_remove(i);
            emit(&l);
        }
    };
    let mut seq: u64 = 0;
    let mut t = start + spec.interval;
    while t <= start + spec.seconds {
        for g in 0..spec.gpus {
            let lease_no = g / spec.gpus_per_lease;
            let account = lease_no % spec.accounts;
            let epoch = if spec.churn_seconds > 0 {
                (t - start - 1) / spec.churn_seconds
            } else {
                0
            };
            let (spot, vgpu) = kinds[lease_no as usize];
            let from = (t - spec.interval - spec.overlap).max(start);
            seq += 1;
            let line = format!(
                r#"{{"specversion":"1.0","id":"hb-{start}-{seq}","source":"node/n{node}","type":"gpu.usage","subject":"acct-{account}","time":"{time}","data":{{"lease":"l-{lease_no}-{epoch}","resource":"GPU-{g}","sku":"{sku}","class":"{class}","start":"{from}","end":"{time}","quantity":"{q}"}}}}"#,
                node = g / 8,
                time = format_secs(t),
                from = format_secs(from),
                sku = if vgpu { SKU_VGPU } else { SKU_GPU },
                class = if spot { "spot" } else { "on_demand" },
                q = if vgpu { "0.25" } else { "1" },
            );
            if rng.chance(spec.redeliver_permille) {
                out(line.clone(), &mut rng, &mut emit);
            }
            out(line, &mut rng, &mut emit);
        }
        if spec.egress_every > 0 && (t - start) % spec.egress_every == 0 {
            for lease_no in 0..leases {
                seq += 1;
                let line = format!(
                    r#"{{"specversion":"1.0","id":"eg-{start}-{seq}","source":"gw/g{gw}","type":"net.egress","subject":"acct-{account}","time":"{time}","data":{{"lease":"l-{lease_no}","dest":"{dest}","bytes":{bytes}}}}}"#,
                    gw = lease_no % 4,
                    account = lease_no % spec.accounts,
                    time = format_secs(t),
                    dest = if lease_no % 3 == 0 {
                        "cross_region"
                    } else {
                        "internet"
                    },
                    bytes = rng.below(20_000_000_000),
                );
                out(line, &mut rng, &mut emit);
            }
        }
        t += spec.interval;
    }
    rng.0 ^= seq;
    while !held.is_empty() {
        let i = rng.below(held.len() as u64) as usize;
        let l = held.swap_remove(i);
        emit(&l);
    }
    Ok(())
}
