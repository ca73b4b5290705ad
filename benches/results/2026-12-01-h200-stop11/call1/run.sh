#!/bin/bash
# Peer scripts: compact_peers.py = benches/results/2026-11-30-h200-stop6/call9/compact_peers.py, peers_h200.py = ../shared/bench/peers_h200.py.
# Session 11 call 1: head-mask tile of unique_consecutive: keys staged (striped, coalesced load into
# padded shared memory, default) against read blocked from global (CUBEPRIM_RUNS_STAGE_KEYS=0).
cd .dev/s11a
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for round in 1 2 3; do
    for s in 1 0; do echo "== stage_keys $s"; CUBEPRIM_RUNS_STAGE_KEYS=$s timeout 80 ./bench_gpu_compact cuda 28 --runs; done
  done
  echo "== peers"; timeout 60 python3 compact_peers.py 28
  date -u; } > $OUT/runs.log 2>&1
grep -E "==|unique_consecutive|reduce_by|copy|torch|unique" $OUT/runs.log | cut -c1-170
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SourceCounters"
for s in 1 0; do
CUBEPRIM_RUNS_STAGE_KEYS=$s timeout 120 ncu --clock-control none $S -k regex:run_length_k --launch-skip 2 --launch-count 1 ./bench_gpu_compact cuda 28 --runs > $OUT/ncu$s.log 2>&1; echo "ncu $s rc=$?"
grep -E "Duration|Registers Per|Issued Warp|DRAM Throughput|Achieved Occupancy|Block Limit (Reg|Sha)|L1/TEX Hit|Mem.*Busy|Stall|Warp Cycles Per Issued" $OUT/ncu$s.log | head -30
done
CUBEPRIM_RUNS_STAGE_KEYS=1 timeout 150 compute-sanitizer --tool memcheck ./bench_gpu_compact cuda 22 --runs > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -2 $OUT/memcheck.log
