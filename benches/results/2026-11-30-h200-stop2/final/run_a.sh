#!/bin/bash
# Device call A: scans (ours + PyTorch + burn's built-ins), wgpu on the NVIDIA Vulkan driver,
# compaction. Run from the repo root with .dev/final and .gl carried.
cd .dev/final
export CUDA_PATH=/usr/local/cuda
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_* 2>/dev/null
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; date -u
  echo "== ours"; timeout 170 ./bench_gpu cuda $OUT/scan.json
  echo "== torch"; timeout 80 python3 peers_h200.py $OUT; } > $OUT/scan.log 2>&1
if [ -x bench_burn ]; then timeout ${BURN_S:-100} ./bench_burn > $OUT/burn.log 2>&1; fi
( for f in ../../.gl/*.deb; do dpkg -x $f /; done; ldconfig
  [ -e /usr/share/vulkan/icd.d/nvidia_icd.json ] || export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  timeout 90 ./bench_gpu wgpu /tmp/w.json --quick ) > $OUT/wgpu.log 2>&1
{ timeout 60 ./bench_gpu_compact cuda 28; echo "== torch"; timeout 40 python3 compact_peers.py 28; } > $OUT/compact.log 2>&1
tail -n 40 $OUT/scan.log; tail -n 12 $OUT/burn.log $OUT/wgpu.log $OUT/compact.log 2>/dev/null
