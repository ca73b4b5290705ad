#!/bin/bash
# Stop 4, device call 1: burn overhead breakdown (fused / plain), bench_burn with doubling k,
# scan tile sweep, candle every-family CUDA test.
cd .dev/s4a
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_burn bench_gpu candle_cuda
NV=$(python3 -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null)
( export LD_LIBRARY_PATH=$NV/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  date -u; timeout 90 ./candle_cuda every_family --test-threads=1 --nocapture ) > $OUT/candle.log 2>&1
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 60 ./bench_burn --overhead --plain --reps 9; echo "== bench"; timeout 150 ./bench_burn --reps 7; } > $OUT/burn.log 2>&1
{ date -u; timeout 100 ./bench_gpu cuda /tmp/q.json --quick; timeout 120 ./bench_gpu cuda /tmp/d.json --diag --tiles 256x12,128x24,192x16,128x32; } > $OUT/scan.log 2>&1
grep -vE "^\s+[0-9]+: <unknown>" $OUT/candle.log | tail -n 20; cat $OUT/burn.log; grep -E "copy|1-D|diag" $OUT/scan.log
