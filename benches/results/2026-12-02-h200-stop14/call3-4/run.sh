export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
cd .dev/s14a
python3 scan_lb.py scan_192x16.cu,scan_256x16.cu,scan_256x12.cu,scan_128x16.cu,scan_192x20.cu,scan_224x16.cu,scan_192x24.cu,scan_128x24.cu 28 2>/dev/null | tee $OUT/scan_tiles.txt
