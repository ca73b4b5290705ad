#!/bin/bash
# Session 14 call 9: the long-row argsort case (8 rows of 2^21 + 5 f32, device-wide key-value
# passes on 512 x 12 tiles, every row checked against the CPU) with the --core cases.
cd .dev/s14e
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  echo "== default"; timeout 120 ./bench_gpu sort cuda --core
  date -u; } > $OUT/sort.log 2>&1
cut -c1-170 $OUT/sort.log
