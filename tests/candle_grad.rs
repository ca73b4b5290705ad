//! Gradients of the candle ops (`Var`, `backward`) on the CPU (on CUDA in the suite built for
//! the GPU machine): against candle's own autodiff
//! where candle has the op, against central finite differences in f64 for the rest, and
//! hand-computed cases for ties and NaN.
#![cfg(feature = "candle")]

use candle_core::{DType, Device, Result, Tensor, Var, D};
use cubeprim::candle::prelude::*;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

const OPS: [ScanOp; 5] = [
    ScanOp::Sum,
    ScanOp::Prod,
    ScanOp::Max,
    ScanOp::Min,
    ScanOp::LogSumExp,
];
const H: f64 = 1e-6;

fn variants() -> [ScanOptions; 4] {
    let o = ScanOptions::default();
    [o, o.exclusive(), o.reverse(), o.exclusive().reverse()]
}

/// The device the gradients run on: the CPU, or CUDA device 0 in the suite built for the GPU
/// machine (`candle-cuda` with `test-cuda`): one `Device` for every test (each
/// `Device::new_cuda` is a device of its own to candle, whose ops refuse to mix them).
fn dev() -> Device {
    #[cfg(all(feature = "candle-cuda", feature = "test-cuda"))]
    {
        static DEV: std::sync::OnceLock<Device> = std::sync::OnceLock::new();
        return DEV
            .get_or_init(|| Device::new_cuda(0).expect("CUDA device 0"))
            .clone();
    }
    #[cfg(not(all(feature = "candle-cuda", feature = "test-cuda")))]
    Device::Cpu
}

/// `n` distinct values, at least 0.3 apart (no tie a step of `H` could cross), shuffled.
fn distinct(rng: &mut StdRng, n: usize) -> Vec<f64> {
    let mut v: Vec<f64> = (0..n)
        .map(|i| (i as f64 - n as f64 / 2.) * 0.37 + rng.random_range(0.0..0.05))
        .collect();
    v.shuffle(rng);
    v
}

/// Values near ±1 (products neither vanish nor blow up), distinct.
fn near_one(rng: &mut StdRng, n: usize) -> Vec<f64> {
    distinct(rng, n)
        .into_iter()
        .map(|v| v.signum() * (0.6 + v.abs() * 0.4))
        .collect()
}

/// Random weights of `shape`: the loss is `sum(f(x) * w)`, so every output's gradient differs.
fn weights(rng: &mut StdRng, shape: &[usize]) -> Tensor {
    let n = shape.iter().product();
    let w: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
    Tensor::from_vec(w, shape, &dev()).unwrap()
}

type F<'a> = &'a dyn Fn(&Tensor) -> Result<Tensor>;

/// The loss `sum(f(x) * w)` of plain (untracked) `x`.
fn loss(data: &[f64], shape: &[usize], f: F, w: &Tensor) -> f64 {
    let x = Tensor::from_slice(data, shape, &dev()).unwrap();
    let y = f(&x).unwrap();
    assert!(
        !y.track_op(),
        "an untracked input gives an untracked output"
    );
    (y * w)
        .unwrap()
        .sum_all()
        .unwrap()
        .to_scalar::<f64>()
        .unwrap()
}

/// The gradient of `sum(f(x) * w)` by candle's backprop through `f`.
fn autodiff(data: &[f64], shape: &[usize], f: F, w: &Tensor) -> Vec<f64> {
    let x = Var::from_slice(data, shape, &dev()).unwrap();
    let y = f(x.as_tensor()).unwrap();
    // The tracked forward gives the untracked one's values.
    let plain = f(&Tensor::from_slice(data, shape, &dev()).unwrap()).unwrap();
    let bits = |t: &Tensor| -> Vec<u64> {
        t.flatten_all()
            .unwrap()
            .to_vec1::<f64>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect()
    };
    assert_eq!(bits(&y), bits(&plain), "tracked forward");
    let grads = (y * w).unwrap().sum_all().unwrap().backward().unwrap();
    let g = grads.get(x.as_tensor()).expect("a gradient for x");
    assert_eq!(g.dims(), shape);
    g.flatten_all().unwrap().to_vec1::<f64>().unwrap()
}

