#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
xz -d -k -f bench_gpu_opt.xz && chmod +x bench_gpu_opt
F='^ \|^$\|^thread\|^stack\|^note\|^Unexp'
date; echo "== scan8"; timeout 120 python3 scan8.py 2>&1 | tee $OUT/scan8.log
for r in 1 2; do
  date; echo "== main sort keys $r"; timeout 80 ./bench_gpu sort cuda --keys 2>&1 | tee $OUT/keys_main_$r.log | grep -v "$F" | cut -c1-150
  date; echo "== opt sort keys $r"; timeout 80 ./bench_gpu_opt sort cuda --keys 2>&1 | tee $OUT/keys_opt_$r.log | grep -v "$F" | cut -c1-150
done
for r in 1 2; do
  date; echo "== main scan async $r"; timeout 80 ./bench_gpu scan cuda $OUT/async_main_$r.json --only "async" 2>&1 | tee $OUT/async_main_$r.log | grep "%" | cut -c1-150
  date; echo "== opt scan async $r"; timeout 80 ./bench_gpu_opt scan cuda $OUT/async_opt_$r.json --only "async" 2>&1 | tee $OUT/async_opt_$r.log | grep "%" | cut -c1-150
done
date; echo "== opt sort core"; timeout 150 ./bench_gpu_opt sort cuda --core 2>&1 | tee $OUT/core_opt.log | grep -v "$F" | cut -c1-170
date
