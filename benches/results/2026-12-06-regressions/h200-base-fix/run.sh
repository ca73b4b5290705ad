#!/bin/bash
# Issue 35's no-regression check, one card, one call: the bench binaries of bc085dc (base,
# before the trust work) and of perf-fix (fix), alternating processes, two rounds; each bench
# checks its outputs on fresh random data first. One log per binary and section.
cd "$(dirname "$0")"
for f in bench_base.xz bench_fix.xz; do xz -d -k -f "$f"; done; chmod +x bench_base bench_fix
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for r in 1 2; do for v in base fix; do
  echo "== $v round $r $(date -u +%T)"
  timeout 60 ./bench_$v compact cuda 28 >> $OUT/compact-$v.log 2>&1
  grep -E 'masked_select_f32_50pct_mask_u(8|32)"|"correct":false' $OUT/compact-$v.log | tail -n 2 | cut -c1-140
  timeout 70 ./bench_$v sort cuda --argsort >> $OUT/sort-$v.log 2>&1
  timeout 70 ./bench_$v sort cuda --keys >> $OUT/sort-$v.log 2>&1
  grep -E '"case"' $OUT/sort-$v.log | grep -E 'argsort|u32 keys|sort u32' | tail -n 3 | cut -c1-150
  grep -E 'panicked|FAIL|mismatch' $OUT/sort-$v.log | tail -n 2
  timeout 100 ./bench_$v scan cuda $OUT/scan-$v-$r.json --quick >> $OUT/scan-$v.log 2>&1
  grep -E '1-D \(look-back\)"|\[16384, 4096\]' $OUT/scan-$v-$r.json | cut -c1-170
done; done
date -u +%T
