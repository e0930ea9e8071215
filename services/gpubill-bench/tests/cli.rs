//! `gpubill-bench` as a process: the subcommands the README and docs/benchmarks.md run, on
//! inputs small enough for the test suite (no services needed).

use std::process::{Command, Output};

fn gpubill_bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpubill-bench"))
        .args(args)
        .output()
        .expect("run gpubill-bench")
}

#[test]
fn help_lists_bench_bench_kafka_and_load_with_their_flags() {
    let out = gpubill_bench(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for sub in ["bench", "bench-kafka", "load"] {
        assert!(help.contains(sub), "{sub} missing from:\n{help}");
    }
    let out = gpubill_bench(&["bench-kafka", "--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--events",
        "--engines",
        "--lag-recovery",
        "--decision-latency",
        "--soak-seconds",
        "--rate",
        "--batch-max",
        "--ledger-cache-keys",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
    let out = gpubill_bench(&["load", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--url",
        "--token",
        "--rate",
        "--seconds",
        "--warmup-seconds",
        "--post-json",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
}

#[test]
fn bench_runs_on_a_small_fleet() {
    let out = gpubill_bench(&[
        "bench",
        "--gpus",
        "16",
        "--seconds",
        "600",
        "--accounts",
        "2",
        "--repeat",
        "1",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("ingest: 16 GPUs, 600 s"), "{stdout}");
    assert!(stdout.contains("events/s on one core"), "{stdout}");
    assert!(stdout.contains("bytes per key"), "{stdout}");
    assert!(stdout.contains("rating: 2 accounts"), "{stdout}");
    assert!(stdout.contains("accounts/s"), "{stdout}");
}

#[test]
fn bench_part3_rates_the_fleet_with_both_books_and_prints_the_ratio() {
    let out = gpubill_bench(&["bench", "--part3", "--accounts", "3", "--repeat", "2"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains("ingest:"), "{stdout}");
    assert!(stdout.contains("3 accounts x 8 GPUs"), "{stdout}");
    assert!(stdout.contains("720 events each"), "{stdout}");
    // Part 3 adds one invoice per account in ap-singapore, in USD.
    assert!(stdout.contains("part2: best"), "{stdout}");
    assert!(stdout.contains("part3: best"), "{stdout}");
    assert!(stdout.contains("(3 invoices, totals"), "{stdout}");
    assert!(stdout.contains("(6 invoices, totals"), "{stdout}");
    assert!(stdout.contains(" USD)"), "{stdout}");
    assert!(stdout.contains("part3 / part2 = "), "{stdout}");
    let out = gpubill_bench(&[
        "bench",
        "--part3",
        "--only",
        "part3",
        "--early-stops",
        "--accounts",
        "1",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("daily churn, early stops"), "{stdout}");
    assert!(stdout.contains("part3: best"), "{stdout}");
    assert!(!stdout.contains("part2:"), "{stdout}");
}

#[test]
fn load_counts_the_failed_requests_of_a_server_that_is_not_there() {
    // Port 1 on loopback: every connection is refused at once.
    let out = gpubill_bench(&[
        "load",
        "--url",
        "http://127.0.0.1:1/healthz",
        "--token",
        "t",
        "--rate",
        "20",
        "--seconds",
        "1",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("20 requests at 20 req/s"), "{stdout}");
    assert!(stdout.contains("; 20 errors"), "{stdout}");
    assert!(stdout.contains("first error:"), "{stdout}");
}
