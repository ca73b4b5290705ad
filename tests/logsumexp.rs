//! logcumsumexp / logsumexp ([`ScanOp::LogSumExp`]) on the device (wgpu; lavapipe in CI) and
//! on the CPU path, against PyTorch's semantics computed in f64 on the host: -inf is the
//! identity (first slot of an exclusive scan, an empty reduction), a line of -inf stays -inf,
//! +inf stays +inf, NaN propagates, and inputs of ±1e4 (where `exp` overflows every float
//! type) give finite results.
//!
//! f64 runs on the CPU path and on CUDA; wgpu refuses it with the typed error (no f64
//! `exp` / `log` in its shaders), which the tests check.
//!
//! Tolerance: `|got - want| <= tol * (|want| + 1) * sqrt(terms)`, `tol` 1e-6 (f32), 1e-13
//! (f64), 2e-3 (f16: both sides see the same f16 inputs; the device accumulates in f32 and
//! rounds each output to f16); infinities and NaN exactly where the reference has them.

use crate::common;

use common::*;
use cubecl::Runtime;
use cubeprim::cpu::ScanElement;
use cubeprim::scan::tile_len;
use cubeprim::{DType, Element, Error, ScanOp, ScanOptions, Workspace};
use half::f16;
use rand::rngs::StdRng;
use rand::Rng;

const LSE: ScanOp = ScanOp::LogSumExp;

/// `log(exp(a) + exp(b))` in f64, written independently of the library's formula.
fn log_add_exp(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    if hi.is_infinite() {
        // +inf absorbs everything; hi = -inf means both are -inf.
        return hi;
    }
    hi + (lo - hi).exp().ln_1p()
}

/// The logcumsumexp of row-major `x` along `axis` in f64.
fn reference_scan(x: &[f64], shape: &[usize], axis: usize, opts: ScanOptions) -> Vec<f64> {
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut out = vec![0.0; x.len()];
    for o in 0..outer {
        for i in 0..inner {
            let mut acc = f64::NEG_INFINITY;
            for s in 0..n {
                let j = if opts.reverse { n - 1 - s } else { s };
                let at = (o * n + j) * inner + i;
                let next = log_add_exp(acc, x[at]);
                out[at] = if opts.exclusive { acc } else { next };
                acc = next;
            }
        }
    }
    out
}

/// The logsumexp of row-major `x` along `axis` (removed), or of everything, in f64.
fn reference_reduce(x: &[f64], shape: &[usize], axis: Option<usize>) -> Vec<f64> {
    let Some(axis) = axis else {
        return vec![x.iter().fold(f64::NEG_INFINITY, |a, &v| log_add_exp(a, v))];
    };
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let row = (0..n).map(|j| x[(o * n + j) * inner + i]);
            out.push(row.fold(f64::NEG_INFINITY, log_add_exp));
        }
    }
    out
}

fn tol(d: DType) -> f64 {
    match d {
        DType::F64 => 1e-13,
        DType::F32 => 1e-6,
        _ => 2e-3,
    }
}

/// `Err` with the first position where `got` is not within tolerance of `want`.
fn compare(d: DType, got: &[f64], want: &[f64], terms: usize) -> Result<(), String> {
    assert_eq!(got.len(), want.len(), "lengths");
    let scale = tol(d) * (terms.max(1) as f64).sqrt();
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() {
            g == w
        } else {
            (g - w).abs() <= scale * (w.abs() + 1.0)
        };
        if !ok {
            return Err(format!("at {i}: got {g}, want {w}"));
        }
    }
    Ok(())
}

/// Data kinds: moderate values, large magnitudes (exp overflows), and a mix with -inf, +inf
/// and NaN (for short rows: one NaN or +inf fixes the rest of its row).
#[derive(Debug, Clone, Copy)]
enum Kind {
    Moderate,
    Large,
    Special,
    /// About a third -inf, the rest moderate: long rows keep finite values past the -infs.
    NegInf,
}

