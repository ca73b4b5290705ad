#!/bin/bash
# Issue 35 on CUDA and the card's Vulkan driver, one call, at once: burn's CUDA backends
# (the suite's burn tests, empty tensors included), the 100 000-call long run, the CUDA soak
# (seeds 0..5999, 10 processes) and the Vulkan soak (seeds 40000..40999, 2 processes).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
cd .dev || exit 1
for f in suite_cuda suite_wgpu; do xz -d -k -f $f.xz; chmod +x $f; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%T
export CI=true XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/c /tmp/v
CUBEPRIM_LONGRUN_CALLS=100000 timeout 575 ./suite_cuda --ignored longrun::hundred_thousand_calls --nocapture > $OUT/longrun-cuda.log 2>&1 &
timeout 300 ./suite_cuda burn:: --test-threads=4 > $OUT/burn-cuda.log 2>&1 &
for k in $(seq 0 9); do
  CUBEPRIM_FUZZ_CASES=600 CUBEPRIM_FUZZ_SEED=$((k*600)) timeout 570 nice -n 5 ./suite_cuda --ignored fuzz::soak --nocapture --test-threads=1 > /tmp/c/$k.log 2>&1 &
done
for k in 0 1; do
  CUBEPRIM_FUZZ_CASES=500 CUBEPRIM_FUZZ_SEED=$((40000+k*500)) timeout 570 nice -n 5 ./suite_wgpu --ignored fuzz::soak --nocapture --test-threads=1 > /tmp/v/$k.log 2>&1 &
done
wait
date -u +%T
for k in $(seq 0 9); do echo "== CUDA soak process $k (seeds $((k*600))..$((k*600+599)))"; cat /tmp/c/$k.log; done > $OUT/soak-cuda.log
for k in 0 1; do echo "== Vulkan soak process $k (seeds $((40000+k*500))..$((40000+k*500+499)))"; cat /tmp/v/$k.log; done > $OUT/soak-vulkan.log
for f in soak-cuda soak-vulkan; do echo "## $f"; grep -E "^== |MISMATCH" $OUT/$f.log | cut -c1-300; for k in $(seq 0 9); do :; done; done
awk '/^== /{h=$0} /^fuzz: [0-9]+ cases/{last[h]=$0} END{for (h in last) print h" -> "last[h]}' $OUT/soak-cuda.log $OUT/soak-vulkan.log | sort
grep -E "test result" $OUT/soak-cuda.log $OUT/soak-vulkan.log | sort | uniq -c
grep -E "^longrun|test result|panicked" $OUT/longrun-cuda.log | tail -5 | cut -c1-600
grep -E "^test result|FAILED|panicked" $OUT/burn-cuda.log | head -30 | cut -c1-300
