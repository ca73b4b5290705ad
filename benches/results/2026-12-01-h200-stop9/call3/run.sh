#!/bin/bash
# Stop 9 call 3: the row sort's ballots from bit masks (R2P) and a branch-free digit (new, the
# new = the row sort with branch-free digits as well (109 registers on the device); not committed: the committed row sort is call 2's
# scatter as before) against ee0578b (base), alternated; top-k; PyTorch / CuPy in the same call.
cd .dev/s9c
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort_base bench_gpu_sort_new
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for b in base new base new; do echo "== $b core"; timeout 100 ./bench_gpu_sort_$b cuda --core; done
  for b in base new; do echo "== $b rows"; timeout 100 ./bench_gpu_sort_$b cuda --rows-only; done
  echo "== peers"; timeout 120 python3 sort_peers.py; } > $OUT/sort.log 2>&1
timeout 100 ncu --clock-control none --section LaunchStats --section Occupancy --section SpeedOfLight -k regex:radix_sort_rows --launch-skip 1 --launch-count 1 ./bench_gpu_sort_new cuda --rows-only > $OUT/ncu_rows.log 2>&1
{ timeout 120 compute-sanitizer --tool memcheck ./bench_gpu_sort_new cuda --small --rows-only; echo "rc $?"; } > $OUT/sanitizer.log 2>&1
grep -E "==|copy|sort|argsort|top|search|peer" $OUT/sort.log | cut -c1-150
grep -hE "Registers Per|Duration|Block Limit Reg|Theoretical Occ" $OUT/ncu_rows.log
grep -E "ERROR SUMMARY|rc " $OUT/sanitizer.log
