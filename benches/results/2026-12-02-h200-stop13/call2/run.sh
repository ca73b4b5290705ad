#!/bin/bash
# Session 13 call 2: ncu of the onesweep pass (window 8) and of the default scatter pass, 2^28 u32.
cd .dev/s13b
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu
S="--section LaunchStats --section Occupancy --section SpeedOfLight --section SchedulerStats --section WarpStateStats"
M="--metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum"
date -u
CUBEPRIM_SORT_ONESWEEP=1 timeout 240 ncu --clock-control none $S $M -k regex:"radix_onesweep|radix_histogram_all" --launch-count 3 \
  --csv --page details ./bench_gpu sort cuda --core > $OUT/onesweep.csv 2> $OUT/ncu1.err; echo "ncu1 rc=$?"
date -u
timeout 200 ncu --clock-control none $S $M -k regex:"radix_scatter|radix_histogram" --launch-count 3 \
  --csv --page details ./bench_gpu sort cuda --core > $OUT/scatter.csv 2> $OUT/ncu2.err; echo "ncu2 rc=$?"
date -u
for f in onesweep scatter; do echo "=== $f"; python3 - $OUT/$f.csv <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
hdr = None
for i, r in enumerate(rows):
    if r and r[0] == 'ID': hdr = r; start = i + 1; break
if hdr is None:
    print(open(sys.argv[1]).read()[:2000]); raise SystemExit
ki = hdr.index('Kernel Name'); mi = hdr.index('Metric Name'); vi = hdr.index('Metric Value'); ui = hdr.index('Metric Unit'); idi = hdr.index('ID')
per = collections.OrderedDict()
for r in rows[start:]:
    if len(r) <= vi: continue
    per.setdefault((r[idi], r[ki][:60]), []).append((r[mi], r[vi], r[ui]))
for (i, k), m in per.items():
    print(i, k)
    for name, v, u in m:
        if any(w in name for w in ['Duration','Size','Registers','Shared Memory','Occupancy','Issued','inst_executed','dram__bytes','Throughput','Cycles Per','Block Limit','Stall','Warp Cycles']):
            print('   ', name, '=', v, u)
PY
done
