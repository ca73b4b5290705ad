#!/bin/bash
# Device call 2 (stop 3): burn (built-ins vs prim_*, per-call overhead, top-p), candle on CUDA
# (correctness test, MoE routing, bench), compaction (nonzero 1-D fast path), scan tile diag.
cd .dev/r2
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in bench_*.xz burn_*.xz; do xz -d -f "$f"; done; chmod +x bench_* burn_*
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  timeout 150 ./bench_burn --reps 10; echo "== overhead"; timeout 40 ./bench_burn --overhead
  echo "== burn_top_p"; timeout 60 ./burn_top_p; } > $OUT/burn.log 2>&1
mkdir -p candle && tar xJf candle_bins.tar.xz -C candle
NV=$(python3 -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null)
( export LD_LIBRARY_PATH=$NV/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  date -u; timeout 100 ./candle/candle_cuda --test-threads=1 --nocapture
  echo "== candle_moe_routing"; timeout 60 ./candle/candle_moe_routing
  echo "== bench_candle"; timeout 120 ./candle/bench_candle ) > $OUT/candle.log 2>&1
{ date -u; timeout 90 ./bench_gpu_compact cuda 28; echo "== torch"; timeout 50 python3 compact_peers.py 28; } > $OUT/compact.log 2>&1
{ date -u; timeout 100 ./bench_gpu cuda /tmp/d.json --diag --tiles 256x12,256x10,320x12; } > $OUT/diag.log 2>&1
tail -n 45 $OUT/burn.log; tail -n 40 $OUT/candle.log; grep -E "nonzero|masked|unique" $OUT/compact.log; grep diag $OUT/diag.log
