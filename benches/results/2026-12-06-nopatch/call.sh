#!/bin/bash
# Issue 36, deliverable 2, one call, alone on the card: bench_gpu built at the commit before
# (bench_patch: the vendored cubecl-opt, arrays in declaration order) and after (bench_nopatch:
# crates.io's cubecl-opt, arrays claimed in order by the kernels), five processes each,
# alternating: the 1-D cumsum of 2^28 f32, the row sorts [16384, 4096] and the u32 sort of
# 2^28 keys, each with the copy floor of its own process and checked on fresh random data.
cd .dev || exit 1
for f in bench_patch bench_nopatch; do xz -d -k -f $f.xz; chmod +x $f; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%T
for r in 1 2 3 4 5; do for v in patch nopatch; do
  echo "== $v scan $r"; timeout 40 ./bench_$v scan cuda /tmp/scan-$v-$r.json --only "1-D (look-back)"; cat /tmp/scan-$v-$r.json; echo
  echo "== $v rows $r"; timeout 40 ./bench_$v sort cuda --rows-only
  echo "== $v keys $r"; timeout 60 ./bench_$v sort cuda --keys
done; done > $OUT/timing.log 2>&1
date -u +%T
grep -E '^== |"case": "(copy|sort u32 keys"|row sort)|"op": "cumsum|"copy|FAIL|wrong|mismatch' $OUT/timing.log | cut -c1-220
