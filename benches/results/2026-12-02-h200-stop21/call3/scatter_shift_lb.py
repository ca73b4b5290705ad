# Session 16: the full-tile scatter kernel (codegen_sort::dump: digit 0 constant) with the
# constant shift changed to SHIFT (env) and the digit extracted other ways; as generated and with its source edited, launched through the
# driver API on CuPy arrays. Offsets built with CuPy (per-(digit, tile) counts, exclusive scan,
# digit-major); every variant checked against a stable sort by the digit.
import ctypes, re, sys, cupy as cp, numpy as np
libcuda = ctypes.CDLL("libcuda.so.1")
def shared_bytes(src):
    best = 0
    for m in re.finditer(r"// Shared array size: \d+, (\d+) bytes\n[^\n]*dynamic_shared_mem\[(\d+)\]", src):
        best = max(best, int(m.group(1)) + int(m.group(2)))
    return best
path = sys.argv[1]
n = 1 << int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 28
TL = 4096
T = n // TL
F32 = "f32" in path
if F32:
    keys = cp.random.standard_normal(n, dtype=cp.float32)
    b = keys.view(cp.uint32)
    ordered = cp.where((b >> 31) == 1, ~b, b | cp.uint32(0x80000000))
    vals = cp.random.randint(0, 1 << 32, size=n, dtype=cp.uint64).astype(cp.uint32)
    vout = cp.empty_like(vals)
else:
    keys = cp.random.randint(0, 1 << 32, size=n, dtype=cp.uint64).astype(cp.uint32)
    ordered = keys
    vals = cp.zeros(16, dtype=cp.uint32)
    vout = vals
SHIFT = int(__import__('os').environ.get('SHIFT', '0'))
dig = ((ordered >> SHIFT) & 255).astype(cp.uint32)
tile = cp.arange(n, dtype=cp.uint32) // TL
counts = cp.bincount((dig.astype(cp.int64) * T + tile), minlength=256 * T).astype(cp.uint32)
offsets = (cp.cumsum(counts, dtype=cp.uint64) - counts).astype(cp.uint32)
comp = cp.sort((dig.astype(cp.uint64) << 32) | cp.arange(n, dtype=cp.uint64))
order_ = (comp & 0xffffffff).astype(cp.int64)
expected = keys[order_]
vexpected = (order_.astype(cp.uint32) if "iota" in path else vals[order_]) if F32 else None
del order_
del comp, tile, counts
out = cp.empty_like(keys)
y = cp.empty_like(keys)
dummy = cp.zeros(16, dtype=cp.uint32)
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
    y[...] = keys
print(f"n={n} copy ms=" + " ".join(f"{t:.4f}" for t in timeit(copy)), flush=True)
HELP = r"""
__device__ __forceinline__ uint32 match_bit(uint32 d, uint32 bit) { uint32 m; asm("{ .reg .pred p; .reg .u32 r; and.b32 r, %1, %2; setp.ne.u32 p, r, 0; vote.sync.ballot.b32 %0, p, 0xffffffff; @!p not.b32 %0, %0; }" : "=r"(m) : "r"(d), "r"(bit)); return m; }
"""
def helpers(src):
    if "match_bit(uint32" in src:
        return src
    i = src.index("extern \"C\"")
    return src[:i] + HELP + src[i:]
BALLOT = re.compile(r"const uint32 (l_\d+) = (l_\d+) >> uint32\((\d)\);\nconst uint32 (l_\d+) = \1 & uint32\(1\);\nconst bool (l_\d+) = \4 != uint32\(0\);\n\nconst uint32_4 (l_\d+) = \{ __ballot_sync\(-1, \5\), 0, 0, 0 \};\nconst uint32 (l_\d+) = \4 - uint32\(1\);\nconst uint32 (l_\d+) = \6.i_0;\nconst uint32 (l_\d+) = \8 \^ \7;\nconst uint32 (l_\d+) = (l_arr_\d+)\[uint32\(0\)\];\nconst uint32 (l_\d+) = \10 & \9;\n\11\[uint32\(0\)\] = \12;\n")
def form(tmpl):
    def f(src):
        out, k = BALLOT.subn(lambda m: tmpl.format(arr=m.group(11), d=m.group(2), bit=f"{1 << int(m.group(3))}u", k=m.group(3), k31=31 - int(m.group(3))) + "\n", src)
        assert k % 128 == 0 and k > 0, k
        return out
    return f
ptx = form("{arr}[0] &= match_bit({d}, {bit});")
def ptxballot(src):
    return ptx(helpers(src))
SHIFT_LINE = "l_mut_12 = info.scalars_uint32[8];\nl_mut_13 = info.scalars_uint32[9];\nl_mut_14 = info.scalars_uint32[10];\nl_mut_12 = uint32(0);"
def shifted(src):
    assert SHIFT_LINE in src
    return src.replace(SHIFT_LINE, SHIFT_LINE.replace("l_mut_12 = uint32(0);", f"l_mut_12 = uint32({SHIFT});"))
DIG = re.compile(r"const uint32 (l_\d+) = (l_mut_\d+) >> l_mut_12;")
def shl(src):
    out, k = DIG.subn(lambda m: f"const uint32 {m.group(1)} = ({m.group(2)} << uint32({24 - SHIFT})) >> uint32(24);", shifted(src))
    assert k >= 32, k
    return out
def bfe(src):
    out, k = DIG.subn(lambda m: f"const uint32 {m.group(1)} = __funnelshift_r({m.group(2)}, 0u, {SHIFT}u);", shifted(src))
    assert k >= 32, k
    return out
variants = {
    "gen": shifted,
    "shl": shl,
    "funnel": bfe,
}
only = sys.argv[3].split(",") if len(sys.argv) > 3 else list(variants)
base = open(path).read()
threads = int(re.search(r"__launch_bounds__\((\d+)\)", base).group(1))
name_k = re.search(r"void __launch_bounds__\(\d+\)(\w+) \(", base).group(1)
for name in only:
    src = variants[name](base)
    open(f"/tmp/{name}.cu", "w").write(src)
    mod = cp.RawModule(code=src, options=("-I/usr/local/cuda/include", "--std=c++17", "-lineinfo"))
    fn = mod.get_function(name_k)
    smem = shared_bytes(src)
    fn.max_dynamic_shared_size_bytes = smem
    info = np.zeros(32, dtype=np.uint32)
    info[:11] = [n, T, T, T, 0, 1, 0, n, 0, 8, 0]
    infob = (ctypes.c_uint32 * 32)(*info.tolist())
    ptrs = [ctypes.c_void_p(a.data.ptr) for a in (keys, vals, out, vout, offsets, dummy, dummy)]
    params_ = (ctypes.c_void_p * 8)(*[ctypes.cast(ctypes.pointer(p), ctypes.c_void_p) for p in ptrs], ctypes.cast(infob, ctypes.c_void_p))
    def launch():
        r = libcuda.cuLaunchKernel(ctypes.c_void_p(fn.kernel.ptr), T, 1, 1, threads, 1, 1, smem, ctypes.c_void_p(cp.cuda.get_current_stream().ptr), params_, None)
        assert r == 0, r
    out[...] = 0
    launch(); cp.cuda.Device().synchronize()
    ok = bool(cp.all(out == expected))
    if F32:
        ok = ok and bool(cp.all(vout == vexpected))
    ts = timeit(launch)
    print(f"{name}: regs={fn.num_regs} smem={smem} ms=" + " ".join(f"{t:.4f}" for t in ts) + f" ok={ok}", flush=True)
print(f"copy again ms=" + " ".join(f"{t:.4f}" for t in timeit(copy)), flush=True)
