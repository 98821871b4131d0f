#!/usr/bin/env bash
# The GPU check (book/src/gpu.md): parity of the examples' models on CUDA, the group-size
# recommendation, one training step (MLPs, CNN, transformer), sequential vs grouped, and the
# study benchmark (24 trials of the CNN, groups of 8, sequential vs grouped), on CUDA.
#
#   scripts/gpu-check.sh build [--cuda-dir DIR]
#       Here, on the CPU machine that has the package registries: `cargo build --release
#       --features cuda,nvml,autotune --bench training_step --example recommend_group_size
#       --example study_bench` and `--features cuda,nvml --example parity_check` (no autotune:
#       parity only needs the kernels to be the same on both sides), then copies the binaries, this script and a run.sh into
#       target/gpu-check/. --cuda-dir DIR also copies DIR's include/ and lib*/
#       (a CUDA toolkit, or the NVIDIA nvrtc / cuda-runtime wheels from PyPI unpacked into one
#       folder) into target/gpu-check/cuda, for a GPU machine without NVRTC or CUDA headers;
#       mind the device tool's 64 MiB carry limit (libnvrtc alone is about 60 MiB). The
#       binaries bind CUDA 13.0's API (CUDARC_CUDA_VERSION=13000, a driver of the 580 series or
#       newer); set CUDARC_CUDA_VERSION to build for another version.
#       The binaries are stripped and the bundle is packed into target/gpu-carry/gpu-check.tgz.
#   bash target/gpu-check/run.sh [--budget SECONDS] [--out DIR] [--parts LIST]
#       On the GPU machine, in ONE call of the device tool:
#         run: command "tar xzf target/gpu-carry/gpu-check.tgz -C target &&
#              bash target/gpu-check/run.sh", carry ["target/gpu-carry"], timeout_s 600
#       Prints nvidia-smi, CUDA_PATH, /usr/local/cuda*, the libcuda / nvrtc / nvidia-ml found;
#       times a cold start (first process: CUDA context, NVRTC compilation, autotune) and a
#       second, warm process separately; then the parity check (examples/parity_check.rs: the
#       MLP, CNN and transformer, K = 4 members trained as a group vs each alone on CUDA, atol
#       1e-5, rtol 1e-4; one process per model, the three at once; parity.csv) and the group-size recommendation
#       (examples/recommend_group_size.rs, K up to 16, NVML memory; recommend.json) and the study
#       benchmark (examples/study_bench.rs: the paper's protocol, 24 trials, groups of 8, one
#       process per arm, the grouped arm with the sequential arm's wall time as its budget;
#       study.csv, study.md), each under its own timeout; then runs every (arm, model, K) of the plan as
#       `SATURATE_PROFILE=arm,model,K,steps training_step`, each under a per-run timeout, inside
#       a budget for the cold start and the benchmark (default 330 s); then PyTorch's arms of the
#       same steps on the GPU (scripts/python/bench_step_pytorch.py --device cuda, K = 1, 8, 32;
#       torch.md, the two sides in one table). What does not fit is skipped and marked so.
#       Writes results.csv and results.md into --out (default $OUT when set, else
#       target/gpu-check/out).
#       --parts picks the parts (default parity,steps,torch; also recommend and study): the
#       timeouts of the chosen parts (parity 90 s, recommendation 150 s, study 2 x 120 s,
#       steps --budget, torch 90 s) must add up to at most 540 s (9 minutes), so a call with
#       the machine's start fits the device tool's 10-minute limit; run the others in a second
#       call.
#       Measured on an NVIDIA H200 (driver 580.159.04, CUDA 13.0, 2026-12-04): CubeCL compiles
#       every kernel with NVRTC on first use in each process, on one CPU thread, and autotune
#       compiles and times every candidate at each new shape. A fresh machine's first process
#       spent 39-48 s in the first step of the 8-16-4 MLP at K = 1; a second process of the same
#       step, with autotune's cache under target/ filled, 2.1 s. The parity check (three
#       models, autotune at its lowest level) did not finish within 150 s, and the sequential
#       arm of the study benchmark not within 75 s: hence these timeouts. Built without autotune
#       and run as one process per model at once, the parity check took 16 s; the first step
#       of the CNN with autotune took 58 s (eight Burn models, K = 8), and over 90 s for the
#       group (book/src/data/cuda-h200-2026-12-04.log): hence 90 s per step run.
#       --models LIST (e.g. cnn,transformer) runs the step benchmark for those models only, and
#       --ks LIST (e.g. 1,8,32) at those K only: with autotune, each new (model, K) costs a
#       first step of a minute or more.
#   scripts/gpu-check.sh --dry-run [--budget SECONDS] [--out DIR]
#       No GPU: prints every command of the GPU plan, checks the plan (models, Ks, the budget
#       split), builds the bench binary and the three examples in the dev profile for wgpu
#       (`cargo build --features wgpu ...`, saturate's own code at opt-level 0, in the shared
#       target dir; the same CubeCL kernels
#       and fusion as CUDA, on lavapipe where the machine has no GPU: scripts/setup-vulkan.sh)
#       and runs the parity check, the recommendation and the study benchmark in their short
#       mode (--short) and a small part of the plan (mlp8, mlp784 and the transformer, K in
#       {1, 2}, a few steps) through the same run loop, writing the same parity.csv,
#       recommend.json, study.csv, study.md, results.csv and results.md. tests/gpu_check.rs
#       runs it.
#
# The plan: MLP 8-16-4 (mlp8), MLP 784-128-10 (mlp784) and SmallCNN (cnn), both arms, K = 1, 2,
# 4, .., 64; then mlp8 grouped only at K = 128 .. 1024 (how far one group scales on one GPU; 1,024
# separate models stepped one after another are not worth the budget). A K that timed out ends
# that arm of that model: a larger K only takes longer.
#
set -euo pipefail
cd "$(dirname "$0")"
# As scripts/gpu-check.sh this is scripts/; as target/gpu-check/gpu-check.sh it is the bundle.
here=$PWD
if [ -f ../Cargo.toml ] && [ -d ../crates ]; then root=$(cd .. && pwd); else root=$(cd ../.. && pwd); fi
cd "$root"

