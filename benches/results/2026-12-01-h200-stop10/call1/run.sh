#!/bin/bash
# Session 10 call 1: unique_consecutive with counts, head-count carry + per-tile fix-up (default)
# against the run-fold carry (CUBEPRIM_RUNS_CARRY=run), alternated in separate processes; then
# the whole compaction bench and PyTorch; ncu of the two kernels; memcheck on 2^22.
cd .dev/s10a
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for c in fixup run fixup run fixup run; do echo "== carry $c"; CUBEPRIM_RUNS_CARRY=$c timeout 80 ./bench_gpu_compact cuda 28 --runs; done
  echo "== full"; timeout 100 ./bench_gpu_compact cuda 28
  echo "== peers"; timeout 80 python3 compact_peers.py 28; date -u; } > $OUT/runs.log 2>&1
grep -E "==|unique|copy" $OUT/runs.log | cut -c1-175
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section SchedulerStats --section WarpStateStats"
timeout 120 ncu --clock-control none $S -k regex:run_length --launch-skip 4 --launch-count 4 ./bench_gpu_compact cuda 28 --runs > $OUT/ncu.log 2>&1; echo "ncu rc=$?"
grep -E "run_length|Duration|Registers Per|Issued Warp|DRAM Throughput|Achieved Occupancy|Theoretical Occ|Block Limit (Reg|Sha)" $OUT/ncu.log | head -60
timeout 150 compute-sanitizer --tool memcheck ./bench_gpu_compact cuda 22 --runs > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -4 $OUT/memcheck.log
