#!/usr/bin/env bash
# How the trainer's per-group trial limit trades busy slots for exploration of the shared
# values (book: the runner chapter, "Refill and the shared values"): the main job
# (examples/fashion_mnist.rs: 24 trials, groups of 8, TPE + median pruner, refill) once per
# limit, each in a fresh journal, one after another on the same machine.
#
# usage: scripts/bench-refill-limit.sh [LIMIT...]     (default: 8 16 none)
#        LIMIT is `--max-trials-per-group`: 8 (= K: no refill), 16 (the default, 2K), none;
#        with `+promising` (16+promising, none+promising) the run also closes a group once TPE
#        would no longer choose its width (`--refill-while-promising`); with `+halving`
#        (none+halving, 16+halving) a group is refilled only while its width is among the
#        better half of the widths that have taken as many trials (`--refill-halving 2`).
# env:   SEEDS="0 1 2"  the TPE seeds (`--seed`); the limits run in turn for each seed.
# out:   target/bench/refill-limit.csv (appended: one row per limit) and the runs' logs beside it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
limits=("$@")
[ ${#limits[@]} -eq 0 ] && limits=(8 16 none)
read -r -a seeds <<<"${SEEDS:-0 1 2}"
out=target/bench
csv=$out/refill-limit.csv
mkdir -p "$out"
cargo build --release --example fashion_mnist
commit="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates examples || echo +dirty)"
simd=$(grep -qw avx512f /proc/cpuinfo && echo AVX-512 || (grep -qw avx2 /proc/cpuinfo && echo AVX2 || echo no-AVX2))
machine="$(lscpu | sed -n 's/^Model name:\s*//p' | head -1 | tr -d ,) $simd $(nproc) cores"
[ -f "$csv" ] || echo "date,commit,machine,seed,limit,wall_s,groups,complete,pruned,refilled,busy_pct,closed,halved,best,widths" >"$csv"
for seed in "${seeds[@]}"; do
for limit in "${limits[@]}"; do
    dir=$(mktemp -d)
    log=$out/refill-limit-$seed-$limit.log
    start=$(date +%s.%N)
    rule=()
    [[ "$limit" == *+promising ]] && rule=(--refill-while-promising)
    [[ "$limit" == *+halving ]] && rule=(--refill-halving 2)
    (cd "$dir" && "$root/target/release/examples/fashion_mnist" --storage fm.journal \
        --max-trials-per-group "${limit%+*}" --seed "$seed" "${rule[@]}") >"$log" 2>&1
    wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    # The run summary's row: | trials | complete | pruned | failed | groups | wall | trials/min |
    read -r complete pruned groups < <(awk -F'|' '/^\|---/ { getline; print $3, $4, $6; exit }' "$log")
    refilled=$(sed -n 's/.* \([0-9]*\) members refilled.*/\1/p' "$log" | head -1)
    busy=$(sed -n 's/.*slots busy \([0-9]*\)%.*/\1/p' "$log" | head -1)
    closed=$(sed -n 's/.*, \([0-9]*\) group(s) closed by the sampler.*/\1/p' "$log" | head -1)
    halved=$(sed -n 's/.*, \([0-9]*\) held by successive halving.*/\1/p' "$log" | head -1)
    best=$(sed -n 's/^best trial: #[0-9]* value \([0-9.]*\).*/\1/p' "$log" | head -1)
    widths=$(sed -n 's/^widths tried: //p' "$log" | tr ',' ';')
    row="$(date -u +%F),$commit,$machine,$seed,$limit,$wall,$groups,$complete,$pruned,$refilled,$busy,$closed,$halved,$best,$widths"
    echo "$row" | tee -a "$csv"
    rm -rf "$dir"
done
done
