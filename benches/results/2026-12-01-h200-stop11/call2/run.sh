#!/bin/bash
# Peer scripts: compact_peers.py = benches/results/2026-11-30-h200-stop6/call9/compact_peers.py, peers_h200.py = ../shared/bench/peers_h200.py.
# Session 11 call 2: tile ids from the cube position (CUBEPRIM_ORDERED=1; the counter is still bumped,
# fire and forget) against the atomic ticket (0), for the scan, select and run-length passes.
cd .dev/s11b
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact bench_gpu
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for round in 1 2; do
    for o in 1 0; do echo "== ordered $o"; CUBEPRIM_ORDERED=$o timeout 100 ./bench_gpu_compact cuda 28; done
  done
  echo "== peers"; timeout 60 python3 compact_peers.py 28
  date -u; } > $OUT/compact.log 2>&1
grep -E "==|case" $OUT/compact.log | sed -E 's/"n":268435456,//; s/"device":"cuda",//' | cut -c1-140
{ date -u; for round in 1 2 3; do for o in 1 0; do echo "== ordered $o"; CUBEPRIM_ORDERED=$o timeout 100 ./bench_gpu cuda $OUT/q$o$round.json --quick; done; done
  echo "== torch"; timeout 100 python3 peers_h200.py $OUT; date -u; } > $OUT/scan.log 2>&1
grep -E "==|1-D|copy|rows|cummax" $OUT/scan.log | cut -c1-150 | head -60
CUBEPRIM_ORDERED=1 timeout 200 compute-sanitizer --tool memcheck ./bench_gpu_compact cuda 22 > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -1 $OUT/memcheck.log