phase=run
dry_run=0
budget_arg=""
parts_arg=""
models_arg=""
ks_arg=""
out=""
cuda_dir=""
bin=""
case "${1:-}" in
build | run) phase=$1 && shift ;;
esac
while [ $# -gt 0 ]; do
    case "$1" in
    --dry-run) dry_run=1 ;;
    --budget) budget_arg=$2 && shift ;;
    --parts) parts_arg=$2 && shift ;;
    --models) models_arg=$2 && shift ;;
    --ks) ks_arg=$2 && shift ;;
    --out) out=$2 && shift ;;
    --cuda-dir) cuda_dir=$2 && shift ;;
    --bin) bin=$2 && shift ;; # the folder with the binaries
    *) echo "gpu-check: unknown argument $1 (see the header of scripts/gpu-check.sh)" >&2 && exit 2 ;;
    esac
    shift
done

bundle=$root/target/gpu-check
# How the dry run builds (shared with scripts/test.sh, so the binaries are built once).
dry_run_cargo="--config profile.dev.package.saturate.opt-level=0 --workspace --features saturate/wgpu"

# The binaries of the check: the bench and three examples.
targets=(training_step parity_check recommend_group_size study_bench)
# Builds them with `cargo build "$@"` into one cargo call and copies the executables to
# directory $1 (under their target names); fails if one is missing.
build_binaries() {
    local into=$1 json exe name
    shift
    mkdir -p "$into"
    json=$(cargo build "$@" --bench training_step --example parity_check \
        --example recommend_group_size --example study_bench --message-format=json)
    for name in "${targets[@]}"; do
        exe=$(echo "$json" | sed -n "s/.*\"executable\":\"\([^\"]*\/$name[^\"]*\)\".*/\1/p" | tail -1)
        [ -x "$exe" ] || { echo "gpu-check: cargo built no $name executable" >&2 && return 1; }
        cp "$exe" "$into/$name"
    done
}

