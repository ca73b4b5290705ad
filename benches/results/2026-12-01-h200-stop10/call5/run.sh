#!/bin/bash
# Session 10 call 5: where the bench's unique_consecutive-with-counts time goes beyond the kernel
# (d4e439a, bench_gpu_compact --runs under nsys: kernel durations, gaps, CUDA API calls).
cd .dev/s10e
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_compact
which nsys || ls /usr/local/cuda/bin | head -50
NS=$(which nsys || ls /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/bin/nsys 2>/dev/null | head -1)
echo "nsys: $NS"
timeout 200 $NS profile -o $OUT/rl --force-overwrite true --trace cuda ./bench_gpu_compact cuda 28 --runs > $OUT/nsys.log 2>&1; echo "nsys rc=$?"
timeout 120 $NS stats --report cuda_gpu_kern_sum,cuda_api_sum --format csv -o $OUT/stats $OUT/rl.nsys-rep > $OUT/stats.log 2>&1; echo "stats rc=$?"
ls $OUT; head -30 $OUT/stats_cuda_gpu_kern_sum.csv 2>/dev/null | cut -c1-220; head -30 $OUT/stats_cuda_api_sum.csv 2>/dev/null | cut -c1-200
timeout 60 $NS stats --report cuda_gpu_trace --format csv -o $OUT/trace $OUT/rl.nsys-rep > /dev/null 2>&1
python3 - $OUT/trace_cuda_gpu_trace.csv <<'PY'
import csv, sys, statistics
rows = list(csv.DictReader(open(sys.argv[1])))
ks = [r for r in rows if r.get("Name") and "run_length" in r["Name"] and r.get("GrdX") in ("32768", "128")]
print(len(rows), "rows;", len(ks), "run_length rows of the 2^28 case (first kernel = counts case)")
# the counts case: main kernel followed by the fixup
seq = []
for r in ks:
    seq.append((int(r["Start (ns)"]), int(r["Duration (ns)"]), r["GrdX"], r["Name"][:28]))
for s in seq[:12]: print(s)
mains = [s for s in seq if "fixup" not in s[3]]
fix = [s for s in seq if "fixup" in s[3]]
print("fixup launches", len(fix), "median dur us", statistics.median([f[1] for f in fix]) / 1e3 if fix else None)
# counts case main kernels: those directly followed by a fixup
pairs = []
for a, b in zip(seq, seq[1:]):
    if "fixup" not in a[3] and "fixup" in b[3]:
        pairs.append((a, b))
print("counts calls", len(pairs))
d = [a[1] / 1e3 for a, b in pairs]; g1 = [(b[0] - a[0] - a[1]) / 1e3 for a, b in pairs]
print("main median us", statistics.median(d), "gap main->fixup us", statistics.median(g1))
nxt = []
for i in range(len(pairs) - 1):
    a, b = pairs[i]; c, _ = pairs[i + 1]
    nxt.append((c[0] - b[0] - b[1]) / 1e3)
print("gap fixup->next main us: median", statistics.median(nxt), "min", min(nxt))
per = [(pairs[i + 1][0][0] - pairs[i][0][0]) / 1e3 for i in range(len(pairs) - 1)]
print("start-to-start us: median", statistics.median(per), "min", min(per))
PY
rm -f $OUT/rl.nsys-rep $OUT/rl.sqlite
