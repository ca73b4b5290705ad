#!/bin/bash
# Call 7: row sort with only digits live through the ranking (2847d03): registers and time.
cd .dev/p7
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort
M=gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active
timeout 40 ncu --clock-control none --metrics $M --csv --page raw -k regex:sort_rows --launch-count 2 ./bench_gpu_sort cuda --rows-only > $OUT/rows_ncu.csv 2>&1
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; timeout 60 ./bench_gpu_sort cuda --rows-only; } > $OUT/rows.log 2>&1
cat $OUT/rows.log; grep sort_rows $OUT/rows_ncu.csv | cut -c1-400 | tail -2
