#!/bin/bash
# Session 14 call 7: tile sweep (2) of the device-wide sort passes (binary of stop 13 call 5; its
# default route is main's histogram -> scan -> scatter).
cd .dev/s14c
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for t in 512x16 384x20 1024x8; do
    echo "== tile $t"
    if [ $t = default ]; then timeout 80 ./bench_gpu sort cuda --core; else timeout 80 ./bench_gpu sort cuda --core --tile $t; fi
  done
  date -u; } > $OUT/sort_tiles2.log 2>&1
cut -c1-160 $OUT/sort_tiles2.log
