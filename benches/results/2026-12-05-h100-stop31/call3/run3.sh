#!/bin/bash
# Stop 31, call 3: on an H200, call 1 again (issue 2/4 targets by the device clock beside CUB);
# on an H100, the keys-only tile sweep (default first) and the row sorts / top-k, beside the peers.
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 250 > $OUT/smi.csv 2>&1 &
SMI=$!
F='^ \|^$\|^thread\|^stack\|^note\|^Unexp'
if [[ "$G" == *H200* ]]; then
  date -u +%T; echo "== scan quick"
  timeout 120 ./bench_gpu scan cuda $OUT/q.json --quick > $OUT/scan.log 2>&1
  grep 'device .*%' $OUT/scan.log | cut -c1-200
  for r in 1 2; do date -u +%T; echo "== sort keys $r"
    timeout 90 ./bench_gpu sort cuda --keys >> $OUT/sort.log 2>&1
    grep '"case"' $OUT/sort.log | tail -5 | cut -c1-200; done
  date -u +%T; echo "== sort core"
  timeout 150 ./bench_gpu sort cuda --core >> $OUT/sort.log 2>&1
  grep '"case"' $OUT/sort.log | tail -7 | cut -c1-200
else
  for t in 256x16 256x24 384x16 256x20; do date -u +%T; echo "== keys $t"
    timeout 75 ./bench_gpu sort cuda --keys --tile $t >> $OUT/sort.log 2>&1
    grep '"case"' $OUT/sort.log | tail -5 | cut -c1-200; done
  date -u +%T; echo "== rows-only"
  timeout 120 ./bench_gpu sort cuda --rows-only >> $OUT/sort.log 2>&1
  grep '"case"' $OUT/sort.log | tail -8 | cut -c1-200
fi
date -u +%T; echo "== sort peers b2b"
timeout 90 python3 sort_peers_b2b.py > $OUT/peers.log 2>&1; cat $OUT/peers.log
date -u +%T; echo "== cub peers"
(nvcc -O3 -std=c++17 -arch=sm_90 -o cub_peers cub_peers.cu && timeout 60 ./cub_peers) >> $OUT/peers.log 2>&1
date -u +%T; echo "== torch peers"
timeout 120 python3 peers_h200.py $OUT >> $OUT/peers.log 2>&1
date -u +%T
kill $SMI
grep -i 'copy\|sort\|topk\|cumsum f32 1-D\|cumsum f32 rows\|cummax\|InclusiveSum' $OUT/peers.log | grep -v SortPairs
