//! Gradients through `Autodiff<B>` (feature `burn-autodiff`): every differentiable op against
//! burn's own autodiff where burn has the op (cumsum, cumprod without zeros, cummax / cummin,
//! sort, top-k, sum / max / min along a dim, sum), and against central finite differences in
//! f64 on the CPU for the rest (exclusive and reverse scans, cumprod with zeros, prod along a
//! dim and whole, with and without zeros, max / min, masked_select, select, reduce_by_key,
//! the linear recurrence by each of its inputs); ties and NaN as PyTorch
//! routes them; on `Autodiff<NdArray>` and on `Autodiff<Wgpu>` (fused and plain; lavapipe in
//! CI).

use crate::common;

use burn::backend::{Autodiff, NdArray, Wgpu};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Bool, Element, Int, Tensor, TensorCreationOptions, TensorData};
use burn_cubecl::CubeBackend;
use cubecl::wgpu::WgpuRuntime;
use cubeprim::burn::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

type Cpu64 = NdArray<f64, i64>;
type AdCpu64 = Autodiff<Cpu64>;
type AdCpu = Autodiff<NdArray<f32, i64>>;
type AdWgpu = Autodiff<Wgpu>;
type AdWgpuPlain = Autodiff<CubeBackend<WgpuRuntime, f32, i32, u32>>;

/// A function of a rank-`D` float tensor whose result is summed against fixed weights.
type F<B, const D: usize, const E: usize> = fn(Tensor<B, D>) -> Tensor<B, E>;

fn f64s(d: TensorData) -> Vec<f64> {
    d.convert::<f64>().to_vec::<f64>().unwrap()
}

/// Distinct values in `[-2, 2]` away from zero (no ties: gradients of extremes and sorts are
/// then unique).
fn distinct(rng: &mut StdRng, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let v: f64 = rng.random_range(0.25..2.0);
            if rng.random_bool(0.5) {
                v
            } else {
                -v
            }
        })
        .collect()
}

/// Creation on `dev` in the backend's own float type. burn keeps one default float dtype per
/// device type, set by the first backend that asks (`NdArray<f32>` and `NdArray<f64>` share
/// the device type): without the dtype, an f64 backend in a process that ran an f32 one before
/// gets f32 tensors.
fn own<B: Backend>(dev: &B::Device) -> TensorCreationOptions<B> {
    TensorCreationOptions::new(dev.clone()).with_dtype(<B::FloatElem as Element>::dtype())
}

/// The gradient of `sum(w * f(x))` by `x` through `B`'s autodiff, and the value of `f(x)`.
fn grad<B: AutodiffBackend + PrimBackend, const D: usize, const E: usize>(
    x: &[f64],
    shape: [usize; D],
    w: &dyn Fn(usize) -> Vec<f64>,
    f: &dyn Fn(Tensor<B, D>) -> Tensor<B, E>,
    dev: &B::Device,
) -> (Vec<f64>, Vec<f64>) {
    let xt =
        Tensor::<B, D>::from_data(TensorData::new(x.to_vec(), shape), own::<B>(dev)).require_grad();
    let y = f(xt.clone());
    let dims = y.dims();
    let n: usize = dims.iter().product();
    let wt = Tensor::<B, E>::from_data(TensorData::new(w(n), dims), own::<B>(dev));
    let value = f64s(y.clone().into_data());
    let grads = (y * wt).sum().backward();
    let g = xt.grad(&grads).expect("x has a gradient");
    (f64s(g.into_data()), value)
}

