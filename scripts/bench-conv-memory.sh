#!/usr/bin/env bash
# Memory of the CNN's convolutions on wgpu as K grows: peak resident memory of one process that
# builds SmallCNN(16) (batch 128) and runs one untimed and one timed training step (the
# training-step benchmark's SATURATE_PROFILE mode), for
#   - grouped, ConvLowering::BatchedGemm (unfold + one K-batched matmul; wgpu's default),
#   - grouped, ConvLowering::InnerConvolution (the member axis folded into the channel groups),
#   - sequential: K separate plain-Burn models stepped one after another (a per-member loop).
# at batch sizes 32, 128 and 256 (BATCHES="..." and KS="..." for others). Two memories per row:
# the device memory CubeCL's pools hold after the steps (what the group takes on the device) and
# the process's peak resident memory (on lavapipe the device's buffers are host memory, so it
# includes them, and a few hundred MiB of driver and shader compiler besides).
#
# usage: scripts/bench-conv-memory.sh [OUT_CSV]   (default target/bench/conv-memory.csv)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/bench/conv-memory.csv}
mkdir -p "$(dirname "$out")"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
scripts/setup-vulkan.sh >&2
json=$(cargo build --config profile.dev.package.saturate.opt-level=0 --features wgpu \
    --bench training_step --message-format=json)
bin=$(echo "$json" | sed -n 's/.*"executable":"\([^"]*training_step[^"]*\)".*/\1/p' | tail -1)
[ -x "$bin" ] || { echo "bench-conv-memory: no training_step binary" >&2 && exit 1; }
echo "arm,lowering,batch,K,peak_rss_mib,device_mib,per_step,device" >"$out"
device=$(vulkaninfo --summary 2>/dev/null | sed -n 's/^\s*deviceName\s*=\s*//p' | head -1)
for batch in ${BATCHES:-32 128 256}; do
    for k in ${KS:-1 2 4 8}; do
        for arm in grouped:gemm grouped:inner sequential:-; do
            a=${arm%%:*} l=${arm##*:}
            env_l=()
            [ "$l" != - ] && env_l=(SATURATE_CONV_LOWERING=$l)
            # A run that fails (a buffer larger than the device allows) is a row too.
            text=$( { /usr/bin/time -f "peak_kib=%M" env "${env_l[@]}" SATURATE_BATCH="$batch" \
                SATURATE_PROFILE="$a,cnn,$k,1" RUST_BACKTRACE=0 "$bin"; } 2>&1 ) || true
            kib=$(echo "$text" | sed -n 's/^peak_kib=//p' | tail -1)
            per=$(echo "$text" | sed -n 's/.*: \([^ ]*\) per step.*/\1/p' | tail -1)
            dev=$(echo "$text" | sed -n 's/.*device memory \([0-9.]*\) MiB.*/\1/p' | tail -1)
            mib=$(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }')
            if [ -z "$per" ]; then
                why=$(echo "$text" | grep -o "can't allocate buffer of size: [0-9]*" | head -1)
                per="failed (${why:-no step time})"
            fi
            echo "$a,$l,$batch,$k,$mib,${dev:-},$per,$device" | tee -a "$out"
        done
    done
done