/// Central finite differences of `sum(f(x) * w)`, step `H`.
fn finite_diff(data: &[f64], shape: &[usize], f: F, w: &Tensor) -> Vec<f64> {
    (0..data.len())
        .map(|i| {
            let mut p = data.to_vec();
            p[i] += H;
            let mut m = data.to_vec();
            m[i] -= H;
            (loss(&p, shape, f, w) - loss(&m, shape, f, w)) / (2. * H)
        })
        .collect()
}

fn assert_close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-6 * (1. + w.abs()),
            "{what}: element {i}: {g} vs {w}\n got {got:?}\nwant {want:?}"
        );
    }
}

/// Checks `f`'s gradient at `data` against finite differences.
fn check_fd(data: &[f64], shape: &[usize], f: F, rng: &mut StdRng, what: &str) {
    let x = Tensor::from_slice(data, shape, &dev()).unwrap();
    let w = weights(rng, f(&x).unwrap().dims());
    let got = autodiff(data, shape, f, &w);
    let want = finite_diff(data, shape, f, &w);
    assert_close(&got, &want, what);
}

/// Checks `f`'s gradient against `reference`'s (candle's own ops), both by autodiff.
fn check_ref(data: &[f64], shape: &[usize], f: F, reference: F, rng: &mut StdRng, what: &str) {
    let x = Tensor::from_slice(data, shape, &dev()).unwrap();
    let w = weights(rng, reference(&x).unwrap().dims());
    let got = autodiff(data, shape, f, &w);
    let want = autodiff(data, shape, reference, &w);
    assert_close(&got, &want, what);
}

/// The gradient of `sum(f(x) * w)` at `x`, f64, for hand-computed cases.
fn grad(data: &[f64], shape: &[usize], f: F, w: &[f64]) -> Vec<f64> {
    let x = Tensor::from_slice(data, shape, &dev()).unwrap();
    let w = Tensor::from_slice(w, f(&x).unwrap().dims(), &dev()).unwrap();
    autodiff(data, shape, f, &w)
}

/// `y` with its infinite elements (an exclusive max / min scan's identity) zeroed: the loss
/// stays finite, their (zero) gradient unchanged.
fn finite(y: Tensor) -> Result<Tensor> {
    y.abs()?.lt(f64::MAX)?.where_cond(&y, &y.zeros_like()?)
}

#[test]
fn every_scan_against_finite_differences() {
    let mut rng = StdRng::seed_from_u64(1);
    let shape = [3, 5];
    for op in OPS {
        for opts in variants() {
            for axis in 0..2 {
                let data = if op == ScanOp::Prod {
                    near_one(&mut rng, 15)
                } else {
                    distinct(&mut rng, 15)
                };
                let f = |x: &Tensor| finite(x.scan(axis, op, opts)?);
                check_fd(
                    &data,
                    &shape,
                    &f,
                    &mut rng,
                    &format!("{op:?} {opts:?} axis {axis}"),
                );
            }
        }
    }
}

#[test]
fn scans_with_indices_carry_the_gradient_in_their_values() {
    let mut rng = StdRng::seed_from_u64(2);
    for op in [ScanOp::Max, ScanOp::Min] {
        for opts in variants() {
            for axis in 0..2 {
                let data = distinct(&mut rng, 12);
                let f = |x: &Tensor| finite(x.scan_with_indices(axis, op, opts)?.0);
                check_fd(
                    &data,
                    &[4, 3],
                    &f,
                    &mut rng,
                    &format!("{op:?} {opts:?} {axis}"),
                );
            }
        }
    }
}

#[test]
fn scan_sum_against_candle_cumsum() {
    let mut rng = StdRng::seed_from_u64(3);
    for axis in 0..2 {
        let data = distinct(&mut rng, 20);
        let f = |x: &Tensor| x.scan_sum(axis);
        let r = |x: &Tensor| x.cumsum(axis);
        check_ref(&data, &[4, 5], &f, &r, &mut rng, &format!("axis {axis}"));
    }
}

