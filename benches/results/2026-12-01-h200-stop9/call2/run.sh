#!/bin/bash
# Stop 9 call 2: ballot bit tests as masks with an opaque 1 (new) against ee0578b (base), alternated;
# registers of the new row sort and scatter (ncu LaunchStats); PyTorch / CuPy in the same call.
cd .dev/s9b
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort_base bench_gpu_sort_new
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for b in base new base new; do echo "== $b"; timeout 100 ./bench_gpu_sort_$b cuda --core; done
  echo "== peers"; timeout 120 python3 sort_peers.py; } > $OUT/sort.log 2>&1
for k in radix_sort_rows radix_scatter; do timeout 100 ncu --clock-control none --section LaunchStats --section Occupancy --section SpeedOfLight -k regex:$k --launch-skip 1 --launch-count 1 ./bench_gpu_sort_new cuda --core > $OUT/ncu_$k.log 2>&1; done
grep -E "==|copy|sort|argsort|peer" $OUT/sort.log | cut -c1-170
grep -hE "Registers Per|Duration|Block Limit Reg|Theoretical Occ" $OUT/ncu_*.log
