#!/usr/bin/env bash
# HTTP benchmarks of `gpubill serve` (issue 3), on SQLite and PostgreSQL:
#  1. ingest: a fleet posted in batches of 1,000 events (events/s);
#  2. usage: GET /v1/usage for an account with 64 GPUs and a month of heartbeats at hour
#     granularity, 500 requests/s for 10 s (p50/p99);
#  3. usage under ingest (issue 11): the same query at USAGE_RATE (2,000) requests/s for 10 s
#     while another fleet is posted at half the ingest rate step 1 measured.
# Usage: scripts/bench-http.sh [sqlite|postgres]...   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/services.sh
# PROFILE=release skips the dist profile's whole-program optimisation (a much shorter build).
profile=${PROFILE:-dist}
# BIN=path/to/gpubill measures that binary instead (an A/B of two builds); the load client is
# gpubill-bench (services/gpubill-bench) of this tree, or BENCH_BIN=path/to/gpubill-bench.
build=()
[ -n "${BIN:-}" ] || build+=(-p gpubill)
[ -n "${BENCH_BIN:-}" ] || build+=(-p gpubill-bench)
if [ ${#build[@]} -gt 0 ]; then
    cargo build --profile "$profile" "${build[@]}" >/dev/null 2>&1 || cargo build --profile "$profile" "${build[@]}"
fi
bin=${BIN:-target/$profile/gpubill}
bench_bin=${BENCH_BIN:-target/$profile/gpubill-bench}
export GPUBILL_ADMIN_TOKEN=bench-admin-token-0123456789abcdef
port=18080
base="http://127.0.0.1:$port"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

run_one() {
    local db=$1 url
    case $db in
        sqlite) url="sqlite://$work/bench.db" ;;
        postgres)
            local name="gpubill_bench_$$"
            psql -h 127.0.0.1 -U postgres -qc "drop database if exists $name" -c "create database $name" postgres
            url="postgres://postgres@127.0.0.1:5432/$name" ;;
    esac
    echo "== $db"
    "$bin" serve --data-dir "$work/$db" --database "$url" --listen "127.0.0.1:$port" --prices examples/pricebook.toml --dedupe-horizon-days 36500 --rate-limit-customer 0 --rate-limit-ingest 0 2>"$work/$db.log" &
    local pid=$!
    for _ in $(seq 1 100); do curl -fs "$base/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
    echo "-- ingest: 512 GPUs x 1 h of 30 s heartbeats, 10% redelivered, batches of 1,000"
    "$bin" simulate --gpus 512 --accounts 64 --seconds 3600 --start 2026-11-03T00:00:00Z --egress-every 0 \
        --post "$base" --token "$GPUBILL_ADMIN_TOKEN" --batch 1000 --concurrency "${CONCURRENCY:-1}" | tee "$work/ingest.txt"
    local max_rate
    max_rate=$(sed -E 's/.*: ([0-9]+) events\/s.*/\1/' "$work/ingest.txt" | tail -n 1)
    echo "-- usage: 64 GPUs, a month of 300 s heartbeats for one account"
    key=$(curl -fs -H "Authorization: Bearer $GPUBILL_ADMIN_TOKEN" -H 'content-type: application/json' \
        -d '{"id":"acct-0"}' "$base/v1/admin/accounts" | sed -E 's/.*"api_key":"([^"]+)".*/\1/')
    "$bin" simulate --gpus 64 --gpus-per-lease 64 --accounts 1 --seconds 2592000 --interval 300 --overlap 10 \
        --start 2026-11-01T00:00:00Z --egress-every 0 --redeliver-permille 0 --spot-permille 0 --vgpu-permille 0 \
        --post "$base" --token "$GPUBILL_ADMIN_TOKEN" --batch 1000 --concurrency "${CONCURRENCY:-1}"
    # Steady state: let autovacuum's work after the bulk load finish before measuring reads.
    if [ "$db" = postgres ]; then psql -h 127.0.0.1 -U postgres -qc "vacuum analyze" "${url##*/}"; fi
    "$bench_bin" load --url "$base/v1/usage?from=2026-11-01T00:00:00Z&to=2026-12-01T00:00:00Z&granularity=hour&group_by=sku" \
        --token "$key" --rate 500 --seconds 10 --warmup-seconds "${WARMUP:-2}"
    local half=$((max_rate / 2))
    echo "-- usage under ingest: ${USAGE_RATE:-2000} req/s while 512 GPUs post at $half events/s (half of $max_rate)"
    # Enough heartbeats for ~20 s at that rate, in a later week (nothing of it is a duplicate).
    local seconds=$((half * 20 * 30 / 512 + 60))
    "$bin" simulate --gpus 512 --accounts 64 --seconds "$seconds" --start 2026-11-20T00:00:00Z --egress-every 0 \
        --redeliver-permille 0 --post "$base" --token "$GPUBILL_ADMIN_TOKEN" --batch 1000 --concurrency 2 --rate "$half" &
    local feeder=$!
    sleep 3
    "$bench_bin" load --url "$base/v1/usage?from=2026-11-01T00:00:00Z&to=2026-12-01T00:00:00Z&granularity=hour&group_by=sku" \
        --token "$key" --rate "${USAGE_RATE:-2000}" --seconds 10 --warmup-seconds "${WARMUP:-2}"
    wait "$feeder"
    kill "$pid"; wait "$pid" 2>/dev/null || true
}

for db in "${@:-sqlite postgres}"; do
    for d in $db; do run_one "$d"; done
done
