#!/bin/bash
# One card, one call. (1) masked_select with a u32 mask: bench binaries of bc085dc (base),
# perf-fix (fix), perf-fix with bc085dc's look-back (nodeep), perf-fix with the deep fold
# sharing the fallback's tile reduction (uni), alternating, two rounds; only the first
# cases of `compact` (copy floor, reduce, masked_select u32 and u8) are waited for.
# (2) the suite built with `--features cuda,test-cuda,burn,candle` (fuzz branch + uni) on CUDA;
# (3) the randomized differential soak on CUDA for the time left.
cd "$(dirname "$0")"
for f in *.xz; do xz -d -k -f "$f"; done; chmod +x bench_* suite_cuda
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for r in 1 2; do for v in base fix nodeep uni; do
  timeout 22 ./bench_$v compact cuda 28 > $OUT/c.log 2>&1
  echo "$v $r $(grep -E 'masked_select_f32_50pct_mask_u(8|32)"' $OUT/c.log | sed -E 's/.*mask_(u[0-9]+)".*"median_ms":([0-9.]+).*"copy_ms":([0-9.]+).*"correct":([a-z]+).*/\1 \2 copy \3 \4/' | tr '\n' ' ')"
  cat $OUT/c.log >> $OUT/compact-all.log
done; done
rm -f $OUT/c.log
echo "== suite on CUDA $(date -u +%T)"
export CI=true
timeout 170 ./suite_cuda --test-threads=4 > $OUT/suite-cuda.log 2>&1; echo "rc $?"
grep -E "^test result|FAILED|failed|panicked" $OUT/suite-cuda.log | head -20
echo "== fuzz soak on CUDA $(date -u +%T)"
CUBEPRIM_FUZZ_CASES=10000 timeout 130 ./suite_cuda --ignored fuzz::soak --nocapture > $OUT/soak-cuda.log 2>&1; echo "rc $?"
grep -E "fuzz:|mismatch|cases" $OUT/soak-cuda.log | tail -5
date -u +%T
