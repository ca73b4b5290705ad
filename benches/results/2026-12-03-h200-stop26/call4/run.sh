#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
F='^ \|^$\|^thread\|^stack\|^note\|^Unexp'
for r in 1 2; do
  date; echo "== sort keys $r"
  timeout 80 ./bench_gpu sort cuda --keys > $OUT/keys_$r.log 2>&1; grep -v "$F" $OUT/keys_$r.log | cut -c1-175
done
date; echo "== peers"; timeout 60 python3 sort_peers_b2b.py > $OUT/peers.log 2>&1; cat $OUT/peers.log
date
