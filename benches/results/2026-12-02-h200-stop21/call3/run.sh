#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for s in 0 8 16 24; do echo "== SHIFT=$s"; SHIFT=$s python3 scatter_shift_lb.py radix_scatter_u32_keys_full.cu 28 gen,shl 2>&1 | tee -a $OUT/shift.txt; done
SHIFT=8 python3 scatter_shift_lb.py radix_scatter_u32_keys_full.cu 28 funnel 2>&1 | tee -a $OUT/shift.txt
