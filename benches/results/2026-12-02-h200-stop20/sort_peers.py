# Same-run peers of examples/bench_gpu_sort.rs: PyTorch and CuPy (CUB) on the same shapes.
import json, torch
try:
    import cupy
except Exception:
    cupy = None

def median_ms(f, reps=20):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); f(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[reps // 2]

def out(case, shape, ms):
    print(json.dumps({"peer": case, "shape": shape, "ms": round(ms, 4)}), flush=True)

N = 1 << 28
x = torch.randint(-2**31, 2**31 - 1, (N,), dtype=torch.int32, device="cuda")
out("torch.sort int32 keys", [N], median_ms(lambda: torch.sort(x)))
del x
f = torch.rand(N, device="cuda") * 2 - 1
out("torch.sort f32 stable (values+int64 indices)", [N], median_ms(lambda: torch.sort(f, stable=True)))
out("torch.argsort f32 stable", [N], median_ms(lambda: torch.argsort(f, stable=True)))
del f
if cupy is not None:
    u = cupy.random.randint(0, 2**32 - 1, size=N, dtype=cupy.uint32)
    out("cupy.sort uint32 (CUB)", [N], median_ms(lambda: cupy.sort(u)))
    del u
    cupy.get_default_memory_pool().free_all_blocks()
f = torch.rand(1 << 22, device="cuda")
out("torch.sort f32", [1 << 22], median_ms(lambda: torch.sort(f)))
r = torch.rand(16384, 4096, device="cuda") * 2 - 1
out("torch.sort rows f32 stable with indices", [16384, 4096], median_ms(lambda: torch.sort(r, dim=-1, stable=True)))
out("torch.topk k=50", [16384, 4096], median_ms(lambda: torch.topk(r, 50, dim=-1)))
s = torch.sort(torch.rand(1 << 20, device="cuda") * 2 - 1).values
q = torch.rand(1 << 24, device="cuda") * 2.2 - 1.1
out("torch.searchsorted f32", [1 << 24], median_ms(lambda: torch.searchsorted(s, q)))
