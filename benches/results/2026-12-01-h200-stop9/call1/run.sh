#!/bin/bash
# (the ncu reports and full SASS CSVs stayed on this machine; launch_stats.txt and *_sass_top.txt are summaries made from them)
# Stop 9 call 1: ncu stall profile (SASS level) of the row sort and of one scatter pass of the u32 sort.
cd .dev/s9a; xz -d -f bench_gpu_sort.xz; chmod +x bench_gpu_sort
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
S="--section WarpStateStats --section SourceCounters --section Occupancy --section SpeedOfLight --section LaunchStats --section SchedulerStats --section MemoryWorkloadAnalysis --import-source no"
prof() { local name=$1 t=$2; shift 2; timeout $t ncu --clock-control none $S -o $OUT/$name "$@" > $OUT/$name.log 2>&1; echo "$name rc=$?";
  ncu -i $OUT/$name.ncu-rep --page details --csv > $OUT/${name}_details.csv 2>&1
  ncu -i $OUT/$name.ncu-rep --page source --csv --print-source sass > /tmp/${name}_sass.csv 2>&1 || echo "sass export failed";
  python3 sass_top.py /tmp/${name}_sass.csv 60 > $OUT/${name}_sass_top.txt; xz -k /tmp/${name}_sass.csv; cp /tmp/${name}_sass.csv.xz $OUT/; rm -f $OUT/$name.ncu-rep; }
prof rows 150 -k regex:radix_sort_rows --launch-skip 1 --launch-count 1 ./bench_gpu_sort cuda --rows-only
prof scatter 200 -k regex:radix_scatter --launch-skip 1 --launch-count 1 ./bench_gpu_sort cuda --core
timeout 100 ./bench_gpu_sort cuda --core > $OUT/core.log 2>&1
ls -la $OUT; grep -E "Kernel Name|Warp Cycles Per Issued|Issued Warp Per|Duration\"|Achieved Occupancy|Registers Per" $OUT/*_details.csv | cut -d, -f5,13-15 | head -20
head -40 $OUT/rows_sass_top.txt; cat $OUT/core.log | cut -c1-200
