//! Shared test helpers: the device, random data, comparison with the CPU reference.
//!
//! # Tolerances (device vs `cubeprim::cpu`)
//!
//! * Integers (every op): exact, bit for bit (sums and products wrap on both sides).
//! * Max / min (every dtype): exact, bit for bit; a NaN must sit where the reference has one.
//! * Float sums: `|got - want| <= tol * (S + 1)`, where `S` is the running sum of `|x|` up to
//!   that position in scan order (the scan of the absolute values with the same options):
//!   the error of any summation order is bounded by a multiple of it. `tol` is `1e-5` for f32,
//!   `1e-12` for f64 and `1e-2` for f16 / bf16 (both sides accumulate in f32 and round each
//!   output to 16 bits, so differences are mostly one rounding step of the output).
//! * Float products: relative, `|got - want| <= tol * sqrt(k + 1) * |want| + tiny`, `k` the
//!   number of factors so far (rounding errors of a product grow like a random walk), with
//!   `tol` `1e-6` for f32 (about 16 units in the last place at k = 0), `1e-14` for f64 and
//!   `1e-2` for f16 / bf16; `tiny` is the smallest normal of the type (flushed subnormals).
//!   The data keep products far from overflow and underflow (see [`values_for`]).
#![allow(dead_code)]

pub mod codegen;

use cubecl::prelude::*;
use cubeprim::cpu::{self, ScanElement};
use cubeprim::tuning::{TileOrder, Tuning};
use cubeprim::{DType, DeviceTensor, Element, ScanOp, ScanOptions, Workspace};
use half::{bf16, f16};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The runtime of the kernel tests: wgpu (lavapipe in CI), or CUDA with the feature
/// `test-cuda` (the suite built for the H200).
#[cfg(not(feature = "test-cuda"))]
pub type R = cubecl::wgpu::WgpuRuntime;
#[cfg(feature = "test-cuda")]
pub type R = cubecl::cuda::CudaRuntime;
pub type Client = cubecl::client::ComputeClient<R>;

/// The device of [`R`] (lavapipe in CI). Under `CI=true` a missing device fails the test;
/// elsewhere the test is skipped with a message.
pub fn client() -> Option<Client> {
    let got = std::panic::catch_unwind(|| {
        let c = R::client(&Default::default());
        let _ = c.properties();
        c
    });
    match got {
        Ok(c) => Some(c),
        Err(_) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true but no wgpu device was found: install mesa-vulkan-drivers (lavapipe)")
        }
        Err(_) => {
            eprintln!("no wgpu device: kernel test skipped (set CI=true to make this a failure)");
            None
        }
    }
}

thread_local! {
    /// The [`Tuning`] that [`workspace`] gives on this thread (set by [`with_tuning`]).
    static TUNING: std::cell::Cell<Tuning> = std::cell::Cell::new(Tuning::default());
}

/// A growable workspace with this thread's tuning (the default, or the one [`with_tuning`] runs
/// under): the kernel tests make their workspaces with it, so that a variant test runs them
/// again with another tuning.
pub fn workspace() -> Workspace<R> {
    Workspace::new().with_tuning(TUNING.with(|t| t.get()))
}

/// Runs `f` with [`workspace`] giving `tuning` on this thread.
pub fn with_tuning(tuning: Tuning, f: impl FnOnce()) {
    let before = TUNING.with(|t| t.replace(tuning));
    struct Restore(Tuning);
    impl Drop for Restore {
        fn drop(&mut self) {
            TUNING.with(|t| t.set(self.0));
        }
    }
    let _restore = Restore(before);
    f();
}

/// The plane variants of the single-pass kernels (compaction, run-length, unique) and of the
/// sorts' ranking: wgpu reports no plane operations on CPU adapters, yet lavapipe runs them.
pub const PLANE_OPS: Tuning = Tuning {
    plane_ops: cubeprim::PlaneOps::Force,
    ..Tuning::DEFAULT
};

