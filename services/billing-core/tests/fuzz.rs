//! Fuzzing on the stable toolchain (issue 14): a small mutation fuzzer over the checked-in
//! corpus (`fuzz/corpus/<target>/`), one target per door where outside bytes come in:
//!
//! - `event`: the JSON event reader and validation (`decode_any`, `decode`, the meter), and a
//!   differential check against `serde_json`: what `serde_json` refuses as JSON is never
//!   accepted as an event;
//! - `batch`: the HTTP ingest body splitter (`json::split_array`): elements are in order,
//!   disjoint, inside the body, and each one decodes or is refused with a reason;
//! - `pricebook`: the price book parser, and rating an empty period with what it accepts;
//! - `binary`: the Kafka (and HTTP) binary content mode decoder (`binary_mode::record`) from
//!   arbitrary header lines and a body, then `decode_any` on what it makes.
//!
//! Each input must finish without a panic and allocate at most [`MAX_ALLOC`] bytes at once
//! (a counting global allocator watches). A failing input is written to
//! `target/fuzz-failures/` and named in the panic; `GPUBILL_FUZZ_SEED` replays a run.
//! The CI run is short (`GPUBILL_FUZZ_SECONDS`, default 2 s per target); the long run is a
//! documented command (README, "Fuzzing").

use billing_core::event::{RejectReason, decode, decode_any};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Most bytes live at once while one input is processed (inputs are at most 128 KiB).
const MAX_ALLOC: usize = 64 * 1024 * 1024;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

#[allow(unsafe_code)] // a counting allocator: peak heap of the fuzzed inputs
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let now = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed)
                    + (new_size - layout.size());
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// xorshift64*: the run's only source of randomness, so a seed replays it.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tokens the mutator splices in: JSON and TOML syntax, edges of numbers and times.
const DICTIONARY: &[&str] = &[
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "null",
    "true",
    "-",
    "1e999",
    "0.",
    "\\u0000",
    "\\ud800",
    "\u{7f}",
    "\u{feff}",
    "9999999999999999999999999999999",
    "-0",
    "1_000",
    "T",
    "Z",
    "+08:00",
    "2026-02-30",
    "23:59:60",
    "=",
    "\n",
    "[[",
    "]]",
    "\"\"\"",
    "#",
    "inf",
    "nan",
    "ce_",
    "ce-",
    "%",
    "%zz",
    "content-type: ",
    "application/json",
];

fn mutate(rng: &mut Rng, input: &[u8], corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut b = input.to_vec();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(b.len() + 1);
        match rng.below(8) {
            0 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
            1 => b.insert(at, rng.next() as u8),
            2 if !b.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(b.len());
                b.drain(at.min(end)..end);
            }
            3 => {
                let t = DICTIONARY[rng.below(DICTIONARY.len())].as_bytes();
                b.splice(at..at, t.iter().copied());
            }
            4 => b.truncate(at),
            5 if !b.is_empty() => {
                // Duplicate a run (grows nesting and repetition).
                let from = rng.below(b.len());
                let end = (from + 1 + rng.below(64)).min(b.len());
                let run = b[from..end].to_vec();
                b.splice(at..at, run);
            }
            6 => {
                let other = &corpus[rng.below(corpus.len())];
                let from = rng.below(other.len());
                let end = (from + rng.below(128)).min(other.len());
                b.splice(at..at, other[from..end].iter().copied());
            }
            _ => {
                let i = rng.below(b.len() + 1);
                b.insert(i.min(b.len()), b"0123456789"[rng.below(10)]);
            }
        }
    }
    b.truncate(128 * 1024);
    b
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the corpus {}: {e}", dir.display()))
        .map(|f| std::fs::read(f.unwrap().path()).unwrap())
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "empty corpus {}", dir.display());
    seeds
}

