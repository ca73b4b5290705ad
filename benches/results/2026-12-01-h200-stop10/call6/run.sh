#!/bin/bash
# Session 10 call 6: main 03d06f7 (staged lengths tagged as normal floats): the compaction bench in
# two processes with PyTorch, memcheck of the run-length cases on 2^22.
cd .dev/s10f
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for p in 1 2; do echo "== full $p"; timeout 100 ./bench_gpu_compact cuda 28; done
  echo "== peers"; timeout 80 python3 compact_peers.py 28; date -u; } > $OUT/runs.log 2>&1
grep -E "==|unique_consecutive|reduce_by_key|masked_select_f32_50pct_mask_u8|nonzero_50pct_flags_u8|copy|reduce_sum" $OUT/runs.log | sed -e 's/"device":"cuda",//' -e 's/"n":268435456,//' -e 's/"gbs":[0-9.]*,//' | cut -c1-110
timeout 150 compute-sanitizer --tool memcheck ./bench_gpu_compact cuda 22 --runs > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $OUT/memcheck.log