/// Tile ids from the cube position (CUDA's order) with the shared-memory look-back, where any
/// cube whose predecessor has not started falls back, and reduce cubes of 3 tiles (the test
/// sizes plan one; 2^28 elements plan 8).
pub const POSITION: Tuning = Tuning {
    tile_order: TileOrder::Position,
    plane_ops: cubeprim::PlaneOps::Off,
    reduce_tiles_per_cube: Some(3),
    ..Tuning::DEFAULT
};

/// Runs the tests `$t` (functions of the calling module) under each tuning of `$tunings`,
/// with [`workspace`] giving it: `tuning_variants!(test_name: [PLANE_OPS, POSITION] => a, b);`
/// defines the test `test_name`.
#[macro_export]
macro_rules! tuning_variants {
    ($name:ident: [$($tuning:expr),+] => $($t:ident),+ $(,)?) => {
        #[test]
        fn $name() {
            for tuning in [$($tuning),+] {
                $(
                    eprintln!("{} under {tuning:?}", stringify!($t));
                    $crate::common::with_tuning(tuning, $t);
                )+
            }
        }
    };
}

pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// Whether the runtime has `dtype` (the rule the library applies before it returns
/// `Error::UnsupportedDType`).
pub fn supports(c: &Client, dtype: DType) -> bool {
    cubeprim::supports_dtype(c, dtype)
}

/// The index dtype the runtime's indexed scans return.
pub fn index_dtype(c: &Client) -> DType {
    if supports(c, DType::I64) {
        DType::I64
    } else {
        DType::I32
    }
}

/// Random values of `dtype` (as f64) suited to each op: small integers, or floats in a range
/// where products stay finite.
pub fn random_values(rng: &mut StdRng, n: usize, dtype: DType, for_prod: bool) -> Vec<f64> {
    (0..n)
        .map(|_| {
            if for_prod {
                if dtype.is_float() {
                    rng.random_range(0.9..1.1)
                } else {
                    rng.random_range(1..=3) as f64
                }
            } else if dtype.is_float() {
                rng.random_range(-4.0..4.0)
            } else if matches!(dtype, DType::U32 | DType::U64) {
                rng.random_range(0..1000) as f64
            } else {
                rng.random_range(-1000..1000) as f64
            }
        })
        .collect()
}

pub fn to_elems<E: Element>(v: &[f64]) -> Vec<E> {
    v.iter().map(|&x| E::from_f64(x)).collect()
}

pub fn upload<E: Element>(c: &Client, v: &[E], shape: &[usize]) -> DeviceTensor<R> {
    DeviceTensor::from_slice(c, v, shape).unwrap()
}

/// A host element the tests generate data for.
pub trait TestElem: ScanElement {
    /// A value drawn uniformly from the whole type (integers only; floats: `random_values`).
    fn wide(rng: &mut StdRng) -> Self;
    /// The largest / smallest value (±inf for floats).
    fn top() -> Self;
    fn bottom() -> Self;
    fn nan() -> Option<Self>;
}

macro_rules! int_test_elem {
    ($($t:ty),*) => {$(
        impl TestElem for $t {
            fn wide(rng: &mut StdRng) -> Self {
                rng.random::<$t>()
            }
            fn top() -> Self {
                <$t>::MAX
            }
            fn bottom() -> Self {
                <$t>::MIN
            }
            fn nan() -> Option<Self> {
                None
            }
        }
    )*};
}
int_test_elem!(i32, u32, i64, u64);

macro_rules! float_test_elem {
    ($($t:ty),*) => {$(
        impl TestElem for $t {
            fn wide(rng: &mut StdRng) -> Self {
                <$t as Element>::from_f64(rng.random_range(-4.0..4.0))
            }
            fn top() -> Self {
                <$t>::INFINITY
            }
            fn bottom() -> Self {
                <$t>::NEG_INFINITY
            }
            fn nan() -> Option<Self> {
                Some(<$t>::NAN)
            }
        }
    )*};
}
float_test_elem!(f32, f64, f16, bf16);

