//! `linear_recurrence` (`h[t] = a[t] h[t-1] + b[t]`) on the device (wgpu; lavapipe in CI) and
//! on the CPU path, against a sequential f64 loop over the same (rounded) inputs: sizes 0, 1,
//! tile ± 1 and 2^k ± 1, forward and reverse, with and without an initial state, every axis
//! of 3-D shapes, strided views of different layouts, f16 / bf16, the multi-tile look-back with
//! its fallback forced, and the typed errors.
//!
//! Tolerance: `|got - want| <= tol * (S + 1)`, where `S` is the same recurrence over `|a|`,
//! `|b|` and `|h0|` (a bound on every term's magnitude, as the running sum of `|x|` is for a
//! sum); `tol` 1e-5 for f32 and 1e-12 for f64 (CPU), 1e-2 for f16 / bf16 (both sides round
//! each output to 16 bits).

use crate::common;

use common::*;
use cubeprim::cpu::ScanElement;
use cubeprim::ops::Affine;
use cubeprim::scan::tile_len;
use cubeprim::{
    DType, DeviceTensor, Element, Error, PlaneOps, RecurrenceOptions, ScanTuning, Workspace,
};
use half::{bf16, f16};
use rand::rngs::StdRng;
use rand::Rng;

/// The recurrence of row-major `a`, `b` along `axis` in f64, and its bound `S` (see the
/// module).
fn reference(
    a: &[f64],
    b: &[f64],
    h0: Option<&[f64]>,
    shape: &[usize],
    axis: usize,
    reverse: bool,
) -> (Vec<f64>, Vec<f64>) {
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut h = vec![0.0; b.len()];
    let mut s = vec![0.0; b.len()];
    for o in 0..outer {
        for i in 0..inner {
            let mut acc = h0.map_or(0.0, |h0| h0[o * inner + i]);
            let mut bound = acc.abs();
            for k in 0..n {
                let t = if reverse { n - 1 - k } else { k };
                let at = (o * n + t) * inner + i;
                acc = a[at] * acc + b[at];
                bound = a[at].abs() * bound + b[at].abs();
                h[at] = acc;
                s[at] = bound;
            }
        }
    }
    (h, s)
}

fn tol(d: DType) -> f64 {
    match d {
        DType::F64 => 1e-12,
        DType::F32 => 1e-5,
        _ => 1e-2,
    }
}

fn compare(d: DType, got: &[f64], want: &[f64], bound: &[f64]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} values, want {}", got.len(), want.len()));
    }
    for (i, ((&g, &w), &s)) in got.iter().zip(want).zip(bound).enumerate() {
        // NaN fails too.
        let within = (g - w).abs() <= tol(d) * (s + 1.0);
        if !within {
            return Err(format!("at {i}: got {g}, want {w} (bound {s})"));
        }
    }
    Ok(())
}

/// Multipliers: mostly decays in [0.5, 1], some negative, some exactly 0 and 1.
fn multipliers(rng: &mut StdRng, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let u: f64 = rng.random();
            if u < 0.02 {
                0.0
            } else if u < 0.1 {
                1.0
            } else if u < 0.2 {
                rng.random_range(-1.0..-0.5)
            } else {
                rng.random_range(0.5..1.0)
            }
        })
        .collect()
}

fn inputs(rng: &mut StdRng, n: usize) -> (Vec<f64>, Vec<f64>) {
    let a = multipliers(rng, n);
    let b = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    (a, b)
}

/// Rounds to `E` and back, so that the reference sees the device's inputs.
fn round<E: Element>(v: &[f64]) -> (Vec<E>, Vec<f64>) {
    let e: Vec<E> = v.iter().map(|&x| E::from_f64(x)).collect();
    let back = e.iter().map(|x| x.to_f64()).collect();
    (e, back)
}

fn to_f64<E: Element>(v: &[E]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64()).collect()
}

