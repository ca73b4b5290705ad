#!/bin/bash
# Call 8 (main 672ca2e): scan target cases; row sort, top-k, searchsorted (rows-only).
cd .dev/p8
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu bench_gpu_sort
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; timeout 100 ./bench_gpu cuda /tmp/q.json --quick; } > $OUT/scan.log 2>&1
{ date -u; timeout 60 ./bench_gpu_sort cuda --rows-only; } > $OUT/rows.log 2>&1
grep -A12 "=== summary" $OUT/scan.log; cat $OUT/rows.log