/// Random data for `op`, never all zeros:
/// * sums: floats in `[-4, 4)`; integers over the whole type half of the time (so sums wrap),
///   else small;
/// * products: floats `±exp(u)`, `u` uniform in `[-r, r]` with `r` chosen from `n` so the
///   running product (a random walk in log space) stays far inside the type's range; integers
///   odd (so a wrapping product never becomes 0): `{-3, -1, 1, 3}` or `{1, 3, 5, 7}`;
/// * max / min: floats in `[-4, 4)`, integers over the whole type.
pub fn values_for<E: TestElem>(rng: &mut StdRng, n: usize, op: ScanOp) -> Vec<E> {
    values_for_span(rng, n, op, n)
}

/// [`values_for`], with the width of float products chosen for `span` factors instead of `n`:
/// a view that repeats each of `n` values `k` times (a stride-0 dimension) walks like `k^2 n`
/// independent factors (a repeated factor moves the log of a product `k` times as far).
pub fn values_for_span<E: TestElem>(rng: &mut StdRng, n: usize, op: ScanOp, span: usize) -> Vec<E> {
    let d = E::DTYPE;
    match op {
        ScanOp::Sum => {
            if !d.is_float() && rng.random_bool(0.5) {
                (0..n).map(|_| E::wide(rng)).collect()
            } else {
                to_elems(&random_values(rng, n, d, false))
            }
        }
        ScanOp::Prod => {
            if d.is_float() {
                // Log-range of the type we may use, then a width whose random walk over `n`
                // steps stays within a quarter of it with a huge margin.
                let ln_range: f64 = match d {
                    DType::F16 => 9.0,
                    DType::BF16 | DType::F32 => 80.0,
                    _ => 700.0,
                };
                let r = (ln_range / 8.0 / (span.max(n).max(1) as f64).sqrt()).min(0.5);
                (0..n)
                    .map(|_| {
                        let s = if rng.random_bool(0.5) { -1.0 } else { 1.0 };
                        E::from_f64(s * rng.random_range(-r..=r).exp())
                    })
                    .collect()
            } else {
                let set: [f64; 4] = if matches!(d, DType::U32 | DType::U64) {
                    [1.0, 3.0, 5.0, 7.0]
                } else {
                    [-3.0, -1.0, 1.0, 3.0]
                };
                (0..n)
                    .map(|_| E::from_f64(set[rng.random_range(0..4)]))
                    .collect()
            }
        }
        // Max, min and logsumexp.
        _ => {
            if d.is_float() {
                to_elems(&random_values(rng, n, d, false))
            } else {
                (0..n).map(|_| E::wide(rng)).collect()
            }
        }
    }
}

/// Data for index tests: values from a tiny set (many ties), with the type's extremes (which
/// tie with the identity of max / min: ±inf for floats, MIN / MAX for integers) inserted with
/// probability `p_ext` each and, for floats, NaN with probability `p_nan`.
pub fn tie_values<E: TestElem>(rng: &mut StdRng, n: usize, p_ext: f64, p_nan: f64) -> Vec<E> {
    (0..n)
        .map(|_| {
            let u: f64 = rng.random();
            if u < p_ext {
                E::top()
            } else if u < 2.0 * p_ext {
                E::bottom()
            } else if u < 2.0 * p_ext + p_nan && E::nan().is_some() {
                E::nan().unwrap()
            } else {
                E::from_f64([1.0, 2.0, 3.0][rng.random_range(0..3)])
            }
        })
        .collect()
}

/// The resolved axis (panics on a bad one: the callers pass good axes).
pub fn resolve(axis: isize, rank: usize) -> usize {
    if axis < 0 {
        (axis + rank as isize) as usize
    } else {
        axis as usize
    }
}

