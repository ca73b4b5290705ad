#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
date; timeout 250 python3 scan6.py 2>&1 | tee $OUT/scan6.log; date
