#!/bin/bash
# Stop 32, call 3: the plan with WIDE_KEYS_TILE (384 x 16, the packed argsort): --core twice,
# --rows-only (top-k), beside the sort peers and CUB.
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 250 > $OUT/smi.csv 2>&1 &
SMI=$!
b() { n=$1; l=$2; shift 2; date -u +%T; echo "== $n"; timeout 150 ./bench_gpu sort cuda "$@" >> $OUT/sort.log 2>&1; grep '"case"' $OUT/sort.log | tail -$l | cut -c1-190; }
b core-1 7 --core
b rows-only 9 --rows-only
date -u +%T; echo "== sort peers b2b"
timeout 90 python3 sort_peers_b2b.py >> $OUT/peers.log 2>&1; grep '"peer"' $OUT/peers.log | tail -6
date -u +%T; echo "== cub peers"
(nvcc -O3 -std=c++17 -arch=sm_90 -o cub_peers cub_peers.cu && timeout 60 ./cub_peers) >> $OUT/peers.log 2>&1
grep -i 'copy\|sort' $OUT/peers.log | grep -v '"peer"' | grep -v SortPairs
b core-2 7 --core
kill $SMI
date -u +%T
