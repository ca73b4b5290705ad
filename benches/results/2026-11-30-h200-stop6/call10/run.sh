#!/bin/bash
# Session 6 call 10: experiment (branch exp-counts, 347b01e on f8cf648): unique_consecutive lengths written
# as i64 (default on CUDA) against i32 (CUBEPRIM_COUNTS_I32=1).
cd .dev/s6i
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ date -u; for p in 0 1 0 1; do echo "== CUBEPRIM_COUNTS_I32=$p"; CUBEPRIM_COUNTS_I32=$p timeout 80 ./bench_gpu_compact cuda 28 --runs; done; } > $OUT/runs.log 2>&1
grep -E "==|unique" $OUT/runs.log | cut -c1-175
