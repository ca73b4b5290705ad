#!/bin/bash
# Stop 4, device call 3: sort with plane-ballot ranking (sort2 branch) against the split
# ranking and the peers; candle every-family CUDA test (i64 histogram keys read as words).
cd .dev/s4c
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort candle_cuda
NV=$(python3 -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null)
( export LD_LIBRARY_PATH=$NV/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  date -u; timeout 120 ./candle_cuda every_family --test-threads=1 --nocapture ) > $OUT/candle.log 2>&1
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 150 ./bench_gpu_sort cuda --core; echo "== split"; timeout 120 ./bench_gpu_sort cuda --core --split
  echo "== peers"; timeout 80 python3 sort_peers.py; } > $OUT/sort.log 2>&1
grep -vE "^\s+[0-9]+: <unknown>" $OUT/candle.log | grep -v "^case" | tail -n 20; grep "^case" $OUT/candle.log | tail -2; cat $OUT/sort.log
