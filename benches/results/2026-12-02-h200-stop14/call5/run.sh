export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
cd .dev/s14b
for f in radix_scatter_u32_keys radix_onesweep_u32_keys; do
  nvcc -cubin -arch=sm_90a -lineinfo -I/usr/local/cuda/include -o $OUT/$f.cubin $f.cu 2>/dev/null && cuobjdump -sass $OUT/$f.cubin > $OUT/$f.sass && cuobjdump -res-usage $OUT/$f.cubin | tail -3
done
ls -la $OUT
