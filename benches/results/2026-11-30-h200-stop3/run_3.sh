#!/bin/bash
# Device call 3 (stop 3): bench_burn with per-side calls per sync; candle's every-family CUDA test.
cd .dev/r3
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_burn candle_cuda
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 125 ./bench_burn --reps 7; } > $OUT/burn.log 2>&1
NV=$(python3 -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null)
( export LD_LIBRARY_PATH=$NV/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  date -u; timeout 60 ./candle_cuda every_family --test-threads=1 --nocapture ) > $OUT/candle.log 2>&1
cat $OUT/burn.log; grep -vE "^\s+[0-9]+: <unknown>" $OUT/candle.log | tail -n 25