/// Runs `check` on the corpus, then on mutations of it for `seconds`.
fn fuzz(target: &str, check: impl Fn(&[u8])) -> usize {
    let seconds: u64 = std::env::var("GPUBILL_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let seed: u64 = std::env::var("GPUBILL_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_0000_0000_0001);
    let seeds = corpus(target);
    let mut rng = Rng(seed | 1);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut runs = 0;
    let run_one = |input: &[u8], runs: usize| {
        PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
        let base = LIVE.load(Ordering::Relaxed);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(input)));
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
        if outcome.is_err() || peak > MAX_ALLOC {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/fuzz-failures");
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join(format!("{target}-{seed}-{runs}.bin"));
            std::fs::write(&path, input).unwrap();
            panic!(
                "fuzz target {target}: {} on the input saved at {} (GPUBILL_FUZZ_SEED={seed})",
                if outcome.is_err() {
                    "a panic".to_string()
                } else {
                    format!("{peak} bytes allocated at once")
                },
                path.display()
            );
        }
    };
    for s in &seeds {
        run_one(s, runs);
        runs += 1;
    }
    while Instant::now() < deadline {
        let pick = rng.below(seeds.len());
        let input = mutate(&mut rng, &seeds[pick], &seeds);
        run_one(&input, runs);
        runs += 1;
    }
    runs
}

fn check_event(bytes: &[u8]) {
    for r in [decode_any(bytes).err(), decode(bytes).err()]
        .into_iter()
        .flatten()
    {
        assert!(RejectReason::ALL.contains(&r.reason));
        assert!(!r.detail.is_empty(), "{:?} without detail", r.reason);
    }
    // Differential: what serde_json refuses as JSON is never an event (an oversize record
    // is refused before it is read at all).
    if serde_json::from_slice::<serde_json::Value>(bytes).is_err() {
        assert!(
            decode_any(bytes).is_err(),
            "accepted what serde_json refuses"
        );
    }
    let mut m = billing_core::meter::Meter::new();
    m.ingest(bytes);
}

fn check_batch(bytes: &[u8]) {
    let Ok(items) = billing_core::json::split_array(bytes, 10_000) else {
        return;
    };
    let base = bytes.as_ptr() as usize;
    let mut last_end = 0;
    for item in items {
        let start = item.as_ptr() as usize - base;
        assert!(
            start >= last_end && start + item.len() <= bytes.len(),
            "elements overlap"
        );
        last_end = start + item.len();
        check_event(item);
    }
}

fn check_pricebook(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    if let Ok(book) = billing_core::PriceBook::from_toml(&text) {
        // What the parser accepts rates without panicking, even with nothing to rate.
        for label in ["2026-11", "2000-01", "2099-12"] {
            if let Ok(period) = billing_core::Period::month(label, book.timezone) {
                let meter = billing_core::meter::Meter::new();
                let _ = billing_core::rating::rate_all(&book, period, &meter, None);
            }
        }
    }
}

/// Input: header lines `name: value`, a blank line, the body.
fn check_binary(bytes: &[u8]) {
    use billing_core::binary_mode::{Binding, is_binary, record};
    let split = bytes
        .windows(2)
        .position(|w| w == b"\n\n")
        .unwrap_or(bytes.len());
    let (head, body) = bytes.split_at(split);
    let body = body.get(2..).unwrap_or(&[]);
    let lines: Vec<(String, Vec<u8>)> = head
        .split(|b| *b == b'\n')
        .filter_map(|l| {
            let colon = l.iter().position(|b| *b == b':')?;
            let name = String::from_utf8_lossy(&l[..colon]).trim().to_string();
            Some((name, l[colon + 1..].trim_ascii().to_vec()))
        })
        .collect();
    for binding in [Binding::Kafka, Binding::Http] {
        let pairs = || lines.iter().map(|(n, v)| (n.as_str(), v.as_slice()));
        if is_binary(binding, pairs()) {
            let made = record(binding, pairs(), body);
            check_event(&made);
        }
    }
}

#[test]
fn fuzz_every_door() {
    // One test, the targets in turn: the allocation watch is process-wide.
    let mut report = Vec::new();
    for (target, check) in [
        ("event", check_event as fn(&[u8])),
        ("batch", check_batch),
        ("pricebook", check_pricebook),
        ("binary", check_binary),
    ] {
        report.push((target, fuzz(target, check)));
    }
    eprintln!("fuzz runs per target: {report:?}");
}
