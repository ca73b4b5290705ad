"""Peers of `bench_gpu recurrence` on a CUDA GPU: the linear recurrence
h[t] = a[t] * h[t-1] + b[t] (h[-1] = 0) along the last axis of f32 [rows, T], forward and
reverse (h[t] = a[t] * h[t+1] + b[t]), on the bench's shapes, by

  - "torch loop over t f32": h = a[:, t] * h + b[:, t], one addcmul per step (for T > 8192
    only the first 8192 steps are timed and the time scaled by T / 8192: the peer's name says
    "(8192 steps timed, extrapolated)");
  - "torch Hillis-Steele f32": the pair scan (a1, b1) o (a2, b2) = (a1 a2, a2 b1 + b2) in
    log2(T) steps of torch ops (addcmul / mul between shifted views, ping-pong buffers);
  - "accelerated_scan.ref f32 (torch tree)": accelerated-scan's Blelloch tree in torch ops;
  - "accelerated_scan.warp f32": accelerated-scan's CUDA kernel (compiled by nvcc through
    torch's load_inline at import; T a power of two from 32 to 65536), into a preallocated
    output;
  - "accelerated_scan.scalar f32 (triton)": its Triton kernel (tl.associative_scan in chunks of
    2048), into a preallocated output; forward only.

The reverse cases' peers end in " reverse". a is uniform in [0.5, 1), b in [-1, 1), as in the
bench. Before it is timed, each peer's output is checked on a few rows (the first, the last and
two between; only the timed steps for the extrapolated loop) against a float64 sequential
recurrence computed on the host: |h - ref| <= 1e-5 * (S + 1), S the same recurrence over |a|
and |b|. A peer that fails its check is reported without "ms"; one that cannot run (package
missing, shape unsupported, compile failure) with "skipped" and the reason.

accelerated-scan comes from a wheel given with --wheels (a .whl or a folder of them, e.g.
.dev/wheels from `pip download accelerated-scan ninja --no-deps -d .dev/wheels`): each wheel is
installed with `pip install --no-deps --no-index --target TMP`, or unpacked there if pip
refuses, and TMP put first on sys.path (ninja's binary on PATH when the machine has none:
torch's extension builder needs it). Nothing is fetched from the network.

Output: one JSON line per peer and shape, {"peer", "shape", "ms" (median of 20 calls, CUDA
events around each), "b2b_min" / "b2b_max" (20 calls back to back / 20, best and worst of
3), "check", "ok"}, to --out (what `benches/report merge --peers` reads) and to stdout, where
the compile logs of the CUDA extension go too.

    python3 benches/peers/recurrence_peers.py --wheels .dev/wheels --out /tmp/h100/recurrence_peers.jsonl
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import torch

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--wheels", help="accelerated-scan's wheel (and ninja's), or a folder of wheels")
ap.add_argument("--out", help="the JSON lines file (appended to)")
ap.add_argument("--small", action="store_true", help="the bench's --small shapes")
ap.add_argument("--only", help="the peers whose name contains TEXT")
args = ap.parse_args()

out_file = open(args.out, "a") if args.out else None


def emit(rec):
    line = json.dumps(rec)
    print(line, flush=True)
    if out_file:
        out_file.write(line + "\n")
        out_file.flush()


def note(msg):
    print(f"# {msg}", file=sys.stderr, flush=True)


dev = torch.device("cuda")
emit({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
      "cuda": torch.version.cuda})

# ---- accelerated-scan from a wheel, offline ---------------------------------------------
install_errors = {}


def install_wheels(path):
    wheels = sorted(glob.glob(os.path.join(path, "*.whl"))) if os.path.isdir(path) else [path]
    if not wheels:
        install_errors["wheels"] = f"no wheel in {path}"
        return
    target = tempfile.mkdtemp(prefix="recurrence_peers_")
    for whl in wheels:
        name = os.path.basename(whl).split("-")[0]
        if name == "ninja" and shutil.which("ninja"):
            continue
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                            "--target", target, whl], capture_output=True, text=True)
        if r.returncode == 0:
            note(f"installed {os.path.basename(whl)} into {target}")
            continue
        try:
            # A pure-Python wheel (ninja's binary is data) works unpacked.
            zipfile.ZipFile(whl).extractall(target)
            note(f"pip refused {os.path.basename(whl)} ({r.stderr.strip()[-200:]}); unpacked it")
        except Exception as e:
            install_errors[name] = f"pip: {r.stderr.strip()[-300:]}; unpack: {e!r}"
    sys.path.insert(0, target)
    for d in [os.path.join(target, "bin")] + glob.glob(os.path.join(target, "ninja-*.data", "scripts")):
        exe = os.path.join(d, "ninja")
        if os.path.isfile(exe) and not shutil.which("ninja"):
            os.chmod(exe, 0o755)
            os.environ["PATH"] = d + os.pathsep + os.environ.get("PATH", "")
            note(f"ninja from {d}")


if args.wheels:
    install_wheels(args.wheels)


def try_import(mod):
    """The module, or the reason it cannot be imported (as a string)."""
    try:
        return __import__(mod, fromlist=["_"])
    except BaseException as e:  # a failed nvcc build raises RuntimeError, a missing tool SystemExit
        why = f"import {mod} failed: {type(e).__name__}: {str(e).strip()[-400:]}"
        if install_errors:
            why += f" (wheel install: {install_errors})"
        if not args.wheels:
            why += " (no --wheels given)"
        return why


acc_ref = try_import("accelerated_scan.ref")
# Compiles the CUDA extension with nvcc (a few minutes the first time; cached in
# ~/.cache/torch_extensions or $TORCH_EXTENSIONS_DIR).
acc_warp = try_import("accelerated_scan.warp")
acc_scalar = try_import("accelerated_scan.scalar")
for m, mod in (("ref", acc_ref), ("warp", acc_warp), ("scalar", acc_scalar)):
    note(f"accelerated_scan.{m}: {mod if isinstance(mod, str) else 'ok'}")

# ---- the peers ---------------------------------------------------------------------------
LOOP_STEPS = 8192


def torch_loop(a, b, rev, steps=None):
    """h = a[:, t] * h + b[:, t] for t in order; with `steps`, only the first `steps` of them."""
    rows, T = a.shape
    out = torch.empty_like(b)
    h = torch.zeros(rows, device=a.device, dtype=a.dtype)
    order = range(T - 1, -1, -1) if rev else range(T)
    if steps is not None:
        order = order[:steps]
    for t in order:
        torch.addcmul(b[:, t], a[:, t], h, out=out[:, t])
        h = out[:, t]
    return out


def hillis_steele(a, b, rev):
    """Inclusive scan of the pairs (a, b) by doubling distances: after the step of distance d,
    (A[t], B[t]) composes the pairs t-2d+1 ..= t (reverse: t ..= t+2d-1)."""
    T = a.shape[1]
    A, B = a, b
    bufs = [(torch.empty_like(a), torch.empty_like(b)), (torch.empty_like(a), torch.empty_like(b))]
    d, k = 1, 0
    while d < T:
        A2, B2 = bufs[k]
        last = 2 * d >= T
        if not rev:
            # B[t] = A[t] * B[t-d] + B[t]; A[t] = A[t] * A[t-d]; t < d unchanged.
            torch.addcmul(B[:, d:], A[:, d:], B[:, :-d], out=B2[:, d:])
            B2[:, :d].copy_(B[:, :d])
            if not last:
                torch.mul(A[:, d:], A[:, :-d], out=A2[:, d:])
                A2[:, :d].copy_(A[:, :d])
        else:
            torch.addcmul(B[:, :-d], A[:, :-d], B[:, d:], out=B2[:, :-d])
            B2[:, -d:].copy_(B[:, -d:])
            if not last:
                torch.mul(A[:, :-d], A[:, d:], out=A2[:, :-d])
                A2[:, -d:].copy_(A[:, -d:])
        A, B = A2, B2
        d, k = 2 * d, 1 - k
    return B


def peers_for(a, b, rev):
    """(name, fn, columns it computes, scale factor of its time) or (name, reason skipped)."""
    rows, T = a.shape
    sfx = " reverse" if rev else ""
    out = []
    if T > LOOP_STEPS:
        out.append((f"torch loop over t f32 ({LOOP_STEPS} steps timed, extrapolated){sfx}",
                    lambda: torch_loop(a, b, rev, LOOP_STEPS), LOOP_STEPS, T / LOOP_STEPS))
    else:
        out.append((f"torch loop over t f32{sfx}", lambda: torch_loop(a, b, rev), T, 1.0))
    out.append((f"torch Hillis-Steele f32{sfx}", lambda: hillis_steele(a, b, rev), T, 1.0))
    a3, b3 = a[None], b[None]  # accelerated-scan's [batch, channels, T]
    name = f"accelerated_scan.ref f32 (torch tree){sfx}"
    if isinstance(acc_ref, str):
        out.append((name, acc_ref))
    else:
        out.append((name, lambda: acc_ref.scan(a3, b3, reverse=rev)[0], T, 1.0))
    name = f"accelerated_scan.warp f32{sfx}"
    if isinstance(acc_warp, str):
        out.append((name, acc_warp))
    elif not (32 <= T <= 65536 and T & (T - 1) == 0):
        out.append((name, f"T = {T}: its kernel takes T a power of two from 32 to 65536"))
    elif rows > 65535:
        out.append((name, f"{rows} rows: its grid's y dimension holds 65535"))
    else:
        h3 = torch.empty_like(b3)
        out.append((name, lambda: acc_warp.warpscan_forward(a3, b3, h3, rev)[0], T, 1.0))
    name = f"accelerated_scan.scalar f32 (triton){sfx}"
    if isinstance(acc_scalar, str):
        out.append((name, acc_scalar))
    elif rev:
        out.append((name, "its Triton kernel runs forward only"))
    elif rows > 65535:
        out.append((name, f"{rows} rows: its grid's y dimension holds 65535"))
    else:
        h3s = torch.empty_like(b3)

        def scalar():
            acc_scalar.forward_scan[(1, rows)](a3, b3, h3s, seqlen=T, enable_fp_fusion=False)
            return h3s[0]

        out.append((name, scalar, T, 1.0))
    return out


# ---- checks and timing -------------------------------------------------------------------
def reference(a, b, rows, rev, cols):
    """float64 h and S (the recurrence over |a|, |b|) on `rows`, the first `cols` steps in
    scan order, computed on the host one element after the other."""
    refs = {}
    for r in rows:
        av = a[r].double().cpu().tolist()
        bv = b[r].double().cpu().tolist()
        if rev:
            av.reverse()
            bv.reverse()
        h = s = 0.0
        hs, ss = [], []
        for x, y in zip(av[:cols], bv[:cols]):
            h = x * h + y
            s = abs(x) * s + abs(y)
            hs.append(h)
            ss.append(s)
        refs[r] = (hs, ss)
    return refs


def check(h, refs, rev, cols, tol=1e-5):
    worst, ok = 0.0, True
    for r, (want, scale) in refs.items():
        got = h[r].double().cpu()
        got = (got.flip(0) if rev else got)[:cols]
        w = torch.tensor(want[:cols], dtype=torch.float64)
        s = torch.tensor(scale[:cols], dtype=torch.float64)
        e = ((got - w).abs() / (s + 1)).max().item()
        if not e <= tol:  # NaN fails
            ok = False
        worst = max(worst, e if e == e else float("inf"))
    return worst, ok


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


if args.small:
    cases = [((64, 4096), False), ((4, 1 << 17), False), ((64, 4096), True)]
else:
    cases = [((4096, 4096), False), ((16384, 4096), False), ((64, 1 << 20), False),
             ((4096, 4096), True)]

gen = torch.Generator(device=dev)
gen.manual_seed(40)
with torch.inference_mode():
    for (rows, T), rev in cases:
        a = torch.rand(rows, T, device=dev, generator=gen) * 0.5 + 0.5
        b = torch.rand(rows, T, device=dev, generator=gen) * 2 - 1
        check_rows = sorted({0, rows // 3, (2 * rows) // 3, rows - 1})
        refs = {}
        for p in peers_for(a, b, rev):
            name, shape = p[0], [rows, T]
            if args.only and args.only not in name:
                continue
            if len(p) == 2:
                emit({"peer": name, "shape": shape, "skipped": p[1]})
                continue
            _, f, cols, factor = p
            try:
                if cols not in refs:
                    refs[cols] = reference(a, b, check_rows, rev, cols)
                h = f()
                torch.cuda.synchronize()
                worst, ok = check(h, refs[cols], rev, cols)
                del h
                # The loop launches one kernel a step: fewer calls.
                reps = 3 if name.startswith("torch loop") else 20
                ms, lo, hi = (t * factor for t in timings(f, reps))
            except Exception as e:
                emit({"peer": name, "shape": shape, "skipped": f"{type(e).__name__}: {str(e).strip()[-400:]}"})
                torch.cuda.empty_cache()
                continue
            what = f"max err {worst:.1e} of (S + 1) on rows {check_rows}"
            if cols < T:
                what += f", the {cols} timed steps"
            rec = {"peer": name, "shape": shape}
            if ok:
                rec["ms"] = round(ms, 4)
            else:
                rec["ms_unchecked"] = round(ms, 4)  # not read by benches/report
            rec.update({"b2b_min": round(lo, 4), "b2b_max": round(hi, 4), "check": what, "ok": ok})
            emit(rec)
        del a, b
        torch.cuda.empty_cache()
