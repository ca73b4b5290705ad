#!/bin/bash
# Session 6 call 5: unique_consecutive, keys staged and lengths written from the head mask; cube size sweep.
cd .dev/s6d
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for tv in 256:8 512:8 1024:8 512:4 256:8; do t=${tv%:*}; v=${tv#*:}; echo "== CUBEPRIM_RUNS_THREADS=$t CUBEPRIM_RUNS_VPT=$v"; CUBEPRIM_RUNS_THREADS=$t CUBEPRIM_RUNS_VPT=$v timeout 60 ./bench_gpu_compact cuda 28 --runs; done
  echo "== peers"; timeout 60 python3 compact_peers.py; } > $OUT/runs.log 2>&1
for t in 256 512 1024; do CUBEPRIM_RUNS_THREADS=$t timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__grid_size,launch__block_size,launch__shared_mem_per_block_dynamic --csv --page raw -k regex:run_length --launch-skip 1 --launch-count 1 ./bench_gpu_compact cuda 28 --runs > $OUT/ncu_$t.csv 2>/dev/null; done
grep -E "==|unique|reduce_by" $OUT/runs.log | cut -c1-150; python3 ncu.py $OUT/ncu_*.csv
