#!/bin/bash
# Session 6 call 2: ncu stall analysis of run_length (heads path) and of compact (masked_select u8).
cd .dev/s6a
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
S="--section WarpStateStats --section SourceCounters --section Occupancy --section MemoryWorkloadAnalysis --section SpeedOfLight --section LaunchStats --section SchedulerStats --import-source no"
prof() { local name=$1 t=$2; shift 2; timeout $t ncu --clock-control none $S -o $OUT/$name "$@" > $OUT/$name.log 2>&1; echo "$name rc=$?";
  ncu -i $OUT/$name.ncu-rep --page details --csv > $OUT/${name}_details.csv 2>&1
  ncu -i $OUT/$name.ncu-rep --page source --csv --print-source sass > $OUT/${name}_sass.csv 2>&1 || echo "sass export failed"; rm -f $OUT/$name.ncu-rep; }
prof runs 70 -k regex:run_length --launch-skip 1 --launch-count 1 ./bench_gpu_compact cuda 28 --runs
prof compact 90 -k regex:compact --launch-skip 1 --launch-count 1 ./bench_gpu_compact cuda 28
ls -la $OUT; grep -E "Kernel Name|Warp Cycles Per Issued|Issued Warp Per|Duration\"|Achieved Occupancy" $OUT/*_details.csv | cut -d, -f5,13-15 | head -20
