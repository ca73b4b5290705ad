//! burn's built-ins against cubeprim's methods on burn tensors: same device, same run, same
//! backend type (the fused default, `burn::backend::Cuda` or `burn::backend::Wgpu`).
//!
//! ```text
//! cargo run --release --features cuda,burn-fusion,burn-ndarray,burn-autodiff,bench-tools --example bench_burn [-- --reps 15 --small]
//! ```
//!
//! Each figure is the median over `--reps` repetitions (after a warm-up and a sync) of the
//! time per call. Every side of a comparison (burn's built-in, cubeprim's method, the copy) is
//! timed the same way: a repetition issues `k` back-to-back calls and syncs once, each side's
//! `k` found by doubling until its repetition lasts at least 2 ms (1 for calls slower than that,
//! at most 256), and the sides' repetitions alternate. Outputs stay alive
//! until the sync. `copy` is an element-wise `x * 1` of the same tensor (one read, one write):
//! the bandwidth line.
//!
//! `--grad` times forward + backward through `Autodiff<B>` (cumsum along rows and top-k k = 50
//! over `[16384, 4096]`, `--small`: `[256, 4096]`), burn's built-ins against cubeprim's
//! methods; `benches/peers/torch_grad.py` is PyTorch's side.
//!
//! `--overhead` times back-to-back calls of `prim_cumsum`, of `x.clone() * 1.0` and of the scan
//! called directly (`cubeprim::scan` and `scan_into`, no burn), one sync per 1000 (100 on the
//! large shapes), on `[4, 64]` (the host-side cost per call), `[1024, 4096]` and `[64, 65536]`,
//! wall time and host issue time. `--plain` adds the unfused `CubeBackend` after the fused one.
//!
//! The backends are those of the build: with `--features cuda` the CUDA ones (or NdArray where
//! no CUDA device is found), without it the wgpu ones (or NdArray). One runtime per build, since
//! each backend type compiles its own copy of burn's and cubeprim's launches (it needs the
//! feature `bench-tools`; CI does not build it).

use burn::tensor::backend::Backend;
use burn::tensor::{Distribution, ElementConversion, Tensor};
use cubeprim::burn::prelude::*;
use std::any::Any;
use std::time::Instant;

/// One side of a comparison: a call whose output is kept until the sync.
type Call<'a> = Box<dyn FnMut() -> Box<dyn Any> + 'a>;

/// Makes the direct call (no burn) on a tensor of this shape.
type Direct = fn([usize; 2]) -> (Call<'static>, Call<'static>);

