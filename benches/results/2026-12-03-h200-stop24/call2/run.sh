#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
xz -d -k -f bench_gpu_main.xz && chmod +x bench_gpu_main
date
for i in 1 2 3 4 5 6 7 8; do
  CUBECL_DEBUG_LOG=$OUT/cubecl_$i.log timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread -k regex:radix_sort_rows_t_f32_x_i64 -c 2 ./bench_gpu_main sort cuda --rows-only > $OUT/ncu_$i.log 2>&1
  echo "== $i rc $?"
  grep -E "gpu__time|registers" $OUT/ncu_$i.log | sed -E "s/ +/ /g" | tr '\n' ' '; echo
  grep -E "row sort f32 with i64" $OUT/ncu_$i.log | cut -c1-150
done
date
ls -la $OUT | head; du -sh $OUT
for f in $OUT/cubecl_*.log; do xz -T4 $f; done
