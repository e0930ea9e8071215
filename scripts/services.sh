#!/usr/bin/env bash
# Makes sure the services the test suite needs are running on this machine, installing them
# from Debian's packages when missing. Sourced by scripts/test; safe to run again.
#   PostgreSQL on 127.0.0.1:5432, user postgres, trust authentication.
set -euo pipefail

log() { printf 'services: %s\n' "$*" >&2; }

pg_ready() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }

ensure_postgres() {
    if command -v pg_isready >/dev/null 2>&1 && pg_ready; then
        return 0
    fi
    local installed_now=0
    if ! command -v pg_ctlcluster >/dev/null 2>&1; then
        log "installing PostgreSQL (Debian package postgresql)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq postgresql >/dev/null
        installed_now=1
    fi
    local version
    version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$version" ]; then
        version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
        log "creating cluster $version/main"
        pg_createcluster "$version" main >/dev/null
        installed_now=1
    fi
    if [ "$installed_now" = 1 ]; then
        # A cluster made here for tests: trust local TCP connections, as the tests expect.
        local hba="/etc/postgresql/$version/main/pg_hba.conf"
        sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
    fi
    log "starting PostgreSQL $version"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
    for _ in $(seq 1 60); do
        if pg_ready; then
            return 0
        fi
        sleep 0.5
    done
    log "PostgreSQL did not come up on 127.0.0.1:5432"
    return 1
}

ensure_postgres
