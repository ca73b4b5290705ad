#!/bin/bash
# Stop 8 call 4: after the review refactor (shared kernel cache/loader, shared row layout,
# unzeroed stand-in buffer): short-row sorts and scans on candle's stream against the CPU.
cd .dev/s8d
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
xz -d -f candle_cuda.xz; chmod +x candle_cuda
NV=$(python3 -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null)
export LD_LIBRARY_PATH=$NV/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
{ timeout 150 ./candle_cuda short_row_sorts --test-threads=1 --nocapture; echo "rc $?"
  timeout 80 ./candle_cuda every_op_on_cuda --test-threads=1 --nocapture; echo "rc $?"; } > $OUT/candle.log 2>&1
grep -vE "^\s+[0-9]+: <unknown>" $OUT/candle.log | grep -E "^test |test result|panicked|rc " | head
