#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for b in main lead; do xz -d -k -f bench_gpu_$b.xz && chmod +x bench_gpu_$b; done
date
echo "== scan: look-back against prefixed"
timeout 120 python3 scan_prefixed.py 2>&1 | tee $OUT/scan_prefixed.txt
date
echo "== row sort registers, counter lead, 6 processes"
for i in 1 2 3 4 5 6; do
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread -k regex:radix_sort_rows_t_f32_x_i64 -c 1 ./bench_gpu_lead sort cuda --rows-only > $OUT/ncu_lead_$i.log 2>&1
  echo "$i rc $? $(grep -E 'gpu__time|registers' $OUT/ncu_lead_$i.log | sed -E 's/ +/ /g' | tr '\n' ' ')"
done
date
for r in main lead main2 lead2; do
  b=${r%2}
  echo "== core $r"
  timeout 150 ./bench_gpu_$b sort cuda --core 2>&1 | tee -a $OUT/core_$r.log | grep -v "^ \|^$\|^thread\|^stack\|^note\|^Unexp" | cut -c1-160
done
date