fn values(rng: &mut StdRng, n: usize, kind: Kind) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let u: f64 = rng.random();
            match kind {
                Kind::Moderate => rng.random_range(-20.0..20.0),
                Kind::Large => rng.random_range(-1e4..1e4),
                Kind::Special if u < 0.06 => f64::NEG_INFINITY,
                Kind::Special if u < 0.07 => f64::INFINITY,
                Kind::Special if u < 0.08 => f64::NAN,
                Kind::NegInf if u < 0.35 => f64::NEG_INFINITY,
                _ => rng.random_range(-5.0..5.0),
            }
        })
        .collect()
}

/// Rounds to `E` and back, so that the reference sees the device's inputs.
fn round<E: Element>(v: &[f64]) -> (Vec<E>, Vec<f64>) {
    let e: Vec<E> = v.iter().map(|&x| E::from_f64(x)).collect();
    let back = e.iter().map(|x| x.to_f64()).collect();
    (e, back)
}

fn describe(d: DType, shape: &[usize], axis: usize, opts: ScanOptions, kind: Kind) -> String {
    format!(
        "{d} {shape:?} axis {axis} {kind:?} excl {} rev {}",
        opts.exclusive, opts.reverse
    )
}

/// The scan of `data` (row-major, `shape`) along `axis`, on the device (when it has `E`) and
/// on the CPU path, against the f64 reference. With `transposed`, the device reads the
/// transpose of a `[shape[1], shape[0]]` tensor (a strided view) instead.
#[allow(clippy::too_many_arguments)]
fn check_scan<E: Element + ScanElement>(
    c: &Client,
    ws: &mut Workspace<R>,
    data: &[f64],
    shape: &[usize],
    axis: usize,
    opts: ScanOptions,
    kind: Kind,
    transposed: bool,
) {
    let what = describe(E::DTYPE, shape, axis, opts, kind);
    let (x, xf) = round::<E>(data);
    let want = reference_scan(&xf, shape, axis, opts);
    let host = cubeprim::cpu::scan(&x, shape, axis, LSE, opts).unwrap();
    let host: Vec<f64> = host.iter().map(|v| v.to_f64()).collect();
    compare(E::DTYPE, &host, &want, shape[axis]).unwrap_or_else(|e| panic!("cpu {what}: {e}"));
    if !device_has::<E>(c) {
        let t = upload(c, &x, shape);
        let got = cubeprim::scan(c, &t, axis as isize, LSE, opts, ws);
        assert!(
            matches!(got, Err(Error::UnsupportedDType { .. })),
            "{what}: not supported by the runtime"
        );
        return;
    }
    let t = if transposed {
        assert_eq!(shape.len(), 2);
        // The tensor's memory is the transpose of `x`.
        let (a, b) = (shape[0], shape[1]);
        let mem: Vec<E> = (0..a * b).map(|k| x[(k % a) * b + k / a]).collect();
        upload(c, &mem, &[b, a]).transpose(0, 1).unwrap()
    } else {
        upload(c, &x, shape)
    };
    let y = cubeprim::scan(c, &t, axis as isize, LSE, opts, ws)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let got: Vec<f64> = y.to_vec::<E>(c).iter().map(|v| v.to_f64()).collect();
    compare(E::DTYPE, &got, &want, shape[axis])
        .unwrap_or_else(|e| panic!("device {what} (transposed {transposed}): {e}"));
}

