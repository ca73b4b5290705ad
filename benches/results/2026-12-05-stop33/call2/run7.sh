#!/bin/bash
# Stop 33: run7.sh SECTION... where SECTION is one of
#   keys     sort cuda --keys: the plan's tile (384 x 20) and --tile 256x16, alternating, twice
#   argsort  sort cuda --argsort --tile T for the packed argsort's tiles (the plan's first)
#   core     sort cuda --core (the plan's tiles)
#   peers    sort_peers_b2b.py and cub_peers
#   ncu      ncu launch stats of the radix kernels, tiles 384x20 and 256x16
#   argsort2 sort cuda --argsort: the plan's tile (384 x 16) and --tile 256x16
#   rows     sort cuda --rows-only
#   wide     sort cuda --wide (u64 keys): the plan's tile (384 x 16) and --tile 256x16, alternating, twice
#   ncuarg   ncu of the first argsort's radix kernels (u32 indices), the plan's tile
#   auto     keys+argsort2+peers on an H200, wide+ncuarg on anything else
cd "$(dirname "$0")"
export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
xz -d -k -f bench_gpu.xz && chmod +x bench_gpu
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"; nvidia-smi --query-gpu=driver_version --format=csv,noheader
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 250 > $OUT/smi.csv 2>&1 &
SMI=$!
S="$*"
if [[ "$S" == auto ]]; then if [[ "$G" == *H200* ]]; then S="keys argsort2 peers wide"; else S="wide ncuarg"; fi; fi
echo "sections: $S"
b() { n=$1; shift; date -u +%T; echo "== $n"; timeout ${T:-90} ./bench_gpu sort cuda "$@" >> $OUT/sort.log 2>&1; grep '"case"' $OUT/sort.log | tail -${L:-5} | cut -c1-200; }
for s in $S; do case $s in
keys) b keys-plan-1 --keys; b keys-256x16-1 --keys --tile 256x16; b keys-plan-2 --keys; b keys-256x16-2 --keys --tile 256x16 ;;
argsort) L=3; b argsort-plan --argsort; for t in 384x20 384x16 256x12 384x12 512x8 256x20; do b argsort-$t --argsort --tile $t; done; L= ;;
core) L=7 T=150; b core --core; L= T= ;;
rows) L=9 T=150; b rows --rows-only; L= T= ;;
wide) L=2; b wide-plan-1 --wide; b wide-256x16-1 --wide --tile 256x16; b wide-plan-2 --wide; b wide-256x16-2 --wide --tile 256x16; L= ;;
ncuarg) date -u +%T; echo '== ncu argsort'
  timeout 120 ncu --clock-control none --section LaunchStats --section SpeedOfLight -k regex:radix -c 8 ./bench_gpu sort cuda --argsort > $OUT/ncu-argsort.log 2>&1
  grep -E '^  [a-z_]+.*\(|Duration|Registers Per|DRAM Throughput' $OUT/ncu-argsort.log | head -60 ;;
argsort2) L=3; b argsort-plan --argsort; b argsort-256x16 --argsort --tile 256x16; L= ;;
peers) date -u +%T; echo "== sort peers b2b"
  timeout 90 python3 sort_peers_b2b.py >> $OUT/peers.log 2>&1; grep '"peer"' $OUT/peers.log | tail -6
  date -u +%T; echo "== cub peers"
  (nvcc -O3 -std=c++17 -arch=sm_90 -o cub_peers cub_peers.cu && timeout 60 ./cub_peers) >> $OUT/peers.log 2>&1
  grep -i 'copy\|sort' $OUT/peers.log | grep -v '"peer"' | grep -v SortPairs ;;
ncu) for t in 384x20 256x16; do date -u +%T; echo "== ncu $t"
  timeout 90 ncu --clock-control none --section LaunchStats --section SpeedOfLight -k regex:radix -c 10 ./bench_gpu sort cuda --keys --tile $t > $OUT/ncu-$t.log 2>&1
  grep -E '^  [a-z_]+.*\(|Duration|Registers Per|DRAM Throughput' $OUT/ncu-$t.log | head -50; done ;;
esac; done
kill $SMI
date -u +%T
