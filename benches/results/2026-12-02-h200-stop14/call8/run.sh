#!/bin/bash
# Session 14 call 8: the sort with 512 x 12 tiles for key-value passes (4-byte keys and values)
# and the shared-counter helper; default twice, onesweep once, PyTorch / CuPy in the same call.
cd .dev/s14d
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  echo "== default 1"; timeout 90 ./bench_gpu sort cuda --core
  echo "== onesweep"; CUBEPRIM_SORT_ONESWEEP=1 timeout 90 ./bench_gpu sort cuda --core
  echo "== default 2"; timeout 90 ./bench_gpu sort cuda --core
  echo "== peers"; timeout 120 python3 sort_peers.py; date -u; } > $OUT/sort.log 2>&1
cut -c1-160 $OUT/sort.log
