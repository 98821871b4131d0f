#!/usr/bin/env bash
# The training-step benchmark side by side with PyTorch, in one run: PyTorch's arms
# (scripts/python/bench_step_pytorch.py: sequential, torch.func vmap, grouped convolution for the
# CNN; K = 1 and 8) then saturate's (`cargo bench --bench training_step`, divan), and ONE table
# with the ratios. NOT part of CI: it needs target/venv/torch (scripts/setup-torch.sh, several GB
# with PyTorch's CUDA libraries).
#
# usage: scripts/bench-step-pytorch.sh [cargo bench options, e.g. --features flex]
# env:   THREADS (2), STEPS (20 per MLP arm), CNN_STEPS (7 per CNN arm), KS (1,8),
#        DIVAN_ARGS (passed to the divan binary, e.g. "--skip cnn_sequential": that arm takes
#        minutes per K on NdArray; its cells then read "-"),
#        TORCH_ISA=avx2 holds PyTorch to AVX2 on an AVX-512 CPU (ATEN_CPU_CAPABILITY,
#        ONEDNN_MAX_CPU_ISA, MKL_ENABLE_INSTRUCTIONS), to compare with a saturate build without
#        the avx512 feature on the same machine: both arms then use AVX2 kernels only
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$root/target/venv/torch/bin/python"
if ! "$python" -c 'import torch' 2>/dev/null; then
    echo "error: no PyTorch in $root/target/venv/torch; run scripts/setup-torch.sh first" >&2
    exit 1
fi
threads="${THREADS:-2}"
ks="${KS:-1,8}"
divan_out="$(mktemp)"
trap 'rm -f "$divan_out"' EXIT

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load: $(uptime)" >&2
cd "$root"
# saturate's arms first (their build is the slow part), then PyTorch's, then the table.
# RAYON_NUM_THREADS: NdArray's thread pool gets the same thread count as torch.
# Every K of the bench runs (1, 2, 4, 8, 16); the table shows those in KS.
# shellcheck disable=SC2086 # DIVAN_ARGS is a list of words
RAYON_NUM_THREADS="$threads" cargo bench --bench training_step "$@" -- ${DIVAN_ARGS:-} |
    tee "$divan_out" >&2
torch_env=()
case "${TORCH_ISA:-}" in
"") ;;
avx2) torch_env=(ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2) ;;
*) echo "error: TORCH_ISA=$TORCH_ISA: only avx2 is known" >&2 && exit 2 ;;
esac
env "${torch_env[@]}" "$python" "$root/scripts/python/bench_step_pytorch.py" \
    --threads "$threads" --ks "$ks" \
    --steps "${STEPS:-20}" --cnn-steps "${CNN_STEPS:-7}" \
    --saturate "$divan_out"
echo "load after: $(uptime)" >&2
