import torch
x = torch.randn(1 << 28, device="cuda")
y = torch.empty_like(x)
def t(f, reps=20):
    for _ in range(3): f()
    torch.cuda.synchronize()
    r = []
    for _ in range(3):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(reps): f()
        e.record(); torch.cuda.synchronize()
        r.append(s.elapsed_time(e) / reps)
    return " ".join(f"{v:.4f}" for v in r)
print("torch copy_ 2^28 f32 ms", t(lambda: y.copy_(x)))
print("torch.cumsum 2^28 f32 ms", t(lambda: torch.cumsum(x, 0)))
