#!/bin/bash
# Session 6 call 9: working tree of ba59870 + the keys-only head-count carry (run_length_heads);
# compaction and run-length with PyTorch (peers script + unique_consecutive values only).
cd .dev/s6h
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 100 ./bench_gpu_compact cuda 28; timeout 60 ./bench_gpu_compact cuda 28 --runs; echo "== peers"; timeout 80 python3 compact_peers.py; } > $OUT/compact.log 2>&1
grep -E "case" $OUT/compact.log | cut -c1-165
