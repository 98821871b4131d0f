#!/usr/bin/env bash
# A throwaway PostgreSQL for saturate-study's RDB tests: installs PostgreSQL from Debian's
# packages when missing, starts a cluster in a temporary directory listening on 127.0.0.1
# only (a random free port, password authentication), and stops it again.
#
# usage: scripts/setup-postgres.sh start STATE_DIR   # writes STATE_DIR/url
#        scripts/setup-postgres.sh stop STATE_DIR
#
# STATE_DIR/url holds postgresql://saturate:PASSWORD@127.0.0.1:PORT/saturate_test; the test
# script exports it as SATURATE_TEST_POSTGRES_URL. The password is random per run and is
# never printed. `start` also installs psycopg2-binary into the Optuna environments made by
# scripts/setup-python.sh, for the tests that run Python Optuna workers on PostgreSQL.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cmd="${1:-}"
state="${2:-}"
if [ -z "$cmd" ] || [ -z "$state" ]; then
    echo "usage: $0 start|stop STATE_DIR" >&2
    exit 2
fi

# Runs a PostgreSQL server binary as the owner of the cluster (initdb refuses root).
as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

pg_bin() {
    local dir
    dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
    [ -n "$dir" ] && echo "$dir"
}

case "$cmd" in
start)
    if [ -z "$(pg_bin)" ]; then
        if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
            apt-get update
            DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql
        else
            echo "PostgreSQL is not installed: apt-get install postgresql (as root)" >&2
            exit 1
        fi
    fi
    bin="$(pg_bin)"
    mkdir -p "$state"
    data="$state/data"
    password="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    pwfile="$state/pwfile"
    printf '%s\n' "$password" >"$pwfile"
    if [ "$(id -u)" = 0 ]; then
        chown -R postgres "$state"
    fi
    as_owner "$bin/initdb" -D "$data" -U saturate --pwfile="$pwfile" --auth=scram-sha-256 \
        --encoding=UTF8 --no-instructions >"$state/initdb.log" 2>&1 ||
        { cat "$state/initdb.log" >&2; exit 1; }
    rm -f "$pwfile"
    started=0
    for _ in 1 2 3 4 5; do
        port=$((20000 + RANDOM % 40000))
        if as_owner "$bin/pg_ctl" -D "$data" -l "$state/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $state -c max_connections=200 -c fsync=off" \
            start >/dev/null; then
            started=1
            break
        fi
    done
    if [ "$started" != 1 ]; then
        cat "$state/server.log" >&2
        exit 1
    fi
    PGPASSWORD="$password" "$bin/psql" -h 127.0.0.1 -p "$port" -U saturate -d postgres -q \
        -c "CREATE DATABASE saturate_test" >/dev/null
    umask 077
    echo "postgresql://saturate:$password@127.0.0.1:$port/saturate_test" >"$state/url"
    echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (data in $data)"
    for venv in "$root"/target/venv/optuna-*; do
        [ -x "$venv/bin/python" ] || continue
        if ! "$venv/bin/python" -c 'import psycopg2' 2>/dev/null; then
            "$venv/bin/python" -m pip install --quiet psycopg2-binary
        fi
    done
    ;;
stop)
    bin="$(pg_bin)"
    if [ -n "$bin" ] && [ -f "$state/data/postmaster.pid" ]; then
        as_owner "$bin/pg_ctl" -D "$state/data" -m immediate stop >/dev/null || true
    fi
    rm -rf "$state"
    ;;
*)
    echo "usage: $0 start|stop STATE_DIR" >&2
    exit 2
    ;;
esac
