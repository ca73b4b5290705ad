#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
date
timeout 400 python3 proto_bench.py 2>&1 | tee $OUT/proto2.log
cp proto.cu $OUT/proto2.cu
date
