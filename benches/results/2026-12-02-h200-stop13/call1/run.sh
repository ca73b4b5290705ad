#!/bin/bash
# Session 13 call 1: onesweep look-back window (CUBEPRIM_SORT_ONESWEEP_WINDOW) against the
# histogram -> scan -> scatter default, same binary, same call; CuPy/torch after.
cd .dev/s13a
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  echo "== default"; timeout 150 ./bench_gpu sort cuda --core
  for w in 1 8 16 32; do echo "== onesweep window $w"; CUBEPRIM_SORT_ONESWEEP=1 CUBEPRIM_SORT_ONESWEEP_WINDOW=$w timeout 150 ./bench_gpu sort cuda --core; done
  echo "== default again"; timeout 150 ./bench_gpu sort cuda --core
  echo "== peers"; timeout 120 python3 sort_peers.py; date -u; } > $OUT/sort.log 2>&1
cut -c1-160 $OUT/sort.log
