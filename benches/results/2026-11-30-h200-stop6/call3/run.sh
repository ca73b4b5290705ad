#!/bin/bash
# Session 6 call 3: look-back reading 4 windows per round (ROUND_WINDOWS = 4): compaction, run-length, scans.
cd .dev/s6b
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact bench_gpu
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 100 ./bench_gpu_compact cuda 28; echo "== peers"; timeout 60 python3 compact_peers.py; } > $OUT/compact.log 2>&1
{ date -u; timeout 100 ./bench_gpu cuda $OUT/q.json --quick; } > $OUT/scan.log 2>&1
timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__grid_size --csv --page raw -k regex:"run_length|scan_rows|compact" --launch-skip 0 --launch-count 12 ./bench_gpu_compact cuda 28 > $OUT/ncu.csv 2> $OUT/ncu.err
grep -E "case|copy" $OUT/compact.log | cut -c1-200; grep -E "1-D|copy|rows" $OUT/scan.log | head -20
python3 ncu.py $OUT/ncu.csv
