#!/bin/bash
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")"
python3 scan_cp.py scan_192x16.cu 28 2>&1 | tee $OUT/scan_cp.txt
