#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
for t in default 256x12 256x20 512x8 512x12 384x16 128x16; do
  if [ $t = default ]; then a=""; else a="--tile $t"; fi
  echo "== tile $t"
  timeout 150 ./bench_gpu sort cuda --core $a 2>&1 | tee -a $OUT/tiles_$t.log | grep -E "copy|argsort f32|sort u32" | cut -c1-190
done
