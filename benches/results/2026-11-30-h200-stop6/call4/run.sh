#!/bin/bash
# Session 6 call 4: unique_consecutive from the head mask, tile sweep (CUBEPRIM_RUNS_VPT), peers.
cd .dev/s6c
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for v in 8 4 2 8; do echo "== CUBEPRIM_RUNS_VPT=$v"; CUBEPRIM_RUNS_VPT=$v timeout 60 ./bench_gpu_compact cuda 28 --runs; done
  echo "== peers"; timeout 60 python3 compact_peers.py; } > $OUT/runs.log 2>&1
grep -E "==|case" $OUT/runs.log | cut -c1-170
