#!/bin/bash
# Stop 33 on an H200: issue 4's figures with the plan's tiles, the 256 x 16 baselines, the peers;
# then one argsort with CUBECL_CUDA_MIN_BLOCKS=3 (bench_exp, branch exp-minblocks).
cd "$(dirname "$0")"
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if [[ "$G" != *H200* ]]; then exec bash run8.sh; fi
bash run7.sh keys argsort2 core rows peers wide
xz -d -k -f bench_exp.xz && chmod +x bench_exp
date -u +%T; echo "== argsort-mb3 (bench_exp)"
CUBECL_CUDA_MIN_BLOCKS=3 timeout 90 ./bench_exp sort cuda --argsort >> $OUT/sort-mb3.log 2>&1; grep '"case"' $OUT/sort-mb3.log | cut -c1-200
date -u +%T
