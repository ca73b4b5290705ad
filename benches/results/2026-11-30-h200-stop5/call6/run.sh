#!/bin/bash
# Call 6: compaction + run-length (loads-first staging) and the 1-D sorts (histogram loads-first),
# each with its PyTorch/CuPy peers in the same call.
cd .dev/p6
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 100 ./bench_gpu_compact cuda 28; echo "== peers"; timeout 60 python3 compact_peers.py; } > $OUT/compact.log 2>&1
{ date -u; CUBEPRIM_SORT_ONESWEEP=0 timeout 90 ./bench_gpu_sort cuda --core; echo "== peers"; timeout 90 python3 sort_peers.py; } > $OUT/sort.log 2>&1
cat $OUT/compact.log; grep -E "==|copy|sort|argsort|topk" $OUT/sort.log