if [ "$phase" = build ]; then
    # cudarc binds the CUDA API of the version nvcc reports, or its newest one (13.4) where
    # there is no nvcc; a driver older than that version may lack some of its entry points.
    # 13.0 runs on every driver from the 580 series on; set CUDARC_CUDA_VERSION (e.g. 12080)
    # for an older driver.
    export CUDARC_CUDA_VERSION=${CUDARC_CUDA_VERSION:-13000}
    build_binaries "$bundle" --release --features cuda,nvml,autotune
    # The parity check without autotune: it compares a group with its members under the same
    # kernels, and autotune's candidate kernels (each compiled on first use) only cost it time.
    json=$(cargo build --release --features cuda,nvml --example parity_check --message-format=json)
    exe=$(echo "$json" | sed -n 's/.*"executable":"\([^"]*\/parity_check[^"]*\)".*/\1/p' | tail -1)
    [ -x "$exe" ] || { echo "gpu-check: cargo built no parity_check executable" >&2 && exit 1; }
    cp "$exe" "$bundle/parity_check"
    cp "$here/gpu-check.sh" "$bundle/gpu-check.sh"
    if [ -n "$cuda_dir" ]; then
        rm -rf "$bundle/cuda" && mkdir -p "$bundle/cuda"
        cp -rL "$cuda_dir"/include "$cuda_dir"/lib* "$bundle/cuda/"
    fi
    cat >"$bundle/run.sh" <<'EOF'
#!/usr/bin/env bash
# Made by scripts/gpu-check.sh build; runs the GPU check (see that script's header).
bundle=$(cd "$(dirname "$0")" && pwd)
exec bash "$bundle/gpu-check.sh" run --bin "$bundle" "$@"
EOF
    chmod +x "$bundle/run.sh"
    # The four binaries are about 190 MB as built and 150 MB stripped, over the device tool's
    # 64 MiB carry limit; gzipped they are about 41 MB. The bundle travels packed.
    for name in "${targets[@]}"; do strip "$bundle/$name" 2>/dev/null || true; done
    mkdir -p "$root/target/gpu-carry"
    tar czf "$root/target/gpu-carry/gpu-check.tgz" -C "$root/target" gpu-check
    du -sh "$bundle" "$root/target/gpu-carry/gpu-check.tgz"
    echo "built; on the GPU machine: tar xzf target/gpu-carry/gpu-check.tgz -C target && bash target/gpu-check/run.sh (carry: [\"target/gpu-carry\"])"
    exit 0
fi

# ---- the plan -------------------------------------------------------------------------------
models=(mlp8 mlp784 cnn transformer)
ks=(1 2 4 8 16 32 64)
scale_model=mlp8
scale_ks=(128 256 512 1024)
declare -A steps=([mlp8]=50 [mlp784]=30 [cnn]=10 [transformer]=10)
cold_timeout=150 # first process: CUDA context, NVRTC compilation, autotune
run_timeout=90
# The parity check, the recommendation and the study benchmark's two arms run before the
# step benchmark, PyTorch's arms after it, each under its own timeout, outside --budget; the
# chosen parts' timeouts add up to at most 540 s (9 minutes).
budget=${budget_arg:-330}
parts=${parts_arg:-parity,steps,torch}
parity_timeout=90
recommend_timeout=150
recommend_args=(--max-k 16)
study_timeout=120
study_args=()
torch_timeout=90
if [ -n "$models_arg" ]; then
    IFS=, read -ra models <<<"$models_arg"
    [[ ",$models_arg," == *",$scale_model,"* ]] || scale_ks=()
