#!/bin/bash
# Session 15 call 6: the code to be committed (full-tile scatter, the digit constant on CUDA,
# key-value passes on 512 x 16): bench_gpu sort --core twice, then the peers.
cd .dev/s15c
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  echo "== run 1"; timeout 120 ./bench_gpu sort cuda --core
  echo "== run 2"; timeout 120 ./bench_gpu sort cuda --core
  echo "== peers"; timeout 100 python3 sort_peers.py
  date -u; } > $OUT/sort.log 2>&1
cut -c1-170 $OUT/sort.log
