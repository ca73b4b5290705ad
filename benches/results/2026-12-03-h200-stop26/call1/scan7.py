# Session 21 (stop 26), call 1: the look-back that publishes the inclusive prefix from the walking plane (no zeroing barrier, no barrier after the prefix is found), cubecl's generated CUDA (plain loads and cp.async) as generated and relaid out, beside the prototype and the copy. Harness of stop 25's call 6.
# unit chunk holding its prefix, cp.async loads on CUDA) against the tile of stop 24 and the
# prototype, all on 2^28 f32 (CUDA events, 20 launches, three samples; checked against a
# float64 cumsum). cubecl's CUDA C++ from `CUBEPRIM_DUMP=dir CUBEPRIM_DUMP_TILE=192x16 suite
# codegen::dump` (CUBEPRIM_DUMP_ASYNC=0 for the plain-load variant).
import ctypes, os, re, sys, traceback, cupy as cp, numpy as np
libcuda = ctypes.CDLL("libcuda.so.1")
INC = ["-I/usr/local/cuda/include"] + (["-I/usr/local/cuda/include/cccl"] if os.path.isdir("/usr/local/cuda/include/cccl") else [])
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
def shared_bytes(src):
    best = 0
    for m in re.finditer(r"// Shared (?:array|value) size: (?:\d+, )?(\d+) bytes\n[^\n]*dynamic_shared_mem\[(\d+)\]", src):
        best = max(best, int(m.group(1)) + int(m.group(2)))
    return best
epoch = [0]
def cubecl_kernel(path, kname, pre, label):
    src = open(path).read()
    threads = int(re.search(r"__launch_bounds__\((\d+)\)", src).group(1))
    mod = cp.RawModule(code=src, options=tuple(INC) + ("--std=c++17",))
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
stamps = cp.zeros(4, dtype=cp.uint64)
def proto(defs, label):
    src = open("proto.cu").read()
    mod = cp.RawModule(code=src, options=tuple(INC) + ("--std=c++17",) + tuple(f"-D{d}" for d in defs))
    fn = mod.get_function("scan")
    SMEM = (192 * 64 + (4 if "PAD4=1" in defs else 1) * 192 + 192) * 4
    fn.max_dynamic_shared_size_bytes = SMEM
    state[...] = 0
    epoch[0] = 0
    def launch():
        epoch[0] += 1
        fn((tiles,), (192,), (x, out, state, prefixes, np.uint32(n_vec), np.uint32(epoch[0]), counters, stamps), shared_mem=SMEM)
    out.fill(0)
    launch(); cp.cuda.Device().synchronize()
    er = err()
    ts = timeit(launch)
    print(f"{label}: regs={fn.num_regs} smem={SMEM} ms=" + " ".join(f"{t:.4f}" for t in ts) + f" rel_err={er:.2e}", flush=True)
def safe(f, *a):
    try:
        f(*a)
    except Exception:
        traceback.print_exc(limit=2); sys.stdout.flush()
print(f"n={n} copy ms=" + " ".join(f"{t:.4f}" for t in timeit(copy)), flush=True)
ARR = re.compile(r"// Shared (?:array size: \d+, (\d+)|value size: (\d+)) bytes\n([^\n]*?)(shared_memory_\d+) = reinterpret_cast<(.*?)>\((&?)dynamic_shared_mem\[(\d+)\]\);")
def arrays_of(src):
    out = {}
    for m in ARR.finditer(src):
        size = int(m.group(1) or m.group(2))
        align = 16 if "float_4" in m.group(5) else (8 if "barrier" in m.group(5) else 4)
        out[m.group(4)] = (size, align, int(m.group(7)))
    return out
def relayout(src, order):
    arrs = arrays_of(src)
    order = [k for k in order if k in arrs] + sorted(k for k in arrs if k not in order)
    at, offs = 0, {}
    for k in order:
        size, align, _ = arrs[k]
        at = (at + align - 1) // align * align
        offs[k] = at
        at += size
    def sub(m):
        return m.group(0).replace(f"dynamic_shared_mem[{m.group(7)}]", f"dynamic_shared_mem[{offs[m.group(4)]}]")
    return ARR.sub(sub, src), offs
def variant(path, order, label):
    src, offs = relayout(open(path).read(), order)
    tmp = f"/tmp/{label.replace(' ', '_')}.cu"
    open(tmp, "w").write(src)
    print(f"  layout {label}: " + " ".join(f"{k[14:]}@{v}" for k, v in sorted(offs.items(), key=lambda kv: kv[1])), flush=True)
    safe(cubecl_kernel, tmp, "scan_rows_f32_add_lookback", zeros, label)
def named(path, spec):
    arrs = arrays_of(open(path).read())
    stage = [k for k, v in arrs.items() if v[1] == 16]
    bar = [k for k, v in arrs.items() if v[1] == 8]
    rest = sorted((k for k in arrs if k not in stage + bar), key=lambda k: arrs[k][2])
    parts = {"S": stage, "B": bar, "R": rest, "r": rest[::-1]}
    return [k for c in spec for k in parts[c]]
A = "lb_async.cu"
P = "lb_plain.cu"
import torch
tx = torch.as_tensor(x, device="cuda")
for rep in range(2):
    safe(cubecl_kernel, P, "scan_rows_f32_add_lookback", zeros, "plain as generated")
    safe(cubecl_kernel, "lb_prefixed.cu", "scan_rows_f32_add_prefixed", prefixes, "plain prefixed")
    for spec in ["RS"]:
        variant(P, named(P, spec), "plain " + spec)
    safe(cubecl_kernel, A, "scan_rows_f32_add_lookback", zeros, "cpasync as generated")
    for spec in ["RBS", "SBR"]:
        variant(A, named(A, spec), "cpasync " + spec)
    safe(proto, ["EARLY=0", "PAD4=1", "CPASYNC=1"], "proto late pad4 cp.async")
    safe(proto, ["EARLY=0", "PAD4=1"], "proto late pad4")
    print("torch.cumsum ms=" + " ".join(f"{t:.4f}" for t in timeit(lambda: torch.cumsum(tx, 0))), flush=True)
    print(f"copy ms=" + " ".join(f"{t:.4f}" for t in timeit(copy)), flush=True)
