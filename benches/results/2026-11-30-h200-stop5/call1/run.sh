#!/bin/bash
# Profiling call: per-kernel times (ncu) of the 1-D sort, row sort, unique_consecutive.
cd .dev/p1
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort bench_gpu bench_gpu_compact
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
echo "ncu=$NCU"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__shared_mem_per_block_static,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active
prof() { local name=$1 t=$2; shift 2; timeout $t $NCU --clock-control none --metrics $M --csv --page raw "$@" > $OUT/$name.csv 2> $OUT/$name.err; echo "$name rc=$?"; }
prof sort 110 --launch-count 60 ./bench_gpu_sort cuda --core
prof rows 80 -k regex:sort_rows --launch-count 3 ./bench_gpu_sort cuda --rows-only
prof runs 90 --launch-count 60 ./bench_gpu_compact cuda 28 --runs
ls -la $OUT
