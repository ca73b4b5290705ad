#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
xz -d -k -f bench_gpu_lead.xz && chmod +x bench_gpu_lead
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 100 > $OUT/smi.csv 2>&1 &
SMI=$!
date
echo "== proto"; timeout 200 python3 proto_bench.py 2>&1 | tee $OUT/proto.log
date; echo "== core 1"
timeout 150 ./bench_gpu_lead sort cuda --core 2>&1 | tee $OUT/core_1.log | grep -v "^ \|^$\|^thread\|^stack\|^note\|^Unexp" | cut -c1-170
date; echo "== sleep 20 then rows-only"; sleep 20
timeout 100 ./bench_gpu_lead sort cuda --rows-only 2>&1 | tee $OUT/rows_1.log | grep "row sort\|copy" | cut -c1-170
date; echo "== core 2"
timeout 150 ./bench_gpu_lead sort cuda --core 2>&1 | tee $OUT/core_2.log | grep -v "^ \|^$\|^thread\|^stack\|^note\|^Unexp" | cut -c1-170
date; echo "== peers"; timeout 150 python3 sort_peers_b2b.py 2>&1 | tee $OUT/peers.log
date
kill $SMI