fi
[ -n "$ks_arg" ] && IFS=, read -ra ks <<<"$ks_arg"
# Each line: arm model K steps.
plan() {
    local model k
    for model in "${models[@]}"; do
        for k in "${ks[@]}"; do
            echo "sequential $model $k ${steps[$model]}"
            echo "grouped $model $k ${steps[$model]}"
        done
    done
    for k in "${scale_ks[@]}"; do echo "grouped $scale_model $k ${steps[$scale_model]}"; done
}
gpu_plan=$(plan | while read -r arm model k n; do
    echo "would run: timeout $run_timeout env SATURATE_PROFILE=$arm,$model,$k,$n target/gpu-check/training_step"
done)
if [ "$dry_run" = 1 ]; then
    # The CNN is left out: on lavapipe one grouped step of it takes seconds and the point here
    # is that every binary, kernel and report runs, not the numbers.
    models=(mlp8 mlp784 transformer)
    ks=(1 2)
    scale_ks=()
    steps=([mlp8]=5 [mlp784]=3 [cnn]=1 [transformer]=2)
    budget=${budget_arg:-300}
    # Every part but PyTorch's (it needs a GPU and PyTorch).
    parts=${parts_arg:-parity,recommend,study,steps}
    cold_timeout=90
    run_timeout=60
    # Short mode: K = 2 for parity, K up to 4 for the recommendation, small models.
    parity_timeout=300
    recommend_timeout=300
    recommend_args=(--short)
    study_timeout=300
    study_args=(--short)
fi
parity_args=()
[ "$dry_run" = 1 ] && parity_args=(--short)
# Whether part $1 was chosen (--parts).
part() { [[ ",$parts," == *",$1,"* ]]; }
# The chosen parts' timeouts outside --budget.
outside_timeouts() {
    local total=0
    part parity && total=$((total + parity_timeout))
    part recommend && total=$((total + recommend_timeout))
    part study && total=$((total + 2 * study_timeout))
    part torch && total=$((total + torch_timeout))
    echo "$total"
}

