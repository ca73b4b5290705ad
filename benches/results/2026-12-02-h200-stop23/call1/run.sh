#!/bin/bash
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
xz -d -k -f suite.xz && chmod +x suite
nvidia-smi --query-gpu=name,driver_version --format=csv
date
echo "== suite on CUDA (PTX ballots)"
CI=true timeout 200 ./suite sort:: unique:: pipeline:: codegen_sort:: > $OUT/suite.log 2>&1; echo "suite rc $?"
grep -E "^test .*(FAILED|panicked)|test result|^failures" $OUT/suite.log | head -30
date
for r in ptx noptx ptx2; do
  echo "== bench $r"
  case $r in noptx) export CUBEPRIM_PTX_BALLOT=0;; *) unset CUBEPRIM_PTX_BALLOT;; esac
  timeout 150 ./bench_gpu sort cuda --core 2>&1 | tee -a $OUT/core_$r.log | grep -v "^ \|^$\|^thread\|^stack\|^note\|^Unexp" | cut -c1-220
  date
done
unset CUBEPRIM_PTX_BALLOT
echo "== peers"; timeout 100 python3 sort_peers.py 2>&1 | head -6 | tee $OUT/peers.log
date
