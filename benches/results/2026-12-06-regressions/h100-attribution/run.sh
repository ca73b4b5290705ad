#!/bin/bash
# Attribution of the argsort and masked_select regressions (H100): bench binaries of bc085dc
# (base), 5c0c8f8 (base + the signed-zero key only), f2b6c9a (head) and cba4db0 (fix: head +
# the 64x deep wait), alternating; the call reached its 480 s limit (the grep through `tail`
# printed nothing) and only eight logs came back.
cd "$(dirname "$0")"
for f in bench_*.xz; do xz -d -k -f "$f"; done; chmod +x bench_*
for r in 1 2; do for v in base zero head fix; do
  timeout 50 ./bench_$v compact cuda 28 > $OUT/compact-$v-$r.log 2>&1
  timeout 70 ./bench_$v sort cuda --argsort > $OUT/argsort-$v-$r.log 2>&1
done; done
