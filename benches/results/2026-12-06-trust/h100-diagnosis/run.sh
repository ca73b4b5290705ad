#!/bin/bash
# Issue 35, one call, everything at once (the test fixes of the fuzz checker and the long run):
# (1) Vulkan (the CI suite binary on the card's Vulkan driver): each seed that failed in the
# Vulkan soak, alone in a fresh process, then the soak's first failing blocks in sequence with
# per-case output, and the CI fuzz test with its output; (2) CUDA: the suite built with
# `--features cuda,burn,candle,test-cuda`, the 100 000-call long run, and the CUDA soak's
# seeds 10 010..12 529 (6 processes).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
cd .dev || exit 1
for f in suite_cuda suite_wgpu; do xz -d -k -f $f.xz; chmod +x $f; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%T
export CI=true XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/a /tmp/b
for s in 40005 40139 40261 40309 40343 40344 40345 40347 40567 40573 40574 40774 40898 40959; do
  CUBEPRIM_FUZZ_SEED=$s CUBEPRIM_FUZZ_CASES=1 CUBEPRIM_FUZZ_VERBOSE=1 timeout 120 ./suite_wgpu --ignored fuzz::soak --nocapture > /tmp/a/$s.log 2>&1 &
done
CUBEPRIM_FUZZ_SEED=40000 CUBEPRIM_FUZZ_CASES=6 CUBEPRIM_FUZZ_VERBOSE=1 timeout 200 ./suite_wgpu --ignored fuzz::soak --nocapture > /tmp/b/s40000.log 2>&1 &
CUBEPRIM_FUZZ_SEED=40250 CUBEPRIM_FUZZ_CASES=12 CUBEPRIM_FUZZ_VERBOSE=1 timeout 200 ./suite_wgpu --ignored fuzz::soak --nocapture > /tmp/b/s40250.log 2>&1 &
CUBEPRIM_FUZZ_SEED=40330 CUBEPRIM_FUZZ_CASES=20 CUBEPRIM_FUZZ_VERBOSE=1 timeout 200 ./suite_wgpu --ignored fuzz::soak --nocapture > /tmp/b/s40330.log 2>&1 &
timeout 300 ./suite_wgpu fuzz::random_cases longrun::mixed --nocapture > /tmp/b/ci-fuzz-vk.log 2>&1 &
timeout 390 ./suite_cuda --test-threads=4 > $OUT/suite-cuda.log 2>&1 &
mkdir -p /tmp/c
for k in 0 1 2 3 4 5; do
  CUBEPRIM_FUZZ_CASES=420 CUBEPRIM_FUZZ_SEED=$((10010+k*420)) timeout 400 ./suite_cuda --ignored fuzz::soak --nocapture --test-threads=1 > /tmp/c/$k.log 2>&1 &
done
CUBEPRIM_LONGRUN_CALLS=100000 timeout 400 ./suite_cuda --ignored longrun::hundred_thousand_calls --nocapture > $OUT/longrun-cuda.log 2>&1 &
wait
date -u +%T
for s in /tmp/a/*.log; do echo "== alone $(basename $s .log)"; grep -E "^fuzz" $s | cut -c1-400; done > $OUT/vk-alone.log
for k in 0 1 2 3 4 5; do echo "== soak process $k (seeds $((10010+k*420))..$((10010+k*420+419)))"; cat /tmp/c/$k.log; done > $OUT/soak-cuda.log
grep -E "^== |^fuzz: [0-9]+ cases|MISMATCH" $OUT/soak-cuda.log | cut -c1-300
for s in /tmp/b/*.log; do echo "== $(basename $s .log)"; grep -vE "^test .* ok$|^$" $s | cut -c1-600; done > $OUT/vk-seq.log
grep -E "^== |MISMATCH|^fuzz: [0-9]+ cases" $OUT/vk-alone.log | cut -c1-220
grep -E "^== |MISMATCH|^fuzz: [0-9]+ cases|panicked|test result" $OUT/vk-seq.log | cut -c1-220 | head -40
grep -E "^longrun|test result|panicked" $OUT/longrun-cuda.log | tail -4 | cut -c1-600
grep -E "^test result|FAILED|panicked" $OUT/suite-cuda.log | head -30 | cut -c1-300
