# Times cubecl's generated CUDA C++ of the in-cube row sort (f32 keys, i64 indices, 256 units x 16
# keys) as is and with __launch_bounds__(256, 4), launched through the driver API on CuPy arrays.
import ctypes, re, sys, cupy as cp, numpy as np
rows, n = 16384, 4096
libcuda = ctypes.CDLL("libcuda.so.1")
def shared_bytes(src):
    best = 0
    for m in re.finditer(r"// Shared array size: \d+, (\d+) bytes\n[^\n]*dynamic_shared_mem\[(\d+)\]", src):
        best = max(best, int(m.group(1)) + int(m.group(2)))
    return best
keys = cp.random.standard_normal(rows * n, dtype=cp.float32)
ref = cp.sort(keys.reshape(rows, n), axis=1)
layout = cp.array([1, rows, n, n, 0], dtype=cp.uint32)
info = np.zeros(16, dtype=np.uint32); info[:8] = [rows, n, 1, n, 0, 32, 0, 0]
for f in sys.argv[1:]:
    base = open(f).read()
    for lb in ["", ", 4"]:
        src = base.replace("__launch_bounds__(256)", "__launch_bounds__(256%s)" % lb)
        mod = cp.RawModule(code=src, options=("-I/usr/local/cuda/include", "--std=c++17"))
        fn = mod.get_function("radix_sort_rows_f32_i64")
        smem = shared_bytes(src)
        fn.max_dynamic_shared_size_bytes = smem
        ko = cp.empty_like(keys); io = cp.empty(rows * n, dtype=cp.int64)
        ptrs = [ctypes.c_void_p(a.data.ptr) for a in (keys, ko, io, layout)]
        infob = (ctypes.c_uint32 * 16)(*info.tolist())
        params = (ctypes.c_void_p * 5)(*[ctypes.cast(ctypes.pointer(p), ctypes.c_void_p) for p in ptrs], ctypes.cast(infob, ctypes.c_void_p))
        def launch():
            r = libcuda.cuLaunchKernel(ctypes.c_void_p(fn.kernel.ptr), rows, 1, 1, 256, 1, 1, smem, ctypes.c_void_p(cp.cuda.get_current_stream().ptr), params, None)
            assert r == 0, r
        launch(); cp.cuda.Device().synchronize()
        ok = bool(cp.all(ko.reshape(rows, n) == ref)) and bool(cp.all(cp.take_along_axis(keys.reshape(rows, n), io.reshape(rows, n), 1) == ref))
        s, e = cp.cuda.Event(), cp.cuda.Event()
        for _ in range(3): launch()
        s.record()
        for _ in range(20): launch()
        e.record(); e.synchronize()
        print(f"{f} launch_bounds(256{lb}) regs={fn.num_regs} smem={smem} ms={cp.cuda.get_elapsed_time(s, e) / 20:.4f} ok={ok}", flush=True)
