#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
date
for t in default 512x8 1024x4 256x8 default2 512x8b; do
  echo "== row tile $t"
  case $t in default*) unset CUBEPRIM_ROW_TILE;; 512x8b) export CUBEPRIM_ROW_TILE=512x8;; *) export CUBEPRIM_ROW_TILE=$t;; esac
  timeout 100 ./bench_gpu sort cuda --rows-only 2>&1 | tee -a $OUT/rows_$t.log | grep -E "row sort|top|select" | cut -c1-150
done
unset CUBEPRIM_ROW_TILE
date
echo "== bench packed"; timeout 170 ./bench_gpu sort cuda --core --packed 2>&1 | tee -a $OUT/core_packed.log | grep -v "^ \|^$\|^thread\|^stack\|^note\|^Unexp" | cut -c1-160
date
