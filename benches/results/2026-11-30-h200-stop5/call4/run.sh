#!/bin/bash
# Call 4: compaction + run-length after loads-first staging (run_length, select's stage_unit).
cd .dev/p4
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 100 ./bench_gpu_compact cuda 28; echo "== runs vpt 4"; CUBEPRIM_RUNS_VPT=4 timeout 50 ./bench_gpu_compact cuda 28 --runs
  echo "== peers"; timeout 60 python3 compact_peers.py; } > $OUT/compact.log 2>&1
cat $OUT/compact.log
