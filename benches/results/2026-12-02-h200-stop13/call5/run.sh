#!/bin/bash
# Session 13 call 5 (branch onesweep-late-lookback): onesweep with the keys placed in shared
# memory before the look-back (CUB's order), against the default, same binary.
cd .dev/s13e
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  echo "== onesweep late look-back 1"; CUBEPRIM_SORT_ONESWEEP=1 timeout 70 ./bench_gpu sort cuda --core
  echo "== default"; timeout 70 ./bench_gpu sort cuda --core
  echo "== onesweep late look-back 2"; CUBEPRIM_SORT_ONESWEEP=1 timeout 70 ./bench_gpu sort cuda --core
  date -u; } > $OUT/sort.log 2>&1
cut -c1-150 $OUT/sort.log