/// One case on the CPU path and the device, contiguous inputs.
#[allow(clippy::too_many_arguments)]
fn check<E: Element + ScanElement>(
    c: &Client,
    ws: &mut Workspace<R>,
    rng: &mut StdRng,
    shape: &[usize],
    axis: usize,
    opts: RecurrenceOptions,
    with_h0: bool,
) {
    let n: usize = shape.iter().product();
    let (a, b) = inputs(rng, n);
    let hshape = cubeprim::recurrence::initial_state_shape(shape, axis);
    let rows: usize = hshape.iter().product();
    let h0: Vec<f64> = (0..rows).map(|_| rng.random_range(-2.0..2.0)).collect();
    let (ae, af) = round::<E>(&a);
    let (be, bf) = round::<E>(&b);
    let (he, hf) = round::<E>(&h0);
    let (want, bound) = reference(
        &af,
        &bf,
        with_h0.then_some(&hf[..]),
        shape,
        axis,
        opts.reverse,
    );
    let what = format!("{} {shape:?} axis {axis} {opts:?} h0 {with_h0}", E::DTYPE);
    let host = cubeprim::cpu::linear_recurrence(
        &ae,
        &be,
        with_h0.then_some(&he[..]),
        shape,
        axis,
        opts.reverse,
    )
    .unwrap();
    compare(E::DTYPE, &to_f64(&host), &want, &bound).unwrap_or_else(|e| panic!("cpu {what}: {e}"));
    let ta = upload(c, &ae, shape);
    let tb = upload(c, &be, shape);
    let th = upload(c, &he, &hshape);
    let got =
        cubeprim::linear_recurrence(c, &ta, &tb, with_h0.then_some(&th), axis as isize, opts, ws)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got.shape, shape);
    compare(E::DTYPE, &to_f64(&got.to_vec::<E>(c)), &want, &bound)
        .unwrap_or_else(|e| panic!("device {what}: {e}"));
}

/// 1-D rows of every length class (0, 1, small tiles, tile ± 1, 2^k ± 1), both directions,
/// with and without `h0`.
#[test]
fn lengths_and_directions() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let mut rng = rng(40);
    let tile = tile_len(4);
    let mut lens = vec![
        0usize,
        1,
        2,
        3,
        31,
        32,
        33,
        257,
        1023,
        1025,
        tile - 1,
        tile,
        tile + 1,
    ];
    lens.extend([(1 << 15) + 1, (1 << 17) - 1, 3 * tile + 5]);
    for &n in &lens {
        for reverse in [false, true] {
            let opts = RecurrenceOptions {
                reverse,
                ..Default::default()
            };
            check::<f32>(&c, &mut ws, &mut rng, &[n], 0, opts, n % 2 == 1);
        }
    }
}

/// Every axis of 3-D shapes (rows of many tiles, and many short rows), with `h0`.
#[test]
fn every_axis() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let mut rng = rng(41);
    for shape in [
        [3usize, 5, 7],
        [2, 1, 9000],
        [4, 5000, 3],
        [1, 1, 1],
        [7, 0, 3],
    ] {
        for axis in 0..3 {
            for reverse in [false, true] {
                let opts = RecurrenceOptions {
                    reverse,
                    ..Default::default()
                };
                check::<f32>(&c, &mut ws, &mut rng, &shape, axis, opts, axis != 1);
            }
        }
    }
}