#[test]
fn cumprod_with_zeros_against_finite_differences() {
    let mut rng = StdRng::seed_from_u64(4);
    // Rows with no zero, one zero (first, middle, last) and two zeros.
    let rows: [[f64; 5]; 6] = [
        [0.9, -1.2, 1.1, 0.7, 1.3],
        [0., -1.2, 1.1, 0.7, 1.3],
        [0.9, -1.2, 0., 0.7, 1.3],
        [0.9, -1.2, 1.1, 0.7, 0.],
        [0.9, 0., 1.1, 0., 1.3],
        [0., 0., 1.1, 0.7, 1.3],
    ];
    let data: Vec<f64> = rows.iter().flatten().copied().collect();
    for opts in variants() {
        let f = |x: &Tensor| x.scan(1, ScanOp::Prod, opts);
        check_fd(&data, &[6, 5], &f, &mut rng, &format!("rows {opts:?}"));
        // The same lines along the other axis.
        let t: Vec<f64> = (0..30).map(|i| data[(i % 6) * 5 + i / 6]).collect();
        let f = |x: &Tensor| x.scan(0, ScanOp::Prod, opts);
        check_fd(&t, &[5, 6], &f, &mut rng, &format!("columns {opts:?}"));
    }
}

#[test]
fn cummax_ties_pick_the_latest_and_nan_the_nan() {
    let f = |x: &Tensor| x.scan_max(0);
    // cummax [1, 3, 3, 3, 3], indices [0, 1, 2, 2, 4].
    let g = grad(
        &[1., 3., 3., 2., 3.],
        &[5],
        &f,
        &[1., 10., 100., 1000., 10000.],
    );
    assert_eq!(g, [1., 10., 1100., 0., 10000.]);
    let f = |x: &Tensor| Ok(x.scan_min_with_indices(0)?.0);
    let g = grad(&[2., 1., 1., 3.], &[4], &f, &[1., 10., 100., 1000.]);
    assert_eq!(g, [1., 10., 1100., 0.]);
    // NaN propagates and holds the running max from where it appears.
    let f = |x: &Tensor| x.scan_max(0);
    let g = grad(&[1., f64::NAN, 2., 3.], &[4], &f, &[1., 10., 100., 1000.]);
    assert_eq!(g, [1., 1110., 0., 0.]);
    // Exclusive: the first slot is the identity and takes no gradient; reverse: "latest" in
    // scan order.
    let f = |x: &Tensor| x.scan(0, ScanOp::Max, ScanOptions::default().exclusive());
    let g = grad(&[1., 3., 3., 2.], &[4], &f, &[1., 10., 100., 1000.]);
    assert_eq!(g, [10., 100., 1000., 0.]);
    let f = |x: &Tensor| x.scan(0, ScanOp::Max, ScanOptions::default().reverse());
    let g = grad(&[3., 1., 3., 2.], &[4], &f, &[1., 10., 100., 1000.]);
    assert_eq!(g, [1., 0., 110., 1000.]);
}

#[test]
fn sorts_against_candle_gather() {
    let mut rng = StdRng::seed_from_u64(5);
    let shape = [4, 5];
    for asc in [true, false] {
        for dim in 0..2 {
            let data = distinct(&mut rng, 20);
            // candle's own: the values gathered at the argsort (candle's gather backward).
            let r = |x: &Tensor| {
                let t = x.transpose(dim, 1)?.contiguous()?;
                let i = t.arg_sort_last_dim(asc)?;
                t.gather(&i, D::Minus1)?.transpose(dim, 1)?.contiguous()
            };
            let f = |x: &Tensor| Ok(x.sort_stable(dim, asc)?.0);
            check_ref(&data, &shape, &f, &r, &mut rng, &format!("{asc} {dim}"));
            let f = |x: &Tensor| x.sort_stable_values(dim, asc);
            check_ref(
                &data,
                &shape,
                &f,
                &r,
                &mut rng,
                &format!("values {asc} {dim}"),
            );
            check_fd(&data, &shape, &f, &mut rng, &format!("fd {asc} {dim}"));
        }
    }
}

#[test]
fn stable_sort_of_equal_keys() {
    let w = [1., 10., 100., 1000.];
    // Ascending: values [1, 1, 2, 2] from [1, 3, 0, 2].
    let f = |x: &Tensor| Ok(x.sort_stable(0, true)?.0);
    assert_eq!(
        grad(&[2., 1., 2., 1.], &[4], &f, &w),
        [100., 1., 1000., 10.]
    );
    // Descending: values [2, 2, 1, 1] from [0, 2, 1, 3].
    let f = |x: &Tensor| x.sort_stable_values(0, false);
    assert_eq!(
        grad(&[2., 1., 2., 1.], &[4], &f, &w),
        [1., 100., 10., 1000.]
    );
    // Top-2 of equal keys: the first two.
    let f = |x: &Tensor| Ok(x.top_k(2, 0)?.0);
    assert_eq!(grad(&[5., 5., 5.], &[3], &f, &[1., 10.]), [1., 10., 0.]);
}

