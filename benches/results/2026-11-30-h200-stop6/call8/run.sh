#!/bin/bash
# Session 6 call 8: experiment (branch exp-carry): unique_consecutive keys only, look-back carrying
# (fold, heads) in 4 state words against the plain head count in 2 (CUBEPRIM_RUNS_PLAIN=1).
cd .dev/s6g
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ date -u; for p in 0 1 0 1; do echo "== CUBEPRIM_RUNS_PLAIN=$p"; CUBEPRIM_RUNS_PLAIN=$p timeout 80 ./bench_gpu_compact cuda 28 --runs; done; } > $OUT/runs.log 2>&1
grep -E "==|unique" $OUT/runs.log | cut -c1-175