pub fn tol_sum(d: DType) -> f64 {
    match d {
        DType::F32 => 1e-5,
        DType::F64 => 1e-12,
        _ => 1e-2,
    }
}

pub fn tol_prod(d: DType) -> f64 {
    match d {
        DType::F32 => 1e-6,
        DType::F64 => 1e-14,
        _ => 1e-2,
    }
}

/// Whether `got`, a float sum of `terms` terms stored as `d`, agrees with `exact` (the sum in
/// f64; `abs_sum` the sum of |x|): within `tol_sum(d) * (abs_sum + 1)`, plus the f64 sum's own
/// error bound (`terms` ulps of `abs_sum`, which matters for f64 data only). Past the largest
/// finite value the stored sum is ±inf: a result of ±inf is right where `exact` is within
/// that margin of the overflow threshold (either rounding may then be the device's).
pub fn sum_within(d: DType, got: f64, exact: f64, abs_sum: f64, terms: f64) -> bool {
    if !exact.is_finite() {
        return false;
    }
    let lim = tol_sum(d) * (abs_sum + 1.0) + terms * f64::EPSILON * abs_sum;
    if got.is_infinite() {
        got.signum() == exact.signum() && exact.abs() + lim >= overflow_threshold(d)
    } else {
        (got - exact).abs() <= lim
    }
}

/// The smallest magnitude that rounds to infinity when stored as the float type `d`.
pub fn overflow_threshold(d: DType) -> f64 {
    match d {
        DType::F16 => 65520.0,
        DType::BF16 => bf16::MAX.to_f64() * (1.0 + 2f64.powi(-9)),
        DType::F32 => f32::MAX as f64 * (1.0 + 2f64.powi(-25)),
        _ => f64::MAX,
    }
}

/// Whether `got`, a float product of `factors` factors stored as `d`, is within the rounding
/// bound of any order of evaluation of the `exact` product (f64): `factors` roundings of the
/// accumulator (f32 for f16 / bf16) and one of the storage type.
pub fn prod_within(d: DType, got: f64, exact: f64, factors: f64) -> bool {
    let u = |d: DType| match d {
        DType::F64 => f64::EPSILON / 2.0,
        DType::F16 => f16::EPSILON.to_f64() / 2.0,
        DType::BF16 => bf16::EPSILON.to_f64() / 2.0,
        _ => f32::EPSILON as f64 / 2.0,
    };
    let acc = if d == DType::F64 {
        u(DType::F64)
    } else {
        u(DType::F32)
    };
    exact.is_finite()
        && (got - exact).abs() <= ((factors + 1.0) * acc + u(d)) * exact.abs() + tiny(d)
}

/// The smallest normal value of `d`.
pub fn tiny(d: DType) -> f64 {
    match d {
        DType::F32 => f32::MIN_POSITIVE as f64,
        DType::F64 => f64::MIN_POSITIVE,
        DType::F16 => f16::MIN_POSITIVE.to_f64(),
        _ => bf16::MIN_POSITIVE.to_f64(),
    }
}

fn same_bits<E: Element>(a: E, b: E) -> bool {
    bytemuck::bytes_of(&a) == bytemuck::bytes_of(&b)
}

/// Row-major coordinates of flat index `i`.
pub fn coords(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        if shape[d] > 0 {
            c[d] = i % shape[d];
            i /= shape[d];
        }
    }
    c
}

