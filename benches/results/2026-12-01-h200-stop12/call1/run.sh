#!/bin/bash
# Stop 12 call 1: what CUB's radix sort (cupy.sort, 2^28 u32) launches, per kernel: grid, block,
# registers, shared memory, duration, instructions executed, issue rate, stalls.
cd .dev/s12a
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
python3 -c "import cupy; print('cupy', cupy.__version__, cupy.cuda.runtime.runtimeGetVersion())"
S="--section LaunchStats --section Occupancy --section SpeedOfLight --section SchedulerStats --section WarpStateStats"
timeout 400 ncu --clock-control none $S --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum \
  -k regex:"[Rr]adix|[Oo]nesweep|[Hh]istogram|[Ss]can" --launch-skip 0 --launch-count 40 \
  --csv --page details python3 prof_cub.py > $OUT/cub_sort_details.csv 2> $OUT/ncu.err
echo "ncu rc=$?"
python3 - <<'PY'
import csv, os, collections
rows = list(csv.reader(open(os.environ['OUT'] + '/cub_sort_details.csv')))
hdr = None
for i, r in enumerate(rows):
    if r and r[0] == 'ID': hdr = r; start = i + 1; break
if hdr is None:
    print(open(os.environ['OUT'] + '/cub_sort_details.csv').read()[:3000]); raise SystemExit
ki = hdr.index('Kernel Name'); mi = hdr.index('Metric Name'); vi = hdr.index('Metric Value'); ui = hdr.index('Metric Unit'); idi = hdr.index('ID')
want = ['Duration', 'Block Size', 'Grid Size', 'Registers Per Thread', 'Static Shared Memory Per Block', 'Dynamic Shared Memory Per Block',
        'Achieved Occupancy', 'Issued Warp Per Scheduler', 'smsp__inst_executed.sum', 'dram__bytes_read.sum', 'dram__bytes_write.sum',
        'Memory Throughput', 'Compute (SM) Throughput', 'Warp Cycles Per Issued Instruction', 'Block Limit Registers', 'Block Limit Shared Mem']
per = collections.OrderedDict()
for r in rows[start:]:
    if len(r) <= vi: continue
    key = (r[idi], r[ki][:90])
    per.setdefault(key, {})
    if r[mi] in want: per[key][r[mi]] = r[vi] + ' ' + r[ui]
for (i, k), m in per.items():
    print(i, k)
    for w in want:
        if w in m: print('   ', w, '=', m[w])
PY
