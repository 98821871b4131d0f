#!/usr/bin/env bash
# Creates the Python virtual environments used by saturate-study's interop tests and
# benchmarks: one per Optuna version, under target/venv/ (git-ignored). Idempotent: an
# environment whose optuna already imports at the right version is left alone.
#
# usage: scripts/setup-python.sh            # optuna 4.9.0 and 5.0.0 (+ optuna-dashboard in 4.9.0)
#        OPTUNA_VERSIONS="4.9.0" scripts/setup-python.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
versions="${OPTUNA_VERSIONS:-4.9.0 5.0.0}"

for version in $versions; do
    venv="$root/target/venv/optuna-$version"
    # The console script is checked too: a venv moved to another path still imports, but its
    # scripts' shebangs point at the old path (the CLI tests run `bin/optuna`).
    if [ -x "$venv/bin/python" ] &&
        [ "$("$venv/bin/python" -c 'import optuna; print(optuna.__version__)' 2>/dev/null)" = "$version" ] &&
        "$venv/bin/optuna" --version >/dev/null 2>&1; then
        echo "optuna $version: $venv (already set up)"
        continue
    fi
    echo "optuna $version: creating $venv"
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet "optuna==$version"
    "$venv/bin/python" -c 'import optuna; print("optuna", optuna.__version__, "ready")'
done

# optuna-dashboard, in the 4.9.0 venv: saturate-cli's tests start it over saturate-written
# studies and read its HTTP API.
dashboard_version="${OPTUNA_DASHBOARD_VERSION:-0.21.0}"
venv="$root/target/venv/optuna-4.9.0"
if [ -x "$venv/bin/python" ]; then
    if [ "$("$venv/bin/python" -c 'import optuna_dashboard; print(optuna_dashboard.__version__)' 2>/dev/null)" = "$dashboard_version" ]; then
        echo "optuna-dashboard $dashboard_version: $venv (already set up)"
    else
        "$venv/bin/python" -m pip install --quiet "optuna-dashboard==$dashboard_version"
        echo "optuna-dashboard $dashboard_version ready"
    fi
fi