/// f64 on the device (chunks of 32 steps solved in three steps, recursively: no look-back):
/// lengths around one, two and three levels of chunks, both directions, with and without `h0`,
/// every axis of 3-D shapes, the staged kernels' blocks (lengths around them, blocks across
/// short rows, `inner` 1 to 16) and the first `inner` past them, a strided view, and the
/// tolerance of f64 (1e-12 of the bound).
/// lavapipe has f64; a runtime without it refuses with `UnsupportedDType` (CUDA always has it).
#[test]
fn f64_on_the_device() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let mut rng = rng(46);
    if !supports(&c, DType::F64) {
        let a64 = upload(&c, &[0.5f64; 4], &[4]);
        let got = cubeprim::linear_recurrence(&c, &a64, &a64, None, 0, Default::default(), &mut ws);
        assert!(
            matches!(got, Err(Error::UnsupportedDType { .. })),
            "{got:?}"
        );
        assert!(
            std::env::var("CI").is_err(),
            "CI's lavapipe is expected to have f64"
        );
        return;
    }
    for n in [0usize, 1, 2, 31, 32, 33, 1023, 1024, 1025, 32 * 32 * 32 + 5] {
        for reverse in [false, true] {
            let opts = RecurrenceOptions {
                reverse,
                ..Default::default()
            };
            check::<f64>(&c, &mut ws, &mut rng, &[n], 0, opts, n % 2 == 0);
        }
    }
    for shape in [[3usize, 5, 7], [2, 1, 2000], [4, 700, 3], [7, 0, 3]] {
        for axis in 0..3 {
            for reverse in [false, true] {
                let opts = RecurrenceOptions {
                    reverse,
                    ..Default::default()
                };
                check::<f64>(&c, &mut ws, &mut rng, &shape, axis, opts, axis != 1);
            }
        }
    }
    // The staged kernels (`inner` up to 16): a cube takes `64 / inner` chunks of 32 steps
    // (2048 steps for `inner == 1`; 1024 where the device has 16 KiB of shared memory), across
    // rows. Lengths around one and two blocks, short rows whose blocks start mid-row, `inner`
    // that does not divide the block, the largest staged `inner` and the first unstaged one.
    let block = 2048usize;
    for n in [block - 1, block, block + 1, 2 * block + 1, 32 * block + 7] {
        for reverse in [false, true] {
            let opts = RecurrenceOptions {
                reverse,
                ..Default::default()
            };
            check::<f64>(&c, &mut ws, &mut rng, &[n], 0, opts, n % 2 == 1);
        }
    }
    for (shape, axis) in [
        ([3usize, block + 1], 1),
        ([70, 40], 1),
        ([1000, 3], 1),
        ([5, 33], 1),
        ([block + 1, 2], 0),
        ([673, 3], 0),
        ([1345, 3], 0),
        ([1100, 16], 0),
        ([2, 1100], 1),
        ([4, 1], 1),
    ] {
        for reverse in [false, true] {
            for with_h0 in [false, true] {
                let opts = RecurrenceOptions {
                    reverse,
                    ..Default::default()
                };
                check::<f64>(&c, &mut ws, &mut rng, &shape, axis, opts, with_h0);
            }
        }
    }
    for shape in [[2usize, 673, 3], [2, 700, 16], [2, 700, 17], [9, 65, 5]] {
        for reverse in [false, true] {
            let opts = RecurrenceOptions {
                reverse,
                ..Default::default()
            };
            check::<f64>(&c, &mut ws, &mut rng, &shape, 1, opts, reverse);
        }
    }
    // A transposed view of `a` (copied to a contiguous buffer first), into a given output.
    let (rows, len) = (3usize, 1500usize);
    let (a, b) = inputs(&mut rng, rows * len);
    let at: Vec<f64> = (0..len * rows)
        .map(|k| a[(k % rows) * len + k / rows])
        .collect();
    let ta = upload(&c, &at, &[len, rows]).transpose(0, 1).unwrap();
    let tb = upload(&c, &b, &[rows, len]);
    let out = DeviceTensor::<R>::empty(&c, &[rows, len], DType::F64);
    let opts = RecurrenceOptions::default().reverse();
    cubeprim::linear_recurrence_into(&c, &ta, &tb, None, &out, 1, opts, &mut ws).unwrap();
    let (want, bound) = reference(&a, &b, None, &[rows, len], 1, true);
    compare(DType::F64, &out.to_vec::<f64>(&c), &want, &bound).unwrap();
}

/// f16 and bf16 (computed in f32, rounded to 16 bits once per output).
#[test]
fn half_precision() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let mut rng = rng(42);
    for (shape, axis) in [([3usize, 4097], 1), ([33, 6], 0)] {
        let opts = RecurrenceOptions::default();
        if supports(&c, DType::F16) {
            check::<f16>(&c, &mut ws, &mut rng, &shape, axis, opts, true);
        }
        if supports(&c, DType::BF16) {
            check::<bf16>(&c, &mut ws, &mut rng, &shape, axis, opts.reverse(), false);
        }
    }
}

/// The look-back with tiles of 32 elements: patient, and eager (every silent predecessor
/// reduced by the waiting cube itself, which then reads `a` as well as `b`), with and without
/// plane operations.
#[test]
fn lookback_and_fallback() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let mut rng = rng(43);
    for spins in [1u32, 1000] {
        for plane_ops in [PlaneOps::Force, PlaneOps::Off] {
            for reverse in [false, true] {
                let opts = RecurrenceOptions {
                    reverse,
                    plane_ops,
                    tuning: Some(ScanTuning {
                        threads: 32,
                        vectors_per_thread: 1,
                        windows: 2,
                        spins,
                        stage: true,
                        async_copy: true,
                    }),
                };
                check::<f32>(&c, &mut ws, &mut rng, &[3, 5003], 1, opts, true);
            }
        }
    }
}

