#!/bin/bash
# Stop 8 call 3: short-row sorts of candle CUDA tensors launched on candle's stream
# (branch candle-sort-stream): the new test (strided views, > 65535 rows, every dtype) and the
# every-family test on its short-row shapes, against the CPU; bench_candle's arg_sort table.
cd .dev/s8c
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x candle_cuda bench_candle
NV=$(python3 -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null)
export LD_LIBRARY_PATH=$NV/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 200 ./candle_cuda short_row_sorts --test-threads=1 --nocapture; echo "rc $?"; } > $OUT/candle.log 2>&1
{ date -u; timeout 150 ./bench_candle; echo "rc $?"; } > $OUT/bench.log 2>&1
{ date -u; CUBEPRIM_CANDLE_SHAPES=0,2,5,6 timeout 170 ./candle_cuda every_family --test-threads=1 --nocapture; echo "rc $?"; } > $OUT/family.log 2>&1
grep -vE "^\s+[0-9]+: <unknown>" $OUT/candle.log | grep -E "^test |test result|panicked|rc |seed" | head
grep -A12 "arg_sort (f32" $OUT/bench.log; grep -E "Fixed|rc " $OUT/bench.log
grep -vE "^\s+[0-9]+: <unknown>" $OUT/family.log | grep -E "^test |test result|panicked|rc " | head