/// Central finite differences of `sum(w * f(x))` in f64 on the CPU (no autodiff).
fn numeric<const D: usize, const E: usize>(
    x: &[f64],
    shape: [usize; D],
    w: &dyn Fn(usize) -> Vec<f64>,
    f: &dyn Fn(Tensor<Cpu64, D>) -> Tensor<Cpu64, E>,
) -> Vec<f64> {
    let dev = Default::default();
    let loss = |x: &[f64]| {
        let y = f(Tensor::<Cpu64, D>::from_data(
            TensorData::new(x.to_vec(), shape),
            own::<Cpu64>(&dev),
        ));
        let v = f64s(y.into_data());
        let w = w(v.len());
        // An exclusive max / min has its identity (±inf) in the first slot, a constant.
        v.iter()
            .zip(&w)
            .filter(|(a, _)| a.is_finite())
            .map(|(a, b)| a * b)
            .sum::<f64>()
    };
    let h = 1e-6;
    (0..x.len())
        .map(|i| {
            let (mut p, mut m) = (x.to_vec(), x.to_vec());
            p[i] += h;
            m[i] -= h;
            (loss(&p) - loss(&m)) / (2.0 * h)
        })
        .collect()
}

/// Weights `0.5 + (i mod 7) / 4` (all non-zero, not all equal).
fn weights(n: usize) -> Vec<f64> {
    (0..n).map(|i| 0.5 + (i % 7) as f64 / 4.0).collect()
}

fn close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        let ok = (a.is_nan() && b.is_nan()) || (a - b).abs() <= tol * (1.0 + b.abs());
        assert!(
            ok,
            "{what}: element {i}: got {a}, want {b}\n got {got:?}\nwant {want:?}"
        );
    }
}

/// cubeprim's op and burn's own, through `B`'s autodiff, on distinct random values: the same
/// values and the same gradients.
fn against_burn<B: AutodiffBackend + PrimBackend, const D: usize, const E: usize>(
    shape: [usize; D],
    ours: F<B, D, E>,
    burns: F<B, D, E>,
    tol: f64,
    what: &str,
    dev: &B::Device,
) {
    let mut rng = StdRng::seed_from_u64(7);
    let x = distinct(&mut rng, shape.iter().product());
    let (g, v) = grad::<B, D, E>(&x, shape, &weights, &ours, dev);
    let (gb, vb) = grad::<B, D, E>(&x, shape, &weights, &burns, dev);
    close(&v, &vb, tol, &format!("{what}: value"));
    close(&g, &gb, tol, &format!("{what}: gradient"));
}

/// cubeprim's op through `B`'s autodiff against finite differences of the same op in f64.
fn against_numeric<B: AutodiffBackend + PrimBackend, const D: usize, const E: usize>(
    x: &[f64],
    shape: [usize; D],
    ours: F<B, D, E>,
    cpu: F<Cpu64, D, E>,
    tol: f64,
    what: &str,
    dev: &B::Device,
) {
    let (g, _) = grad::<B, D, E>(x, shape, &weights, &ours, dev);
    let want = numeric::<D, E>(x, shape, &weights, &cpu);
    close(&g, &want, tol, what);
}

/// Inputs for the finite-difference checks: distinct values with some exact zeros (products)
/// when `zeros`.
fn input(seed: u64, n: usize, zeros: &[usize]) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut x = distinct(&mut rng, n);
    for &z in zeros {
        x[z] = 0.0;
    }
    x
}

