#!/bin/bash
# Issue 35's device check: the bench binary of bc085dc (base, before the trust changes) and of
# the new head, alternating, on one card: each bench checks its outputs on fresh random data
# first; then the wgpu test suite's trust tests on the card's Vulkan driver.
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
for f in *.xz; do xz -d -k -f "$f"; done; chmod +x bench_base bench_new suite_wgpu 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 500 > $OUT/smi.csv 2>&1 &
SMI=$!
F='^ \|^$\|^thread\|^stack\|^note\|^Unexp'
S="${*:-bench vulkan}"
for s in $S; do case $s in
bench)
for r in 1 2; do for v in base new; do
  date -u +%T; echo "== $v scan quick $r"
  timeout 100 ./bench_$v scan cuda $OUT/scan-$v-$r.json --quick >> $OUT/scan-$v.log 2>&1
  grep -v "$F" $OUT/scan-$v-$r.json | cut -c1-170
  date -u +%T; echo "== $v sort keys+argsort $r"
  timeout 60 ./bench_$v sort cuda --keys >> $OUT/sort-$v.log 2>&1
  timeout 60 ./bench_$v sort cuda --argsort >> $OUT/sort-$v.log 2>&1
  grep '"case"' $OUT/sort-$v.log | tail -5 | cut -c1-170
  date -u +%T; echo "== $v compact $r"
  timeout 90 ./bench_$v compact cuda 28 >> $OUT/compact-$v.log 2>&1
  tail -8 $OUT/compact-$v.log | cut -c1-190
done; done ;;
vulkan)
  date -u +%T; echo "== wgpu suite on Vulkan"
  for f in ../.gl/*.deb; do dpkg -x $f /; done; ldconfig
  export XDG_RUNTIME_DIR=/tmp CI=true
  timeout 240 ./suite_wgpu trust:: signed_zero:: --test-threads=1 > $OUT/vulkan.log 2>&1
  grep -E "^test |test result|Device|panicked" $OUT/vulkan.log | head -30
  if [ -n "$FUZZ" ]; then CUBEPRIM_FUZZ_CASES=$FUZZ timeout 200 ./suite_wgpu --ignored fuzz::soak --nocapture > $OUT/fuzz-vulkan.log 2>&1; tail -5 $OUT/fuzz-vulkan.log; fi ;;
esac; done
kill $SMI
date -u +%T
