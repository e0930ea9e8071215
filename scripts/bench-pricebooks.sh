#!/usr/bin/env bash
# What a price book version costs (issue 24.9): a ~10 MB price book (SKUS skus, default
# 60,000) uploaded VERSIONS times (default 6) through `gpubill serve`, each a new version;
# after each upload the server's resident memory (VmRSS of /proc/PID/status) and the upload's
# wall-clock time, then the time of a 1-event ingest (the first after the uploads) and of a
# second one.
# Usage: scripts/bench-pricebooks.sh [sqlite|postgres]...   (default: sqlite)
#   BIN=path/to/gpubill measures that binary (an A/B of two builds); else a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${BIN:-}" ]; then
    cargo build --release -p gpubill >/dev/null 2>&1 || cargo build --release -p gpubill
fi
bin=${BIN:-target/release/gpubill}
skus=${SKUS:-60000}
versions=${VERSIONS:-6}
export GPUBILL_ADMIN_TOKEN=bench-admin-token-0123456789abcdef
port=${PORT:-18091}
base="http://127.0.0.1:$port"
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT

# The book: version N differs from the others by its base rate (so each upload is a new text).
make_book() {
    local v=$1
    awk -v skus="$skus" -v v="$v" 'BEGIN {
        print "currency = \"USD\"\ntimezone = \"UTC\"\n"
        for (i = 0; i < skus; i++) {
            printf "[skus.\"gpu.model-%06d\"]\nrate_per_hour = \"%d.%02d\"\nspot_rate_per_hour = \"%d.%02d\"\ntiers = [ { up_to_hours = 100, rate_per_hour = \"%d.%02d\" }, { rate_per_hour = \"1.00\" } ]\n\n", i, v + 1, i % 100, v, i % 100, v + 1, i % 100
        }
    }' >"$work/book-$v.toml"
}

rss_mb() { awk '/^VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status"; }

# Seconds a curl call took (its own timer), failing on an HTTP error.
timed() { curl -fsS -o /dev/null -w '%{time_total}' "$@"; }

event() {
    printf '{"specversion":"1.0","id":"%s","source":"bench","type":"gpu.usage","subject":"acme","data":{"lease":"L1","resource":"g0","sku":"gpu.model-000001","start":"%s","end":"%s"}}' "$1" "$2" "$3"
}

run_one() {
    local db=$1 url
    case $db in
        sqlite) url="sqlite://$work/bench.db" ;;
        postgres)
            local name="gpubill_bench_books_$$"
            psql -h 127.0.0.1 -U postgres -qc "drop database if exists $name" -c "create database $name" postgres
            url="postgres://postgres@127.0.0.1:5432/$name" ;;
    esac
    echo "== $db: $versions versions of a $(du -k "$work/book-1.toml" | cut -f1) KiB price book ($skus skus)"
    "$bin" serve --data-dir "$work/$db" --database "$url" --listen "127.0.0.1:$port" \
        --rate-limit-customer 0 --rate-limit-ingest 0 2>"$work/$db.log" &
    pid=$!
    for _ in $(seq 1 300); do curl -fs "$base/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
    echo "resident before any upload: $(rss_mb) MB"
    local v
    for v in $(seq 1 "$versions"); do
        local s
        s=$(timed -X PUT -H "Authorization: Bearer $GPUBILL_ADMIN_TOKEN" -H 'content-type: application/toml' \
            --data-binary "@$work/book-$v.toml" "$base/v1/admin/pricebook")
        echo "upload $v: ${s} s, resident $(rss_mb) MB"
    done
    local i
    for i in 1 2; do
        local s
        s=$(timed -H "Authorization: Bearer $GPUBILL_ADMIN_TOKEN" -H 'content-type: application/cloudevents+json' \
            --data-binary "$(event "e$i" "$(date -u -d "-$((3 - i)) hour" +%Y-%m-%dT%H:00:00Z)" "$(date -u -d "-$((2 - i)) hour" +%Y-%m-%dT%H:00:00Z)")" \
            "$base/v1/events")
        echo "1-event ingest $i: ${s} s, resident $(rss_mb) MB"
    done
    echo "resident at the end: $(rss_mb) MB (peak $(awk '/^VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status") MB)"
    kill "$pid"; wait "$pid" 2>/dev/null || true
    pid=
    if [ "$db" = postgres ]; then psql -h 127.0.0.1 -U postgres -qc "drop database if exists gpubill_bench_books_$$" postgres; fi
}

for v in $(seq 1 "$versions"); do make_book "$v"; done
for db in "${@:-sqlite}"; do
    for d in $db; do run_one "$d"; done
done
