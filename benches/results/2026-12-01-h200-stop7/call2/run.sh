#!/bin/bash
# Session 7 call 2: candle CUDA test of partition / reduce_by_key (main 630c2fc + candle ops,
# uncommitted); sort A/B: scatter values loaded before the ranking (pf) against 630c2fc (base),
# alternated; PyTorch / CuPy sorts in the same call.
cd .dev/s7b
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort_base bench_gpu_sort_pf candle_cuda
NV=$(python3 -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null)
( export LD_LIBRARY_PATH=$NV/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  date -u; timeout 200 ./candle_cuda partition_and_reduce_by_key --test-threads=1 --nocapture ) > $OUT/candle.log 2>&1
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for b in base pf base pf; do echo "== $b"; timeout 90 ./bench_gpu_sort_$b cuda --core; done
  echo "== peers"; timeout 100 python3 sort_peers.py; } > $OUT/sort.log 2>&1
grep -vE "^\s+[0-9]+: <unknown>" $OUT/candle.log | grep -v "^case" | tail -n 8; grep "^case" $OUT/candle.log | tail -1
grep -E "==|copy|sort|argsort" $OUT/sort.log | cut -c1-170 | head -40
