#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
xz -d -k -f suite.xz && chmod +x suite
date
for r in ptx noptx ptx2 noptx2; do
  echo "== bench $r"
  case $r in noptx*) export CUBEPRIM_PTX_BALLOT=0;; *) unset CUBEPRIM_PTX_BALLOT;; esac
  timeout 150 ./bench_gpu sort cuda --core 2>&1 | tee -a $OUT/core_$r.log | grep -v "^ \|^$\|^thread\|^stack\|^note\|^Unexp" | cut -c1-160
done
unset CUBEPRIM_PTX_BALLOT
echo "== peers"; timeout 100 python3 sort_peers.py 2>&1 | head -6 | tee $OUT/peers.log
date
echo "== ncu"; timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size,dram__throughput.avg.pct_of_peak_sustained_elapsed -k regex:radix -c 16 ./bench_gpu sort cuda --core > $OUT/ncu.log 2>&1; echo "ncu rc $?"
grep -E "^  [a-z_]|gpu__time|registers" $OUT/ncu.log | sed -E "s/ +/ /g" | cut -c1-90 | head -50
date
echo "== suite sort:: on CUDA (PTX ballots)"
CI=true timeout 150 ./suite sort:: > $OUT/suite.log 2>&1; echo "suite rc $?"
grep -E "^test .*(FAILED|panicked)|test result|^failures" $OUT/suite.log | head -30
date
