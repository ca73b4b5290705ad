#!/bin/bash
# Session 10 call 3: main d4e439a (unique_consecutive counts: head-count carry, staged lengths,
# fix-up). Tile shapes of the run-length pass (CUBEPRIM_RUNS_THREADS x CUBEPRIM_RUNS_VPT), then the
# default in three processes with the whole compaction bench and PyTorch.
cd .dev/s10c
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for round in 1 2; do
    for v in "256 8" "512 8" "128 8" "512 4" "1024 4" "1024 8"; do set -- $v
      echo "== tile $1 x $2"; CUBEPRIM_RUNS_THREADS=$1 CUBEPRIM_RUNS_VPT=$2 timeout 80 ./bench_gpu_compact cuda 28 --runs
    done
  done
  for p in 1 2 3; do echo "== full $p"; timeout 100 ./bench_gpu_compact cuda 28; done
  echo "== peers"; timeout 80 python3 compact_peers.py 28; date -u; } > $OUT/runs.log 2>&1
grep -E "==|unique_consecutive|reduce_by_key|masked_select_f32_50pct_mask_u8|nonzero_50pct_flags_u8|copy|reduce_sum" $OUT/runs.log | sed -e 's/"device":"cuda",//' -e 's/"n":268435456,//' | cut -c1-110
