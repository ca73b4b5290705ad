#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 200 > $OUT/smi.csv 2>&1 &
SMI=$!
date; echo "== scan7"; timeout 150 python3 scan7.py 2>&1 | tee $OUT/scan7.log
date; echo "== sort core"
timeout 150 ./bench_gpu sort cuda --core 2>&1 | tee $OUT/core.log | grep -v "^ \|^$\|^thread\|^stack\|^note\|^Unexp" | cut -c1-170
date; echo "== peers"; timeout 120 python3 sort_peers_b2b.py 2>&1 | tee $OUT/peers.log
date; echo "== scan quick"
timeout 150 ./bench_gpu scan cuda $OUT/q1.json --quick 2>&1 | tee $OUT/quick_1.log | grep "%\|wrong\|FAIL\|panic" | cut -c1-150
date
kill $SMI
