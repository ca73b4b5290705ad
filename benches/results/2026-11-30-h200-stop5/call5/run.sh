#!/bin/bash
# Call 5: onesweep sort (merged) vs the histogram/scan/scatter path; run-length full-tile staging.
cd .dev/p5
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  echo "== onesweep (default)"; timeout 90 ./bench_gpu_sort cuda --core
  echo "== CUBEPRIM_SORT_ONESWEEP=0"; CUBEPRIM_SORT_ONESWEEP=0 timeout 90 ./bench_gpu_sort cuda --core; } > $OUT/sort.log 2>&1
grep -E "==|copy|sort u32|argsort f32 stable \(U32|row sort" $OUT/sort.log
{ date -u; timeout 50 ./bench_gpu_compact cuda 28 --runs; } > $OUT/compact.log 2>&1; cat $OUT/compact.log