/// Every check on backend `B` (tolerance `tol` for its float type).
fn all<B: AutodiffBackend + PrimBackend>(dev: &B::Device, tol: f64) {
    // Against burn's own autodiff, on every axis of a [3, 5, 7] tensor.
    macro_rules! each_axis {
        ($ours:ident, $burns:ident, $what:literal) => {{
            against_burn::<B, 3, 3>([3, 5, 7], |x| x.$ours(0), |x| x.$burns(0), tol, $what, dev);
            against_burn::<B, 3, 3>([3, 5, 7], |x| x.$ours(1), |x| x.$burns(1), tol, $what, dev);
            against_burn::<B, 3, 3>([3, 5, 7], |x| x.$ours(2), |x| x.$burns(2), tol, $what, dev);
        }};
    }
    each_axis!(prim_cumsum, cumsum, "cumsum");
    each_axis!(prim_cumprod, cumprod, "cumprod");
    each_axis!(prim_cummax, cummax, "cummax");
    each_axis!(prim_cummin, cummin, "cummin");
    each_axis!(prim_sort, sort, "sort");
    each_axis!(prim_sort_descending, sort_descending, "sort descending");
    each_axis!(prim_sum_dim, sum_dim, "sum_dim");
    each_axis!(prim_max_dim, max_dim, "max_dim");
    each_axis!(prim_min_dim, min_dim, "min_dim");
    against_burn::<B, 2, 2>(
        [6, 40],
        |x| x.prim_sort_with_indices(1).0,
        |x| x.sort_with_indices(1).0,
        tol,
        "sort_with_indices",
        dev,
    );
    against_burn::<B, 2, 2>(
        [6, 40],
        |x| x.prim_topk(5, 1),
        |x| x.topk_with_indices(5, 1).0,
        tol,
        "topk",
        dev,
    );
    against_burn::<B, 2, 2>(
        [40, 6],
        |x| x.prim_topk_with_indices(3, 0).0,
        |x| x.topk_with_indices(3, 0).0,
        tol,
        "topk dim 0",
        dev,
    );
    against_burn::<B, 2, 1>([6, 40], |x| x.prim_sum(), |x| x.sum(), tol, "sum", dev);

    // Against finite differences.
    let x = input(11, 3 * 9, &[]);
    let xz = input(12, 3 * 9, &[2, 13, 14, 20]);
    for (op, zeros) in [
        (ScanOp::Sum, false),
        (ScanOp::Prod, false),
        (ScanOp::Prod, true),
        (ScanOp::Max, false),
        (ScanOp::Min, false),
        (ScanOp::LogSumExp, false),
    ] {
        let x = if zeros { &xz } else { &x };
        for opts in [
            ScanOptions::default(),
            ScanOptions::default().exclusive(),
            ScanOptions::default().reverse(),
            ScanOptions::default().exclusive().reverse(),
        ] {
            for axis in [0usize, 1] {
                let what = format!("scan {op:?} {opts:?} axis {axis} zeros {zeros}");
                // Closures cannot capture into `fn` pointers: one per combination, by table.
                let (ours, cpu): (F<B, 2, 2>, F<Cpu64, 2, 2>) = scan_fns(op, opts, axis);
                against_numeric::<B, 2, 2>(x, [3, 9], ours, cpu, tol, &what, dev);
            }
        }
    }
    for dim in [0usize, 1] {
        let (ours, cpu): (F<B, 2, 2>, F<Cpu64, 2, 2>) = if dim == 0 {
            (|x| x.prim_logsumexp_dim(0), |x| x.prim_logsumexp_dim(0))
        } else {
            (|x| x.prim_logsumexp_dim(1), |x| x.prim_logsumexp_dim(1))
        };
        against_numeric::<B, 2, 2>(&x, [3, 9], ours, cpu, tol, "logsumexp_dim", dev);
    }
    // Products (burn's own prod_dim returns NaN for negative inputs: no comparison there), with
    // no, one and two zeros in a slice.
    against_numeric::<B, 2, 2>(
        &x,
        [3, 9],
        |x| x.prim_prod_dim(0),
        |x| x.prim_prod_dim(0),
        tol,
        "prod_dim",
        dev,
    );
    let xp = input(13, 4 * 5, &[6, 10, 11]);
    against_numeric::<B, 2, 2>(
        &xp,
        [4, 5],
        |x| x.prim_prod_dim(1),
        |x| x.prim_prod_dim(1),
        tol,
        "prod_dim with zeros",
        dev,
    );
    against_numeric::<B, 2, 1>(
        &input(14, 8, &[3]),
        [2, 4],
        |x| x.prim_prod(),
        |x| x.prim_prod(),
        tol,
        "prod with a zero",
        dev,
    );
    against_numeric::<B, 2, 1>(
        &x,
        [3, 9],
        |x| x.prim_max(),
        |x| x.prim_max(),
        tol,
        "max",
        dev,
    );
    against_numeric::<B, 2, 1>(
        &x,
        [3, 9],
        |x| x.prim_min(),
        |x| x.prim_min(),
        tol,
        "min",
        dev,
    );
    against_numeric::<B, 2, 1>(
        &x,
        [3, 9],
        |x| x.clone().prim_masked_select(x.greater_elem(0.0)),
        |x| x.clone().prim_masked_select(x.greater_elem(0.0)),
        tol,
        "masked_select",
        dev,
    );
    against_numeric::<B, 2, 1>(
        &x,
        [3, 9],
        |x| {
            let flags = x.clone().lower_elem(0.5).int();
            x.prim_select(flags)
        },
        |x| {
            let flags = x.clone().lower_elem(0.5).int();
            x.prim_select(flags)
        },
        tol,
        "select by int flags",
        dev,
    );
    let recurrences: [(F<B, 2, 2>, F<Cpu64, 2, 2>, usize, &str); 6] = [
        (
            recurrence::<B, 0, false>,
            recurrence::<Cpu64, 0, false>,
            5,
            "a",
        ),
        (
            recurrence::<B, 1, false>,
            recurrence::<Cpu64, 1, false>,
            5,
            "b",
        ),
        (
            recurrence::<B, 2, false>,
            recurrence::<Cpu64, 2, false>,
            1,
            "h0",
        ),
        (
            recurrence::<B, 0, true>,
            recurrence::<Cpu64, 0, true>,
            5,
            "a, reverse",
        ),
        (
            recurrence::<B, 1, true>,
            recurrence::<Cpu64, 1, true>,
            5,
            "b, reverse",
        ),
        (
            recurrence::<B, 2, true>,
            recurrence::<Cpu64, 2, true>,
            1,
            "h0, reverse",
        ),
    ];
    for (k, (ours, cpu, width, what)) in recurrences.into_iter().enumerate() {
        let x = input(30 + k as u64, 3 * width, &[]);
        against_numeric::<B, 2, 2>(
            &x,
            [3, width],
            ours,
            cpu,
            tol,
            &format!("linear_recurrence by {what}"),
            dev,
        );
    }
    for op in [ScanOp::Sum, ScanOp::Prod, ScanOp::Max, ScanOp::Min] {
        let (ours, cpu): (F<B, 1, 1>, F<Cpu64, 1, 1>) = match op {
            ScanOp::Sum => (by_key::<B, 0>, by_key::<Cpu64, 0>),
            ScanOp::Prod => (by_key::<B, 1>, by_key::<Cpu64, 1>),
            ScanOp::Max => (by_key::<B, 2>, by_key::<Cpu64, 2>),
            _ => (by_key::<B, 3>, by_key::<Cpu64, 3>),
        };
        let v = input(15, 12, &[4, 5]);
        against_numeric::<B, 1, 1>(
            &v,
            [12],
            ours,
            cpu,
            tol,
            &format!("reduce_by_key {op:?}"),
            dev,
        );
    }
}