# The plan is well formed: models the benchmark knows, Ks ascending powers of two, a budget
# under 8 minutes that leaves room for the cold start and at least one run per model.
check_plan() {
    local ok=1 model k prev=0
    [[ "$budget" =~ ^[0-9]+$ ]] || { echo "plan: --budget $budget is not a number of seconds" && ok=0; }
    for model in "${models[@]}" "$scale_model"; do
        case "$model" in mlp8 | mlp784 | cnn | transformer) ;; *) echo "plan: unknown model $model" && ok=0 ;; esac
        [ -n "${steps[$model]:-}" ] || { echo "plan: no step count for $model" && ok=0; }
    done
    for k in "${ks[@]}" "${scale_ks[@]}"; do
        if ((k <= prev || (k & (k - 1)) != 0)); then echo "plan: K list not ascending powers of two at $k" && ok=0; fi
        prev=$k
    done
    local p
    for p in ${parts//,/ }; do
        case "$p" in parity | recommend | study | steps | torch) ;; *) echo "plan: unknown part $p in --parts $parts" && ok=0 ;; esac
    done
    local steps_budget=0
    part steps && steps_budget=$budget
    if [ "$dry_run" = 0 ] && ((steps_budget + $(outside_timeouts) > 540)); then
        echo "plan: the parts $parts take up to $((steps_budget + $(outside_timeouts))) s (steps budget $steps_budget s + timeouts $(outside_timeouts) s), over 9 minutes (540 s)" && ok=0
    fi
    if ((budget < cold_timeout / 5 + ${#models[@]} * 2)); then
        echo "plan: budget $budget s leaves no time after the cold start" && ok=0
    fi
    [ "$ok" = 1 ]
}

seconds() { date +%s.%N; }
# Debug-formatted Duration ("812.3µs", "1.5ms", "2.01s") in milliseconds.
to_ms() {
    awk -v d="$1" 'BEGIN {
        if (match(d, /^[0-9.]+/)) { v = substr(d, 1, RLENGTH); u = substr(d, RLENGTH + 1) } else { print ""; exit }
        f = (u == "ns") ? 1e-6 : (u == "µs" || u == "us") ? 1e-3 : (u == "ms") ? 1 : (u == "s") ? 1000 : -1
        if (f < 0) print ""; else printf "%.6f\n", v * f }'
}

out=${out:-${OUT:-$bundle/out}}
mkdir -p "$out"
log=$out/gpu-check.log
: >"$log"
say() { echo "$*" | tee -a "$log"; }

say "== plan (budget ${budget} s: cold start up to ${cold_timeout} s, then runs of up to ${run_timeout} s each)"
if [ "$dry_run" = 1 ]; then
    say "-- the GPU plan (not run in a dry run):"
    say "$gpu_plan"
    say "-- the dry run's plan (wgpu: the CubeCL kernels on this machine's Vulkan device):"
fi
plan | while read -r arm model k n; do say "plan: SATURATE_PROFILE=$arm,$model,$k,$n"; done
if ! check_plan | tee -a "$log"; then
    say "gpu-check: the plan is not well formed" && exit 1
fi

say "== machine"
{
    echo "\$ nvidia-smi" && (nvidia-smi 2>&1 || echo "(no nvidia-smi)")
    echo "CUDA_PATH=${CUDA_PATH:-(unset)}"
    echo "\$ ls -d /usr/local/cuda*" && (ls -d /usr/local/cuda* 2>&1 || true)
    echo "\$ ldconfig -p | grep -E 'libcuda|nvrtc|nvidia-ml'" &&
        (ldconfig -p 2>/dev/null | grep -E 'libcuda|nvrtc|nvidia-ml' || echo "(none)")
} 2>&1 | tee -a "$log"
# CUDA carried with the bundle (build --cuda-dir) serves where the machine has none.
if [ -z "${CUDA_PATH:-}" ] && [ ! -d /usr/local/cuda ] && [ -d "$bundle/cuda" ]; then
    export CUDA_PATH=$bundle/cuda
    export LD_LIBRARY_PATH=$bundle/cuda/lib:$bundle/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    say "using the carried CUDA: CUDA_PATH=$CUDA_PATH"
fi
# The libraries are opened by name at run time (libcuda and libnvidia-ml from the driver, NVRTC
# from a CUDA toolkit or the nvidia-cuda-nvrtc wheel); a machine may have them outside the
# loader's paths. Each one the loader does not know is looked for in the usual places and its
# folder added to LD_LIBRARY_PATH; NVRTC's headers come from CUDA_PATH/include.
if [ "$dry_run" = 0 ]; then
    py_nvidia=$(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, d) for p in nvidia.__path__ for d in sorted(os.listdir(p))))' 2>/dev/null || true)
    cuda_roots=(${CUDA_PATH:-} /usr/local/cuda /usr/local/cuda-* /opt/cuda $py_nvidia)
    for lib in libcuda.so libnvrtc.so libnvidia-ml.so; do
        ldconfig -p 2>/dev/null | grep -q "$lib" && continue
        found=""
        for dir in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu \
            "${cuda_roots[@]/%//lib64}" "${cuda_roots[@]/%//lib}" "${cuda_roots[@]/%//targets/x86_64-linux/lib}"; do
            if compgen -G "$dir/$lib*" >/dev/null; then found=$dir && break; fi
        done
        if [ -n "$found" ]; then
            export LD_LIBRARY_PATH=$found${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
            say "$lib is not in the loader's cache; found in $found (added to LD_LIBRARY_PATH)"
        else
            say "$lib: not found (the loader's cache, ${cuda_roots[*]})"
        fi
    done
    if [ -z "${CUDA_PATH:-}" ] && [ ! -d /usr/local/cuda ]; then
        for cuda_root in "${cuda_roots[@]}"; do
            if [ -f "$cuda_root/include/cuda_runtime.h" ] || [ -f "$cuda_root/include/cuda_fp16.h" ]; then
                export CUDA_PATH=$cuda_root && say "CUDA headers for NVRTC: CUDA_PATH=$cuda_root" && break
            fi
        done
    fi
fi

if [ "$dry_run" = 1 ]; then
    export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
    scripts/setup-vulkan.sh 2>&1 | tee -a "$log"
    # The dev profile with saturate's own code unoptimised (its dependencies stay optimised):
    # at opt-level 3 the four wgpu binaries took over 15 minutes to build on 2 cores, and the
    # dry run checks that everything runs, not how fast. scripts/test.sh builds the same way.
    say "== building the binaries (dev profile, wgpu): cargo build $dry_run_cargo --bench training_step --example parity_check --example recommend_group_size --example study_bench"
    bin=$out/bin
    build_binaries "$bin" $dry_run_cargo
fi
bin=${bin:-$bundle}
for name in "${targets[@]}"; do
    [ -x "$bin/$name" ] || { say "gpu-check: no $name in $bin: run scripts/gpu-check.sh build first" && exit 1; }
done
say "binaries: $bin/{$(IFS=,; echo "${targets[*]}")}"

# Runs "$@" under timeout $1 with its output in $out/$2.log; sets status (ok, failed (rc N),
# timeout (N s)) and wall (s).
run_step() {
    local limit=$1 name=$2 t0 rc
    shift 2
    t0=$(seconds)
    set +e
    timeout "$limit" "$@" >"$out/$name.log" 2>&1
    rc=$?
    set -e
    wall=$(awk -v a="$t0" -v b="$(seconds)" 'BEGIN { printf "%.1f", b - a }')
    case "$rc" in 0) status=ok ;; 124) status="timeout (${limit} s)" ;; *) status="failed (rc $rc)" ;; esac
    tail -n 25 "$out/$name.log" | tee -a "$log"
    say "$name: $status in ${wall} s"
}


