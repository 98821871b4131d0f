#!/usr/bin/env bash
# The parity table of the book (book/src/parity.md): runs the parity suite on NdArray (the
# `main` test binary of saturate-vmap) and on wgpu (the `cubecl` binary; lavapipe where the
# machine has no GPU), each test appending its worst parameter difference to a CSV
# (SATURATE_PARITY_REPORT, tests/parity/common.rs), and joins them into
# book/src/data/parity.csv and a markdown table on stdout.
#
# usage: scripts/parity-table.sh [--from NDARRAY_CSV WGPU_CSV] [OUT_CSV]
#   (default OUT_CSV book/src/data/parity.csv). --from takes the rows a run of scripts/test.sh
#   wrote (target/parity-ndarray.csv, target/parity-wgpu.csv) instead of running the suites.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
if [ "${1:-}" = --from ]; then
    cp "$2" "$tmp/ndarray.csv" && cp "$3" "$tmp/wgpu.csv" && shift 3
else
    export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$tmp}"
    scripts/setup-vulkan.sh >&2
    # A failing test still reports its row; the table shows it as over 1.
    SATURATE_PARITY_REPORT=$tmp/ndarray.csv cargo test -p saturate-vmap --test main parity:: >&2 || true
    SATURATE_PARITY_REPORT=$tmp/wgpu.csv cargo test -p saturate-vmap --features wgpu --test cubecl parity:: >&2 || true
fi
out=${1:-book/src/data/parity.csv}

{
    echo "test,ndarray_max_abs_diff,ndarray_over_tolerance,ndarray_parameter,wgpu_max_abs_diff,wgpu_over_tolerance,wgpu_parameter,wgpu_backend"
    # backend,test,max_abs,ratio,parameter
    awk -F, '
        FILENAME ~ /ndarray/ { n[$2] = $3 "," $4 "," $5; tests[$2] = 1 }
        FILENAME ~ /wgpu/ { w[$2] = $3 "," $4 "," $5 "," $1; tests[$2] = 1 }
        END { for (t in tests) print t "," ((t in n) ? n[t] : ",,") "," ((t in w) ? w[t] : ",,,") }
    ' "$tmp/ndarray.csv" "$tmp/wgpu.csv" | sort
} >"$out"

echo "| test | NdArray: max abs diff | diff / tolerance | wgpu: max abs diff | diff / tolerance |"
echo "|---|---:|---:|---:|---:|"
awk -F, 'NR > 1 { printf "| `%s` | %s | %s | %s | %s |\n", $1, ($2 == "" ? "not run" : $2), $3, ($5 == "" ? "not run" : $5), $6 }' "$out"
echo
echo "rows: $out; wgpu backend: $(awk -F, 'NR > 1 && $8 != "" { print $8; exit }' "$out")"
