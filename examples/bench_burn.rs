//! burn's built-ins against cubeprim's methods on burn tensors: same device, same run, same
//! backend type (the fused default, `burn::backend::Cuda` or `burn::backend::Wgpu`).
//!
//! ```text
//! cargo run --release --features cuda,burn --example bench_burn [-- --reps 15 --small]
//! ```
//!
//! Each figure is the median over `--reps` repetitions (after a warm-up and a sync) of the
//! time per call; a repetition issues `k` calls and syncs once, with `k` chosen so that a
//! repetition lasts about 2 ms (1 for slow calls). Outputs stay alive until the sync. `copy`
//! is an element-wise `x * 1` of the same tensor (one read, one write): the bandwidth line.

use burn::tensor::backend::Backend;
use burn::tensor::{Distribution, Tensor};
use cubeprim::burn::prelude::*;
use std::time::{Duration, Instant};

/// Median seconds per call of `f`.
fn time<B: Backend, T>(dev: &B::Device, reps: usize, mut f: impl FnMut() -> T) -> f64 {
    let warm = f();
    B::sync(dev).expect("sync");
    drop(warm);
    let t = Instant::now();
    let one = f();
    B::sync(dev).expect("sync");
    let single = t.elapsed();
    drop(one);
    let k = (Duration::from_millis(2).as_secs_f64() / single.as_secs_f64().max(1e-7))
        .ceil()
        .clamp(1.0, 200.0) as usize;
    let mut per_call: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let t = Instant::now();
            let outs: Vec<T> = (0..k).map(|_| f()).collect();
            B::sync(dev).expect("sync");
            let s = t.elapsed().as_secs_f64() / k as f64;
            drop(outs);
            s
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    per_call[per_call.len() / 2]
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

type Pair<B> = (
    fn(Tensor<B, 2>) -> Tensor<B, 2>,
    fn(Tensor<B, 2>) -> Tensor<B, 2>,
);

fn scans<B: PrimBackend>(dev: &B::Device, reps: usize, shape: [usize; 2]) {
    let x = Tensor::<B, 2>::random(shape, Distribution::Uniform(0.5, 1.5), dev);
    let copy = time::<B, _>(dev, reps, || x.clone() * 1.0);
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
        let t_burn = time::<B, _>(dev, reps, || burn_op(x.clone()));
        let t_prim = time::<B, _>(dev, reps, || prim_op(x.clone()));
        line(
            name,
            &shape,
            t_burn,
            t_prim,
            copy,
            &format!("max rel diff {diff:.1e}"),
        );
    }
}

fn sorts<B: PrimBackend, const D: usize>(dev: &B::Device, reps: usize, shape: [usize; D]) {
    let x = Tensor::<B, D>::random(shape, Distribution::Uniform(-1.0, 1.0), dev);
    let copy = time::<B, _>(dev, reps, || x.clone() * 1.0);
    let d = D - 1;
    let same = scalar((x.clone().sort(d) - x.clone().prim_sort(d)).abs().max());
    let t_burn = time::<B, _>(dev, reps, || x.clone().sort(d));
    let t_prim = time::<B, _>(dev, reps, || x.clone().prim_sort(d));
    line(
        "sort",
        &shape,
        t_burn,
        t_prim,
        copy,
        &format!("max abs diff {same:.1e}"),
    );
    // Argsort: compare the values the two permutations pick (ties may order differently).
    let picked = |i| x.clone().gather(d, i);
    let same = scalar(
        (picked(x.clone().argsort(d)) - picked(x.clone().prim_argsort(d)))
            .abs()
            .max(),
    );
    let t_burn = time::<B, _>(dev, reps, || x.clone().argsort(d));
    let t_prim = time::<B, _>(dev, reps, || x.clone().prim_argsort(d));
    line(
        "argsort",
        &shape,
        t_burn,
        t_prim,
        copy,
        &format!("max abs diff of picked {same:.1e}"),
    );
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
    } else {
        sorts::<B, 1>(dev, reps, [1 << 22]);
        sorts::<B, 2>(dev, reps, [64, 32000]);
    }
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
    match cubeprim::device::best_backend() {
        #[cfg(feature = "cuda")]
        cubeprim::device::Backend::Cuda => bench::<burn::backend::Cuda>(
            &Default::default(),
            "burn::backend::Cuda (fusion)",
            reps,
            small,
        ),
        #[cfg(feature = "wgpu")]
        cubeprim::device::Backend::Wgpu => bench::<burn::backend::Wgpu>(
            &Default::default(),
            "burn::backend::Wgpu (fusion)",
            reps,
            small,
        ),
        _ => bench::<burn::backend::NdArray>(
            &Default::default(),
            "burn::backend::NdArray",
            reps,
            small,
        ),
    }
}
