# Session 20 (stop 25): the 1-D look-back scan, f32 add, 2^28, 192 x 16 vec4 staged tile.
# (1) cubecl's generated CUDA C++ (look-back and Prefixed), launched through the driver API as
#     in stop 24's scan_prefixed.py; (2) proto.cu, a hand-written kernel of the same tile, in
#     three orders: the library's (EARLY=0), the tile total from the loads published before
#     the fold with the look-back overlapping the other warps' folds (EARLY=1), and prefixes
#     given (PREFIXED=1). CUDA events, 20 launches, three samples; every variant checked
#     against a float64 cumsum. With STAMPS=1, per-tile globaltimer stamps.
import ctypes, re, sys, traceback, cupy as cp, numpy as np
libcuda = ctypes.CDLL("libcuda.so.1")
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
    res = []
    for _ in range(3):
        s.record()
        for _ in range(reps): f()
        e.record(); e.synchronize()
        res.append(cp.cuda.get_elapsed_time(s, e) / reps)
    return res

def copy():
    y[...] = x

def err():
    return float(cp.max(cp.abs(out.astype(cp.float64) - ref) / (mag + 1.0)))

copy_ms = timeit(copy)
print(f"n={n} copy ms=" + " ".join(f"{t:.4f}" for t in copy_ms), flush=True)
epoch = [0]

def shared_bytes(src):
    best = 0
    for m in re.finditer(r"// Shared array size: \d+, (\d+) bytes\n[^\n]*dynamic_shared_mem\[(\d+)\]", src):
        best = max(best, int(m.group(1)) + int(m.group(2)))
    return best

def cubecl_kernel(path, kname, pre, label):
    src = open(path).read()
    threads = int(re.search(r"__launch_bounds__\((\d+)\)", src).group(1))
    mod = cp.RawModule(code=src, options=("-I/usr/local/cuda/include", "--std=c++17"))
    fn = mod.get_function(kname)
    smem = shared_bytes(src)
    fn.max_dynamic_shared_size_bytes = smem
    state[...] = 0
    epoch[0] = 0
    def launch():
        epoch[0] += 1
        info = (ctypes.c_uint32 * 24)(n_vec, tiles, tiles, 1, 1, epoch[0], 0, *([0] * 17))
        ptrs = [ctypes.c_void_p(a.data.ptr) for a in (x, out, dummy, state, state, pre, layout, dummy)]
        params = (ctypes.c_void_p * 9)(*[ctypes.cast(ctypes.pointer(p), ctypes.c_void_p) for p in ptrs], ctypes.cast(info, ctypes.c_void_p))
        launch.keep = (ptrs, info, params)
        r = libcuda.cuLaunchKernel(ctypes.c_void_p(fn.kernel.ptr), tiles, 1, 1, threads, 1, 1, smem, ctypes.c_void_p(cp.cuda.get_current_stream().ptr), params, None)
        assert r == 0, r
    out.fill(0)
    launch(); cp.cuda.Device().synchronize()
    er = err()
    ts = timeit(launch)
    print(f"{label}: regs={fn.num_regs} smem={smem} ms=" + " ".join(f"{t:.4f}" for t in ts) + f" rel_err={er:.2e}", flush=True)

counters = cp.zeros(4, dtype=cp.uint32)
stamps = cp.zeros(4 * tiles, dtype=cp.uint64)

def proto(defs, label, want_stamps=False):
    src = open("proto.cu").read()
    opts = ("-I/usr/local/cuda/include", "--std=c++17") + tuple(f"-D{d}" for d in defs)
    mod = cp.RawModule(code=src, options=opts)
    fn = mod.get_function("scan")
    SMEM = (192 * 64 + (4 if "PAD4=1" in defs else 1) * 192 + 192) * 4
    fn.max_dynamic_shared_size_bytes = SMEM
    state[...] = 0
    epoch[0] = 0
    def launch():
        epoch[0] += 1
        fn((tiles,), (192,), (x, out, state, prefixes, np.uint32(n_vec), np.uint32(epoch[0]), counters, stamps), shared_mem=SMEM)
    out.fill(0)
    counters[...] = 0
    launch(); cp.cuda.Device().synchronize()
    er = err()
    rounds = int(counters[0]) / tiles
    if want_stamps:
        st = stamps.reshape(tiles, 4).get().astype(np.int64)
        st -= st[:, 0].min()
        load = st[:, 1] - st[:, 0]
        lb = st[:, 2] - st[:, 1]
        tail = st[:, 3] - st[:, 1]
        total = st[:, 3].max()
        q = lambda a: " ".join(f"{np.percentile(a, p)/1e3:.2f}" for p in (10, 50, 90, 99))
        print(f"  stamps {label}: span {total/1e6:.4f} ms; load us p10/50/90/99 {q(load)}; after-load->prefix known {q(lb)}; after-load->end {q(tail)}", flush=True)
        np.save(f"/tmp/stamps_{label}.npy", st)
        return
    ts = timeit(launch)
    print(f"{label}: regs={fn.num_regs} smem={SMEM} ms=" + " ".join(f"{t:.4f}" for t in ts) + f" rel_err={er:.2e} poll_rounds/tile={rounds:.2f}", flush=True)

def safe(f, *a, **k):
    try:
        f(*a, **k)
    except Exception:
        traceback.print_exc(limit=2)
        sys.stdout.flush()

VARIANTS = [
    (["PREFIXED=1"], "prefixed"),
    (["PREFIXED=1", "PAD4=1"], "prefixed pad4"),
    (["PREFIXED=1", "PAD4=1", "MINB=4"], "prefixed pad4 minb4"),
    (["PREFIXED=1", "PAD4=1", "CPASYNC=1"], "prefixed pad4 cp.async"),
    (["EARLY=0", "MINB=4"], "late minb4"),
    (["EARLY=0", "PAD4=1"], "late pad4"),
    (["EARLY=0", "PAD4=1", "MINB=4"], "late pad4 minb4"),
    (["EARLY=0", "PAD4=1", "CPASYNC=1"], "late pad4 cp.async"),
    (["EARLY=0", "PAD4=1", "CPASYNC=1", "MINB=4"], "late pad4 cp.async minb4"),
    (["EARLY=1", "PAD4=1"], "early pad4"),
    (["EARLY=1", "PAD4=1", "MINB=4"], "early pad4 minb4"),
]
for rep in range(2):
    safe(cubecl_kernel, "scan_rows_f32_add_lookback.cu", "scan_rows_f32_add_lookback", zeros, "cubecl lookback")
    safe(cubecl_kernel, "scan_rows_f32_add_prefixed.cu", "scan_rows_f32_add_prefixed", prefixes, "cubecl prefixed")
    for d, label in VARIANTS:
        safe(proto, d, "proto " + label)
    print(f"copy ms=" + " ".join(f"{t:.4f}" for t in timeit(copy)), flush=True)
for d, label in [(["EARLY=0", "PAD4=1", "STAMPS=1"], "late_pad4"), (["EARLY=0", "PAD4=1", "CPASYNC=1", "STAMPS=1"], "late_pad4_cpasync"), (["PREFIXED=1", "PAD4=1", "CPASYNC=1", "STAMPS=1"], "prefixed_pad4_cpasync")]:
    safe(proto, d, label, True)
