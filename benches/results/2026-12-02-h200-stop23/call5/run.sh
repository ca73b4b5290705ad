#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
date
timeout 170 ./bench_gpu sort cuda --core --packed 2>&1 | tee $OUT/core_packed.log | grep -v "^ \|^$\|^thread\|^stack\|^note\|^Unexp" | cut -c1-150
echo "== peers"; timeout 60 python3 sort_peers.py 2>&1 | head -4 | tee $OUT/peers.log
date
