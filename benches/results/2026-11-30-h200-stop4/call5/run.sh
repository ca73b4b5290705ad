#!/bin/bash
# Stop 4, device call 5 (main + uncommitted: run-length stage budget 128 KiB, burn byte bools
# read as they are): candle every-family CUDA test, shapes 3-6 (call 4 ran 0-2 before its
# time limit); run-length with the new default tile; bench_burn after the sort merge.
cd .dev/s4e
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact bench_burn candle_cuda
NV=$(python3 -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null)
( export LD_LIBRARY_PATH=$NV/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  date -u; CUBEPRIM_CANDLE_SHAPES=3,4,5,6 timeout 230 ./candle_cuda every_family --test-threads=1 --nocapture ) > $OUT/candle.log 2>&1
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 60 ./bench_gpu_compact cuda 28 --runs; } > $OUT/compact.log 2>&1
{ date -u; timeout 200 ./bench_burn --reps 7; } > $OUT/burn.log 2>&1
grep -vE "^\s+[0-9]+: <unknown>" $OUT/candle.log | grep -v "^case" | tail -n 14; grep "^case" $OUT/candle.log | tail -2; cat $OUT/compact.log $OUT/burn.log
