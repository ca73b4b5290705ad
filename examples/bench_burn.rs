//! burn's built-in scans against cubeprim's on burn tensors: same device, same run, same
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

/// Largest relative difference between two results, scaled by the largest magnitude.
fn max_rel_diff<B: Backend>(a: Tensor<B, 2>, b: Tensor<B, 2>) -> f64 {
    let scale = a
        .clone()
        .abs()
        .max()
        .into_scalar()
        .to_string()
        .parse::<f64>()
        .unwrap_or(1.0);
    let d = (a - b)
        .abs()
        .max()
        .into_scalar()
        .to_string()
        .parse::<f64>()
        .unwrap_or(f64::NAN);
    d / scale.max(1e-30)
}

fn bench<B: PrimBackend>(dev: &B::Device, backend: &str, reps: usize, shapes: &[[usize; 2]]) {
    println!("# backend {backend}, f32, dim 1, median of {reps} reps, time per call");
    println!(
        "{:<8} {:>14} {:>12} {:>12} {:>10} {:>10} {:>10}",
        "op", "shape", "burn_us", "cubeprim_us", "speedup", "copy_us", "vs_copy"
    );
    for &shape in shapes {
        let x = Tensor::<B, 2>::random(shape, Distribution::Uniform(0.5, 1.5), dev);
        let copy = time::<B, _>(dev, reps, || x.clone() * 1.0);
        type Pair<B> = (
            fn(Tensor<B, 2>) -> Tensor<B, 2>,
            fn(Tensor<B, 2>) -> Tensor<B, 2>,
        );
        let ops: [(&str, Pair<B>); 4] = [
            ("cumsum", (|x| x.cumsum(1), |x| x.prim_cumsum(1))),
            ("cumprod", (|x| x.cumprod(1), |x| x.prim_cumprod(1))),
            ("cummax", (|x| x.cummax(1), |x| x.prim_cummax(1))),
            ("cummin", (|x| x.cummin(1), |x| x.prim_cummin(1))),
        ];
        for (name, (burn_op, prim_op)) in ops {
            let diff = if name == "cumsum" || name == "cummax" || name == "cummin" {
                max_rel_diff(burn_op(x.clone()), prim_op(x.clone()))
            } else {
                // Products of 65536 factors in [0.5, 1.5) underflow; compare on a short prefix.
                let p = x.clone().slice([0..shape[0], 0..shape[1].min(64)]);
                max_rel_diff(burn_op(p.clone()), prim_op(p))
            };
            let t_burn = time::<B, _>(dev, reps, || burn_op(x.clone()));
            let t_prim = time::<B, _>(dev, reps, || prim_op(x.clone()));
            println!(
                "{:<8} {:>14} {:>12.1} {:>12.1} {:>9.0}x {:>10.1} {:>9.2}x   (max rel diff {diff:.1e})",
                name,
                format!("{shape:?}"),
                t_burn * 1e6,
                t_prim * 1e6,
                t_burn / t_prim,
                copy * 1e6,
                t_prim / copy,
            );
        }
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
    let shapes: &[[usize; 2]] = if args.iter().any(|a| a == "--small") {
        &[[64, 4096]]
    } else {
        &[[1024, 4096], [64, 65536]]
    };
    match cubeprim::device::best_backend() {
        #[cfg(feature = "cuda")]
        cubeprim::device::Backend::Cuda => bench::<burn::backend::Cuda>(
            &Default::default(),
            "burn::backend::Cuda (fusion)",
            reps,
            shapes,
        ),
        #[cfg(feature = "wgpu")]
        cubeprim::device::Backend::Wgpu => bench::<burn::backend::Wgpu>(
            &Default::default(),
            "burn::backend::Wgpu (fusion)",
            reps,
            shapes,
        ),
        _ => bench::<burn::backend::NdArray>(
            &Default::default(),
            "burn::backend::NdArray",
            reps,
            shapes,
        ),
    }
}
