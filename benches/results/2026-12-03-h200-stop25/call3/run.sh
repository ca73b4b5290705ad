#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
date
echo "== harness"; timeout 150 python3 scan3.py 2>&1 | tee $OUT/scan3.log
echo "== torch"; timeout 60 python3 torch_cumsum.py 2>&1 | tee $OUT/torch.log
date; echo "== bench scan (full)"
timeout 240 ./bench_gpu scan cuda $OUT/scan_full.json 2>&1 | tee $OUT/scan_full.log | grep -v "^ \|^$" | cut -c1-200
date; echo "== quick x2"
for r in 1 2; do timeout 60 ./bench_gpu scan cuda $OUT/q$r.json --quick 2>&1 | tee $OUT/quick_$r.log | cut -c1-200; done
date; echo "== sanitize"
timeout 120 compute-sanitizer --tool memcheck ./bench_gpu scan cuda --sanitize 2>&1 | tail -4 | tee $OUT/memcheck.log
timeout 150 compute-sanitizer --tool racecheck ./bench_gpu scan cuda --sanitize 2>&1 | tail -4 | tee $OUT/racecheck.log
date
