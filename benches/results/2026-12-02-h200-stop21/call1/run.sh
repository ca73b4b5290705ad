#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
echo "== bench --core --packed"; ./bench_gpu sort cuda --core --packed 2>&1 | tee $OUT/core.log
echo "== bench --core --packed --tile 512x16"; ./bench_gpu sort cuda --core --packed --tile 512x16 2>&1 | grep -E "u64|argsort|copy" | tee $OUT/tile512.log
echo "== peers"; timeout 120 python3 sort_peers.py 2>&1 | tee $OUT/peers.log
echo "== ncu"; timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size -c 60 ./bench_gpu sort cuda --core > $OUT/ncu.log 2>&1; echo "ncu rc $?"
grep -E "^  [a-z_]|gpu__time|registers|grid_size" $OUT/ncu.log | head -250 | tail -150
