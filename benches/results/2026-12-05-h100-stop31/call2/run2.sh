#!/bin/bash
# Stop 31, call 2 (H100): sort variants, u32/i32 keys-only 2^28.
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
nvidia-smi --query-gpu=name --format=csv,noheader
v() { n=$1; shift; date -u +%T; echo "== $n"; timeout 75 env "$@" >> $OUT/v.log 2>&1; grep '"case"' $OUT/v.log | tail -5 | cut -c1-175; }
v onesweep CUBEPRIM_SORT_ONESWEEP=1 ./bench_gpu sort cuda --keys
v t512x16 ./bench_gpu sort cuda --keys --tile 512x16
v t256x20 ./bench_gpu sort cuda --keys --tile 256x20
date -u +%T; echo "== ncu"
timeout 100 ncu --clock-control none -k regex:radix -c 10 ./bench_gpu sort cuda --keys > $OUT/ncu.log 2>&1
grep -E '^  [a-z_]+.*\(|Duration|Registers Per|DRAM Throughput|Memory Throughput' $OUT/ncu.log | head -60
date -u +%T