#[test]
fn top_k_and_bottom_k_against_finite_differences() {
    let mut rng = StdRng::seed_from_u64(6);
    for largest in [true, false] {
        for dim in 0..2 {
            let data = distinct(&mut rng, 24);
            let f = |x: &Tensor| {
                Ok(if largest {
                    x.top_k(2, dim)?.0
                } else {
                    x.bottom_k(2, dim)?.0
                })
            };
            check_fd(&data, &[4, 6], &f, &mut rng, &format!("{largest} {dim}"));
            let r = |x: &Tensor| {
                let t = x.transpose(dim, 1)?.contiguous()?;
                let i = t
                    .arg_sort_last_dim(!largest)?
                    .narrow(1, 0, 2)?
                    .contiguous()?;
                t.gather(&i, 1)?.transpose(dim, 1)?.contiguous()
            };
            check_ref(
                &data,
                &[4, 6],
                &f,
                &r,
                &mut rng,
                &format!("gather {largest} {dim}"),
            );
        }
    }
}

#[test]
fn masked_select_against_finite_differences() {
    let mut rng = StdRng::seed_from_u64(7);
    let data = distinct(&mut rng, 12);
    // Set last (an unset tail after the last set element), none, all, and a broadcast mask.
    let masks: [(&[u8], &[usize]); 4] = [
        (&[1, 0, 1, 1, 0, 0, 1, 0, 0, 1, 0, 0], &[3, 4]),
        (&[0; 12], &[3, 4]),
        (&[1; 12], &[3, 4]),
        (&[0, 1, 1, 0], &[1, 4]),
    ];
    for (m, mshape) in masks {
        let mask = Tensor::from_slice(m, mshape, &dev()).unwrap();
        let f = |x: &Tensor| x.masked_select(&mask);
        check_fd(&data, &[3, 4], &f, &mut rng, &format!("{m:?}"));
        let f = |x: &Tensor| Ok(x.masked_select_padded(&mask)?.0);
        check_fd(&data, &[3, 4], &f, &mut rng, &format!("padded {m:?}"));
    }
    // Hand-computed: kept element j's gradient lands on the j-th set position.
    let mask = Tensor::new(&[0u8, 1, 0, 1], &dev()).unwrap();
    let f = |x: &Tensor| x.masked_select(&mask);
    assert_eq!(
        grad(&[1., 2., 3., 4.], &[4], &f, &[10., 20.]),
        [0., 10., 0., 20.]
    );
    // A float mask: NaN is set, -0.0 is not.
    let mask = Tensor::new(&[-0f64, f64::NAN, 0., 2.], &dev()).unwrap();
    let f = |x: &Tensor| x.masked_select(&mask);
    assert_eq!(
        grad(&[1., 2., 3., 4.], &[4], &f, &[10., 20.]),
        [0., 10., 0., 20.]
    );
}

#[test]
fn reductions_against_candle() {
    let mut rng = StdRng::seed_from_u64(8);
    for dim in 0..2 {
        let data = distinct(&mut rng, 20);
        let cases: [(F, F); 6] = [
            (&|x| x.reduce_sum(dim), &|x| x.sum(dim)),
            (&|x| x.reduce_sum_keepdim(dim), &|x| x.sum_keepdim(dim)),
            (&|x| x.reduce_max(dim), &|x| x.max(dim)),
            (&|x| x.reduce_max_keepdim(dim), &|x| x.max_keepdim(dim)),
            (&|x| x.reduce_min(dim), &|x| x.min(dim)),
            (&|x| x.reduce_keepdim(dim, ReduceOp::Min), &|x| {
                x.min_keepdim(dim)
            }),
        ];
        for (k, (f, r)) in cases.into_iter().enumerate() {
            check_ref(
                &data,
                &[4, 5],
                f,
                r,
                &mut rng,
                &format!("case {k} dim {dim}"),
            );
        }
    }
    // The whole tensor: flattened, reduced along its one dimension.
    let data = distinct(&mut rng, 12);
    let f = |x: &Tensor| x.flatten_all()?.reduce_sum(0);
    let r = |x: &Tensor| x.sum_all();
    check_ref(&data, &[3, 4], &f, &r, &mut rng, "whole sum");
    let f = |x: &Tensor| x.flatten_all()?.reduce_max(0);
    let r = |x: &Tensor| x.flatten_all()?.max(0);
    check_ref(&data, &[3, 4], &f, &r, &mut rng, "whole max");
}

