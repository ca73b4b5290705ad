#!/bin/bash
# Peer script: compact_peers.py = benches/results/2026-11-30-h200-stop6/call9/compact_peers.py.
# Session 11 call 4: reduce with several tiles per cube (CUBEPRIM_REDUCE_GROUP; unset = the planned
# group, 8 for 2^28 f32; 1 = one tile per cube as before), alternated processes; PyTorch after.
cd .dev/s11d
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for g in "" 1 4 16 "" 1; do echo "== group ${g:-planned}"; CUBEPRIM_REDUCE_GROUP=$g timeout 60 ./bench_gpu_compact cuda 28; done
  echo "== peers"; timeout 60 python3 compact_peers.py 28; date -u; } > $OUT/compact.log 2>&1
grep -E "==|copy_f32|reduce_sum|masked_select_f32_50pct_mask_u8|unique_consecutive_counts|torch" $OUT/compact.log | sed -E 's/"n":268435456,//; s/"device":"cuda",//; s/"gbs":[0-9.]*,//' | cut -c1-130
timeout 100 compute-sanitizer --tool memcheck ./bench_gpu_compact cuda 22 > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -1 $OUT/memcheck.log
