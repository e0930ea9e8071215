#!/usr/bin/env bash
# POST /v1/authorize latency (issue 5): 1,000 authorizations a second for 10 s against an
# account with a prepaid balance and a spend limit (every call checks both with the live holds
# and places a hold that expires after 1 s). Usage: scripts/bench-authorize.sh [sqlite|postgres]...
# ASYNC=1 lets authorizations answer before their WAL flush (`serve --async-holds`).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/services.sh postgres
# BIN=path/to/gpubill measures that binary instead (an A/B of two builds); the load client is
# gpubill-bench (services/gpubill-bench) of this tree, or BENCH_BIN=path/to/gpubill-bench.
build=()
[ -n "${BIN:-}" ] || build+=(-p gpubill)
[ -n "${BENCH_BIN:-}" ] || build+=(-p gpubill-bench)
if [ ${#build[@]} -gt 0 ]; then
    cargo build --release "${build[@]}" >/dev/null 2>&1 || cargo build --release "${build[@]}"
fi
bin=${BIN:-target/release/gpubill}
bench_bin=${BENCH_BIN:-target/release/gpubill-bench}
export GPUBILL_ADMIN_TOKEN=bench-admin-token-0123456789abcdef
port=18081
base="http://127.0.0.1:$port"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
for db in "${@:-sqlite postgres}"; do
    for one in $db; do
        case $one in
            sqlite) url="sqlite://$work/bench.db" ;;
            postgres)
                name="gpubill_authz_$$"
                psql -h 127.0.0.1 -U postgres -qc "drop database if exists $name" -c "create database $name" postgres
                url="postgres://postgres@127.0.0.1:5432/$name" ;;
        esac
        echo "== $one"
        "$bin" serve --data-dir "$work/$one" --database "$url" --listen "127.0.0.1:$port" --prices examples/pricebook.toml --rate-limit-customer 0 --rate-limit-ingest 0 ${ASYNC:+--async-holds} 2>"$work/$one.log" &
        pid=$!
        for _ in $(seq 1 100); do curl -fs "$base/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
        curl -fs -H "Authorization: Bearer $GPUBILL_ADMIN_TOKEN" -H 'content-type: application/json' -d '{"id":"acme"}' "$base/v1/admin/accounts" >/dev/null
        curl -fs -X PUT -H "Authorization: Bearer $GPUBILL_ADMIN_TOKEN" -H 'content-type: application/json' \
            -d '{"prepaid_balance":"100000000","spend_limit":"100000000"}' "$base/v1/admin/accounts/acme/quotas" >/dev/null
        "$bench_bin" load --url "$base/v1/authorize" --token "$GPUBILL_ADMIN_TOKEN" --rate "${RATE:-1000}" --seconds 10 --warmup-seconds "${WARMUP:-2}" \
            --post-json '{"account":"acme","sku":"gpu.h100-80g","quantity":"1","seconds":60,"ttl_seconds":1}'
        kill "$pid"; wait "$pid" 2>/dev/null || true
    done
done
