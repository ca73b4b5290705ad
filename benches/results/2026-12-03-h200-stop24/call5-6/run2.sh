#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
xz -d -k -f bench_gpu_lead.xz && chmod +x bench_gpu_lead
date
echo "== scan: look-back against prefixed"
timeout 120 python3 scan_prefixed.py 2>&1 | tee $OUT/scan_prefixed.txt
date
for i in 1 2 3; do
  echo "== rows lead $i"
  timeout 60 ./bench_gpu_lead sort cuda --rows-only 2>&1 | tee -a $OUT/rows_lead.log | grep -v "^ \|^$\|^thread\|^stack\|^note" | cut -c1-150
done
date
