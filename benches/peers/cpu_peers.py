# The CPU peers of benches/cpu_ops.rs (the CPU path against NumPy and, where installed, PyTorch
# CPU), at the same sizes and on the same data: one JSON line per case, `ms` the median of
# `reps` calls (after one warm-up call), `min_ms` the best. The thread count is the
# environment's (OMP_NUM_THREADS / torch.set_num_threads, as the run sets it); NumPy's sorts and
# compactions run on one thread whatever it is.
#
#   OMP_NUM_THREADS=2 python3 benches/peers/cpu_peers.py [--small]
import json, os, sys, time
import numpy as np

try:
    import torch
except Exception:
    torch = None

SMALL = "--small" in sys.argv
N = 1 << 14 if SMALL else 1 << 24
ROWS, COLS = (16, 1024) if SMALL else (4096, 4096)
TK_ROWS, TK_COLS = (4, 1 << 12) if SMALL else (64, 1 << 16)
THREADS = int(os.environ.get("OMP_NUM_THREADS", os.cpu_count()))
if torch is not None:
    torch.set_num_threads(THREADS)


def timings(f, reps):
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append((time.perf_counter() - t) * 1e3)
    ts.sort()
    return ts[len(ts) // 2], ts[0]


def out(case, peer, f, reps=5):
    med, best = timings(f, reps)
    print(json.dumps({"case": case, "peer": peer, "threads": THREADS, "ms": round(med, 3), "min_ms": round(best, 3)}), flush=True)


def sz(n):
    return f"2^{n.bit_length() - 1}"


# The keys of benches/cpu_ops.rs: a multiplicative hash of the position.
i = np.arange(N, dtype=np.uint32)
u = (i * np.uint32(2654435761)) ^ (i >> np.uint32(7))
f = ((u >> np.uint32(8)).astype(np.float32) / np.float32(1 << 23) - np.float32(1.0)).astype(np.float32)
mask = ((u >> np.uint32(13)) & np.uint32(1)).astype(bool)
runs = (i >> np.uint32(4)).astype(np.uint32)


def keys_f32(n):
    j = np.arange(n, dtype=np.uint32)
    k = (j * np.uint32(2654435761)) ^ (j >> np.uint32(7))
    return ((k >> np.uint32(8)).astype(np.float32) / np.float32(1 << 23) - np.float32(1.0)).astype(np.float32)


m = keys_f32(ROWS * COLS).reshape(ROWS, COLS)
t = keys_f32(TK_ROWS * TK_COLS).reshape(TK_ROWS, TK_COLS)

out(f"copy_f32_{sz(N)}", "numpy.copy", lambda: f.copy())
out(f"sort_f32_{sz(N)}", "numpy.sort stable", lambda: np.sort(f, kind="stable"))
out(f"sort_u32_{sz(N)}", "numpy.sort stable", lambda: np.sort(u, kind="stable"))
out(f"sort_u32_{sz(N)}", "numpy.sort quicksort", lambda: np.sort(u))
out(f"argsort_f32_{sz(N)}", "numpy.argsort stable", lambda: np.argsort(f, kind="stable"))
out(f"sort_rows_f32_{ROWS}x{COLS}", "numpy.sort stable axis -1", lambda: np.sort(m, axis=-1, kind="stable"))
out(f"top64_f32_{TK_ROWS}x{TK_COLS}", "numpy.argpartition + argsort",
    lambda: [r[np.argsort(-r[p], kind="stable")] for r, p in
             ((row, np.argpartition(-row, 63)[:64]) for row in t)])
out(f"select_f32_{sz(N)}_half", "numpy f[mask]", lambda: f[mask])
out(f"nonzero_u8_{sz(N)}_half", "numpy.nonzero", lambda: np.nonzero(mask))
out(f"unique_consecutive_u32_{sz(N)}_runs16", "numpy.unique (sorts again)",
    lambda: np.unique(runs, return_inverse=True, return_counts=True))


def np_unique_consecutive(k):
    head = np.empty(k.shape, bool)
    head[0] = True
    np.not_equal(k[1:], k[:-1], out=head[1:])
    starts = np.flatnonzero(head)
    inv = np.cumsum(head, dtype=np.int64) - 1
    return k[starts], np.diff(np.append(starts, k.size)), inv


out(f"unique_consecutive_u32_{sz(N)}_runs16", "numpy heads + cumsum", lambda: np_unique_consecutive(runs))


def np_reduce_by_key(k, v):
    head = np.empty(k.shape, bool)
    head[0] = True
    np.not_equal(k[1:], k[:-1], out=head[1:])
    starts = np.flatnonzero(head)
    return k[starts], np.add.reduceat(v, starts)


out(f"reduce_by_key_sum_f32_{sz(N)}_runs16", "numpy heads + add.reduceat", lambda: np_reduce_by_key(runs, f))

if torch is not None:
    tf, tu, tm, tr = torch.from_numpy(f), torch.from_numpy(u.view(np.int32)), torch.from_numpy(mask), torch.from_numpy(runs.view(np.int32))
    tmat, ttk = torch.from_numpy(m), torch.from_numpy(t)
    tg = f"torch {torch.__version__}"
    out(f"copy_f32_{sz(N)}", f"{tg} clone", lambda: tf.clone())
    out(f"sort_f32_{sz(N)}", f"{tg} sort stable", lambda: torch.sort(tf, stable=True))
    out(f"sort_u32_{sz(N)}", f"{tg} sort stable (int32 keys)", lambda: torch.sort(tu, stable=True))
    out(f"argsort_f32_{sz(N)}", f"{tg} argsort stable", lambda: torch.argsort(tf, stable=True))
    out(f"sort_rows_f32_{ROWS}x{COLS}", f"{tg} sort stable dim -1", lambda: torch.sort(tmat, dim=-1, stable=True))
    out(f"top64_f32_{TK_ROWS}x{TK_COLS}", f"{tg} topk", lambda: torch.topk(ttk, 64, dim=-1))
    out(f"select_f32_{sz(N)}_half", f"{tg} masked_select", lambda: torch.masked_select(tf, tm))
    out(f"nonzero_u8_{sz(N)}_half", f"{tg} nonzero", lambda: torch.nonzero(tm))
    out(f"unique_consecutive_u32_{sz(N)}_runs16", f"{tg} unique_consecutive",
        lambda: torch.unique_consecutive(tr, return_inverse=True, return_counts=True))

    def t_reduce_by_key(k, v):
        uk, inv = torch.unique_consecutive(k, return_inverse=True)
        return uk, torch.zeros(uk.numel(), dtype=v.dtype).index_add_(0, inv, v)

    out(f"reduce_by_key_sum_f32_{sz(N)}_runs16", f"{tg} unique_consecutive + index_add_", lambda: t_reduce_by_key(tr, tf))
