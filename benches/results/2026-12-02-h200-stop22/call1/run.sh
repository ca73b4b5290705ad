#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
nvidia-smi --query-gpu=name,driver_version --format=csv
echo "== bench 1"; ./bench_gpu sort cuda --core --packed 2>&1 | tee -a $OUT/core.log | grep -v "^ \|^$\|^thread\|^stack\|^note\|^Unexp"; grep -q FAILED $OUT/core.log && exit 1; echo "== bench 2"; ./bench_gpu sort cuda --core --packed 2>&1 | tee -a $OUT/core.log
echo "== peers"; timeout 120 python3 sort_peers.py 2>&1 | head -4 | tee $OUT/peers.log
echo "== ncu"; timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size,dram__throughput.avg.pct_of_peak_sustained_elapsed -k regex:radix --launch-skip 352 -c 24 ./bench_gpu sort cuda --core --packed > $OUT/ncu.log 2>&1; echo "ncu rc $?"
grep -E "^  [a-z_]|gpu__time|registers|grid_size|dram__" $OUT/ncu.log | sed -E "s/ +/ /g" | cut -c1-100 | head -130
