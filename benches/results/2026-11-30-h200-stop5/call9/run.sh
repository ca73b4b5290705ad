#!/bin/bash
# Call 9: onesweep with the barrier-free look-back (branch onesweep2 at 8dce918) vs the
# uniform look-back vs histogram -> scan -> scatter, one binary.
cd .dev/p9
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  echo "== onesweep free"; CUBEPRIM_SORT_ONESWEEP=1 timeout 80 ./bench_gpu_sort cuda --core
  echo "== onesweep uniform"; CUBEPRIM_SORT_ONESWEEP=1 CUBEPRIM_SORT_LOOKBACK=uniform timeout 80 ./bench_gpu_sort cuda --core
  echo "== reduce-then-scan"; CUBEPRIM_SORT_ONESWEEP=0 timeout 80 ./bench_gpu_sort cuda --core; } > $OUT/sort.log 2>&1
grep -E "==|copy|sort u32|argsort" $OUT/sort.log
