#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
date; timeout 200 python3 scan5.py 2>&1 | tee $OUT/scan5.log; date
cd ../s25b && xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
for r in 1 2 3; do timeout 60 ./bench_gpu scan cuda $OUT/q$r.json --quick 2>&1 | grep "1-D\|copy" | tail -2 | cut -c1-130; done
date
