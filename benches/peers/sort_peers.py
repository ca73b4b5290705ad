# The sort peers (CuPy's CUB sort, torch.sort / argsort / topk), one JSON line per case:
# `ms` the median of 20 calls with CUDA events around each, `b2b_min` / `b2b_max` CUDA events
# around 20 calls back to back, / 20, the best and worst of three. Used by benches/run_gpu.sh.
import json, torch
try:
    import cupy
except Exception:
    cupy = None

def timings(f, reps=20):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); f(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    b2b = []
    for _ in range(3):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(reps):
            f()
        e.record(); torch.cuda.synchronize()
        b2b.append(s.elapsed_time(e) / reps)
    return ts[reps // 2], min(b2b), max(b2b)

def out(case, shape, t):
    print(json.dumps({"peer": case, "shape": shape, "ms": round(t[0], 4), "b2b_min": round(t[1], 4), "b2b_max": round(t[2], 4)}), flush=True)

N = 1 << 28
if cupy is not None:
    u = cupy.random.randint(0, 2**32 - 1, size=N, dtype=cupy.uint32)
    out("cupy.sort uint32 (CUB)", [N], timings(lambda: cupy.sort(u)))
    del u
    cupy.get_default_memory_pool().free_all_blocks()
    i = cupy.random.randint(-2**31, 2**31 - 1, size=N, dtype=cupy.int32)
    out("cupy.sort int32 (CUB)", [N], timings(lambda: cupy.sort(i)))
    del i
    cupy.get_default_memory_pool().free_all_blocks()
x = torch.randint(-2**31, 2**31 - 1, (N,), dtype=torch.int32, device="cuda")
out("torch.sort int32 keys", [N], timings(lambda: torch.sort(x)))
del x
f = torch.rand(N, device="cuda") * 2 - 1
out("torch.argsort f32 stable", [N], timings(lambda: torch.argsort(f, stable=True)))
del f
torch.cuda.empty_cache()
r = torch.rand(16384, 4096, device="cuda") * 2 - 1
out("torch.sort rows f32 stable with indices", [16384, 4096], timings(lambda: torch.sort(r, dim=-1, stable=True)))
out("torch.topk k=50", [16384, 4096], timings(lambda: torch.topk(r, 50, dim=-1)))
