#!/usr/bin/env bash
# Pins each PostgreSQL server of this machine to a CPU of its own (the shard benchmark of
# issue 29, docs/benchmarks.md): the cluster `main` (127.0.0.1:5432) to CPU 0 and `shard2`
# (127.0.0.1:5433) to CPU 1, the postmaster and every backend it has (new backends inherit
# it). `scripts/pin-postgres.sh off` lets both use every CPU again.
set -euo pipefail
version=$(ls /etc/postgresql | sort -V | tail -n 1)
pin() {
    local cluster=$1 cpus=$2 pid
    pid=$(head -1 "/var/lib/postgresql/$version/$cluster/postmaster.pid")
    for p in $pid $(pgrep -P "$pid"); do
        taskset -pc "$cpus" "$p" >/dev/null
    done
    echo "pin-postgres: $cluster (postmaster $pid) on CPU $cpus" >&2
}
if [ "${1:-}" = off ]; then
    all="0-$(($(nproc) - 1))"
    pin main "$all"
    pin shard2 "$all"
else
    pin main 0
    pin shard2 1
fi
