#!/bin/bash
# Peer scripts: compact_peers.py = benches/results/2026-11-30-h200-stop6/call9/compact_peers.py, peers_h200.py = ../shared/bench/peers_h200.py.
# Session 11 call 3: the committed code (keys staged in run_length_heads; tile ids from the cube
# position on CUDA), with the ticket order (CUBEPRIM_TILE_ORDER=ticket) once for comparison;
# PyTorch in the same call; memcheck and racecheck of the scan paths, memcheck of compaction.
cd .dev/s11c
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact bench_gpu
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for o in position ticket position; do echo "== order $o"; CUBEPRIM_TILE_ORDER=$o timeout 100 ./bench_gpu_compact cuda 28; done
  echo "== peers"; timeout 60 python3 compact_peers.py 28; date -u; } > $OUT/compact.log 2>&1
grep -E "==|case" $OUT/compact.log | sed -E 's/"n":268435456,//; s/"device":"cuda",//; s/"gbs":[0-9.]*,//' | cut -c1-130
{ date -u; for o in position ticket position position; do echo "== order $o"; CUBEPRIM_TILE_ORDER=$o timeout 100 ./bench_gpu cuda $OUT/q.json --quick 2>&1 | grep -A8 "=== summary"; done
  echo "== torch"; timeout 100 python3 peers_h200.py $OUT | grep -E "copy|cumsum|cummax"; date -u; } > $OUT/scan.log 2>&1
cat $OUT/scan.log | cut -c1-120
timeout 200 compute-sanitizer --tool memcheck ./bench_gpu cuda --sanitize > $OUT/memcheck_scan.log 2>&1; echo "memcheck scan rc=$?"; grep -E "sanitize cases|ERROR SUMMARY" $OUT/memcheck_scan.log
timeout 200 compute-sanitizer --tool racecheck ./bench_gpu cuda --sanitize > $OUT/racecheck_scan.log 2>&1; echo "racecheck scan rc=$?"; grep -E "sanitize cases|RACECHECK SUMMARY|hazard" $OUT/racecheck_scan.log | tail -3
timeout 150 compute-sanitizer --tool memcheck ./bench_gpu_compact cuda 22 > $OUT/memcheck_compact.log 2>&1; echo "memcheck compact rc=$?"; tail -1 $OUT/memcheck_compact.log
rm -f $OUT/q.json
