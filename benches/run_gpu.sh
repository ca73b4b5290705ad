#!/usr/bin/env bash
# Runs cubeprim's GPU benchmarks and the peers on one CUDA card and leaves their raw outputs in
# one folder; `benches/report` then merges them into `benches/results/<card>.json` and redraws
# BENCHMARKS.md's tables and charts (see BENCHMARKS.md, "How to reproduce").
#
#   benches/run_gpu.sh BENCH_GPU OUT_DIR [WHEELS]
#
# BENCH_GPU: the bench binary, built beforehand with
#   cargo build --release --features cuda,bench-tools --example bench_gpu
# (target/release/examples/bench_gpu). Builds nothing itself. Peers, each skipped when its
# tool is missing: `benches/peers/peers.py`, `sort_peers.py` and `recurrence_peers.py`
# (PyTorch, CuPy if installed; accelerated-scan from the wheels in WHEELS, default .dev/wheels,
# fetched beforehand by `pip download accelerated-scan ninja --no-deps -d .dev/wheels`) and
# `benches/peers/cub_peers.cu` (CUB, compiled with nvcc when found). Run it alone on the card:
# the figures are only comparable within one run.
set -uo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    sed -n '2,15p' "$0"
    exit 2
fi
bench="$(realpath "$1")"
out="$2"
wheels="${3:-$(dirname "$0")/../.dev/wheels}"
peers="$(cd "$(dirname "$0")/peers" && pwd)"
mkdir -p "$out"
out="$(realpath "$out")"
commit="$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)"
export CUBEPRIM_COMMIT="${CUBEPRIM_COMMIT:-$commit}"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/card.txt"

# Each family in its own process (a process's cubecl layout and caches are its own).
"$bench" scan cuda --out "$out/scan.json" | tee "$out/scan.log"
"$bench" sort cuda --out "$out/sort.json" | tee "$out/sort.log"
"$bench" compact cuda 28 --out "$out/compact.json" | tee "$out/compact.log"
# masked_select at the charts' other sizes, and the sorts of 2^22 keys.
"$bench" sort cuda --small --out "$out/sort-small.json" | tee -a "$out/sort.log"
for n in 20 24; do
    "$bench" compact cuda "$n" --out "$out/compact-$n.json" | tee -a "$out/compact.log"
done
"$bench" recurrence cuda --out "$out/recurrence.json" | tee "$out/recurrence.log"

if python3 -c 'import torch' 2>/dev/null; then
    python3 "$peers/peers.py" "$out" | tee "$out/peers.log"
    python3 "$peers/sort_peers.py" | tee "$out/sort_peers.jsonl"
    # JSON lines to the file; stdout also has the CUDA extension's compile log.
    rm -f "$out/recurrence_peers.jsonl"
    wheel_arg=()
    [ -e "$wheels" ] && wheel_arg=(--wheels "$wheels")
    python3 "$peers/recurrence_peers.py" ${wheel_arg[@]+"${wheel_arg[@]}"} --out "$out/recurrence_peers.jsonl" |
        tee "$out/recurrence_peers.log"
else
    echo "no PyTorch: the PyTorch / CuPy peers are skipped"
fi
if command -v nvcc >/dev/null; then
    arch="sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)"
    nvcc -O3 -std=c++17 -arch="$arch" -o "$out/cub_peers" "$peers/cub_peers.cu" &&
        "$out/cub_peers" | tee "$out/cub.txt"
    rm -f "$out/cub_peers"
else
    echo "no nvcc: the CUB peers are skipped"
fi
echo "raw outputs in $out; merge them with benches/report (BENCHMARKS.md, How to reproduce)"
