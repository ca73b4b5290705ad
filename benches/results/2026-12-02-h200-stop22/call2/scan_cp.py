# Session 17 (stop 22): stop 14's scan_lb.py plus `cpasync` (the tile's staging loads as 4-byte cp.async
# copies, __pipeline_memcpy_async, no registers; one commit + wait before the first barrier).
# Session 14 (stop 19), calls 1-4. Times the CUDA C++ that cubecl generates for the 1-D look-back
# scan (f32 add, vec4; `CUBEPRIM_DUMP=dir CUBEPRIM_DUMP_TILE=UxV cargo test --test suite
# codegen::dump`), launched through the driver API on CuPy arrays, as generated and with its
# source edited: `python3 scan_lb.py a.cu,b.cu,... 28`. The first file runs every variant, the
# others as generated. Checked against a float64 cumsum (error relative to the running sum of
# |x|). Calls 1-2 ran, besides `asis` and `norefresh`: `ldcg` (polling loads through
# __ldcg, refresh kept), `ldcv` (__ldcv) and `atomic` (every poll an atomicAdd(p, 0)), each a
# one-line re.sub of the polling loads like `norefresh`; call 2 ran `preload(src, batch, bounds)`
# below (the tile's global loads hoisted into registers, in batches). Call 4 is this file.
# Times cubecl's generated CUDA C++ of the 1-D look-back scan (f32 add, 192 x 16 vec4, staged)
# as generated and with its polling loads changed, launched through the driver API on CuPy arrays.
import ctypes, re, sys, cupy as cp, numpy as np
libcuda = ctypes.CDLL("libcuda.so.1")
def shared_bytes(src):
    best = 0
    for m in re.finditer(r"// Shared array size: \d+, (\d+) bytes\n[^\n]*dynamic_shared_mem\[(\d+)\]", src):
        best = max(best, int(m.group(1)) + int(m.group(2)))
    return best
n = 1 << int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 28
x = cp.random.standard_normal(n, dtype=cp.float32)
ref = cp.cumsum(x.astype(cp.float64))
mag = cp.cumsum(cp.abs(x).astype(cp.float64))
n_vec = n // 4
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
HELP = """
__device__ __forceinline__ float_4 ldcs4(const float_4* p) { float4 v = __ldcs((const float4*)p); float_4 r; r.i_0 = v.x; r.i_1 = v.y; r.i_2 = v.z; r.i_3 = v.w; return r; }
__device__ __forceinline__ void stcs4(float_4* p, float_4 a) { __stcs((float4*)p, make_float4(a.i_0, a.i_1, a.i_2, a.i_3)); }
"""
def helpers(src):
    if "ldcs4(const" in src:
        return src
    i = src.index("extern \"C\"")
    return src[:i] + HELP + src[i:]
def stcs(src):
    return re.sub(r"buffer_1\[(l_\d+)\] = (l_mut_\d+);", r"stcs4(&buffer_1[\1], \2);", helpers(src))
def ldcs(src):
    return re.sub(r"= buffer_0\[(l_\d+)\];", r"= ldcs4(&buffer_0[\1]);", helpers(src))
def norefresh(src):
    return re.sub(r"(l_\d+) != uint32\(7\)", "true", re.sub(r"buffer_4\[([^\]]+)\]", r"__ldcg(&buffer_4[\1])", src))
files = sys.argv[1].split(",")
def preload(src, batch, bounds=None):
    m = list(re.finditer(r"const uint32 (l_\d+) = uint32\((\d+)\) \+ threadIdxGlobal;\n", src))[:16]
    assert [int(x.group(2)) for x in m] == [192 * k for k in range(16)]
    # tile start (l_41), n_vec (l_mut_0), row base (l_mut_20) as named in block 0
    blk = src[m[0].end():m[0].end() + 400]
    t0 = re.search(r"= (l_\d+) \+ " + m[0].group(1) + ";", blk).group(1)
    nv = re.search(r"< (l_mut_\d+);", blk).group(1)
    rb = re.search(r"= (l_mut_\d+) \+ l_\d+;\nconst float_4", blk).group(1)
    out = src[:m[0].start()] + "float_4 pre_[16];\n"
    for k in range(16):
        end = m[k + 1].start() if k < 15 else m[15].end() + 2000
        if k % batch == 0:
            out += ("#pragma unroll\nfor (uint32 k_ = %d; k_ < %d; ++k_) { const uint32 j_ = %s + k_ * 192 + threadIdxGlobal; "
                    "if (j_ < %s) { pre_[k_] = buffer_0[%s + j_ * info.scalars_uint32[3]]; } }\n" % (k, k + batch, t0, nv, rb))
        seg = src[m[k].start():end]
        seg = re.sub(r"buffer_0\[l_\d+\]", "pre_[%d]" % k, seg, count=1)
        out += seg
    out += src[m[15].end() + 2000:]
    if bounds:
        out = out.replace("__launch_bounds__(192)", "__launch_bounds__(192, %d)" % bounds)
    return out
