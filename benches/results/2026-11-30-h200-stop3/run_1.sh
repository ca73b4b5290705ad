#!/bin/bash
# Device call 1 (stop 3): scans (ours, --quick target cases) + PyTorch peers; compaction with
# u32 and u8 masks + PyTorch peers; racecheck and memcheck over every scan path.
cd .dev/r1
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_*
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  echo "== ours"; timeout 150 ./bench_gpu cuda $OUT/scan.json --quick
  echo "== torch"; timeout 90 python3 peers_h200.py $OUT; } > $OUT/scan.log 2>&1
{ timeout 100 ./bench_gpu_compact cuda 28; echo "== torch"; timeout 50 python3 compact_peers.py 28; } > $OUT/compact.log 2>&1
{ timeout 100 compute-sanitizer --tool racecheck ./bench_gpu cuda /tmp/s1.json --sanitize 2>&1 | grep -v "^runtime"
  timeout 100 compute-sanitizer --tool memcheck ./bench_gpu cuda /tmp/s2.json --sanitize 2>&1 | grep -v "^runtime"; } > $OUT/sanitize.log 2>&1
grep -v "^runtime" $OUT/scan.log | head -40; cat $OUT/compact.log; tail -n 4 $OUT/sanitize.log
