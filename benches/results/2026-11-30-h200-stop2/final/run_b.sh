#!/bin/bash
# Device call B: sort family (ours + PyTorch/CuPy) and the candle CUDA path.
cd .dev/final
export CUDA_PATH=/usr/local/cuda
for f in *.xz; do [ "$f" = candle_bins.tar.xz ] || xz -d -f "$f"; done
for f in *.gz; do gunzip -f "$f"; done; chmod +x bench_* burn_* 2>/dev/null
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 120 ./bench_burn --reps 10; echo "== burn_top_p"; timeout 60 ./burn_top_p; } > $OUT/burn.log 2>&1
{ timeout ${SORT_S:-150} ./bench_gpu_sort cuda ${SORT_ARGS:-}; echo "== peers"; timeout 60 python3 sort_peers.py; } > $OUT/sort.log 2>&1
mkdir -p candle && tar xJf candle_bins.tar.xz -C candle
NV=$(python3 -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null)
export LD_LIBRARY_PATH=$NV/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
{ timeout 60 ./candle/candle_moe_routing; echo "== bench_candle"; timeout ${CANDLE_S:-120} ./candle/bench_candle; } > $OUT/candle.log 2>&1
tail -n 30 $OUT/sort.log; tail -n 40 $OUT/candle.log
