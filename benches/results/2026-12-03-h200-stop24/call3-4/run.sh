#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
date
timeout 500 python3 row_layouts.py row_sort.cu pad 2>&1 | tee $OUT/row_pad.txt
date
