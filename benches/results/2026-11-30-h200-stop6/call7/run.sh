#!/bin/bash
# Session 6 final call: binaries of 719b113 + working tree (sort plan env read once; kernels as in 719b113).
# Compaction and run-length (with PyTorch), the 1-D scan three times (with PyTorch), sorts (with PyTorch / CuPy).
cd .dev/s6f
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact bench_gpu bench_gpu_sort
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 100 ./bench_gpu_compact cuda 28; echo "== peers"; timeout 60 python3 compact_peers.py; } > $OUT/compact.log 2>&1
{ date -u; for i in 1 2 3; do echo "== quick $i"; timeout 100 ./bench_gpu cuda $OUT/q$i.json --quick; done; echo "== torch"; timeout 100 python3 peers_h200.py $OUT; } > $OUT/scan.log 2>&1
{ date -u; timeout 120 ./bench_gpu_sort cuda --core; echo "== peers"; timeout 100 python3 sort_peers.py; } > $OUT/sort.log 2>&1
grep -E "case" $OUT/compact.log | cut -c1-160; grep -E "==|1-D|copy" $OUT/scan.log | grep -v "^cumsum f32 1-D (look-back) .*ok" | head -30; grep -E "==|copy|sort|argsort" $OUT/sort.log | cut -c1-160 | head -30