#[test]
fn reductions_against_finite_differences() {
    let mut rng = StdRng::seed_from_u64(9);
    for op in OPS {
        for dim in 0..3 {
            let data = near_one(&mut rng, 24);
            let f = |x: &Tensor| x.reduce(dim, op);
            check_fd(&data, &[2, 3, 4], &f, &mut rng, &format!("{op:?} {dim}"));
            let f = |x: &Tensor| x.reduce_keepdim(dim, op);
            check_fd(
                &data,
                &[2, 3, 4],
                &f,
                &mut rng,
                &format!("keepdim {op:?} {dim}"),
            );
        }
        let data = near_one(&mut rng, 6);
        let f = |x: &Tensor| x.flatten_all()?.reduce(0, op);
        check_fd(&data, &[2, 3], &f, &mut rng, &format!("whole {op:?}"));
    }
}

#[test]
fn prod_with_zeros_against_finite_differences() {
    let mut rng = StdRng::seed_from_u64(10);
    // Rows with 0, 1 and 2 zeros.
    let data = [
        0.9, -1.2, 1.1, 0.7, //
        0.9, -1.2, 0., 0.7, //
        0., -1.2, 1.1, 0., //
    ];
    let f = |x: &Tensor| x.reduce_prod(1);
    check_fd(&data, &[3, 4], &f, &mut rng, "rows");
    let f = |x: &Tensor| x.reduce_prod_keepdim(0);
    check_fd(&data, &[3, 4], &f, &mut rng, "columns");
    // Hand-computed: the product of the others; at the only zero, the product of the rest.
    let f = |x: &Tensor| x.reduce_prod(0);
    assert_eq!(grad(&[2., 0., 3.], &[3], &f, &[1.]), [0., 6., 0.]);
    assert_eq!(grad(&[2., 0., 0.], &[3], &f, &[1.]), [0., 0., 0.]);
    assert_eq!(grad(&[2., 4., 3.], &[3], &f, &[1.]), [12., 6., 8.]);
}

#[test]
fn amax_ties_are_shared_evenly() {
    let f = |x: &Tensor| x.reduce_max(1);
    let g = grad(&[1., 3., 3., 2., 2., 2.], &[2, 3], &f, &[1., 3.]);
    assert_eq!(g, [0., 0.5, 0.5, 1., 1., 1.]);
    let f = |x: &Tensor| x.reduce_min_keepdim(0);
    let g = grad(&[1., 3., 1., 2.], &[2, 2], &f, &[4., 8.]);
    assert_eq!(g, [2., 0., 2., 8.]);
    // NaN is the max: the NaN takes the gradient.
    let f = |x: &Tensor| x.reduce_max(0);
    assert_eq!(grad(&[1., f64::NAN, 2.], &[3], &f, &[5.]), [0., 5., 0.]);
}

#[test]
fn reduce_by_key_against_finite_differences() {
    let mut rng = StdRng::seed_from_u64(11);
    let keys = Tensor::new(&[[7u32, 7, 2, 2], [2, 7, 3, 3]], &dev()).unwrap();
    for op in OPS {
        let data = near_one(&mut rng, 8);
        let f = |x: &Tensor| Ok(keys.reduce_by_key(x, op)?.1);
        check_fd(&data, &[2, 4], &f, &mut rng, &format!("{op:?}"));
        let f = |x: &Tensor| Ok(keys.reduce_by_key_padded(x, op)?.1);
        check_fd(&data, &[2, 4], &f, &mut rng, &format!("padded {op:?}"));
    }
    // Products with 0, 1 and 2 zeros in a run.
    let data = [0.9, 0., 1.1, 0.7, 0., 0., 0.8, 0.];
    let keys = Tensor::new(&[1u32, 1, 2, 2, 3, 3, 3, 4], &dev()).unwrap();
    let f = |x: &Tensor| Ok(keys.reduce_by_key(x, ReduceOp::Prod)?.1);
    check_fd(&data, &[8], &f, &mut rng, "prod with zeros");
    // Max ties in a run are shared evenly.
    let keys = Tensor::new(&[1u32, 1, 1, 2], &dev()).unwrap();
    let f = |x: &Tensor| Ok(keys.reduce_by_key(x, ReduceOp::Max)?.1);
    assert_eq!(
        grad(&[3., 1., 3., 5.], &[4], &f, &[2., 7.]),
        [1., 0., 1., 7.]
    );
}

