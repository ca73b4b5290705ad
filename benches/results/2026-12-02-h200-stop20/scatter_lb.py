# Session 15: times cubecl's generated CUDA C++ of one radix scatter pass (u32 keys, 256 x 16,
# ballot ranking, digit 0), as generated and with its source edited, launched through the
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
dig = (ordered & 255).astype(cp.uint32)
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
BALLOT = re.compile(r"const uint32 (l_\d+) = (l_\d+) >> uint32\((\d)\);\nconst uint32 (l_\d+) = \1 & uint32\(1\);\nconst bool (l_\d+) = \4 == uint32\(1\);\n\nconst uint32_4 (l_\d+) = \{ __ballot_sync\(-1, \5\), 0, 0, 0 \};\nconst bool (l_\d+) = \4 == uint32\(1\);\nconst uint32 (l_\d+) = \(\7\) \? uint32\(0\) : uint32\(4294967295\);\nconst uint32 (l_\d+) = \6.i_0;\nconst uint32 (l_\d+) = \9 \^ \8;\nconst uint32 (l_\d+) = (l_arr_\d+)\[uint32\(0\)\];\nconst uint32 (l_\d+) = \11 & \10;\n\12\[uint32\(0\)\] = \13;\n")
def ptxballot(src):
    out, k = BALLOT.subn(lambda m: f"{m.group(12)}[0] &= match_bit({m.group(2)}, {1 << int(m.group(3))}u);\n", helpers(src))
    assert k == 128, k
    return out
def selballot(src):
    out, k = BALLOT.subn(lambda m: f"{{ const bool p_ = ({m.group(2)} & {1 << int(m.group(3))}u) != 0u; const uint32 m_ = __ballot_sync(-1, p_); {m.group(12)}[0] &= p_ ? m_ : ~m_; }}\n", src)
    assert k == 128, k
    return out
def form(tmpl):
    def f(src):
        out, k = BALLOT.subn(lambda m: tmpl.format(arr=m.group(12), d=m.group(2), bit=f"{1 << int(m.group(3))}u", k=m.group(3)) + "\n", src)
        assert k % 128 == 0 and k > 0, k
        return out
    return f
f_if = form("{{ const bool p_ = ({d} & {bit}) != 0u; uint32 m_ = __ballot_sync(-1, p_); if (!p_) {{ m_ = ~m_; }} {arr}[0] &= m_; }}")
f_xorbit = form("{{ const uint32 b_ = ({d} >> uint32({k})) & 1u; const uint32 m_ = __ballot_sync(-1, b_ != 0u); {arr}[0] &= m_ ^ (b_ - 1u); }}")
f_negbit = form("{{ const uint32 b_ = ({d} >> uint32({k})) & 1u; const uint32 m_ = __ballot_sync(-1, b_ != 0u); {arr}[0] &= ~(m_ ^ (0u - b_)); }}")
f_maskxor = form("{{ const bool p_ = ({d} & {bit}) != 0u; const uint32 m_ = __ballot_sync(-1, p_); {arr}[0] &= m_ ^ (p_ ? 0u : 4294967295u); }}")
def lb(k):
    return lambda s: s.replace("__launch_bounds__(256)", "__launch_bounds__(256, %d)" % k)
def nocheck(src):
    out, k = re.subn(r"const bool (l_\d+) = (l_\d+) < l_10;", r"const bool \1 = true;", src)
    out, k2 = re.subn(r"const bool (l_\d+) = (l_\d+) < info.scalars_uint32\[5\];", r"const bool \1 = true;", out)
    assert k >= 48 and k2 >= 16, (k, k2)
    return out
def params(src):
    for i, v in ((3, 1), (4, 0), (6, 0), (7, 8), (8, 0)):
        src = src.replace(f"info.scalars_uint32[{i}]", f"uint32({v})")
    return src
def some_params(idx):
    vals = {3: 1, 4: 0, 6: 0, 7: 8, 8: 0}
    def f(src):
        for i in idx:
            src = src.replace(f"info.scalars_uint32[{i}]", f"uint32({vals[i]})")
        return src
    return f
def merged(src):
    # starts[d] written by unit d, which also wrote firsts[d]: firsts[d] -= starts[d] there, and
    # the write phase reads firsts only.
    m = re.search(r"shared_memory_36\[(l_\d+)\] = (l_\d+);\n", src)
    src = src[:m.end()] + f"shared_memory_37[{m.group(1)}] -= {m.group(2)};\n" + src[m.end():]
    out, k = re.subn(r"const uint32 (l_\d+) = shared_memory_36\[l_\d+\];", r"const uint32 \1 = 0u;", src)
    assert k == 16, k
    return out
variants = {
    "asis": lambda s: s,
    "nocheck": nocheck,
    "params": params,
    "merged": merged,
    "ptxballot": ptxballot,
    "selballot": selballot,
    "nocheck_params_merged": lambda s: merged(params(nocheck(s))),
    "all_ptx": lambda s: ptxballot(merged(params(nocheck(s)))),
    "all_sel": lambda s: selballot(merged(params(nocheck(s)))),
    "nm": lambda s: merged(nocheck(s)),
    "nm_ptx": lambda s: ptxballot(merged(nocheck(s))),
    "npm_if": lambda s: f_if(merged(params(nocheck(s)))),
    "npm_xorbit": lambda s: f_xorbit(merged(params(nocheck(s)))),
    "npm_negbit": lambda s: f_negbit(merged(params(nocheck(s)))),
    "npm_maskxor": lambda s: f_maskxor(merged(params(nocheck(s)))),
    "nmx_stride": lambda s: f_xorbit(merged(some_params([3, 4])(nocheck(s)))),
    "nmx_stride_flip": lambda s: f_xorbit(merged(some_params([3, 4, 8])(nocheck(s)))),
    "nmx_stride_flip_bits": lambda s: f_xorbit(merged(some_params([3, 4, 7, 8])(nocheck(s)))),
    "nmx_shift_only": lambda s: f_xorbit(merged(some_params([6])(nocheck(s)))),
    "nmx": lambda s: f_xorbit(merged(nocheck(s))),
    "npm_xorbit_lb5": lambda s: lb(5)(f_xorbit(merged(params(nocheck(s))))),
    "asis_lb4": lb(4),
    "asis_lb5": lb(5),
    "nm_lb5": lambda s: lb(5)(merged(nocheck(s))),
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
    info = np.zeros(24, dtype=np.uint32)
    info[:10] = [n, T, T, 1, 0, n, 0, 8, 0, 0]
    infob = (ctypes.c_uint32 * 24)(*info.tolist())
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
