#!/bin/bash
# Session 10 call 4: d4e439a + CUBEPRIM_SELECT_SPINS (look-back rounds before the fallback of the
# compaction / run-length passes; default 16): 16 / 64 / 256, whole compaction bench, alternated.
cd .dev/s10d
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for round in 1 2; do
    for s in 16 256 64; do
      echo "== spins $s"; CUBEPRIM_SELECT_SPINS=$s timeout 100 ./bench_gpu_compact cuda 28
    done
  done; date -u; } > $OUT/runs.log 2>&1
grep -E "==|unique_consecutive|reduce_by_key|masked_select|nonzero|copy" $OUT/runs.log | sed -e 's/"device":"cuda",//' -e 's/"n":268435456,//' -e 's/"gbs":[0-9.]*,//' | cut -c1-100