#[test]
fn strided_inputs_and_chained_ops() {
    let mut rng = StdRng::seed_from_u64(12);
    let data = near_one(&mut rng, 24);
    // A transposed view into a sort, a scan and a reduction, chained.
    let f = |x: &Tensor| {
        let t = x.transpose(0, 1)?;
        let s = t.sort_stable_values(1, false)?;
        let c = s.scan(0, ScanOp::Prod, ScanOptions::default().exclusive())?;
        c.reduce_max_keepdim(1)?
            .broadcast_add(&t.reduce_min_keepdim(1)?)
    };
    check_fd(&data, &[4, 6], &f, &mut rng, "chain");
    // f32 through the same ops (against the f64 gradient, loosely).
    let x32 = Var::from_vec(data.iter().map(|&v| v as f32).collect(), (4, 6), &dev()).unwrap();
    let y = x32.as_tensor().scan_prod(1).unwrap().reduce_sum(1).unwrap();
    let g = y.sum_all().unwrap().backward().unwrap();
    let g = g
        .get(x32.as_tensor())
        .unwrap()
        .to_dtype(DType::F64)
        .unwrap();
    let w = Tensor::ones(4, DType::F64, &dev()).unwrap();
    let want = autodiff(&data, &[4, 6], &|x| x.scan_prod(1)?.reduce_sum(1), &w);
    let got = g.flatten_all().unwrap().to_vec1::<f64>().unwrap();
    for (a, b) in got.iter().zip(&want) {
        assert!((a - b).abs() < 1e-4 * (1. + b.abs()), "{a} vs {b}");
    }
}

#[test]
fn ops_without_gradient_stay_untracked() {
    let x = Var::from_slice(&[3f64, 1., 2., 1.], 4, &dev()).unwrap();
    let x = x.as_tensor();
    assert!(x.track_op());
    let sorted = Tensor::new(&[0f64, 1.5, 2.5], &dev()).unwrap();
    let boundaries = Tensor::new(&[1.5f64], &dev()).unwrap();
    let outputs = [
        x.arg_sort_stable(0, true).unwrap(),
        x.sort_stable(0, true).unwrap().1,
        x.top_k(2, 0).unwrap().1,
        sorted.search_sorted(x, 0, Side::Left).unwrap(),
        x.bucketize(&boundaries, false).unwrap(),
        x.nonzero().unwrap(),
        x.count_nonzero().unwrap(),
        x.scan_max_with_indices(0).unwrap().1,
        x.masked_select_padded(&x.gt(1.5).unwrap()).unwrap().1,
        x.unique().unwrap().0,
        x.unique().unwrap().1,
        x.unique_consecutive_with_inverse().unwrap().2,
        x.reduce_by_key(x, ReduceOp::Sum).unwrap().0,
        x.to_dtype(DType::U32).unwrap().histogram(4).unwrap(),
    ];
    for (k, o) in outputs.iter().enumerate() {
        assert!(!o.track_op(), "output {k} is tracked");
    }
    // The differentiable outputs are.
    assert!(x.scan_max(0).unwrap().track_op());
    assert!(x.sort_stable(0, true).unwrap().0.track_op());
    assert!(x.reduce_by_key(x, ReduceOp::Sum).unwrap().1.track_op());
}

/// The inputs of the linear recurrence checks: `a` near ±1 (some negative), `b` and `h0`
/// distinct, `[3, 5]` along `axis` (`h0` the shape without it).
fn recurrence_inputs(rng: &mut StdRng, axis: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<usize>) {
    let a = near_one(rng, 15).iter().map(|v| v * 0.8).collect();
    let b = distinct(rng, 15);
    let hs = if axis == 1 { vec![3] } else { vec![5] };
    let h0 = distinct(rng, hs[0]);
    (a, b, h0, hs)
}

