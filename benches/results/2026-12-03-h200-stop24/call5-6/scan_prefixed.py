# Session 19 (stop 24): the 1-D look-back scan (f32 add, 192 x 16 vec4, staged) against the same
# kernel reading each tile's exclusive prefix from an array (ScanMode::Prefixed, reduce-then-scan's
# last pass; prefixes computed here by CuPy): the time of the scan without its look-back. CUDA
# C++ from `CUBEPRIM_DUMP=dir CUBEPRIM_DUMP_TILE=192x16 suite codegen::dump`, launched through
# the driver API on CuPy arrays (20 launches between CUDA events, three times), checked against a
# float64 cumsum (error relative to the running sum of |x|).
import ctypes, re, sys, cupy as cp, numpy as np
libcuda = ctypes.CDLL("libcuda.so.1")
def shared_bytes(src):
    best = 0
    for m in re.finditer(r"// Shared array size: \d+, (\d+) bytes\n[^\n]*dynamic_shared_mem\[(\d+)\]", src):
        best = max(best, int(m.group(1)) + int(m.group(2)))
    return best
n = 1 << 28
x = cp.random.standard_normal(n, dtype=cp.float32)
ref = cp.cumsum(x.astype(cp.float64))
mag = cp.cumsum(cp.abs(x).astype(cp.float64))
n_vec = n // 4
tv = 192 * 16
tiles = (n_vec + tv - 1) // tv
xp = cp.zeros(tiles * tv * 4, dtype=cp.float64)
xp[:n] = x
sums = xp.reshape(tiles, tv * 4).sum(axis=1)
del xp
prefixes = (cp.cumsum(sums) - sums).astype(cp.float32)
zeros = cp.zeros(tiles, dtype=cp.float32)
state = cp.zeros(1 + 2 * (n_vec // 1024 + 1), dtype=cp.uint32)
layout = cp.zeros(8, dtype=cp.uint32)
dummy = cp.zeros(16, dtype=cp.uint32)
out = cp.empty_like(x)
y = cp.empty_like(x)
s, e = cp.cuda.Event(), cp.cuda.Event()
def timeit(f, reps=20):
    for _ in range(3): f()
    best = []
    for _ in range(3):
        s.record()
        for _ in range(reps): f()
        e.record(); e.synchronize()
        best.append(cp.cuda.get_elapsed_time(s, e) / reps)
    return best
def copy():
    y[...] = x
print(f"n={n} copy ms=" + " ".join(f"{t:.4f}" for t in timeit(copy)), flush=True)
epoch = [0]
def bench(path, kname, pre, label):
    src = open(path).read()
    threads = int(re.search(r"__launch_bounds__\((\d+)\)", src).group(1))
    mod = cp.RawModule(code=src, options=("-I/usr/local/cuda/include", "--std=c++17", "-lineinfo"))
    fn = mod.get_function(kname)
    smem = shared_bytes(src)
    fn.max_dynamic_shared_size_bytes = smem
    state[...] = 0
    epoch[0] = 0
    def launch():
        epoch[0] += 1
        assert epoch[0] < (1 << 14)
        info = (ctypes.c_uint32 * 24)(n_vec, tiles, tiles, 1, 1, epoch[0], 0, *([0] * 17))
        ptrs = [ctypes.c_void_p(a.data.ptr) for a in (x, out, dummy, state, state, pre, layout, dummy)]
        params = (ctypes.c_void_p * 9)(*[ctypes.cast(ctypes.pointer(p), ctypes.c_void_p) for p in ptrs], ctypes.cast(info, ctypes.c_void_p))
        launch.keep = (ptrs, info, params)
        r = libcuda.cuLaunchKernel(ctypes.c_void_p(fn.kernel.ptr), tiles, 1, 1, threads, 1, 1, smem, ctypes.c_void_p(cp.cuda.get_current_stream().ptr), params, None)
        assert r == 0, r
    out.fill(0)
    launch(); cp.cuda.Device().synchronize()
    err = float(cp.max(cp.abs(out.astype(cp.float64) - ref) / (mag + 1.0)))
    ts = timeit(launch)
    print(f"{label}: regs={fn.num_regs} smem={smem} ms=" + " ".join(f"{t:.4f}" for t in ts) + f" rel_err={err:.2e}", flush=True)
for rep in range(2):
    bench("scan_rows_f32_add_lookback.cu", "scan_rows_f32_add_lookback", zeros, "lookback")
    bench("scan_rows_f32_add_prefixed.cu", "scan_rows_f32_add_prefixed", prefixes, "prefixed (prefixes given)")
print(f"copy again ms=" + " ".join(f"{t:.4f}" for t in timeit(copy)), flush=True)
