#!/bin/bash
# Stop 31, call 1: issue 2's and 4's targets by the device clock, peers in the same call.
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 250 > $OUT/smi.csv 2>&1 &
SMI=$!
F='^ \|^$\|^thread\|^stack\|^note\|^Unexp'
for r in 1 2; do
  date -u +%T; echo "== scan quick $r"
  timeout 120 ./bench_gpu scan cuda $OUT/q$r.json --quick >> $OUT/scan.log 2>&1
  grep -v "$F" $OUT/q$r.json | cut -c1-200
  date -u +%T; echo "== sort keys $r"
  timeout 90 ./bench_gpu sort cuda --keys >> $OUT/sort.log 2>&1
  grep '"case"' $OUT/sort.log | tail -5 | cut -c1-230
done
date -u +%T; echo "== sort core"
timeout 150 ./bench_gpu sort cuda --core >> $OUT/sort.log 2>&1
grep '"case"' $OUT/sort.log | tail -7 | cut -c1-230
date -u +%T; echo "== sort peers b2b"
timeout 90 python3 sort_peers_b2b.py > $OUT/peers.log 2>&1; cat $OUT/peers.log
date -u +%T; echo "== cub peers"
(nvcc -O3 -std=c++17 -arch=sm_90 -o cub_peers cub_peers.cu && timeout 60 ./cub_peers) >> $OUT/peers.log 2>&1
date -u +%T; echo "== torch peers"
timeout 120 python3 peers_h200.py $OUT >> $OUT/peers.log 2>&1
date -u +%T
kill $SMI
tail -40 $OUT/peers.log
