#!/bin/bash
# Issue 35, one call, at once: the CUDA soak's seeds 6000.. (8 processes), compute-sanitizer
# memcheck over the CUDA suite's kernel tests (one process per test module) and racecheck
# over the scan, select, run-length and sort modules, and the CI suite (kernel tests on wgpu)
# on the card's Vulkan driver in two shards.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
cd .dev || exit 1
for f in suite_cuda suite_wgpu; do [ -x $f ] || { xz -d -k -f $f.xz; chmod +x $f; }; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%T
export CI=true XDG_RUNTIME_DIR=/tmp
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
echo "sanitizer: $CS"
mkdir -p /tmp/c /tmp/m /tmp/r /tmp/v
for k in $(seq 0 7); do
  CUBEPRIM_FUZZ_CASES=500 CUBEPRIM_FUZZ_SEED=$((6000+k*500)) timeout 400 nice -n 5 ./suite_cuda --ignored fuzz::soak --nocapture --test-threads=1 > /tmp/c/$k.log 2>&1 &
done
for m in scan:: select:: runs:: sort:: reduce:: histogram:: unique:: trust; do
  ( timeout 400 $CS --tool memcheck --leak-check no --error-exitcode 9 --print-limit 30 ./suite_cuda $m --test-threads=1 > /tmp/m/${m%::}.log 2>&1; echo "rc=$?" >> /tmp/m/${m%::}.log ) &
done
for m in scan::lengths select:: runs:: sort::; do
  ( timeout 400 $CS --tool racecheck --racecheck-report hazard --error-exitcode 9 --print-limit 30 ./suite_cuda $m --test-threads=1 > /tmp/r/${m//:/}.log 2>&1; echo "rc=$?" >> /tmp/r/${m//:/}.log ) &
done
SHARD="scan::indices scan::matrix scan::algorithms scan::lengths signed_zero:: sort::"
timeout 400 ./suite_wgpu $SHARD --test-threads=2 > /tmp/v/a.log 2>&1 &
SKIP=""; for t in $SHARD; do SKIP="$SKIP --skip $t"; done
timeout 400 ./suite_wgpu $SKIP --test-threads=2 > /tmp/v/b.log 2>&1 &
wait
date -u +%T
for k in $(seq 0 7); do echo "== CUDA soak process $k (seeds $((6000+k*500))..$((6000+k*500+499)))"; cat /tmp/c/$k.log; done > $OUT/soak-cuda.log
for f in /tmp/m/*.log; do echo "== memcheck $(basename $f .log)"; cat $f; done > $OUT/memcheck.log
for f in /tmp/r/*.log; do echo "== racecheck $(basename $f .log)"; cat $f; done > $OUT/racecheck.log
for f in /tmp/v/*.log; do echo "== Vulkan suite shard $(basename $f .log)"; cat $f; done > $OUT/suite-vulkan.log
grep -E "^== |MISMATCH" $OUT/soak-cuda.log | cut -c1-300
awk '/^== /{h=$0} /^fuzz: [0-9]+ cases/{last[h]=$0} END{for (h in last) print h" -> "last[h]}' $OUT/soak-cuda.log | sort
grep -E "^== |ERROR SUMMARY|RACECHECK SUMMARY|^test result|rc=" $OUT/memcheck.log $OUT/racecheck.log | cut -c1-200
grep -E "^== |^test result|FAILED|panicked" $OUT/suite-vulkan.log | head -40 | cut -c1-300
