#!/bin/bash
# Session 13 call 3: grids without empty cubes (grid_2d) for every family; onesweep with early
# counts against the default sort; PyTorch / CuPy in the same call.
cd .dev/s13c
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for i in 1 2; do echo "== sort $i"; timeout 150 ./bench_gpu sort cuda --core
  echo "== onesweep $i"; CUBEPRIM_SORT_ONESWEEP=1 timeout 150 ./bench_gpu sort cuda --core; done
  echo "== peers"; timeout 120 python3 sort_peers.py; date -u; } > $OUT/sort.log 2>&1
cut -c1-150 $OUT/sort.log | grep -v "torch.sort f32\"\|searchsorted"
{ for i in 1 2; do echo "== scan $i"; timeout 100 ./bench_gpu scan cuda $OUT/q.json --quick 2>&1 | grep -A8 "=== summary"; done
  echo "== torch"; timeout 100 python3 peers_h200.py $OUT | grep -E "copy|cumsum|cummax"; date -u; } > $OUT/scan.log 2>&1
cut -c1-120 $OUT/scan.log
{ date -u; echo "== compact"; timeout 100 ./bench_gpu compact cuda 28
  echo "== peers"; timeout 60 python3 compact_peers.py 28; date -u; } > $OUT/compact.log 2>&1
grep -E "==|case" $OUT/compact.log | sed -E 's/"n":268435456,//; s/"device":"cuda",//; s/"gbs":[0-9.]*,//' | cut -c1-130
rm -f $OUT/q.json