/// A call of `f`, its output boxed.
fn call<'a, T: 'static>(mut f: impl FnMut() -> T + 'a) -> Call<'a> {
    Box::new(move || Box::new(f()) as Box<dyn Any>)
}

/// Seconds per call of `k` back-to-back calls and one sync.
fn rep<B: Backend>(dev: &B::Device, k: usize, f: &mut Call<'_>) -> f64 {
    let t = Instant::now();
    let outs: Vec<Box<dyn Any>> = (0..k).map(|_| f()).collect();
    B::sync(dev).expect("sync");
    let s = t.elapsed().as_secs_f64() / k as f64;
    drop(outs);
    s
}

/// Median seconds per call of each side. Each side's `k` (calls per sync) is found by doubling
/// from 1 until one repetition lasts at least 2 ms (at most 256 calls): a `k` picked from one
/// synced call would count the sync's latency in every call of a fast op.
fn time<B: Backend>(dev: &B::Device, reps: usize, mut sides: Vec<Call<'_>>) -> Vec<f64> {
    let ks: Vec<usize> = sides
        .iter_mut()
        .map(|f| {
            rep::<B>(dev, 1, f); // warm-up (compilation, autotune)
            let mut k = 1;
            while k < 256 && rep::<B>(dev, k, f) * (k as f64) < 2e-3 {
                k *= 2;
            }
            k
        })
        .collect();
    let mut per_call = vec![Vec::new(); sides.len()];
    for _ in 0..reps.max(1) {
        for ((f, t), &k) in sides.iter_mut().zip(&mut per_call).zip(&ks) {
            t.push(rep::<B>(dev, k, f));
        }
    }
    per_call
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect()
}

fn scalar<B: Backend>(t: Tensor<B, 1>) -> f64 {
    t.into_data().convert::<f64>().to_vec::<f64>().unwrap()[0]
}

/// Largest difference between two results, relative to the largest magnitude.
fn max_rel_diff<B: Backend, const D: usize>(a: Tensor<B, D>, b: Tensor<B, D>) -> f64 {
    let scale = scalar(a.clone().abs().max());
    scalar((a - b).abs().max()) / scale.max(1e-30)
}

fn header() {
    println!(
        "{:<9} {:>14} {:>12} {:>12} {:>9} {:>10} {:>8}",
        "op", "shape", "burn_us", "cubeprim_us", "speedup", "copy_us", "vs_copy"
    );
}

fn line(name: &str, shape: &[usize], t_burn: f64, t_prim: f64, copy: f64, check: &str) {
    println!(
        "{:<9} {:>14} {:>12.1} {:>12.1} {:>8.1}x {:>10.1} {:>7.2}x   ({check})",
        name,
        format!("{shape:?}"),
        t_burn * 1e6,
        t_prim * 1e6,
        t_burn / t_prim,
        copy * 1e6,
        t_prim / copy,
    );
}

/// Times burn's built-in, cubeprim's method and the copy of `x` the same way; prints a line.
#[allow(clippy::too_many_arguments)]
fn compare<B: Backend, const D: usize, T: 'static, U: 'static>(
    dev: &B::Device,
    reps: usize,
    name: &str,
    x: &Tensor<B, D>,
    burn_op: impl FnMut() -> T,
    prim_op: impl FnMut() -> U,
    check: &str,
) {
    let copy = || x.clone() * 1.0;
    let t = time::<B>(dev, reps, vec![call(burn_op), call(prim_op), call(copy)]);
    line(name, &x.dims(), t[0], t[1], t[2], check);
}

type Pair<B> = (
    fn(Tensor<B, 2>) -> Tensor<B, 2>,
    fn(Tensor<B, 2>) -> Tensor<B, 2>,
);

fn scans<B: PrimBackend>(dev: &B::Device, reps: usize, shape: [usize; 2]) {
    let x = Tensor::<B, 2>::random(shape, Distribution::Uniform(0.5, 1.5), dev);
    let ops: [(&str, Pair<B>); 4] = [
        ("cumsum", (|x| x.cumsum(1), |x| x.prim_cumsum(1))),
        ("cumprod", (|x| x.cumprod(1), |x| x.prim_cumprod(1))),
        ("cummax", (|x| x.cummax(1), |x| x.prim_cummax(1))),
        ("cummin", (|x| x.cummin(1), |x| x.prim_cummin(1))),
    ];
    for (name, (burn_op, prim_op)) in ops {
        // Products of thousands of factors in [0.5, 1.5) underflow: compare a short prefix.
        let p = x.clone().slice([0..shape[0], 0..shape[1].min(64)]);
        let diff = max_rel_diff(burn_op(p.clone()), prim_op(p));
        let diff = if name == "cumprod" {
            diff
        } else {
            diff.max(max_rel_diff(burn_op(x.clone()), prim_op(x.clone())))
        };
        let check = format!("max rel diff {diff:.1e}");
        let (b, p) = (|| burn_op(x.clone()), || prim_op(x.clone()));
        compare(dev, reps, name, &x, b, p, &check);
    }
}

fn sorts<B: PrimBackend, const D: usize>(dev: &B::Device, reps: usize, shape: [usize; D]) {
    let x = Tensor::<B, D>::random(shape, Distribution::Uniform(-1.0, 1.0), dev);
    let d = D - 1;
    let same = scalar((x.clone().sort(d) - x.clone().prim_sort(d)).abs().max());
    let check = format!("max abs diff {same:.1e}");
    let (b, p) = (|| x.clone().sort(d), || x.clone().prim_sort(d));
    compare(dev, reps, "sort", &x, b, p, &check);
    // Argsort: compare the values the two permutations pick (ties may order differently).
    let picked = |i| x.clone().gather(d, i);
    let same = scalar(
        (picked(x.clone().argsort(d)) - picked(x.clone().prim_argsort(d)))
            .abs()
            .max(),
    );
    let check = format!("max abs diff of picked {same:.1e}");
    let (b, p) = (|| x.clone().argsort(d), || x.clone().prim_argsort(d));
    compare(dev, reps, "argsort", &x, b, p, &check);
}

/// burn's `argwhere` (its bool `nonzero` in one tensor) against `prim_nonzero` on the same
/// mask (half the elements set). Both read the count back: every call syncs.
fn nonzero<B: PrimBackend, const D: usize>(dev: &B::Device, reps: usize, shape: [usize; D]) {
    let x = Tensor::<B, D>::random(shape, Distribution::Uniform(-1.0, 1.0), dev);
    let mask = x.clone().greater_elem(0.0);
    let (a, b) = (mask.clone().argwhere(), mask.clone().prim_nonzero());
    let same = a.dims() == b.dims() && a.not_equal(b).int().sum().into_scalar().elem::<i64>() == 0;
    let check = format!("same indices {same}");
    let (b, p) = (|| mask.clone().argwhere(), || mask.clone().prim_nonzero());
    compare(dev, reps, "nonzero", &x, b, p, &check);
}

/// Cost per call of `prim_cumsum`, `x * 1` and the scan called directly (`cubeprim::scan` on
/// the runtime, no burn; and `cubeprim::scan_into` a preallocated output), 1000 back-to-back
/// calls per sync (100 on the large shape), median of `reps`; on `[4, 64]` (host-bound: the
/// per-call overhead), `[1024, 4096]` and `[64, 65536]`. Each figure is given twice: the wall
/// time per call up to the sync, and the host time per call to issue them (before the sync).
fn overhead<B: PrimBackend>(dev: &B::Device, backend: &str, reps: usize, direct: Direct) {
    for shape in [[4, 64], [1024, 4096], [64, 65536]] {
        let x = Tensor::<B, 2>::random(shape, Distribution::Uniform(0.5, 1.5), dev);
        let (scan, scan_into) = direct(shape);
        let mut sides = [
            call(|| x.clone().prim_cumsum(1)),
            call(|| x.clone() * 1.0),
            scan,
            scan_into,
        ];
        let k = if shape[0] * shape[1] > 1 << 16 {
            100
        } else {
            1000
        };
        for f in &mut sides {
            rep::<B>(dev, 10, f);
        }
        let mut t = vec![Vec::new(); sides.len()];
        let mut issue = vec![Vec::new(); sides.len()];
        for _ in 0..reps.max(1) {
            for ((f, t), i) in sides.iter_mut().zip(&mut t).zip(&mut issue) {
                let start = Instant::now();
                let outs: Vec<Box<dyn Any>> = (0..k).map(|_| f()).collect();
                i.push(start.elapsed().as_secs_f64() / k as f64);
                B::sync(dev).expect("sync");
                t.push(start.elapsed().as_secs_f64() / k as f64);
                drop(outs);
            }
        }
        let median = |t: &mut Vec<f64>| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2] * 1e6
        };
        let names = [
            "prim_cumsum",
            "x * 1.0",
            "cubeprim::scan",
            "cubeprim::scan_into",
        ];
        print!("# backend {backend}: {shape:?} f32, {k} calls per sync, median of {reps}, us/call (wall / host issue):");
        for ((name, t), i) in names.iter().zip(&mut t).zip(&mut issue) {
            print!(" {name} {:.2} / {:.2};", median(t), median(i));
        }
        println!();
    }
}

