#!/bin/bash
# Call 2: histogram loads-first; device tile 512x8 and row tile 512x8; ncu of run_length, scan, rows.
cd .dev/p2
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort bench_gpu bench_gpu_compact
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,launch__shared_mem_per_block_dynamic
prof() { local name=$1 t=$2; shift 2; timeout $t ncu --clock-control none --metrics $M --csv --page raw "$@" > $OUT/$name.csv 2> $OUT/$name.err; echo "$name rc=$?"; }
{ echo "== default"; timeout 80 ./bench_gpu_sort cuda --core; echo "== tile 512x8, row tile 512x8"; CUBEPRIM_ROW_TILE=512x8 timeout 80 ./bench_gpu_sort cuda --core --tile 512x8; } > $OUT/sort.log 2>&1
grep -E "==|copy|sort|argsort f32 stable \(U32" $OUT/sort.log
prof runs 45 -k regex:run_length --launch-count 3 ./bench_gpu_compact cuda 28 --runs
prof scan 45 -k regex:scan_rows --launch-count 12 ./bench_gpu cuda /tmp/d.json --diag --tiles 192x16
prof hist 35 -k regex:radix_hist --launch-count 4 ./bench_gpu_sort cuda --core
CUBEPRIM_ROW_TILE=512x8 prof rows 40 -k regex:sort_rows --launch-count 3 ./bench_gpu_sort cuda --rows-only
