#!/bin/bash
# Stop 8 call 2: row sort A/B: the first digit pass reads keys straight from the row into
# registers (new) against c7d1204 (base), alternated; PyTorch in the same call; racecheck and
# memcheck of the new row sort on the small cases.
cd .dev/s8b
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort_base bench_gpu_sort_new
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for b in base new base new; do echo "== $b"; timeout 90 ./bench_gpu_sort_$b cuda --rows-only; done
  echo "== peers"; timeout 100 python3 sort_peers.py; } > $OUT/sort.log 2>&1
{ timeout 150 compute-sanitizer --tool racecheck ./bench_gpu_sort_new cuda --small --rows-only; echo "rc $?"
  timeout 100 compute-sanitizer --tool memcheck ./bench_gpu_sort_new cuda --small --rows-only; echo "rc $?"; } > $OUT/sanitizer.log 2>&1
grep -E "==|copy|rows|top|search|peer" $OUT/sort.log | cut -c1-200 | head -40
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|rc |hazard|error" $OUT/sanitizer.log | head
