#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
date
for r in 1 2; do timeout 90 ./bench_gpu scan cuda $OUT/q$r.json --quick 2>&1 | tee $OUT/quick_$r.log | grep "%" | cut -c1-140; done
date
timeout 120 compute-sanitizer --tool memcheck ./bench_gpu scan cuda --sanitize 2>&1 | tail -3 | tee $OUT/memcheck.log
date