fn bench<B: PrimBackend>(dev: &B::Device, backend: &str, reps: usize, small: bool) {
    println!("# backend {backend}, f32, last dim, median of {reps} reps, time per call");
    header();
    let scan_shapes: &[[usize; 2]] = if small {
        &[[64, 4096]]
    } else {
        &[[1024, 4096], [64, 65536]]
    };
    for &s in scan_shapes {
        scans::<B>(dev, reps, s);
    }
    if small {
        sorts::<B, 1>(dev, reps, [1 << 14]);
        sorts::<B, 2>(dev, reps, [16, 1024]);
        nonzero::<B, 2>(dev, reps, [64, 1024]);
    } else {
        sorts::<B, 1>(dev, reps, [1 << 22]);
        sorts::<B, 2>(dev, reps, [64, 32000]);
        nonzero::<B, 1>(dev, reps, [1 << 24]);
        nonzero::<B, 2>(dev, reps, [1024, 4096]);
    }
}

/// `rows x cols` f32, each row a shuffle of `cols` distinct values of spacing 1/512 around 0.
fn distinct_rows([rows, cols]: [usize; 2]) -> Vec<f32> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut out = Vec::with_capacity(rows * cols);
    for _ in 0..rows {
        let mut row: Vec<f32> = (0..cols)
            .map(|i| (i as f32 - cols as f32 / 2.0) / 512.0)
            .collect();
        for i in (1..cols).rev() {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            row.swap(i, (s % (i as u64 + 1)) as usize);
        }
        out.extend(row);
    }
    out
}