def cpasync(src):
    i = src.index("__syncthreads();")
    stage, rest = src[:i], src[i:]
    vecs = dict(re.findall(r"const float_4 (l_\d+) = buffer_0\[(l_\d+)\];", stage))
    assert len(vecs) == 16, len(vecs)
    stage = re.sub(r"const float_4 (l_\d+) = buffer_0\[(l_\d+)\];\n", "", stage)
    def rep(m):
        x, v, c, slot, x2 = m.groups()
        assert x == x2
        return "__pipeline_memcpy_async(&shared_memory_42[%s], ((const float*)&buffer_0[%s]) + %s, 4);" % (slot, vecs[v], c)
    stage, k = re.subn(r"const float (l_\d+) = (l_\d+)\.i_(\d);\nshared_memory_42\[(l_\d+)\] = (l_\d+);", rep, stage)
    assert k == 64, k
    return "#include <cuda_pipeline.h>\n" + stage + "__pipeline_commit();\n__pipeline_wait_prior(0);\n" + rest
variants = {
    "asis": lambda s: s,
    "cpasync": cpasync,
    "cpasync_norefresh_stcs": lambda s: stcs(norefresh(cpasync(s))),
    "stcs": stcs,
    "norefresh": norefresh,
    "norefresh_stcs": lambda s: stcs(norefresh(s)),
}
epoch = [0]
first = None
jobs = []
for fi, path in enumerate(files):
    for name, f in variants.items():
        if fi == 0 or name == "asis":
            jobs.append((path, name, f))
for path, name, f in jobs:
    base = open(path).read()
    threads = int(re.search(r"__launch_bounds__\((\d+)\)", base).group(1))
    tv = int(re.search(r"l_11 \* uint32\((\d+)\)", base).group(1))
    tiles = (n_vec + tv - 1) // tv
    name = path.split("/")[-1] + " " + name
    src = f(base)
    mod = cp.RawModule(code=src, options=("-I/usr/local/cuda/include", "--std=c++17", "-lineinfo"))
    fn = mod.get_function("scan_rows_f32_add_lookback")
    smem = shared_bytes(src)
    fn.max_dynamic_shared_size_bytes = smem
    state[...] = 0
    epoch[0] = 0
    def launch():
        epoch[0] += 1
        assert epoch[0] < (1 << 14)
        info = np.zeros(24, dtype=np.uint32)
        info[:7] = [n_vec, tiles, tiles, 1, 1, epoch[0], 0]
        infob = (ctypes.c_uint32 * 24)(*info.tolist())
        ptrs = [ctypes.c_void_p(a.data.ptr) for a in (x, out, dummy, state, state, dummy, layout, dummy)]
        params = (ctypes.c_void_p * 9)(*[ctypes.cast(ctypes.pointer(p), ctypes.c_void_p) for p in ptrs], ctypes.cast(infob, ctypes.c_void_p))
        launch.keep = (ptrs, infob, params)
        nonlocal_tiles = tiles
        r = libcuda.cuLaunchKernel(ctypes.c_void_p(fn.kernel.ptr), tiles, 1, 1, threads, 1, 1, smem, ctypes.c_void_p(cp.cuda.get_current_stream().ptr), params, None)
        assert r == 0, r
    launch(); cp.cuda.Device().synchronize()
    err = float(cp.max(cp.abs(out.astype(cp.float64) - ref) / (mag + 1.0)))
    if first is None:
        first = out.copy()
    same = bool(cp.all(out == first))
    ts = timeit(launch)
    print(f"{name}: regs={fn.num_regs} smem={smem} ms=" + " ".join(f"{t:.4f}" for t in ts) + f" rel_err={err:.2e} same_bits_as_asis={same}", flush=True)
print(f"copy again ms=" + " ".join(f"{t:.4f}" for t in timeit(copy)), flush=True)
