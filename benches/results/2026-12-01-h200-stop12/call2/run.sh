#!/bin/bash
# Peer scripts: compact_peers.py = benches/results/2026-11-30-h200-stop6/call9/compact_peers.py,
# peers_h200.py = ../shared/bench/peers_h200.py, sort_peers.py = benches/results/2026-11-30-h200-sort/peers.py.
# Stop 12 call 2: the three bench families as one binary (`bench_gpu scan|compact|sort`), each
# case checked against the CPU before it is timed; PyTorch / CuPy in the same call.
cd .dev/s12b
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for i in 1 2; do echo "== scan $i"; timeout 100 ./bench_gpu scan cuda $OUT/q.json --quick 2>&1 | grep -A8 "=== summary"; done
  echo "== torch"; timeout 100 python3 peers_h200.py $OUT | grep -E "copy|cumsum|cummax"; date -u; } > $OUT/scan.log 2>&1
cat $OUT/scan.log | cut -c1-120
{ date -u; for i in 1 2; do echo "== compact $i"; timeout 100 ./bench_gpu compact cuda 28; done
  echo "== peers"; timeout 60 python3 compact_peers.py 28; date -u; } > $OUT/compact.log 2>&1
grep -E "==|case" $OUT/compact.log | sed -E 's/"n":268435456,//; s/"device":"cuda",//; s/"gbs":[0-9.]*,//' | cut -c1-130
{ date -u; for i in 1 2; do echo "== sort $i"; timeout 150 ./bench_gpu sort cuda --core; done
  echo "== peers"; timeout 120 python3 sort_peers.py; date -u; } > $OUT/sort.log 2>&1
cut -c1-160 $OUT/sort.log
rm -f $OUT/q.json
