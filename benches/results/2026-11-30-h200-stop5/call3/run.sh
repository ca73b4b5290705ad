#!/bin/bash
# Call 3: ncu stall analysis (WarpStateStats, SourceCounters) of run_length, radix_scatter, scan_rows 1-D.
cd .dev/p3
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort bench_gpu bench_gpu_compact
S="--section WarpStateStats --section SourceCounters --section Occupancy --section MemoryWorkloadAnalysis --section SpeedOfLight --section LaunchStats --section SchedulerStats --import-source no"
prof() { local name=$1 t=$2; shift 2; timeout $t ncu --clock-control none $S -o $OUT/$name "$@" > $OUT/$name.log 2>&1; echo "$name rc=$?";
  ncu -i $OUT/$name.ncu-rep --page details --csv > $OUT/${name}_details.csv 2>&1
  ncu -i $OUT/$name.ncu-rep --page source --csv --print-source sass > $OUT/${name}_sass.csv 2>&1 || echo "sass export failed"; }
prof runs 70 -k regex:run_length --launch-skip 1 --launch-count 1 ./bench_gpu_compact cuda 28 --runs
prof scatter 70 -k regex:radix_scatter --launch-skip 4 --launch-count 1 ./bench_gpu_sort cuda --core
prof scan 60 -k regex:scan_rows --launch-skip 2 --launch-count 1 ./bench_gpu cuda /tmp/d.json --diag --tiles 192x16
ls -la $OUT; head -c 600 $OUT/runs_sass.csv