start=$(seconds)
elapsed() { awk -v a="$start" -v b="$(seconds)" 'BEGIN { printf "%d", b - a }'; }

# Runs one spec under a timeout; sets rc, wall (s), per_ms, first_ms.
run_one() {
    local spec=$1 limit=$2 t0 text
    t0=$(seconds)
    set +e
    text=$(SATURATE_PROFILE=$spec timeout "$limit" "$bin/training_step" 2>&1)
    rc=$?
    set -e
    wall=$(awk -v a="$t0" -v b="$(seconds)" 'BEGIN { printf "%.2f", b - a }')
    echo "$text" | tail -n 5 >>"$log"
    per_ms=$(to_ms "$(echo "$text" | sed -n 's/.*: \([^ ]*\) per step.*/\1/p' | tail -1)")
    first_ms=$(to_ms "$(echo "$text" | sed -n 's/.*: first step \([^ ]*\)$/\1/p' | tail -1)")
}

not_run="not run (--parts $parts)"
cold=$not_run
if part steps; then
    say "== cold start (SATURATE_PROFILE=grouped,mlp8,1,1; a fresh process twice)"
    run_one grouped,mlp8,1,1 "$cold_timeout"
    cold="cold process ${wall} s (first step ${first_ms:-?} ms, rc $rc)"
    run_one grouped,mlp8,1,1 "$run_timeout"
    cold="$cold; warm process ${wall} s (first step ${first_ms:-?} ms, rc $rc)"
    say "$cold"
fi

outside=0
# Adds the last step's wall time to the time spent outside the step benchmark's budget.
add_outside() { outside=$(awk -v a="$outside" -v b="$wall" 'BEGIN { printf "%.3f", a + b }'); }
parity_status=$not_run
if part parity; then
    say "== parity: the examples' MLP, CNN and transformer, K members as a group vs each alone (parity.csv)"
    # One process per model, all at once: each compiles its own kernels on one CPU thread, so
    # the three compile side by side. The bundle's parity check is built without autotune.
    t0=$(seconds)
    pids=()
    for model in mlp cnn transformer; do
        timeout "$parity_timeout" "$bin/parity_check" "${parity_args[@]}" --model "$model" \
            --csv "$out/parity-$model.csv" >"$out/parity-$model.log" 2>&1 &
        pids+=($!)
    done
    parity_failed=""
    i=0
    for model in mlp cnn transformer; do
        set +e
        wait "${pids[$i]}"
        rc=$?
        set -e
        i=$((i + 1))
        case "$rc" in 0) ;; 124) parity_failed="$parity_failed $model: timeout (${parity_timeout} s);" ;; *) parity_failed="$parity_failed $model: failed (rc $rc);" ;; esac
        tail -n 12 "$out/parity-$model.log" | tee -a "$log"
    done
    wall=$(awk -v a="$t0" -v b="$(seconds)" 'BEGIN { printf "%.1f", b - a }')
    cat "$out"/parity-*.log >"$out/parity.log"
    rm -f "$out/parity.csv"
    for model in mlp cnn transformer; do
        [ -f "$out/parity-$model.csv" ] || continue
        if [ -f "$out/parity.csv" ]; then tail -n +2 "$out/parity-$model.csv" >>"$out/parity.csv"; else cp "$out/parity-$model.csv" "$out/parity.csv"; fi
    done
    if [ -z "$parity_failed" ]; then status=ok; else status="failed:$parity_failed"; fi
    say "parity: $status in ${wall} s"
    parity_status="$status in ${wall} s"
    add_outside
