"""Forward + backward of cumsum along rows and of top-k (k = 50) over [16384, 4096] f32 in
PyTorch on CUDA: the peer of `bench_burn --grad` (same formulation: loss = sum(w * f(x)),
then backward). CUDA events, median of the repetitions after a warm-up; the copy floor
(x.clone()) from the same process. Prints one JSON object.

    python3 benches/peers/torch_grad.py [--rows 16384] [--cols 4096] [--reps 30]
"""
import argparse
import json

import torch


def median_ms(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=16384)
    p.add_argument("--cols", type=int, default=4096)
    p.add_argument("--k", type=int, default=50)
    p.add_argument("--reps", type=int, default=30)
    a = p.parse_args()
    torch.manual_seed(0)
    x = torch.randn(a.rows, a.cols, device="cuda", requires_grad=True)
    w = torch.randn(a.rows, a.cols, device="cuda")
    wk = w[:, : a.k].contiguous()

    def cumsum():
        (torch.cumsum(x, 1) * w).sum().backward()
        x.grad = None

    def topk():
        (torch.topk(x, a.k, dim=1).values * wk).sum().backward()
        x.grad = None

    def copy():
        x.detach().clone()

    # Correctness of the peer's own gradients (fresh data, one row checked on the host).
    (torch.cumsum(x, 1) * w).sum().backward()
    g = x.grad[0].double().cpu()
    want = torch.flip(torch.cumsum(torch.flip(w[0].double().cpu(), [0]), 0), [0])
    assert torch.allclose(g, want, rtol=1e-4, atol=1e-3), "torch cumsum gradient"
    x.grad = None

    out = {
        "card": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "shape": [a.rows, a.cols],
        "k": a.k,
        "copy_ms": median_ms(copy, a.reps),
        "cumsum_fwd_bwd_ms": median_ms(cumsum, a.reps),
        "topk_fwd_bwd_ms": median_ms(topk, a.reps),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