/// The linear recurrence by each of its inputs (`a`, `b`, `h0`), with and without `h0`, both
/// directions, both axes, against finite differences in f64 (the CPU path: the GPU paths
/// compute f32; see the CUDA test below).
#[cfg(not(all(feature = "candle-cuda", feature = "test-cuda")))]
#[test]
fn linear_recurrence_against_finite_differences() {
    let mut rng = StdRng::seed_from_u64(13);
    for axis in [0, 1] {
        for reverse in [false, true] {
            let (a, b, h0, hs) = recurrence_inputs(&mut rng, axis);
            let t = |v: &[f64], s: &[usize]| Tensor::from_slice(v, s, &dev()).unwrap();
            let (ta, tb, th) = (t(&a, &[3, 5]), t(&b, &[3, 5]), t(&h0, &hs));
            let what = |w: &str| format!("{w}, axis {axis}, reverse {reverse}");
            let f = |x: &Tensor| x.linear_recurrence(&tb, Some(&th), axis, reverse);
            check_fd(&a, &[3, 5], &f, &mut rng, &what("by a"));
            let f = |x: &Tensor| ta.linear_recurrence(x, Some(&th), axis, reverse);
            check_fd(&b, &[3, 5], &f, &mut rng, &what("by b"));
            let f = |x: &Tensor| ta.linear_recurrence(&tb, Some(x), axis, reverse);
            check_fd(&h0, &hs, &f, &mut rng, &what("by h0"));
            let f = |x: &Tensor| x.linear_recurrence(&tb, None, axis, reverse);
            check_fd(&a, &[3, 5], &f, &mut rng, &what("by a, no h0"));
            let f = |x: &Tensor| ta.linear_recurrence(x, None, axis, reverse);
            check_fd(&b, &[3, 5], &f, &mut rng, &what("by b, no h0"));
        }
    }
    // One step: the gradient of a is h0's, of h0 is a's.
    let a = Var::from_slice(&[0.5f64, -2.], (2, 1), &dev()).unwrap();
    let b = Tensor::new(&[[1f64], [1.]], &dev()).unwrap();
    let h0 = Var::from_slice(&[3f64, 4.], 2, &dev()).unwrap();
    let h = a.linear_recurrence(&b, Some(&h0), 1, false).unwrap();
    assert_eq!(h.to_vec2::<f64>().unwrap(), [[2.5], [-7.]]);
    let g = h.sum_all().unwrap().backward().unwrap();
    let ga = g.get(a.as_tensor()).unwrap().to_vec2::<f64>().unwrap();
    let gh = g.get(h0.as_tensor()).unwrap().to_vec1::<f64>().unwrap();
    assert_eq!((ga, gh), (vec![vec![3.], vec![4.]], vec![0.5, -2.]));
}

/// On CUDA (f32 there): the gradients of `a`, `b` and `h0` equal the CPU path's.
#[cfg(all(feature = "candle-cuda", feature = "test-cuda"))]
#[test]
fn linear_recurrence_on_cuda_matches_the_cpu() {
    let mut rng = StdRng::seed_from_u64(14);
    for axis in [0, 1] {
        for reverse in [false, true] {
            let (a, b, h0, hs) = recurrence_inputs(&mut rng, axis);
            let grads = |d: &Device| -> Vec<Vec<f32>> {
                let v = |x: &[f64], s: &[usize]| {
                    let x: Vec<f32> = x.iter().map(|&v| v as f32).collect();
                    Var::from_slice(&x, s, d).unwrap()
                };
                let (ta, tb, th) = (v(&a, &[3, 5]), v(&b, &[3, 5]), v(&h0, &hs));
                let h = ta.linear_recurrence(&tb, Some(&th), axis, reverse).unwrap();
                let g = h.sqr().unwrap().sum_all().unwrap().backward().unwrap();
                [ta.as_tensor(), tb.as_tensor(), th.as_tensor()]
                    .iter()
                    .map(|t| {
                        g.get(t)
                            .unwrap()
                            .flatten_all()
                            .unwrap()
                            .to_vec1::<f32>()
                            .unwrap()
                    })
                    .collect()
            };
            let (gpu, cpu) = (grads(&dev()), grads(&Device::Cpu));
            for (k, (x, y)) in gpu.iter().zip(&cpu).enumerate() {
                for (p, q) in x.iter().zip(y) {
                    assert!(
                        (p - q).abs() <= 1e-4 * (1. + q.abs()),
                        "input {k}: {p} vs {q}"
                    );
                }
            }
        }
    }
}
