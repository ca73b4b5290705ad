export CUDA_PATH=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH
cd .dev/s15d
python3 scatter_full_lb.py radix_scatter_u32_keys_full.cu 28 gen,ptx,predmask,ashr,ashr_lt,sel2,gen 2>&1 | tee $OUT/full_u32.txt
python3 scatter_full_lb.py radix_scatter_f32_load_full.cu 28 gen,ptx,ashr,predmask 2>&1 | tee $OUT/full_f32load.txt
