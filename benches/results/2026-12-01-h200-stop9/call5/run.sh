#!/bin/bash
# Stop 9 call 5: the committed row sort (ballot bit tests as masks), --rows-only in four
# processes (cubecl lays out shared memory in a different order in each process), PyTorch after.
cd .dev/s9e
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for i in 1 2 3 4; do echo "== rows $i"; timeout 60 ./bench_gpu_sort cuda --rows-only; done
  echo "== peers"; timeout 60 python3 sort_peers.py; } > $OUT/sort.log 2>&1
grep -E "==|row sort|top|search|rows f32|topk" $OUT/sort.log | cut -c1-140
