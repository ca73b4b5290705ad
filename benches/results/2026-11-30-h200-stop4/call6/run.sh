#!/bin/bash
# Stop 4, device call 6 (main f77497c's sort and scan code, = 76fa5da): 1-D sort tiles of the
# device-wide passes; scan look-back spins with the 192 x 16 tile.
cd .dev/s4f
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
for f in *.xz; do xz -d -f "$f"; done; chmod +x bench_gpu_sort bench_gpu
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  for t in 256x24 512x16 256x32; do echo "== tile $t"; timeout 70 ./bench_gpu_sort cuda --core --tile $t; done; } > $OUT/sort.log 2>&1
{ date -u; timeout 80 ./bench_gpu cuda /tmp/d.json --diag --tiles 192x16,192x16s64,192x16s16; } > $OUT/scan.log 2>&1
grep -E "tile|copy|sort u32|argsort f32 stable \(U32" $OUT/sort.log; grep -E "copy|diag 1-D" $OUT/scan.log
