#!/bin/bash
# Session 10 call 2: unique_consecutive with counts (head-count carry + fix-up): lengths written
# from each unit's mask (default) / staged in shared memory (CUBEPRIM_RUNS_STAGE_LENGTHS=1); the
# look-back polling with atomic loads only (CUBEPRIM_POLL_ATOMIC=1); alternated processes.
cd .dev/s10b
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for round in 1 2 3; do
    for v in "0 0" "1 0" "0 1"; do set -- $v
      echo "== stage $1 atomic $2"; CUBEPRIM_RUNS_STAGE_LENGTHS=$1 CUBEPRIM_POLL_ATOMIC=$2 timeout 80 ./bench_gpu_compact cuda 28 --runs
    done
  done
  for a in 0 1; do echo "== full atomic $a"; CUBEPRIM_POLL_ATOMIC=$a timeout 100 ./bench_gpu_compact cuda 28; done
  date -u; } > $OUT/runs.log 2>&1
grep -E "==|unique_consecutive_counts|masked_select_f32_50pct_mask_u8|nonzero_50pct_flags_u8|copy" $OUT/runs.log | cut -c1-150
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis"
CUBEPRIM_RUNS_STAGE_LENGTHS=1 timeout 120 ncu --clock-control none $S -k regex:run_length_k --launch-skip 2 --launch-count 1 ./bench_gpu_compact cuda 28 --runs > $OUT/ncu.log 2>&1; echo "ncu rc=$?"
grep -E "run_length|Duration|Registers Per|Issued Warp|DRAM Throughput|Achieved Occupancy|Block Limit (Reg|Sha)|L2 Hit|Mem.*Busy" $OUT/ncu.log | head -30
CUBEPRIM_RUNS_STAGE_LENGTHS=1 timeout 150 compute-sanitizer --tool memcheck ./bench_gpu_compact cuda 22 --runs > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $OUT/memcheck.log