fn check_reduce<E: Element + ScanElement>(
    c: &Client,
    ws: &mut Workspace<R>,
    data: &[f64],
    shape: &[usize],
    axis: Option<usize>,
    kind: Kind,
) {
    let what = format!("{} {shape:?} axis {axis:?} {kind:?}", E::DTYPE);
    let (x, xf) = round::<E>(data);
    let want = reference_reduce(&xf, shape, axis);
    let terms = axis.map_or(xf.len(), |a| shape[a]);
    let host = cubeprim::cpu::reduce(&x, shape, axis, LSE).unwrap();
    let host: Vec<f64> = host.iter().map(|v| v.to_f64()).collect();
    compare(E::DTYPE, &host, &want, terms).unwrap_or_else(|e| panic!("cpu {what}: {e}"));
    if !device_has::<E>(c) {
        let t = upload(c, &x, shape);
        let got = cubeprim::reduce(c, &t, axis.map(|a| a as isize), LSE, ws);
        assert!(
            matches!(got, Err(Error::UnsupportedDType { .. })),
            "{what}: not supported by the runtime"
        );
        return;
    }
    let t = upload(c, &x, shape);
    let y = cubeprim::reduce(c, &t, axis.map(|a| a as isize), LSE, ws)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let got: Vec<f64> = y.to_vec::<E>(c).iter().map(|v| v.to_f64()).collect();
    compare(E::DTYPE, &got, &want, terms).unwrap_or_else(|e| panic!("device {what}: {e}"));
}

/// Whether the device runs logsumexp on `E`: f64 needs f64 `exp` / `log1p`, which only CUDA
/// has among the runtimes (wgpu's shaders define them for 16- and 32-bit floats).
fn device_has<E: Element>(c: &Client) -> bool {
    supports(c, E::DTYPE) && (E::DTYPE != DType::F64 || R::name(c) == "cuda")
}

fn all_variants() -> [ScanOptions; 4] {
    let d = ScanOptions::default();
    [d, d.exclusive(), d.reverse(), d.exclusive().reverse()]
}

/// 1-D lengths around the tile sizes and powers of two: 0, 1, tile ± 1 (each vector width),
/// 2^k ± 1 (single tile and look-back).
fn lengths() -> Vec<usize> {
    let mut v = vec![0, 1, 2, 33];
    for vec in [1, 4] {
        let t = tile_len(vec);
        v.extend([t - 1, t, t + 1]);
    }
    v.extend([(1 << 13) - 1, (1 << 13) + 1, (1 << 16) + 1]);
    v
}

fn one_d<E: Element + ScanElement>(seed: u64, kinds: &[Kind]) {
    let Some(c) = client() else { return };
    let mut rng = rng(seed);
    let mut ws = Workspace::new();
    for (k, n) in lengths().into_iter().enumerate() {
        for &kind in kinds {
            let data = values(&mut rng, n, kind);
            // Every variant on a few lengths (each is a shader compile), inclusive elsewhere.
            let variants: &[ScanOptions] = if k % 4 == 1 {
                &all_variants()
            } else {
                &all_variants()[..1]
            };
            for &opts in variants {
                check_scan::<E>(&c, &mut ws, &data, &[n], 0, opts, kind, false);
            }
        }
    }
}

#[test]
fn scan_1d_f32() {
    one_d::<f32>(1, &[Kind::Moderate, Kind::Large, Kind::NegInf]);
}

#[test]
fn scan_1d_f64() {
    one_d::<f64>(2, &[Kind::Large, Kind::NegInf]);
}

#[test]
fn scan_1d_f16() {
    // |x| < 1e4 in f16 (the type stops at 65504).
    one_d::<f16>(3, &[Kind::Large, Kind::NegInf]);
}

/// Many short rows with -inf, +inf and NaN, rows of only -inf, on each axis, each variant,
/// contiguous and transposed views.
fn special_rows<E: Element + ScanElement>(seed: u64) {
    let Some(c) = client() else { return };
    let mut rng = rng(seed);
    let mut ws = Workspace::new();
    for shape in [[64usize, 37], [37, 64], [6, 700]] {
        let mut data = values(&mut rng, shape[0] * shape[1], Kind::Special);
        // Row 0 (along axis 1) and column 0 (along axis 0) all -inf.
        data[..shape[1]].fill(f64::NEG_INFINITY);
        for i in 0..shape[0] {
            data[i * shape[1]] = f64::NEG_INFINITY;
        }
        for axis in 0..2 {
            for (v, opts) in all_variants().into_iter().enumerate() {
                let transposed = v % 2 == 1;
                let kind = Kind::Special;
                check_scan::<E>(&c, &mut ws, &data, &shape, axis, opts, kind, transposed);
            }
        }
    }
}

