#!/bin/bash
# Stop 9 call 4: per-kernel times (ncu) of the first u32 sort, base (ee0578b) vs new (row sort's
# new = mask tests in the row sort, the scatter's ranking through a helper fn (same semantics); not committed
# mask tests; the scatter's ranking code as before, through a helper); bench A/B.
cd .dev/s9d
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort_base bench_gpu_sort_new
for b in base new; do timeout 100 ncu --clock-control none --section LaunchStats --section SpeedOfLight -k regex:"radix|scan_rows" --launch-count 12 ./bench_gpu_sort_$b cuda --core > $OUT/ncu_$b.log 2>&1; done
{ date -u; for b in base new base new; do echo "== $b core"; timeout 100 ./bench_gpu_sort_$b cuda --core; done; } > $OUT/sort.log 2>&1
for b in base new; do echo "== $b"; grep -E "^  [a-z_]+.*\(|Duration|Registers Per" $OUT/ncu_$b.log | paste - - - | awk '{print $1, $(NF-4), $NF}' | head -14; done
grep -E "==|sort|argsort" $OUT/sort.log | cut -c1-120
