#!/bin/bash
# Stop 4, device call 2: candle every-family CUDA test (own strided copy for i32), scan with the
# 192 x 16 long tile (quick: copy in the same run), tile sweep around it.
cd .dev/s4b
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu candle_cuda
NV=$(python3 -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null)
( export LD_LIBRARY_PATH=$NV/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  date -u; timeout 100 ./candle_cuda every_family --test-threads=1 --nocapture ) > $OUT/candle.log 2>&1
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; timeout 100 ./bench_gpu cuda /tmp/q.json --quick; timeout 150 ./bench_gpu cuda /tmp/d.json --diag --tiles 192x16,256x12,192x16s64,192x20,160x16,192x12,224x14; } > $OUT/scan.log 2>&1
grep -vE "^\s+[0-9]+: <unknown>" $OUT/candle.log | tail -n 20; grep -E "copy|1-D|diag|rows|cummax" $OUT/scan.log