#[test]
fn special_values_f32() {
    special_rows::<f32>(10);
}

#[test]
fn special_values_f64() {
    special_rows::<f64>(11);
}

#[test]
fn special_values_f16() {
    special_rows::<f16>(12);
}

/// A rank-3 tensor of random shape, every axis, every variant.
#[test]
fn random_shapes() {
    let Some(c) = client() else { return };
    let mut rng = rng(20);
    let mut ws = Workspace::new();
    for _ in 0..3 {
        let shape: Vec<usize> = (0..3).map(|_| rng.random_range(1..40)).collect();
        let n = shape.iter().product();
        let data = values(&mut rng, n, Kind::Moderate);
        for axis in 0..3 {
            let opts = all_variants()[rng.random_range(0..4)];
            check_scan::<f32>(
                &c,
                &mut ws,
                &data,
                &shape,
                axis,
                opts,
                Kind::Moderate,
                false,
            );
        }
    }
}

#[test]
fn reductions() {
    let Some(c) = client() else { return };
    let mut rng = rng(30);
    let mut ws = Workspace::new();
    for (shape, axis) in [
        (vec![5, 37], Some(1)),
        (vec![37, 5], Some(0)),
        (vec![3, 9000], Some(1)),
        (vec![4, 0], Some(1)),
        (vec![0], None),
        (vec![1], None),
        (vec![4097], None),
        (vec![(1 << 16) + 1], None),
    ] {
        let n = shape.iter().product();
        for kind in [Kind::Large, Kind::Special, Kind::NegInf] {
            let mut data = values(&mut rng, n, kind);
            if axis == Some(1) && n > 0 {
                // The first line all -inf: -inf.
                data[..shape[1]].fill(f64::NEG_INFINITY);
            }
            check_reduce::<f32>(&c, &mut ws, &data, &shape, axis, kind);
            check_reduce::<f64>(&c, &mut ws, &data, &shape, axis, kind);
        }
    }
    // f16 accumulates in f32.
    let data = values(&mut rng, 4097, Kind::Large);
    check_reduce::<f16>(&c, &mut ws, &data, &[4097], None, Kind::Large);
}

/// Integers have no logsumexp: the typed error, from every entry point.
#[test]
fn integers_are_refused() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let x = upload(&c, &[1i32, 2, 3, 4], &[2, 2]);
    let refused = |r: Result<(), Error>, what: &str| {
        assert!(
            matches!(
                r,
                Err(Error::UnsupportedDType {
                    dtype: DType::I32,
                    ..
                })
            ),
            "{what}: {r:?}"
        );
    };
    let opts = ScanOptions::default();
    refused(
        cubeprim::scan(&c, &x, 1, LSE, opts, &mut ws).map(drop),
        "scan",
    );
    refused(cubeprim::logcumsumexp(&c, &x, 0).map(drop), "logcumsumexp");
    let out = upload(&c, &[0i32; 4], &[2, 2]);
    refused(
        cubeprim::scan_into(&c, &x, &out, None, 1, LSE, opts, &mut ws),
        "scan_into",
    );
    refused(
        cubeprim::reduce(&c, &x, Some(1), LSE, &mut ws).map(drop),
        "reduce",
    );
    refused(
        cubeprim::reduce(&c, &x, None, LSE, &mut ws).map(drop),
        "reduce all",
    );
    let host = [1i32, 2, 3, 4];
    refused(
        cubeprim::cpu::scan(&host, &[4], 0, LSE, opts).map(drop),
        "cpu scan",
    );
    refused(
        cubeprim::cpu::reduce(&host, &[4], None, LSE).map(drop),
        "cpu reduce",
    );
}
