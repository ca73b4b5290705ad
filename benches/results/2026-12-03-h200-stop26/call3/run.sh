#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
F='^ \|^$\|^thread\|^stack\|^note\|^Unexp'
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 200 > $OUT/smi.csv 2>&1 &
SMI=$!
date; echo "== scan quick"
timeout 150 ./bench_gpu scan cuda $OUT/q.json --quick > $OUT/quick.log 2>&1; grep "%\|WRONG\|panic" $OUT/quick.log | cut -c1-150
date; echo "== sort keys"
timeout 80 ./bench_gpu sort cuda --keys > $OUT/keys.log 2>&1; grep -v "$F" $OUT/keys.log | cut -c1-175
date; echo "== compact"
timeout 70 ./bench_gpu compact cuda 28 > $OUT/compact.log 2>&1; grep -v "$F" $OUT/compact.log | cut -c1-160
kill $SMI
date; echo "== racecheck scan"
timeout 90 compute-sanitizer --tool racecheck ./bench_gpu scan cuda --sanitize > $OUT/racecheck_scan.log 2>&1; tail -2 $OUT/racecheck_scan.log
date; echo "== memcheck scan"
timeout 50 compute-sanitizer --tool memcheck ./bench_gpu scan cuda --sanitize > $OUT/memcheck_scan.log 2>&1; tail -2 $OUT/memcheck_scan.log
date; echo "== racecheck compact 2^16"
timeout 60 compute-sanitizer --tool racecheck ./bench_gpu compact cuda 16 > $OUT/racecheck_compact.log 2>&1; tail -3 $OUT/racecheck_compact.log | cut -c1-160
date