fi
# CubeCL compiles each kernel with NVRTC in every new process unless its PTX cache is on
# (`[compilation] cache`, off by default); with it, a process loads the PTX of the kernels an
# earlier one compiled, from target/. Turned on after the cold start and the parity check
# (whose three processes run at once), for the recommendation, the study and the steps.
if [ "$dry_run" = 0 ] && [ ! -f cubecl.toml ] && [ ! -f burn.toml ]; then
    printf '[compilation]\ncache = "target"\n' >cubecl.toml
    say "cubecl.toml: CubeCL's PTX cache on (under target/)"
fi
recommend_status=$not_run
if part recommend; then
    say "== group-size recommendation, memory prediction checked at the recommended K (recommend.json)"
    run_step "$recommend_timeout" recommend "$bin/recommend_group_size" "${recommend_args[@]}" --json "$out/recommend.json"
    recommend_status="$status in ${wall} s"
    add_outside
fi
study_status=$not_run
if part study; then
    say "== study benchmark: 24 trials of the CNN, sequential vs grouped (groups of 8), one process per arm (study.csv)"
    rm -f "$out/study.csv"
    run_step "$study_timeout" study_sequential "$bin/study_bench" --arm sequential --seed 0 "${study_args[@]}" --csv "$out/study.csv"
    study_status="sequential: $status in ${wall} s"
    add_outside
    # The grouped arm's fixed-time budget is the sequential arm's wall time (none when that
    # arm wrote no row).
    seq_wall=""
    if [ -f "$out/study.csv" ]; then
        seq_wall=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "wall_seconds") c = i } NR > 1 && $1 == "sequential" { print $c }' "$out/study.csv" | tail -1)
    fi
    grouped_budget=()
    [ -n "$seq_wall" ] && grouped_budget=(--budget-seconds "$seq_wall")
    run_step "$study_timeout" study_grouped "$bin/study_bench" --arm grouped --seed 0 "${study_args[@]}" "${grouped_budget[@]}" --csv "$out/study.csv"
    study_status="$study_status; grouped: $status in ${wall} s"
    add_outside
    if [ -f "$out/study.csv" ]; then
        "$bin/study_bench" --table "$out/study.csv" >"$out/study.md" 2>>"$log" || true
    fi
fi
# Their time is not the benchmark's: the budget's clock moves on by it.
start=$(awk -v s="$start" -v a="$outside" 'BEGIN { printf "%.3f", s + a }')

csv=$out/results.csv
echo "arm,model,K,ms_per_step,status,steps,first_step_ms,wall_s" >"$csv"
declare -A dead=()
if part steps; then
    while read -r arm model k n; do
        left=$((budget - $(elapsed)))
        if ((left < 3)); then
            status="skipped (budget)"
            say "skip $arm $model K=$k: the ${budget} s budget is spent"
            echo "$arm,$model,$k,,$status,$n,," >>"$csv"
            continue
        fi
        if [ -n "${dead[$arm.$model]:-}" ]; then
            echo "$arm,$model,$k,,skipped (K=${dead[$arm.$model]} timed out),$n,," >>"$csv"
            continue
        fi
        limit=$((left < run_timeout ? left : run_timeout))
        run_one "$arm,$model,$k,$n" "$limit"
        if [ "$rc" = 0 ] && [ -n "$per_ms" ]; then
            status=ok
        elif [ "$rc" = 124 ]; then
            status="timeout (${limit} s)" && dead[$arm.$model]=$k
        else
            status="failed (rc $rc)" && per_ms=""
        fi
        say "$arm $model K=$k: ${per_ms:-?} ms per step, first step ${first_ms:-?} ms, ${wall} s, $status"
        echo "$arm,$model,$k,$per_ms,$status,$n,$first_ms,$wall" >>"$csv"
    done < <(plan)
    say "== done in $(elapsed) s of ${budget} s"
