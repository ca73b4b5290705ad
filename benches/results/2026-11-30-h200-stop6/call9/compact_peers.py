# PyTorch peers of bench_gpu_compact (same sizes; CUDA events; median of 20 samples of 5 calls
# after warm-up). Prints one JSON line per case.
import json, sys, torch
n = 1 << int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 28
dev = "cuda"
def med(f):
    for _ in range(3): f()
    torch.cuda.synchronize()
    s = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(5): f()
        b.record(); torch.cuda.synchronize()
        s.append(a.elapsed_time(b) / 5)
    s.sort(); return s[len(s) // 2]
g = torch.Generator(device=dev).manual_seed(0)
x = torch.rand(n, device=dev, generator=g) * 2 - 1
y = torch.empty_like(x)
copy = med(lambda: y.copy_(x))
def out(case, ms, extra=None):
    d = {"peer": "torch " + torch.__version__, "case": case, "n": n, "median_ms": round(ms, 4), "copy_ms": round(copy, 4)}
    if extra: d.update(extra)
    print(json.dumps(d), flush=True)
out("copy_f32", copy)
out("reduce_sum_f32", med(lambda: x.sum()))
m = torch.rand(n, device=dev, generator=g) < 0.5
out("masked_select_f32_50pct_mask_bool", med(lambda: torch.masked_select(x, m)))
out("nonzero_50pct_bool", med(lambda: torch.nonzero(m)))
del m
# Sorted keys with runs of mean length 4, as the Rust bench generates them.
k = torch.cumsum((torch.rand(n, device=dev, generator=g) < 0.25).to(torch.int32), 0, dtype=torch.int32)
out("unique_consecutive_i32_sorted", med(lambda: torch.unique_consecutive(k)))
out("unique_consecutive_counts_i32_sorted", med(lambda: torch.unique_consecutive(k, return_counts=True)),
    {"runs": int(torch.unique_consecutive(k).numel())})
