#!/bin/bash
# Issue 35: the 100 000-call long run on CUDA (one Workspace, every family, the burn and candle
# adapters, every result checked), with cubecl's PTX cache and burn's autotune cache under
# /tmp/lr (kept on a warm machine for the next call; also returned as cache.tar.xz).
D=$PWD/.dev
[ -x $D/suite_cuda ] || { xz -d -k -f $D/suite_cuda.xz && chmod +x $D/suite_cuda; } || exit 1
mkdir -p /tmp/lr && cd /tmp/lr || exit 1
if [ -f $D/cache.tar.xz ] && [ ! -d /tmp/lr/cache ]; then tar xJf $D/cache.tar.xz -C /tmp/lr; fi
cat > cubecl.toml <<T
[compilation]
cache = { file = "/tmp/lr/cache" }
[autotune]
cache = { file = "/tmp/lr/cache" }
T
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; date -u +%T
du -sh /tmp/lr/cache 2>/dev/null
export CUBEPRIM_LONGRUN_CALLS=${CALLS:-100000}
timeout ${LIMIT:-520} $D/suite_cuda --ignored --exact longrun::hundred_thousand_calls --nocapture --test-threads 1 > $OUT/longrun.log 2>&1
echo "rc $?"; date -u +%T
nvidia-smi --query-gpu=memory.used --format=csv,noheader
grep -E "longrun|panicked|FAIL|test result" $OUT/longrun.log | cut -c1-600 | tail -40
du -sh /tmp/lr/cache; tar cJf $OUT/cache.tar.xz -C /tmp/lr cache; ls -la $OUT