/// Forward + backward through `Autodiff<B>` (`--grad`): `sum(w * f(x))` then `backward()`,
/// for `f` = cumsum along rows and top-k (k = 50) values, burn's built-in (for top-k a sort cut
/// to k columns: burn-autodiff has no top-k) against cubeprim's method; the gradients compared. The copy is `x * 1` on the inner backend.
fn grads<B: burn::tensor::backend::AutodiffBackend + PrimBackend>(
    dev: &B::Device,
    reps: usize,
    shape: [usize; 2],
    k: usize,
) {
    println!("# forward + backward, Autodiff, f32 {shape:?}, median of {reps} reps, time per call");
    header();
    // Distinct values in every row (a shuffled ramp): with ties, top-k's gradient depends on
    // which of the equal values each side keeps (cubeprim the lower index, burn's sort its
    // own order), and N(0, 1) draws of [16384, 4096] f32 tie a few times among the top 50
    // rows (the check read 3.8e-1 on them, H100, 2026-12-07).
    let x = Tensor::<B, 2>::from_data(
        burn::tensor::TensorData::new(distinct_rows(shape), shape),
        dev,
    )
    .require_grad();
    let w = Tensor::<B, 2>::random(shape, Distribution::Normal(0.0, 1.0), dev);
    let wk = w.clone().slice([0..shape[0], 0..k]);
    let inner = x.clone().inner();
    let grad_of = |y: Tensor<B, 2>, w: &Tensor<B, 2>| {
        let g = (y * w.clone()).sum().backward();
        x.grad(&g).expect("a gradient")
    };
    type Side<B> = fn(Tensor<B, 2>, usize) -> Tensor<B, 2>;
    type Case<'a, B> = (&'a str, Side<B>, Side<B>, &'a Tensor<B, 2>);
    let cases: [Case<B>; 2] = [
        ("cumsum+bw", |x, _| x.cumsum(1), |x, _| x.prim_cumsum(1), &w),
        // burn-autodiff 0.21 has no `topk` (`float_topk` is unimplemented!): its built-in with
        // a gradient is a descending sort cut to k columns.
        (
            "topk+bw",
            |x, k| {
                let rows = x.dims()[0];
                x.sort_descending(1).slice([0..rows, 0..k])
            },
            |x, k| x.prim_topk(k, 1),
            &wk,
        ),
    ];
    for (name, burn_op, prim_op, w) in cases {
        let (gb, gp) = (
            grad_of(burn_op(x.clone(), k), w),
            grad_of(prim_op(x.clone(), k), w),
        );
        let diff = max_rel_diff(gb, gp);
        let check = format!("gradient max rel diff {diff:.1e}");
        let t = time::<B>(
            dev,
            reps,
            vec![
                call(|| grad_of(burn_op(x.clone(), k), w)),
                call(|| grad_of(prim_op(x.clone(), k), w)),
                call(|| inner.clone() * 1.0),
            ],
        );
        line(name, &shape, t[0], t[1], t[2], &check);
    }
}

