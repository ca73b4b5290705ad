#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
xz -d -k -f bench_gpu_lead.xz && chmod +x bench_gpu_lead
date
for r in 1 2; do
  echo "== core lead $r"
  timeout 150 ./bench_gpu_lead sort cuda --core 2>&1 | tee -a $OUT/core_lead_$r.log | grep -v "^ \|^$\|^thread\|^stack\|^note\|^Unexp" | cut -c1-150
done
echo "== peers"; timeout 100 python3 sort_peers.py 2>&1 | head -6 | tee $OUT/peers.log
date