/// Fixed inputs of the linear recurrence checks (`[3, 5]`, or `h0` `[3, 1]`): multipliers in
/// about (-1, 1) (some negative), offsets and states in about (-2, 2).
fn fixed<B: Backend>(dev: &B::Device, which: u64, shape: [usize; 2]) -> Tensor<B, 2> {
    let mut rng = StdRng::seed_from_u64(100 + which);
    let n = shape[0] * shape[1];
    let v: Vec<f64> = distinct(&mut rng, n)
        .into_iter()
        .map(|x| if which == 0 { x / 2.0 } else { x })
        .collect();
    Tensor::from_data(TensorData::new(v, shape), own::<B>(dev))
}

/// The linear recurrence along dim 1 of `[3, 5]` as a function of `a` (`WRT` 0), `b` (1) or
/// `h0` (2), the others fixed; reverse with `REV`.
fn recurrence<B: PrimBackend, const WRT: usize, const REV: bool>(x: Tensor<B, 2>) -> Tensor<B, 2> {
    let dev = x.device();
    let a = || fixed::<B>(&dev, 0, [3, 5]);
    let b = || fixed::<B>(&dev, 1, [3, 5]);
    let h0 = || fixed::<B>(&dev, 2, [3, 1]);
    match WRT {
        0 => x.prim_linear_recurrence_from(b(), h0(), 1, REV),
        1 => a().prim_linear_recurrence(x, 1, REV),
        _ => a().prim_linear_recurrence_from(b(), x, 1, REV),
    }
}