/// Compares a device result with the reference under the tolerances of this module's doc.
/// `input` is the (contiguous) input both were computed from.
#[allow(clippy::too_many_arguments)]
pub fn compare<E: ScanElement>(
    got: &[E],
    want: &[E],
    input: &[E],
    shape: &[usize],
    axis: usize,
    op: ScanOp,
    opts: ScanOptions,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} elements, want {}", got.len(), want.len()));
    }
    let d = E::DTYPE;
    let approx = d.is_float() && matches!(op, ScanOp::Sum | ScanOp::Prod);
    // Per-position scale: running sum of |x| (sums) or count of factors (products).
    let scale: Vec<f64> = if approx {
        let v: Vec<f64> = input
            .iter()
            .map(|x| {
                if op == ScanOp::Sum {
                    x.to_f64().abs()
                } else {
                    1.0
                }
            })
            .collect();
        cpu::scan(&v, shape, axis, ScanOp::Sum, opts).unwrap()
    } else {
        Vec::new()
    };
    // Sums are compared with the sum in f64 (`want`, the CPU path's sum in the element's own
    // accumulator, drifts by up to n ulps over n equal terms of a stride-0 view, further
    // than the device's tree), within `tol * (S + 1)` plus the f64 sum's own bound.
    // Products likewise keep the f64 product beside the CPU path's: over the k equal factors
    // of a stride-0 view the rounding errors do not cancel, and both the device and the CPU
    // path may sit up to k roundings from the exact product (γ_k), beyond the random-walk
    // tolerance against each other (a soak case on CUDA: 1 086 factors, 3.3e-5 apart).
    let exact: Vec<f64> = if approx {
        let v: Vec<f64> = input.iter().map(|x| x.to_f64()).collect();
        cpu::scan(&v, shape, axis, op, opts).unwrap()
    } else {
        Vec::new()
    };
    let terms = shape.get(axis).copied().unwrap_or(1) as f64;
    let mut bad = 0usize;
    let mut first = None;
    for i in 0..got.len() {
        let (g, w) = (got[i], want[i]);
        let ok = if same_bits(g, w) || (g.to_f64().is_nan() && w.to_f64().is_nan()) {
            true
        } else if approx && op == ScanOp::Sum {
            sum_within(d, g.to_f64(), exact[i], scale[i], terms)
        } else if approx && w.to_f64().is_finite() {
            let (g, w) = (g.to_f64(), w.to_f64());
            let lim = tol_prod(d) * (scale[i] + 1.0).sqrt() * w.abs() + tiny(d);
            (g - w).abs() <= lim || prod_within(d, g, exact[i], scale[i])
        } else {
            false
        };
        if !ok {
            bad += 1;
            if first.is_none() {
                first = Some(i);
            }
        }
    }
    match first {
        None => Ok(()),
        Some(i) => Err(format!(
            "{bad} of {} elements differ; first at {:?} (flat {i}): got {:?}, want {:?}{}",
            got.len(),
            coords(i, shape),
            got[i],
            want[i],
            if approx {
                format!(" (scale {})", scale[i])
            } else {
                String::new()
            }
        )),
    }
}

/// Reads an index tensor (i64 or i32) as i64.
pub fn read_indices(c: &Client, t: &DeviceTensor<R>) -> Vec<i64> {
    match t.dtype {
        DType::I64 => t.to_vec::<i64>(c),
        DType::I32 => t.to_vec::<i32>(c).into_iter().map(i64::from).collect(),
        d => panic!("index tensor of dtype {d}"),
    }
}

fn describe<E: Element>(x: &DeviceTensor<R>, axis: isize, op: ScanOp, opts: ScanOptions) -> String {
    format!(
        "{} shape {:?} strides {:?} offset {} axis {axis} {op:?} {opts:?}",
        E::DTYPE,
        x.shape,
        x.strides,
        x.offset
    )
}

/// Scans the view `x` on the device and compares with `cpu::scan` of its gathered data.
/// Panics with the case and the first difference.
pub fn check_scan<E: ScanElement>(
    c: &Client,
    ws: &mut Workspace<R>,
    x: &DeviceTensor<R>,
    axis: isize,
    op: ScanOp,
    opts: ScanOptions,
) {
    let data: Vec<E> = x.to_vec(c);
    check_scan_data(c, ws, x, &data, axis, op, opts)
}

