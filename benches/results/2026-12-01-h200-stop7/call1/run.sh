#!/bin/bash
# Session 7 call 1: bf9a13c + select prefetch (CUBEPRIM_SELECT_PREFETCH=0|1, alternated);
# compaction bench with PyTorch peers in the same call.
cd .dev/s7a
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for pf in 0 1 0 1; do echo "== prefetch $pf"; CUBEPRIM_SELECT_PREFETCH=$pf timeout 100 ./bench_gpu_compact cuda 28; done
  echo "== peers"; timeout 80 python3 compact_peers.py; } > $OUT/compact.log 2>&1
grep -E "==|case|masked|nonzero|copy" $OUT/compact.log | cut -c1-165