/// reduce_by_key of the values by fixed keys (runs of 3, 1, 4, 2, 2), operator number `OP`.
fn by_key<B: PrimBackend, const OP: usize>(v: Tensor<B, 1>) -> Tensor<B, 1> {
    let keys = Tensor::<B, 1, Int>::from_ints([5, 5, 5, 2, 7, 7, 7, 7, 5, 5, 1, 1], &v.device());
    let op = [ScanOp::Sum, ScanOp::Prod, ScanOp::Max, ScanOp::Min][OP];
    keys.prim_reduce_by_key(v, op).1
}

/// The scan `op` with `opts` along `axis` as a pair of `fn`s (for `B` and for the f64 CPU).
fn scan_fns<B: PrimBackend>(
    op: ScanOp,
    opts: ScanOptions,
    axis: usize,
) -> (F<B, 2, 2>, F<Cpu64, 2, 2>) {
    macro_rules! pick {
        ($($o:ident $e:literal $r:literal $a:literal),*) => {
            match (op, opts.exclusive, opts.reverse, axis) {
                $((ScanOp::$o, $e, $r, $a) => (
                    |x| x.prim_scan($a, ScanOp::$o, o($e, $r)),
                    |x| x.prim_scan($a, ScanOp::$o, o($e, $r)),
                ),)*
                _ => unreachable!(),
            }
        };
    }
    fn o(e: bool, r: bool) -> ScanOptions {
        ScanOptions {
            exclusive: e,
            reverse: r,
            ..Default::default()
        }
    }
    pick!(
        Sum false false 0, Sum false false 1, Sum true false 0, Sum true false 1,
        Sum false true 0, Sum false true 1, Sum true true 0, Sum true true 1,
        Prod false false 0, Prod false false 1, Prod true false 0, Prod true false 1,
        Prod false true 0, Prod false true 1, Prod true true 0, Prod true true 1,
        Max false false 0, Max false false 1, Max true false 0, Max true false 1,
        Max false true 0, Max false true 1, Max true true 0, Max true true 1,
        Min false false 0, Min false false 1, Min true false 0, Min true false 1,
        Min false true 0, Min false true 1, Min true true 0, Min true true 1,
        LogSumExp false false 0, LogSumExp false false 1,
        LogSumExp true false 0, LogSumExp true false 1,
        LogSumExp false true 0, LogSumExp false true 1,
        LogSumExp true true 0, LogSumExp true true 1
    )
}

/// Ties and NaN go where PyTorch sends them: cummax's gradient to the latest of equal maxima
/// (and to a NaN once one is seen), amax's shared evenly among the equal maxima, a stable
/// sort's through the stable permutation.
fn ties_and_nan<B: AutodiffBackend + PrimBackend>(dev: &B::Device) {
    let one = |n: usize| vec![1.0; n];
    let cummax = |x: Tensor<B, 1>| x.prim_cummax(0);
    let (g, _) = grad::<B, 1, 1>(&[1.0, 3.0, 3.0, 2.0], [4], &one, &cummax, dev);
    assert_eq!(g, [1.0, 1.0, 2.0, 0.0], "cummax ties: the latest");
    let (g, _) = grad::<B, 1, 1>(&[1.0, f64::NAN, 3.0, 2.0], [4], &one, &cummax, dev);
    assert_eq!(g, [1.0, 3.0, 0.0, 0.0], "cummax after a NaN: the NaN");
    let amax = |x: Tensor<B, 2>| x.prim_max_dim(1);
    let (g, _) = grad::<B, 2, 2>(&[2.0, 5.0, 5.0, 1.0, 4.0, 0.0], [2, 3], &one, &amax, dev);
    assert_eq!(g, [0.0, 0.5, 0.5, 0.0, 1.0, 0.0], "amax ties: shared");
    let (g, _) = grad::<B, 2, 2>(
        &[2.0, f64::NAN, 5.0, 1.0, 4.0, 0.0],
        [2, 3],
        &one,
        &amax,
        dev,
    );
    assert_eq!(g, [0.0, 1.0, 0.0, 0.0, 1.0, 0.0], "amax of a NaN: the NaN");
    let w = |n: usize| (0..n).map(|i| (i + 1) as f64).collect();
    let sort = |x: Tensor<B, 1>| x.prim_sort(0);
    let (g, _) = grad::<B, 1, 1>(&[2.0, 1.0, 2.0, 1.0], [4], &w, &sort, dev);
    assert_eq!(
        g,
        [3.0, 1.0, 4.0, 2.0],
        "stable sort: equal keys keep their order"
    );
}

