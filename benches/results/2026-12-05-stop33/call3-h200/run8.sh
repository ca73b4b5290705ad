#!/bin/bash
# Stop 33, experiment (branch exp-minblocks): CUBECL_CUDA_MIN_BLOCKS=M makes cubecl's CUDA
# dialect write __launch_bounds__(units, M) where M cubes fit 2048 units; unset as before.
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
xz -d -k -f bench_exp.xz && chmod +x bench_exp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 250 > $OUT/smi.csv 2>&1 &
SMI=$!
b() { n=$1; l=$2; shift 2; date -u +%T; echo "== $n"; echo "== $n" >> $OUT/sort.log; timeout 90 ./bench_exp sort cuda "$@" >> $OUT/sort.log 2>&1; grep '"case"' $OUT/sort.log | tail -$l | cut -c1-200; }
for r in 1 2; do
  b argsort-plain-$r 3 --argsort
  CUBECL_CUDA_MIN_BLOCKS=3 b argsort-mb3-$r 3 --argsort
done
date -u +%T; echo "== ncu argsort mb3"
CUBECL_CUDA_MIN_BLOCKS=3 timeout 100 ncu --clock-control none --section LaunchStats --section SpeedOfLight --section Occupancy -k regex:radix -c 8 ./bench_exp sort cuda --argsort > $OUT/ncu-mb3.log 2>&1
grep -E '^  [a-z_]+.*\(|Duration|Registers Per|DRAM Throughput|Achieved Occupancy' $OUT/ncu-mb3.log | head -60
kill $SMI; date -u +%T