/// The benchmark, or with `direct` (`--overhead`) the per-call overhead.
fn run<B: PrimBackend>(
    dev: &B::Device,
    backend: &str,
    reps: usize,
    small: bool,
    direct: Option<Direct>,
) {
    match direct {
        Some(d) => overhead::<B>(dev, backend, reps, d),
        None => bench::<B>(dev, backend, reps, small),
    }
}

/// The scan kernel called directly on runtime `R` (no burn): the floor of the adapter path.
/// First allocating its output (`cubeprim::scan`), then into a preallocated one.
fn direct<R: cubecl::Runtime>(shape: [usize; 2]) -> (Call<'static>, Call<'static>) {
    let client = R::client(&Default::default());
    let n = shape[0] * shape[1];
    let host: Vec<f32> = (0..n).map(|i| 1.0 + (i % 7) as f32 * 0.1).collect();
    let x = cubeprim::DeviceTensor::<R>::from_slice(&client, &host, &shape).unwrap();
    let out = cubeprim::DeviceTensor::<R>::empty(&client, &shape, cubeprim::DType::F32);
    let mut ws = cubeprim::Workspace::new();
    let mut ws2 = cubeprim::Workspace::new();
    let opts = ScanOptions::default();
    let (c, x2) = (client.clone(), x.clone());
    (
        call(move || cubeprim::scan(&client, &x, 1, ScanOp::Sum, opts, &mut ws).expect("scan")),
        call(move || {
            cubeprim::scan_into(&c, &x2, &out, None, 1, ScanOp::Sum, opts, &mut ws2)
                .expect("scan_into")
        }),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let reps = args
        .iter()
        .position(|a| a == "--reps")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let small = args.iter().any(|a| a == "--small");
    let ovh = args.iter().any(|a| a == "--overhead");
    // `--plain`: the unfused `CubeBackend` too (after the fused default).
    let plain = args.iter().any(|a| a == "--plain");
    if args.iter().any(|a| a == "--grad") {
        let shape = if small { [256, 4096] } else { [16384, 4096] };
        match cubeprim::device::best_backend() {
            #[cfg(feature = "cuda")]
            cubeprim::device::Backend::Cuda => {
                grads::<burn::backend::Autodiff<burn::backend::Cuda>>(
                    &Default::default(),
                    reps,
                    shape,
                    50,
                )
            }
            #[cfg(all(feature = "wgpu", not(feature = "cuda")))]
            cubeprim::device::Backend::Wgpu => {
                grads::<burn::backend::Autodiff<burn::backend::Wgpu>>(
                    &Default::default(),
                    reps,
                    shape,
                    50,
                )
            }
            _ => grads::<burn::backend::Autodiff<burn::backend::NdArray>>(
                &Default::default(),
                reps,
                shape,
                50,
            ),
        }
        return;
    }
    match cubeprim::device::best_backend() {
        #[cfg(feature = "cuda")]
        cubeprim::device::Backend::Cuda => {
            let d = ovh.then_some(direct::<cubecl::cuda::CudaRuntime> as Direct);
            run::<burn::backend::Cuda>(&Default::default(), "Cuda (fusion)", reps, small, d);
            if plain {
                type Plain = burn_cubecl::CubeBackend<cubecl::cuda::CudaRuntime, f32, i32, u8>;
                run::<Plain>(&Default::default(), "CubeBackend<Cuda>", reps, small, d);
            }
        }
        #[cfg(all(feature = "wgpu", not(feature = "cuda")))]
        cubeprim::device::Backend::Wgpu => {
            let d = ovh.then_some(direct::<cubecl::wgpu::WgpuRuntime> as Direct);
            run::<burn::backend::Wgpu>(&Default::default(), "Wgpu (fusion)", reps, small, d);
            if plain {
                type Plain = burn_cubecl::CubeBackend<cubecl::wgpu::WgpuRuntime, f32, i32, u32>;
                run::<Plain>(&Default::default(), "CubeBackend<Wgpu>", reps, small, d);
            }
        }
        _ => run::<burn::backend::NdArray>(
            &Default::default(),
            "burn::backend::NdArray",
            reps,
            small,
            None,
        ),
    }
}
