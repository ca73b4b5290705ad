#!/bin/bash
# Stop 8 call 1: the whole candle CUDA test (every method, incl. sort_pairs / bucketize /
# count_nonzero, new in 367b203) on fresh random inputs against the CPU.
cd .dev/s8
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x candle_cuda
NV=$(python3 -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null)
( export LD_LIBRARY_PATH=$NV/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 400 ./candle_cuda --test-threads=1 --nocapture ) > $OUT/candle.log 2>&1
echo "rc $?" >> $OUT/candle.log
grep -vE "^\s+[0-9]+: <unknown>" $OUT/candle.log | grep -E "^test |test result|panicked|rc |checked|cases" | head -40
tail -n 5 $OUT/candle.log