/// Strided views: `a` transposed against a contiguous `b` (copied to one layout first), both
/// transposed alike (read in place), an offset view, and `h0` as a strided view.
#[test]
fn views() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let mut rng = rng(44);
    let (rows, n) = (6usize, 700usize);
    let (a, b) = inputs(&mut rng, rows * n);
    let h0: Vec<f64> = (0..2 * rows).map(|_| rng.random_range(-2.0..2.0)).collect();
    let (ae, af) = round::<f32>(&a);
    let (be, bf) = round::<f32>(&b);
    // Memory of the transposes: `[n, rows]` row-major holding `[rows, n]`'s transpose.
    let tr = |x: &[f32]| -> Vec<f32> {
        (0..rows * n)
            .map(|k| x[(k % rows) * n + k / rows])
            .collect()
    };
    let ta_t = upload(&c, &tr(&ae), &[n, rows]).transpose(0, 1).unwrap();
    let tb_t = upload(&c, &tr(&be), &[n, rows]).transpose(0, 1).unwrap();
    let ta = upload(&c, &ae, &[rows, n]);
    let tb = upload(&c, &be, &[rows, n]);
    // h0: every other element of a buffer of 2 * rows.
    let hbuf = upload(
        &c,
        &h0.iter().map(|&x| x as f32).collect::<Vec<_>>(),
        &[rows, 2],
    );
    let th = hbuf.narrow(1, 1, 1).unwrap();
    let th =
        cubeprim::DeviceTensor::from_parts(th.handle, vec![rows], vec![2], th.offset, th.dtype);
    let hf: Vec<f64> = (0..rows).map(|r| h0[2 * r + 1] as f32 as f64).collect();
    for reverse in [false, true] {
        let opts = RecurrenceOptions {
            reverse,
            ..Default::default()
        };
        let (want, bound) = reference(&af, &bf, Some(&hf), &[rows, n], 1, reverse);
        for (name, x, y) in [
            ("a transposed", &ta_t, &tb),
            ("b transposed", &ta, &tb_t),
            ("both transposed", &ta_t, &tb_t),
        ] {
            let got = cubeprim::linear_recurrence(&c, x, y, Some(&th), 1, opts, &mut ws)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            compare(DType::F32, &to_f64(&got.to_vec::<f32>(&c)), &want, &bound)
                .unwrap_or_else(|e| panic!("{name} reverse {reverse}: {e}"));
        }
    }
    // An offset view: rows 1.. of both.
    let xa = ta.narrow(0, 1, rows - 1).unwrap();
    let xb = tb.narrow(0, 1, rows - 1).unwrap();
    let got =
        cubeprim::linear_recurrence(&c, &xa, &xb, None, -1, Default::default(), &mut ws).unwrap();
    let (want, bound) = reference(&af[n..], &bf[n..], None, &[rows - 1, n], 1, false);
    compare(DType::F32, &to_f64(&got.to_vec::<f32>(&c)), &want, &bound).unwrap();
}

/// `a = 1` is a running sum and `a = 0` copies `b`, exactly as the scans do.
#[test]
fn special_multipliers() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let n = 20_000;
    let b: Vec<f32> = (0..n).map(|i| ((i * 7919) % 13) as f32 - 6.0).collect();
    let tb = upload(&c, &b, &[n]);
    let ones = upload(&c, &vec![1f32; n], &[n]);
    let zeros = upload(&c, &vec![0f32; n], &[n]);
    let h = cubeprim::linear_recurrence(&c, &ones, &tb, None, 0, Default::default(), &mut ws)
        .unwrap()
        .to_vec::<f32>(&c);
    let mut run = 0f32;
    for (i, &x) in b.iter().enumerate() {
        run += x;
        // Small integers: every order of the sum is exact.
        assert_eq!(h[i], run, "running sum at {i}");
    }
    let h = cubeprim::linear_recurrence(&c, &zeros, &tb, None, 0, Default::default(), &mut ws)
        .unwrap()
        .to_vec::<f32>(&c);
    assert_eq!(h, b);
}