/// Ops with no gradient (int outputs, keys) and inputs that need none leave the graph alone:
/// gradients stop there and nothing panics.
fn no_gradient<B: AutodiffBackend + PrimBackend>(dev: &B::Device) {
    let x = Tensor::<B, 1>::from_floats([3.0, 1.0, 2.0, 1.0], dev).require_grad();
    let idx = x.clone().prim_argsort(0);
    let u = x.clone().prim_unique();
    let c = x.clone().prim_count_nonzero();
    let y = x.clone().gather(0, idx) * 2.0 + u.sum() * 0.0;
    let grads = y.sum().backward();
    let g = f64s(x.grad(&grads).unwrap().into_data());
    assert_eq!(g, [2.0, 2.0, 2.0, 2.0]);
    assert_eq!(c.into_data().convert::<i64>().to_vec::<i64>().unwrap(), [4]);
    // An input that needs no gradient: the output is untracked.
    let z = Tensor::<B, 2>::from_floats([[1.0, 2.0]], dev).prim_cumsum(1);
    assert!(!z.is_require_grad());
    let m = Tensor::<B, 1, Bool>::from_bool(TensorData::from([true, false]), dev);
    let _ = Tensor::<B, 1>::from_floats([1.0, 2.0], dev).prim_masked_select(m);
}

fn wgpu_device() -> burn::backend::wgpu::WgpuDevice {
    let _ = common::client();
    Default::default()
}

#[test]
fn ndarray_f64() {
    all::<AdCpu64>(&Default::default(), 1e-6);
    ties_and_nan::<AdCpu64>(&Default::default());
    no_gradient::<AdCpu64>(&Default::default());
}

#[test]
fn ndarray_f32() {
    all::<AdCpu>(&Default::default(), 2e-3);
}

#[test]
fn wgpu_fused() {
    let dev = wgpu_device();
    all::<AdWgpu>(&dev, 2e-3);
    ties_and_nan::<AdWgpu>(&dev);
    no_gradient::<AdWgpu>(&dev);
}

#[test]
fn wgpu_plain() {
    let dev = wgpu_device();
    all::<AdWgpuPlain>(&dev, 2e-3);
    ties_and_nan::<AdWgpuPlain>(&dev);
}

// With `test-cuda` (the suite built for the GPU machine): the same checks on burn's CUDA
// backends, fused (`Cuda`) and plain (byte bools, as burn's `Cuda` stores them).
#[cfg(feature = "test-cuda")]
fn cuda_device() -> burn::backend::cuda::CudaDevice {
    let _ = common::client();
    Default::default()
}

#[cfg(feature = "test-cuda")]
#[test]
fn cuda_fused() {
    type B = Autodiff<burn::backend::Cuda>;
    let dev = cuda_device();
    all::<B>(&dev, 2e-3);
    ties_and_nan::<B>(&dev);
    no_gradient::<B>(&dev);
}

#[cfg(feature = "test-cuda")]
#[test]
fn cuda_plain() {
    type B = Autodiff<CubeBackend<cubecl::cuda::CudaRuntime, f32, i32, u8>>;
    let dev = cuda_device();
    all::<B>(&dev, 2e-3);
    ties_and_nan::<B>(&dev);
}
