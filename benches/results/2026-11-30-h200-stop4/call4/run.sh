#!/bin/bash
# Stop 4, device call 4 (main f77497c + bench_gpu_compact --runs): staged run-length kernel
# (default tile, 8 vectors per unit, the unstaged kernel), PyTorch peers, scan quick,
# candle every-family CUDA test.
cd .dev/s4d
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact bench_gpu candle_cuda
NV=$(python3 -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null)
( export LD_LIBRARY_PATH=$NV/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  date -u; timeout 150 ./candle_cuda every_family --test-threads=1 --nocapture ) > $OUT/candle.log 2>&1
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 60 ./bench_gpu_compact cuda 28 --runs; echo "== vpt 8"; CUBEPRIM_RUNS_VPT=8 timeout 60 ./bench_gpu_compact cuda 28 --runs
  echo "== unstaged"; CUBEPRIM_RUNS_VPT=0 timeout 60 ./bench_gpu_compact cuda 28 --runs
  echo "== torch"; timeout 60 python3 compact_peers.py 28; } > $OUT/compact.log 2>&1
{ date -u; timeout 100 ./bench_gpu cuda /tmp/q.json --quick; } > $OUT/scan.log 2>&1
grep -vE "^\s+[0-9]+: <unknown>" $OUT/candle.log | grep -v "^case" | tail -n 14; grep "^case" $OUT/candle.log | tail -2; cat $OUT/compact.log; grep -A8 summary $OUT/scan.log