/// As [`check_scan`], with the view's data (row-major) given.
pub fn check_scan_data<E: ScanElement>(
    c: &Client,
    ws: &mut Workspace<R>,
    x: &DeviceTensor<R>,
    data: &[E],
    axis: isize,
    op: ScanOp,
    opts: ScanOptions,
) {
    let what = describe::<E>(x, axis, op, opts);
    let ax = resolve(axis, x.rank());
    let want = cpu::scan(data, &x.shape, ax, op, opts).unwrap();
    let y = cubeprim::scan(c, x, axis, op, opts, ws).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(y.shape, x.shape, "{what}: output shape");
    assert!(y.is_contiguous(), "{what}: output not contiguous");
    assert_eq!(y.dtype, E::DTYPE, "{what}: output dtype");
    let got: Vec<E> = y.to_vec(c);
    if let Err(e) = compare(&got, &want, data, &x.shape, ax, op, opts) {
        panic!("{what}: {e}");
    }
}

/// Indexed scan of the view `x` against `cpu::scan_with_indices`: values bit for bit, indices
/// exactly. Returns `true` (kept so callers can count the cases that ran).
pub fn check_scan_indices<E: ScanElement>(
    c: &Client,
    ws: &mut Workspace<R>,
    x: &DeviceTensor<R>,
    axis: isize,
    op: ScanOp,
    opts: ScanOptions,
) -> bool {
    let what = format!("indexed {}", describe::<E>(x, axis, op, opts));
    let data: Vec<E> = x.to_vec(c);
    let ax = resolve(axis, x.rank());
    let (want, want_idx) = cpu::scan_with_indices(&data, &x.shape, ax, op, opts).unwrap();
    let (y, idx) = match cubeprim::scan_with_indices(c, x, axis, op, opts, ws) {
        Ok(r) => r,
        Err(e) => panic!("{what}: {e}"),
    };
    assert_eq!(y.shape, x.shape, "{what}: output shape");
    assert_eq!(idx.shape, x.shape, "{what}: index shape");
    assert_eq!(idx.dtype, index_dtype(c), "{what}: index dtype");
    assert!(
        y.is_contiguous() && idx.is_contiguous(),
        "{what}: output not contiguous"
    );
    let got: Vec<E> = y.to_vec(c);
    if let Err(e) = compare(&got, &want, &data, &x.shape, ax, op, opts) {
        panic!("{what}: values: {e}");
    }
    let got_idx = read_indices(c, &idx);
    let bad: Vec<usize> = (0..got_idx.len())
        .filter(|&i| got_idx[i] != want_idx[i])
        .collect();
    if let Some(&i) = bad.first() {
        panic!(
            "{what}: {} of {} indices differ; first at {:?}: got {}, want {} (value {:?})",
            bad.len(),
            got_idx.len(),
            coords(i, &x.shape),
            got_idx[i],
            want_idx[i],
            want[i]
        );
    }
    true
}

/// Every combination of exclusive × reverse on top of `base`.
pub fn variants(base: ScanOptions) -> [ScanOptions; 4] {
    [
        base,
        base.exclusive(),
        base.reverse(),
        base.exclusive().reverse(),
    ]
}

pub const OPS: [ScanOp; 4] = [ScanOp::Sum, ScanOp::Prod, ScanOp::Max, ScanOp::Min];

/// Row-major copy of the view (`shape`, `strides`, `offset`) of `all` (an independent
/// re-implementation, so the reference does not rely on the library's own gather).
pub fn gather_view<E: Copy>(
    all: &[E],
    shape: &[usize],
    strides: &[usize],
    offset: usize,
) -> Vec<E> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|i| {
            let at: usize = coords(i, shape)
                .iter()
                .zip(strides)
                .map(|(c, s)| c * s)
                .sum();
            all[offset + at]
        })
        .collect()
}
