#!/bin/bash
# Session 13 call 4: the per-pass histogram counting 8 tiles per cube (one sector per digit);
# default sort twice, onesweep (window 4) once, CuPy / PyTorch after; ncu of one histogram pass.
cd .dev/s13d
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for i in 1 2; do echo "== sort $i"; timeout 90 ./bench_gpu sort cuda --core; done
  echo "== onesweep window 4"; CUBEPRIM_SORT_ONESWEEP=1 CUBEPRIM_SORT_ONESWEEP_WINDOW=4 timeout 90 ./bench_gpu sort cuda --core
  echo "== peers"; timeout 90 python3 sort_peers.py; date -u; } > $OUT/sort.log 2>&1
cut -c1-150 $OUT/sort.log | grep -v "torch.sort f32\"\|searchsorted\|topk"
timeout 120 ncu --clock-control none --section SpeedOfLight --section LaunchStats --metrics dram__bytes_read.sum,dram__bytes_write.sum \
  -k regex:"radix_histogram_t|radix_scatter" --launch-count 2 --csv --page details ./bench_gpu sort cuda --core > $OUT/hist.csv 2> $OUT/ncu.err
echo "ncu rc=$?"; date -u
python3 - $OUT/hist.csv <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
for i, r in enumerate(rows):
    if r and r[0] == 'ID': hdr = r; start = i + 1; break
else:
    print(open(sys.argv[1]).read()[:1500]); raise SystemExit
ki = hdr.index('Kernel Name'); mi = hdr.index('Metric Name'); vi = hdr.index('Metric Value'); idi = hdr.index('ID')
for r in rows[start:]:
    if len(r) > vi and r[mi] in ('Duration', 'Grid Size', 'Registers Per Thread', 'L2 Cache Throughput', 'DRAM Throughput', 'dram__bytes_read.sum', 'dram__bytes_write.sum'):
        print(r[idi], r[ki][:34], r[mi], r[vi])
PY