fi

# PyTorch's arms of the same steps on the GPU, and one table with saturate's (torch.md).
torch_status=$not_run
if part torch; then
    say "== PyTorch on the GPU: the same steps, K = 1, 8, 32 (torch.md)"
    run_step "$torch_timeout" torch python3 "$root/scripts/python/bench_step_pytorch.py" --device cuda \
        --ks 1,8,32 --steps 20 --cnn-steps 10 --gpu-check "$csv"
    torch_status="$status in ${wall} s"
    sed -n '/^torch /,$p' "$out/torch.log" | grep -v '^torch [a-z0-9]* K=' >"$out/torch.md" || true
fi

# results.md: one row per (model, K), sequential vs grouped.
{
    echo "# GPU check: one training step, sequential vs grouped"
    echo
    if [ "$dry_run" = 1 ]; then
        echo "Dry run without a GPU (wgpu on $(vulkaninfo --summary 2>/dev/null | sed -n 's/^\s*deviceName\s*=\s*//p' | head -1), dev profile, a few steps): real kernels on a software device, the shape of the report, not a GPU measurement."
    else
        echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo unknown)."
    fi
    echo "Cold start: $cold."
    echo
    echo "| model | K | sequential ms/step | grouped ms/step | speedup (sequential / grouped) | grouped ms per member |"
    echo "|---|---:|---:|---:|---:|---:|"
    awk -F, 'NR > 1 {
        key = $2 "," $3; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
        v = ($5 == "ok") ? $4 : $5; val[$1 "," key] = v; ok[$1 "," key] = ($5 == "ok")
    }
    END {
        for (i = 1; i <= n; i++) {
            split(order[i], p, ",")
            sk = "sequential," order[i]; gk = "grouped," order[i]
            s = (sk in val) ? val[sk] : "not run"
            g = (gk in val) ? val[gk] : "not run"
            both = ok[sk] && ok[gk] && g + 0 > 0
            r = both ? sprintf("%.2fx", s / g) : "-"
            m = ok[gk] ? sprintf("%.4f", g / p[2]) : "-"
            printf "| %s | %s | %s | %s | %s | %s |\n", p[1], p[2], s, g, r, m
        }
    }' "$csv"
    echo
    echo
    echo "## Parity: K members as a group vs each alone (atol 1e-5, rtol 1e-4): $parity_status"
    echo
    if ! part parity; then
        :
    elif [ -f "$out/parity.csv" ]; then
        echo "| model | member | lr | parameters | max abs diff | worst parameter | max change in training | ok |"
        echo "|---|---:|---:|---:|---:|---|---:|---|"
        awk -F, 'NR > 1 { printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$out/parity.csv"
    else
        echo "No parity.csv: see parity.log."
    fi
    echo
    echo "## Group-size recommendation: $recommend_status"
    echo
    if [ -f "$out/recommend.log" ]; then
        grep '^|' "$out/recommend.log" || echo "No table: see recommend.log."
    fi
    echo
    echo "## Study benchmark: $study_status"
    echo
    if [ -s "$out/study.md" ]; then
        cat "$out/study.md"
    elif part study; then
        echo "No study table: see study_sequential.log and study_grouped.log."
    fi
    echo
    echo "## PyTorch on the same GPU: $torch_status"
    echo
    if [ -s "$out/torch.md" ]; then
        cat "$out/torch.md"
    elif part torch; then
        echo "No PyTorch table: see torch.log."
    fi
} >"$out/results.md"
cat "$out/results.md"
# The benchmark's rows report their own failures; a chosen parity check or recommendation
# that did not pass, or a study arm that failed, fails the whole check.
if { part parity && [[ "$parity_status" != ok* ]]; } || { part recommend && [[ "$recommend_status" != ok* ]]; } ||
    [[ "$study_status" == *failed* ]]; then
    echo "gpu-check: parity: $parity_status; recommendation: $recommend_status; study: $study_status" >&2
    exit 1
fi
