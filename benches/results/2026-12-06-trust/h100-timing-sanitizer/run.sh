#!/bin/bash
# Issue 35 on CUDA and Vulkan, one call. (1) Alone on the card: masked_select (u32 and u8
# masks) and the 1-D cumsum of 2^28, bench binaries of bc085dc (base) and of main (final),
# alternating processes, two rounds for masked_select. (2) Then at once: compute-sanitizer
# memcheck (4 x 60 fuzz seeds) and racecheck (4 x 25 seeds) over the CUDA suite's fuzz cases;
# the CI suite binary (`--features cuda,burn,candle`: kernel tests on wgpu) on the card's
# Vulkan driver, and its fuzz soak over Vulkan (4 x 250 seeds). Run from the repository root.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
cd .dev || exit 1
for f in bench_base bench_final suite_cuda suite_wgpu; do xz -d -k -f $f.xz; chmod +x $f; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%T
export CI=true XDG_RUNTIME_DIR=/tmp
for r in 1 2; do for v in base final; do
  echo "== $v compact round $r" >> $OUT/timing.log
  timeout 22 ./bench_$v compact cuda 28 >> $OUT/timing.log 2>&1
done; done
for v in base final; do
  echo "== $v scan" >> $OUT/timing.log
  timeout 45 ./bench_$v scan cuda /tmp/scan-$v.json --only "1-D (look-back)" >> $OUT/timing.log 2>&1
  cat /tmp/scan-$v.json >> $OUT/timing.log
done
grep -E '^== |masked_select_f32_50pct_mask_u(8|32)"|"op": "cumsum|"correct":false' $OUT/timing.log | cut -c1-200
date -u +%T
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
echo "sanitizer: $CS"
mkdir -p /tmp/s
for k in 0 1 2 3; do
  CUBEPRIM_FUZZ_CASES=60 CUBEPRIM_FUZZ_SEED=$((20000+k*60)) timeout 420 $CS --tool memcheck --leak-check no --error-exitcode 9 --print-limit 30 ./suite_cuda --ignored fuzz::soak --nocapture --test-threads=1 > /tmp/s/mem$k.log 2>&1 &
  CUBEPRIM_FUZZ_CASES=25 CUBEPRIM_FUZZ_SEED=$((30000+k*25)) timeout 420 $CS --tool racecheck --racecheck-report hazard --error-exitcode 9 --print-limit 30 ./suite_cuda --ignored fuzz::soak --nocapture --test-threads=1 > /tmp/s/race$k.log 2>&1 &
  CUBEPRIM_FUZZ_CASES=250 CUBEPRIM_FUZZ_SEED=$((40000+k*250)) timeout 420 ./suite_wgpu --ignored fuzz::soak --nocapture --test-threads=1 > /tmp/s/vk$k.log 2>&1 &
done
timeout 420 ./suite_wgpu --test-threads=3 > $OUT/suite-vulkan.log 2>&1 &
wait
date -u +%T
for t in mem race vk; do for k in 0 1 2 3; do echo "== $t $k"; cat /tmp/s/$t$k.log; done > $OUT/$t.log; done
grep -E "^== |^fuzz: [0-9]+ cases|ERROR SUMMARY|RACECHECK SUMMARY|Error:|rc=" $OUT/mem.log $OUT/race.log $OUT/vk.log | head -60
grep -E "^test result|FAILED|panicked" $OUT/suite-vulkan.log | head -40
