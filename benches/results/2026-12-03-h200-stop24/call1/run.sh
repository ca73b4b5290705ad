#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for b in main align; do xz -d -k -f bench_gpu_$b.xz && chmod +x bench_gpu_$b; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date
for i in 1 2 3 4 5; do
  for b in main align; do
    echo "== $b $i"
    timeout 60 ./bench_gpu_$b sort cuda --rows-only 2>&1 | tee -a $OUT/rows_${b}.log | grep -v "^ \|^$\|^thread\|^stack\|^note" | cut -c1-200
  done
done
date
for b in main align; do
  echo "== ncu $b"
  timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__shared_mem_per_block_dynamic -k regex:radix_sort_rows -c 4 ./bench_gpu_$b sort cuda --rows-only > $OUT/ncu_$b.log 2>&1
  grep -E "radix_sort_rows|gpu__time|registers|shared_mem" $OUT/ncu_$b.log | sed -E "s/ +/ /g" | cut -c1-120 | head -16
done
date
