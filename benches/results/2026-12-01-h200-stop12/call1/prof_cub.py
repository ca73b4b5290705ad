# One cupy.sort (CUB's DeviceRadixSort) of 2^28 random u32, after one warm-up, for ncu.
import cupy
N = 1 << 28
u = cupy.random.randint(0, 2**32 - 1, size=N, dtype=cupy.uint32)
cupy.sort(u)
cupy.cuda.Device().synchronize()
cupy.cuda.nvtx.RangePush("measured")
cupy.sort(u)
cupy.cuda.Device().synchronize()
cupy.cuda.nvtx.RangePop()
