# Session 19 (stop 24): the row sort's CUDA C++ as cubecl generated it in one bench process
# (CUBECL_DEBUG_LOG), with its four shared arrays placed in every order (packed, or each on a
# 128-byte line), compiled by NVRTC through CuPy: registers and time of each layout on
# [16384, 4096] f32 rows with i64 indices (20 launches between CUDA events, three times),
# checked against cupy.sort.
import ctypes, itertools, re, sys, cupy as cp, numpy as np
libcuda = ctypes.CDLL("libcuda.so.1")
src0 = open(sys.argv[1]).read()
decl = re.findall(r"// Shared array size: (\d+), (\d+) bytes\n(\w+) \*(shared_memory_\d+) = reinterpret_cast<\w+\*>\(&dynamic_shared_mem\[(\d+)\]\);", src0)
arrays = {name: int(size) for (_, size, _, name, _) in decl}
orig = {name: int(off) for (_, _, _, name, off) in decl}
print("arrays", arrays, "as generated", orig, flush=True)
rows, n = 16384, 4096
x = cp.random.standard_normal((rows, n), dtype=cp.float32)
keys = cp.empty_like(x)
idx = cp.empty((rows, n), dtype=cp.int64)
layout = cp.array([1, rows, n, n, 0, 0, 0, 0], dtype=cp.uint32)
ref = cp.sort(x, axis=1)
s, e = cp.cuda.Event(), cp.cuda.Event()
def with_offsets(src, offs):
    for name, off in offs.items():
        src = re.sub(r"(\*%s = reinterpret_cast<\w+\*>\(&dynamic_shared_mem\[)\d+(\]\))" % name, r"\g<1>%d\2" % off, src)
    return src
def run(label, offs):
    src = with_offsets(src0, offs)
    smem = max(offs[k] + arrays[k] for k in arrays)
    mod = cp.RawModule(code=src, options=("-I/usr/local/cuda/include", "--std=c++17", "-lineinfo"))
    fn = mod.get_function("radix_sort_rows_t_f32_x_i64")
    if smem > 48 * 1024:
        fn.max_dynamic_shared_size_bytes = smem
    info = (ctypes.c_uint32 * 16)(rows, n, 1, n, 0, 32, 0, 0, *([0] * 8))
    ptrs = [ctypes.c_void_p(a.data.ptr) for a in (x, keys, idx, layout)]
    params = (ctypes.c_void_p * 5)(*[ctypes.cast(ctypes.pointer(p), ctypes.c_void_p) for p in ptrs], ctypes.cast(info, ctypes.c_void_p))
    def launch():
        r = libcuda.cuLaunchKernel(ctypes.c_void_p(fn.kernel.ptr), rows, 1, 1, 256, 1, 1, smem, ctypes.c_void_p(cp.cuda.get_current_stream().ptr), params, None)
        assert r == 0, r
    keys.fill(0); idx.fill(-1)
    launch(); cp.cuda.Device().synchronize()
    ok = bool(cp.all(keys == ref)) and bool(cp.all(cp.take_along_axis(x, idx, axis=1) == keys))
    for _ in range(3): launch()
    ts = []
    for _ in range(3):
        s.record()
        for _ in range(20): launch()
        e.record(); e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e) / 20)
    order = " ".join(f"{k}@{offs[k]}" for k in sorted(offs, key=offs.get))
    print(f"{label:8s} regs={fn.num_regs:3d} smem={smem} ms=" + " ".join(f"{t:.4f}" for t in ts) + f" ok={ok}  {order}", flush=True)
run("asgen", orig)
if len(sys.argv) > 2 and sys.argv[2] == "pad":
    # counters (shared_memory_173) first, at a distance `pad` from the start, the rest after.
    rest = [k for k in sorted(arrays) if k != "shared_memory_173"]
    for pad in (0, 4, 16, 64, 128, 256, 512, 1024, 2048):
        offs = {"shared_memory_173": pad}
        at = pad + arrays["shared_memory_173"]
        for k in rest:
            at = (at + 127) // 128 * 128
            offs[k] = at
            at += arrays[k]
        run(f"pad{pad}", offs)
    sys.exit(0)
for align in (4, 128):
    for perm in itertools.permutations(sorted(arrays)):
        offs, at = {}, 0
        for k in perm:
            at = (at + align - 1) // align * align
            offs[k] = at
            at += arrays[k]
        run(f"a{align}", offs)
