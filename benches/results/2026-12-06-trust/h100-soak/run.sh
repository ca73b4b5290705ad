#!/bin/bash
# Issue 35 on CUDA, one call: the randomized differential soak (14 processes x 715 seeds =
# 10 010 cases), the 100 000-call long run, and the whole suite (built with
# `--features cuda,burn,candle,test-cuda`: kernel tests on CUDA, wgpu tests on the card's
# Vulkan driver), all at once. Run from the repository root.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
cd .dev && xz -d -k -f suite_cuda.xz && chmod +x suite_cuda || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%T
export CI=true XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/soak
P=14; N=715
for k in $(seq 0 $((P-1))); do
  CUBEPRIM_FUZZ_CASES=$N CUBEPRIM_FUZZ_SEED=$((k*N)) timeout 530 ./suite_cuda --ignored fuzz::soak --nocapture --test-threads=1 > /tmp/soak/$k.log 2>&1 &
done
CUBEPRIM_LONGRUN_CALLS=100000 timeout 540 ./suite_cuda --ignored longrun::hundred_thousand_calls --nocapture > $OUT/longrun-cuda.log 2>&1 &
timeout 540 ./suite_cuda --test-threads=4 > $OUT/suite-cuda.log 2>&1 &
wait
date -u +%T
for k in $(seq 0 $((P-1))); do echo "== soak process $k (seeds $((k*N))..$((k*N+N-1)))"; cat /tmp/soak/$k.log; done > $OUT/soak-cuda.log
grep -E "^fuzz: [0-9]+ cases, [0-9]+ mismatches \(" $OUT/soak-cuda.log
grep -c "MISMATCH" $OUT/soak-cuda.log
grep -E "^longrun" $OUT/longrun-cuda.log | tail -3; grep -E "test result|panicked" $OUT/longrun-cuda.log | head
grep -E "^test result|FAILED|panicked" $OUT/suite-cuda.log | head -40
