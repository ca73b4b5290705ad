#!/bin/bash
# Session 6 call 1: unique_consecutive from the head mask (run_length_heads), compaction peers, ncu of run_length.
cd .dev/s6a
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 100 ./bench_gpu_compact cuda 28; echo "== peers"; timeout 60 python3 compact_peers.py; } > $OUT/compact.log 2>&1
timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__grid_size,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static,sm__warps_active.avg.pct_of_peak_sustained_active --csv --page raw -k regex:run_length --launch-skip 0 --launch-count 8 ./bench_gpu_compact cuda 28 --runs > $OUT/ncu_runs.csv 2> $OUT/ncu.err
cat $OUT/compact.log; python3 ncu.py $OUT/ncu_runs.csv 2>&1 | head -30 || tail -20 $OUT/ncu_runs.csv