/// Typed errors for arguments that do not fit: shapes, dtypes, `h0`, aliasing (f32 and f64);
/// nothing panics.
#[test]
fn errors() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let d = RecurrenceOptions::default();
    let a = upload(&c, &[0.5f32; 12], &[3, 4]);
    let b = upload(&c, &[1f32; 12], &[3, 4]);
    let short = upload(&c, &[1f32; 8], &[2, 4]);
    let got = cubeprim::linear_recurrence(&c, &short, &b, None, 1, d, &mut ws);
    assert!(matches!(got, Err(Error::ShapeMismatch { .. })), "{got:?}");
    let h_bad = upload(&c, &[0f32; 4], &[4]);
    let got = cubeprim::linear_recurrence(&c, &a, &b, Some(&h_bad), 1, d, &mut ws);
    assert!(matches!(got, Err(Error::ShapeMismatch { .. })), "{got:?}");
    let got = cubeprim::linear_recurrence(&c, &a, &b, None, 2, d, &mut ws);
    assert!(matches!(got, Err(Error::AxisOutOfRange { .. })), "{got:?}");
    let ai = upload(&c, &[1i32; 12], &[3, 4]);
    let got = cubeprim::linear_recurrence(&c, &ai, &ai, None, 1, d, &mut ws);
    assert!(
        matches!(got, Err(Error::UnsupportedDType { .. })),
        "{got:?}"
    );
    if supports(&c, DType::F16) {
        let ah = upload(&c, &[f16::ONE; 12], &[3, 4]);
        let got = cubeprim::linear_recurrence(&c, &ah, &b, None, 1, d, &mut ws);
        assert!(
            matches!(got, Err(Error::UnsupportedDType { .. })),
            "{got:?}"
        );
    }
    if supports(&c, DType::F64) {
        // f64 (the chunked path): the same checks before anything runs.
        let a64 = upload(&c, &[0.5f64; 12], &[3, 4]);
        let b64 = upload(&c, &[1f64; 12], &[3, 4]);
        let got = cubeprim::linear_recurrence(&c, &a64, &b, None, 1, d, &mut ws);
        assert!(
            matches!(got, Err(Error::UnsupportedDType { .. })),
            "{got:?}"
        );
        let h64 = upload(&c, &[0f64; 4], &[4]);
        let got = cubeprim::linear_recurrence(&c, &a64, &b64, Some(&h64), 1, d, &mut ws);
        assert!(matches!(got, Err(Error::ShapeMismatch { .. })), "{got:?}");
        let got = cubeprim::linear_recurrence_into(&c, &a64, &b64, None, &a64, 1, d, &mut ws);
        assert!(matches!(got, Err(Error::Aliased { .. })), "{got:?}");
        let got = cubeprim::linear_recurrence_into(&c, &a64, &b64, None, &b, 1, d, &mut ws);
        assert!(
            matches!(got, Err(Error::UnsupportedDType { .. })),
            "{got:?}"
        );
    }
    // Affine is not an operator for scan_with / reduce_with (it needs the multipliers).
    let got = cubeprim::scan_with(&c, &b, 1, Affine, Default::default(), &mut ws);
    assert!(matches!(got, Err(Error::InvalidArgument(_))), "{got:?}");
    let got = cubeprim::reduce_with(&c, &b, Some(1), Affine, &mut ws);
    assert!(matches!(got, Err(Error::InvalidArgument(_))), "{got:?}");
    // The output may not be an input.
    let got = cubeprim::linear_recurrence_into(&c, &a, &b, None, &b, 1, d, &mut ws);
    assert!(matches!(got, Err(Error::Aliased { .. })), "{got:?}");
    // After the errors the same workspace still computes.
    let h = cubeprim::linear_recurrence(&c, &a, &b, None, 1, d, &mut ws).unwrap();
    assert_eq!(h.to_vec::<f32>(&c)[..4], [1.0, 1.5, 1.75, 1.875]);
}

/// The CPU path in f64, every axis, both directions.
#[test]
fn cpu_f64() {
    let mut rng = rng(45);
    for (shape, axis) in [([4usize, 300, 3], 1), ([5, 2, 7], 0), ([2, 3, 1000], 2)] {
        let n: usize = shape.iter().product();
        let (a, b) = inputs(&mut rng, n);
        let h0: Vec<f64> = (0..n / shape[axis])
            .map(|_| rng.random_range(-2.0..2.0))
            .collect();
        for reverse in [false, true] {
            let (want, bound) = reference(&a, &b, Some(&h0), &shape, axis, reverse);
            let got =
                cubeprim::cpu::linear_recurrence(&a, &b, Some(&h0), &shape, axis, reverse).unwrap();
            compare(DType::F64, &got, &want, &bound).unwrap();
        }
    }
    let got = cubeprim::cpu::linear_recurrence(&[1i32], &[1i32], None, &[1], 0, false);
    assert!(matches!(got, Err(Error::UnsupportedDType { .. })));
    let got = cubeprim::cpu::linear_recurrence(&[1f32; 3], &[1f32; 4], None, &[4], 0, false);
    assert!(matches!(got, Err(Error::LengthMismatch { .. })));
}
