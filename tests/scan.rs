//! Device scans (wgpu; lavapipe in CI) against the CPU reference `cubeprim::cpu`.
//!
//! Tolerances (implemented in `common::compare`):
//! * integers: exact (sums and products wrap on both sides);
//! * max / min, with or without indices: values bit for bit (NaN where the reference has NaN),
//!   indices exactly (PyTorch: ties and NaN pick the latest element in scan order);
//! * float sums: `|got - want| <= tol * (S + 1)`, `S` = running sum of `|x|` up to that
//!   position (in scan order), `tol` = 1e-5 (f32), 1e-12 (f64), 1e-2 (f16 / bf16, which store
//!   16 bits: both sides accumulate in f32 and round each output);
//! * float products: `|got - want| <= tol * sqrt(k + 1) * |want| + tiny`, `k` = factors so far,
//!   `tol` = 1e-6 (f32), 1e-14 (f64), 1e-2 (f16 / bf16), `tiny` = smallest normal.
//!
//! Refusals accepted: dtypes the runtime lacks (`UnsupportedDType`, checked by the matrix: bf16
//! on lavapipe).
//!
//! Each new kernel variant costs a shader compile (most of the run time on lavapipe: about three
//! minutes on two cores), so the big lengths run for a few op / dtype pairs only and some
//! matrices share the variants out between shapes.
//!
//! Without a device the tests skip, except under `CI=true`, where they fail
//! (`common::client`).

use crate::common;

use common::*;
use cubeprim::scan::tile_len;
use cubeprim::{
    DType, DeviceTensor, Error, PlaneOps, ScanAlgorithm, ScanOp, ScanOptions, ScanTuning, Workspace,
};
use half::{bf16, f16};
use rand::Rng;

// ---------------------------------------------------------------------------------------------
// 1. Every op × inclusive/exclusive × forward/reverse × dtype
// ---------------------------------------------------------------------------------------------

/// Shapes of the dtype matrix, with the axis scanned and the variants run on it (indices into
/// `variants()`: 0 inclusive, 1 exclusive, 2 reverse, 3 exclusive reverse): short rows
/// (vectorised or not), rows of several tiles (vectorised and not), a non-last axis of short
/// and of multi-tile rows. Every variant runs on short rows and on multi-tile rows; each new
/// kernel variant costs a shader compile (a large share of the run time on lavapipe), so the
/// multi-tile shapes share the variants out.
const MATRIX_SHAPES: &[(&[usize], isize, &[usize])] = &[
    (&[5, 37], -1, &[0, 1, 2, 3]),
    (&[33, 6], 0, &[0, 1, 2, 3]),
    (&[3, 1000], 1, &[1, 2]),
    (&[2, 9000], 1, &[0, 3]),
    (&[2, 5001], -1, &[1, 2]),
    (&[3000, 2], -2, &[1, 2]),
];

/// The matrix of dtypes whose code paths match another's (u32, i64, u64 scan like i32, bar the
/// type): short rows with every variant, multi-tile rows (not vectorised) with two.
const MATRIX_SHAPES_LIGHT: &[(&[usize], isize, &[usize])] = &[
    (&[5, 37], -1, &[0, 1, 2, 3]),
    (&[33, 6], 0, &[0, 1, 2, 3]),
    (&[3, 1000], 1, &[0]),
    (&[2, 5001], -1, &[1, 2]),
    (&[3000, 2], -2, &[1, 2]),
];

/// Runs the op × variant matrix for `E`, or (where the runtime lacks `E`) checks that every
/// entry point answers `Error::UnsupportedDType`.
fn dtype_matrix<E: TestElem>(seed: u64, shapes: &[(&[usize], isize, &[usize])]) {
    let Some(c) = client() else { return };
    let mut rng = rng(seed);
    let mut ws = workspace();
    if !supports(&c, E::DTYPE) {
        let data: Vec<E> = values_for(&mut rng, 8, ScanOp::Sum);
        let x = upload(&c, &data, &[2, 4]);
        for op in OPS {
            let got = cubeprim::scan(&c, &x, 1, op, ScanOptions::default(), &mut ws);
            assert!(
                matches!(got, Err(Error::UnsupportedDType { dtype, .. }) if dtype == E::DTYPE),
                "{} is not supported by the runtime; scan {op:?} gave {:?}",
                E::DTYPE,
                got.map(|_| ())
            );
        }
        for op in [ScanOp::Max, ScanOp::Min] {
            let got = cubeprim::scan_with_indices(&c, &x, 1, op, ScanOptions::default(), &mut ws);
            assert!(
                matches!(got, Err(Error::UnsupportedDType { dtype, .. }) if dtype == E::DTYPE),
                "{} is not supported; indexed {op:?} gave {:?}",
                E::DTYPE,
                got.map(|_| ())
            );
        }
        eprintln!(
            "{} unsupported on this runtime: checked the error",
            E::DTYPE
        );
        return;
    }
    let all = variants(ScanOptions::default());
    for op in OPS {
        for &(shape, axis, which) in shapes {
            let n = shape.iter().product();
            let data: Vec<E> = values_for(&mut rng, n, op);
            let x = upload(&c, &data, shape);
            for &v in which {
                check_scan_data(&c, &mut ws, &x, &data, axis, op, all[v]);
            }
        }
    }
}

#[test]
fn matrix_f32() {
    dtype_matrix::<f32>(1, MATRIX_SHAPES);
}
#[test]
fn matrix_f16() {
    dtype_matrix::<f16>(2, MATRIX_SHAPES);
}
#[test]
fn matrix_bf16() {
    dtype_matrix::<bf16>(3, MATRIX_SHAPES);
}
#[test]
fn matrix_f64() {
    dtype_matrix::<f64>(4, MATRIX_SHAPES);
}
#[test]
fn matrix_i32() {
    dtype_matrix::<i32>(5, MATRIX_SHAPES);
}
#[test]
fn matrix_u32() {
    dtype_matrix::<u32>(6, MATRIX_SHAPES_LIGHT);
}
#[test]
fn matrix_i64() {
    dtype_matrix::<i64>(7, MATRIX_SHAPES_LIGHT);
}
#[test]
fn matrix_u64() {
    dtype_matrix::<u64>(8, MATRIX_SHAPES_LIGHT);
}

/// The shorthand functions are the default scans.
#[test]
fn shorthands() {
    let Some(c) = client() else { return };
    let mut rng = rng(9);
    let d = ScanOptions::default();
    type Shorthand = fn(&Client, &DeviceTensor<R>, isize) -> cubeprim::Result<DeviceTensor<R>>;
    let cases: [(ScanOp, Shorthand); 4] = [
        (ScanOp::Sum, cubeprim::cumsum),
        (ScanOp::Prod, cubeprim::cumprod),
        (ScanOp::Max, cubeprim::cummax),
        (ScanOp::Min, cubeprim::cummin),
    ];
    for (op, f) in cases {
        let data: Vec<f32> = values_for(&mut rng, 4 * 300, op);
        let x = upload(&c, &data, &[4, 300]);
        let want = cubeprim::cpu::scan(&data, &[4, 300], 1, op, d).unwrap();
        let got: Vec<f32> = f(&c, &x, -1).unwrap().to_vec(&c);
        compare(&got, &want, &data, &[4, 300], 1, op, d).unwrap_or_else(|e| panic!("{op:?}: {e}"));
    }
    type Indexed = fn(
        &Client,
        &DeviceTensor<R>,
        isize,
    ) -> cubeprim::Result<(DeviceTensor<R>, DeviceTensor<R>)>;
    let indexed: [(ScanOp, Indexed); 2] = [
        (ScanOp::Max, cubeprim::cummax_with_indices),
        (ScanOp::Min, cubeprim::cummin_with_indices),
    ];
    for (op, f) in indexed {
        let data: Vec<f32> = tie_values(&mut rng, 4 * 300, 0.01, 0.0);
        let x = upload(&c, &data, &[4, 300]);
        let (want, want_i) = cubeprim::cpu::scan_with_indices(&data, &[4, 300], 0, op, d).unwrap();
        let (v, i) = f(&c, &x, 0).unwrap();
        assert_eq!(v.to_vec::<f32>(&c), want, "{op:?} values");
        assert_eq!(read_indices(&c, &i), want_i, "{op:?} indices");
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Lengths along the axis
// ---------------------------------------------------------------------------------------------

/// Lengths around every tile boundary (the plane width, 8 on lavapipe, and the tiles are
/// powers of two: 2^k - 1, 2^k, 2^k + 1 up to 2^13, then 2^k ± 1 up to 2^21 + 1), around one
/// and two long tiles (`tile_len`) of each vector width (lengths divisible by 4, by 2 only, or
/// odd), and rows longer than 70 000.
fn lengths(max: usize) -> Vec<usize> {
    let mut v = vec![0, 5, 100, 12_289, 70_001, 131_073, 1 << 16, 1 << 20];
    for k in 0..=13 {
        v.extend([(1 << k) - 1, 1 << k, (1 << k) + 1]);
    }
    for k in 14..=21 {
        v.extend([(1 << k) - 1, (1 << k) + 1]);
    }
    for vec in [1, 2, 4] {
        for t in [tile_len(vec), 2 * tile_len(vec)] {
            v.extend([t - 1, t, t + 1, t + 2]);
        }
    }
    v.sort_unstable();
    v.dedup();
    v.retain(|&n| n <= max);
    v
}

/// Scans of every length of [`lengths`] up to `max`, with the variants `which` (indices into
/// `variants()`).
fn lengths_case<E: TestElem>(seed: u64, op: ScanOp, max: usize, which: &[usize]) {
    let Some(c) = client() else { return };
    let mut rng = rng(seed);
    let mut ws = workspace();
    let all = variants(ScanOptions::default());
    for n in lengths(max) {
        let data: Vec<E> = values_for(&mut rng, n, op);
        let x = upload(&c, &data, &[n]);
        for &v in which {
            check_scan_data(&c, &mut ws, &x, &data, 0, op, all[v]);
        }
    }
}

#[test]
fn lengths_sum_f32() {
    // With `lengths_sum_i32`, every variant at every length.
    lengths_case::<f32>(20, ScanOp::Sum, usize::MAX, &[0, 3]);
}
#[test]
fn lengths_sum_i32() {
    lengths_case::<i32>(21, ScanOp::Sum, usize::MAX, &[1, 2]);
}
#[test]
fn lengths_max_f32() {
    lengths_case::<f32>(22, ScanOp::Max, 140_000, &[0]);
}
#[test]
fn lengths_prod_f32() {
    lengths_case::<f32>(23, ScanOp::Prod, 140_000, &[3]);
}
#[test]
fn lengths_min_i32() {
    lengths_case::<i32>(24, ScanOp::Min, 140_000, &[2]);
}
#[test]
fn lengths_sum_f16() {
    lengths_case::<f16>(25, ScanOp::Sum, 140_000, &[1]);
}

/// Long rows in batches, and long rows along a non-last (strided) axis.
#[test]
fn long_rows_2d() {
    let Some(c) = client() else { return };
    let mut rng = rng(26);
    let mut ws = workspace();
    let cases: &[(&[usize], isize)] = &[
        (&[3, 70_001], 1),
        (&[2, 131_073], -1),
        (&[5, 8193], 1),
        (&[4, 16_384], 1),
        (&[70_001, 2], 0),
        (&[8193, 3], -2),
        (&[2, 4097, 3], 1),
    ];
    for &(shape, axis) in cases {
        let n = shape.iter().product();
        for op in [ScanOp::Sum, ScanOp::Max] {
            let data: Vec<f32> = values_for(&mut rng, n, op);
            let x = upload(&c, &data, shape);
            check_scan_data(&c, &mut ws, &x, &data, axis, op, ScanOptions::default());
            check_scan_data(
                &c,
                &mut ws,
                &x,
                &data,
                axis,
                op,
                ScanOptions::default().exclusive().reverse(),
            );
        }
        let data: Vec<i32> = values_for(&mut rng, n, ScanOp::Sum);
        let x = upload(&c, &data, shape);
        check_scan_data(
            &c,
            &mut ws,
            &x,
            &data,
            axis,
            ScanOp::Sum,
            ScanOptions::default().reverse(),
        );
    }
}

/// 1-D scans of millions of elements (thousands of tiles chained by the look-back).
fn huge_1d<E: TestElem>(seed: u64) {
    let Some(c) = client() else { return };
    let mut rng = rng(seed);
    let mut ws = workspace();
    for n in [3_000_001usize, 1 << 22] {
        let data: Vec<E> = values_for(&mut rng, n, ScanOp::Sum);
        let x = upload(&c, &data, &[n]);
        for opts in variants(ScanOptions::default()) {
            check_scan_data(&c, &mut ws, &x, &data, 0, ScanOp::Sum, opts);
        }
    }
}

#[test]
fn huge_1d_sum_f32() {
    huge_1d::<f32>(27);
}
#[test]
fn huge_1d_sum_i32() {
    huge_1d::<i32>(28);
}

// ---------------------------------------------------------------------------------------------
// 3. Random shapes, every axis, strided views
// ---------------------------------------------------------------------------------------------

/// A view of a fresh random base tensor with the final shape `shape`:
/// 0 contiguous, 1 transpose, 2 narrow, 3 transpose then narrow, 4 narrow then transpose
/// (narrowing from a start > 0, i.e. with an offset, when `with_offset`). Returns the view and
/// its data gathered on the host.
fn make_view<E: TestElem>(
    c: &Client,
    rng: &mut rand::rngs::StdRng,
    shape: &[usize],
    kind: usize,
    op: ScanOp,
    with_offset: bool,
) -> (DeviceTensor<R>, Vec<E>) {
    let rank = shape.len();
    let a = rng.random_range(0..rank);
    let b = rng.random_range(0..rank);
    let d = rng.random_range(0..rank);
    let extra = rng.random_range(1..=5usize);
    let start = if with_offset {
        rng.random_range(1..=extra)
    } else {
        0
    };
    let mut base_shape = shape.to_vec();
    match kind {
        1 => base_shape.swap(a, b),
        2 => base_shape[d] += extra,
        3 => {
            base_shape[d] += extra;
            base_shape.swap(a, b);
        }
        4 => {
            base_shape.swap(a, b);
            base_shape[d] += extra;
        }
        _ => {}
    }
    let n: usize = base_shape.iter().product();
    let all: Vec<E> = values_for(rng, n, op);
    let base = upload(c, &all, &base_shape);
    let view = match kind {
        1 => base.transpose(a, b).unwrap(),
        2 => base.narrow(d, start, shape[d]).unwrap(),
        3 => base
            .transpose(a, b)
            .unwrap()
            .narrow(d, start, shape[d])
            .unwrap(),
        4 => base
            .narrow(d, start, base_shape[d] - extra)
            .unwrap()
            .transpose(a, b)
            .unwrap(),
        _ => base,
    };
    assert_eq!(view.shape, shape);
    let data = gather_view(&all, &view.shape, &view.strides, view.offset);
    (view, data)
}

fn random_views(seed: u64, cases: usize, with_offset: bool) {
    let Some(c) = client() else { return };
    let mut rng = rng(seed);
    let mut ws = workspace();
    const DIMS: [usize; 10] = [1, 1, 2, 3, 4, 5, 7, 8, 12, 13];
    for case in 0..cases {
        let rank = rng.random_range(1..=4);
        let shape: Vec<usize> = (0..rank)
            .map(|_| DIMS[rng.random_range(0..DIMS.len())])
            .collect();
        let kind = if with_offset { 2 + case % 3 } else { case % 5 };
        let op = OPS[rng.random_range(0..4)];
        let opts = ScanOptions {
            exclusive: rng.random_bool(0.5),
            reverse: rng.random_bool(0.5),
            ..ScanOptions::default()
        };
        // Every axis, positive and negative.
        for axis in -(rank as isize)..rank as isize {
            if case % 2 == 0 {
                let (x, data) = make_view::<f32>(&c, &mut rng, &shape, kind, op, with_offset);
                check_scan_data(&c, &mut ws, &x, &data, axis, op, opts);
            } else {
                let (x, data) = make_view::<i32>(&c, &mut rng, &shape, kind, op, with_offset);
                check_scan_data(&c, &mut ws, &x, &data, axis, op, opts);
            }
        }
    }
}

/// Random shapes of rank 1-4, every axis, contiguous and strided views (transposes, narrows
/// from the start).
#[test]
fn random_shapes_and_views() {
    random_views(30, 150, false);
}

/// Random views with an offset (narrowed from a start > 0).
#[test]
fn random_views_with_offset() {
    random_views(32, 60, true);
}

/// Minimal view-offset case: the cumsum of `[0..8)` narrowed to `[3, 8)` is
/// `[3, 7, 12, 18, 25]`.
#[test]
fn view_offset_minimal() {
    let Some(c) = client() else { return };
    let base: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let x = upload(&c, &base, &[8]).narrow(0, 3, 5).unwrap();
    let y = cubeprim::scan(
        &c,
        &x,
        0,
        ScanOp::Sum,
        ScanOptions::default(),
        &mut workspace(),
    );
    assert_eq!(y.unwrap().to_vec::<f32>(&c), [3.0, 7.0, 12.0, 18.0, 25.0]);
}

/// Strided views whose rows span several tiles (no offset).
#[test]
fn strided_long_rows() {
    let views: Vec<(Vec<usize>, ViewFn, isize)> = vec![
        // Axis of stride 3.
        (vec![5000, 3], Box::new(|t| t.transpose(0, 1).unwrap()), 1),
        // Narrowed rows (row stride 9011, no offset).
        (
            vec![3, 9011],
            Box::new(|t| t.narrow(1, 0, 9000).unwrap()),
            1,
        ),
        // Rank 3, the scanned axis in the middle after a transpose.
        (
            vec![4, 9000, 2],
            Box::new(|t| t.transpose(0, 2).unwrap()),
            1,
        ),
        // Transpose then narrow, scanned with a negative axis.
        (
            vec![9000, 6],
            Box::new(|t| t.transpose(0, 1).unwrap().narrow(0, 0, 3).unwrap()),
            -1,
        ),
        (
            vec![9000, 6],
            Box::new(|t| t.transpose(0, 1).unwrap().narrow(1, 0, 8000).unwrap()),
            1,
        ),
    ];
    strided_cases(&views);
}

type ViewFn = Box<dyn Fn(DeviceTensor<R>) -> DeviceTensor<R>>;

/// Strided views with an offset whose rows span several tiles.
#[test]
fn strided_long_rows_with_offset() {
    let views: Vec<(Vec<usize>, ViewFn, isize)> = vec![
        // Offset 5 along the axis of the rows (not a multiple of the vector width).
        (
            vec![3, 9011],
            Box::new(|t| t.narrow(1, 5, 9000).unwrap()),
            1,
        ),
        // Offset 4, row stride 9012: still vectorisable.
        (
            vec![3, 9012],
            Box::new(|t| t.narrow(1, 4, 9000).unwrap()),
            -1,
        ),
        // Offset along another axis.
        (vec![5, 8192], Box::new(|t| t.narrow(0, 2, 3).unwrap()), 1),
        // Transpose then narrow (both axes), scanned with a negative axis.
        (
            vec![9000, 6],
            Box::new(|t| t.transpose(0, 1).unwrap().narrow(0, 2, 3).unwrap()),
            -1,
        ),
        (
            vec![9000, 6],
            Box::new(|t| t.transpose(0, 1).unwrap().narrow(1, 7, 8000).unwrap()),
            1,
        ),
        // A row longer than 70 000, narrowed.
        (
            vec![2, 70_010],
            Box::new(|t| t.narrow(1, 3, 70_001).unwrap()),
            1,
        ),
    ];
    strided_cases(&views);
}

fn strided_cases(views: &[(Vec<usize>, ViewFn, isize)]) {
    let Some(c) = client() else { return };
    let mut rng = rng(31);
    let mut ws = workspace();
    for (base_shape, f, axis) in views {
        let n: usize = base_shape.iter().product();
        for (op, opts) in [
            (ScanOp::Sum, ScanOptions::default()),
            (ScanOp::Sum, ScanOptions::default().exclusive().reverse()),
            (ScanOp::Prod, ScanOptions::default().reverse()),
        ] {
            let all: Vec<f32> = values_for(&mut rng, n, op);
            let x = f(upload(&c, &all, base_shape));
            let data = gather_view(&all, &x.shape, &x.strides, x.offset);
            check_scan_data(&c, &mut ws, &x, &data, *axis, op, opts);
        }
        for (op, opts) in [
            (ScanOp::Max, ScanOptions::default().exclusive()),
            (ScanOp::Sum, ScanOptions::default()),
        ] {
            let all: Vec<i32> = values_for(&mut rng, n, op);
            let x = f(upload(&c, &all, base_shape));
            let data = gather_view(&all, &x.shape, &x.strides, x.offset);
            check_scan_data(&c, &mut ws, &x, &data, *axis, op, opts);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Algorithms × plane operations
// ---------------------------------------------------------------------------------------------

const ALGORITHMS: [ScanAlgorithm; 3] = [
    ScanAlgorithm::Auto,
    ScanAlgorithm::DecoupledLookback,
    ScanAlgorithm::ReduceThenScan,
];
const PLANE_OPS: [PlaneOps; 3] = [PlaneOps::Auto, PlaneOps::Force, PlaneOps::Off];

/// Short rows (look-back forced on them too), rows of several tiles (vectorised or not),
/// a long row, and a strided multi-tile axis.
const ALGO_SHAPES: &[(&[usize], isize)] = &[
    (&[3, 33], 1),
    (&[2, 4097], 1),
    (&[3, 16_384], 1),
    (&[1, 70_001], -1),
    (&[5000, 3], 0),
];

/// `ALGO_SHAPES` without the vectorised multi-tile row (one kernel fewer per combination).
const ALGO_SHAPES_LIGHT: &[(&[usize], isize)] = &[(&[3, 33], 1), (&[2, 4097], 1), (&[5000, 3], 0)];

/// Every algorithm × plane setting on `ALGO_SHAPES` with every variant (`all_variants`), or
/// on `ALGO_SHAPES_LIGHT` with one variant per (algorithm, plane setting), taking turns.
fn algorithms_case<E: TestElem>(seed: u64, op: ScanOp, all_variants: bool) {
    let Some(c) = client() else { return };
    let mut rng = rng(seed);
    let mut ws = workspace();
    let all = variants(ScanOptions::default());
    for (a, algorithm) in ALGORITHMS.into_iter().enumerate() {
        for (p, plane_ops) in PLANE_OPS.into_iter().enumerate() {
            let opts_list: Vec<ScanOptions> = if all_variants {
                all.to_vec()
            } else {
                vec![all[(a + p) % 4]]
            };
            let shapes = if all_variants {
                ALGO_SHAPES
            } else {
                ALGO_SHAPES_LIGHT
            };
            for &(shape, axis) in shapes {
                let n = shape.iter().product();
                let data: Vec<E> = values_for(&mut rng, n, op);
                let x = upload(&c, &data, shape);
                for &o in &opts_list {
                    let opts = o.algorithm(algorithm).plane_ops(plane_ops);
                    check_scan_data(&c, &mut ws, &x, &data, axis, op, opts);
                }
            }
        }
    }
}

#[test]
fn algorithms_sum_f32() {
    algorithms_case::<f32>(40, ScanOp::Sum, true);
}
#[test]
fn algorithms_max_f32() {
    algorithms_case::<f32>(41, ScanOp::Max, false);
}
#[test]
fn algorithms_prod_i32() {
    algorithms_case::<i32>(42, ScanOp::Prod, false);
}
#[test]
fn algorithms_min_u32() {
    algorithms_case::<u32>(43, ScanOp::Min, false);
}
#[test]
fn algorithms_sum_f16() {
    algorithms_case::<f16>(44, ScanOp::Sum, false);
}

/// Reduce-then-scan of rows with more tiles than one tile holds (its scan of the tile
/// aggregates is itself multi-tile), and a look-back over thousands of tiles with plane ops.
#[test]
fn algorithms_huge() {
    let Some(c) = client() else { return };
    let mut rng = rng(45);
    let mut ws = workspace();
    let n = 3_000_001;
    let data: Vec<f32> = values_for(&mut rng, n, ScanOp::Sum);
    let x = upload(&c, &data, &[n]);
    for (alg, plane) in [
        (ScanAlgorithm::ReduceThenScan, PlaneOps::Off),
        (ScanAlgorithm::ReduceThenScan, PlaneOps::Force),
        (ScanAlgorithm::DecoupledLookback, PlaneOps::Force),
        (ScanAlgorithm::DecoupledLookback, PlaneOps::Off),
    ] {
        for opts in [
            ScanOptions::default(),
            ScanOptions::default().exclusive().reverse(),
        ] {
            let opts = opts.algorithm(alg).plane_ops(plane);
            check_scan_data(&c, &mut ws, &x, &data, 0, ScanOp::Sum, opts);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 5. cummax / cummin with indices
// ---------------------------------------------------------------------------------------------

/// Index-test shapes, with the variants run on each (indices into `variants()`): short rows,
/// multi-tile rows (vectorised and not), a long row, a non-last axis (short and multi-tile).
const INDEX_SHAPES: &[(&[usize], isize, &[usize])] = &[
    (&[6, 37], 1, &[0, 1, 2, 3]),
    (&[3, 9000], -1, &[0, 3]),
    (&[2, 5001], 1, &[0, 1, 2, 3]),
    (&[1, 70_001], 1, &[0, 1, 2, 3]),
    (&[37, 5], 0, &[0, 1, 2, 3]),
    (&[5000, 3], 0, &[0, 1, 2, 3]),
    (&[2, 3, 1025], 1, &[0, 1, 2, 3]),
];

/// Indexed max and min of tie-heavy data (see `tie_values`) on `shapes`, once per
/// `(p_ext, p_nan)` of `specials`; with NaN, the plain scans too.
fn indices_case<E: TestElem>(
    seed: u64,
    shapes: &[(&[usize], isize, &[usize])],
    specials: &[(f64, f64)],
) {
    let Some(c) = client() else { return };
    let mut rng = rng(seed);
    let mut ws = workspace();
    let all = variants(ScanOptions::default());
    for &(shape, axis, which) in shapes {
        let n: usize = shape.iter().product();
        for &(p_ext, p_nan) in specials {
            let data: Vec<E> = tie_values(&mut rng, n, p_ext, p_nan);
            let x = upload(&c, &data, shape);
            for op in [ScanOp::Max, ScanOp::Min] {
                for &v in which {
                    assert!(check_scan_indices::<E>(&c, &mut ws, &x, axis, op, all[v]));
                    if p_nan > 0.0 {
                        check_scan_data(&c, &mut ws, &x, &data, axis, op, all[v]);
                    }
                }
            }
        }
    }
}

#[test]
fn indices_f32() {
    // Ties only; rare ±inf (a few per row, tying with the identity); frequent ones.
    indices_case::<f32>(50, INDEX_SHAPES, &[(0.0, 0.0), (0.0003, 0.0), (0.02, 0.0)]);
}
#[test]
fn indices_i32() {
    // With i32::MIN / MAX (tying with the identity); fewer kernel variants than f32.
    let shapes: &[(&[usize], isize, &[usize])] = &[
        (&[6, 37], 1, &[0, 1, 2, 3]),
        (&[2, 5001], 1, &[0, 1, 2, 3]),
        (&[1, 70_001], 1, &[0, 3]),
        (&[5000, 3], 0, &[1, 2]),
        (&[2, 3, 1025], 1, &[0, 3]),
    ];
    indices_case::<i32>(51, shapes, &[(0.01, 0.0)]);
}
/// Other dtypes: a short row and a row of several tiles.
const INDEX_SHAPES_SMALL: &[(&[usize], isize, &[usize])] =
    &[(&[6, 37], 1, &[0, 1, 2, 3]), (&[2, 5001], 1, &[0, 3])];

/// NaN tests of the 16- and 64-bit floats: the same rows, two variants each.
const NAN_SHAPES_SMALL: &[(&[usize], isize, &[usize])] =
    &[(&[6, 37], 1, &[1, 2]), (&[2, 5001], 1, &[0, 3])];

fn indices_if_supported<E: TestElem>(seed: u64, p_ext: f64) {
    let Some(c) = client() else { return };
    if supports(&c, E::DTYPE) {
        indices_case::<E>(seed, INDEX_SHAPES_SMALL, &[(p_ext, 0.0)]);
    }
}

#[test]
fn indices_f16() {
    indices_if_supported::<f16>(52, 0.001);
}
#[test]
fn indices_f64() {
    indices_if_supported::<f64>(53, 0.001);
}
#[test]
fn indices_u32() {
    indices_if_supported::<u32>(54, 0.01);
}
#[test]
fn indices_i64() {
    indices_if_supported::<i64>(55, 0.01);
}
#[test]
fn indices_u64() {
    indices_if_supported::<u64>(56, 0.01);
}

/// Minimal case of a multi-tile scan of 8-byte values: the cumsum and the indexed cummax of
/// `tile_len(1) + 1` ones in f64 (two tiles, not vectorised). The indexed scan may be refused
/// with `UnsupportedDType` where the runtime has no 64-bit look-back (wgpu), never be wrong.
#[test]
fn long_rows_f64_minimal() {
    let Some(c) = client() else { return };
    if !supports(&c, DType::F64) {
        return;
    }
    let n = tile_len(1) + 1;
    let x = upload(&c, &vec![1.0f64; n], &[n]);
    let mut ws = workspace();
    for alg in ALGORITHMS {
        let o = ScanOptions::default().algorithm(alg);
        let y = cubeprim::scan(&c, &x, 0, ScanOp::Sum, o, &mut ws).expect("scan");
        let y = y.to_vec::<f64>(&c);
        assert_eq!(
            (y[0], y[n - 1]),
            (1.0, n as f64),
            "{alg:?}: cumsum of {n} ones: first, last"
        );
    }
    let o = ScanOptions::default();
    match cubeprim::scan_with_indices(&c, &x, 0, ScanOp::Max, o, &mut ws) {
        Ok((v, i)) => {
            let (v, i) = (v.to_vec::<f64>(&c), read_indices(&c, &i));
            assert_eq!(
                (v[n - 1], i[n - 1]),
                (1.0, n as i64 - 1),
                "cummax of {n} ones: last value, index"
            );
        }
        Err(Error::UnsupportedDType {
            dtype: DType::F64, ..
        }) => {}
        Err(e) => panic!("indexed f64 scan of {n}: {e}"),
    }
}

/// NaN propagates through max / min (values and indices; PyTorch: the latest NaN wins):
/// rare NaN (a few per row) and frequent NaN, short and multi-tile rows, non-last axis.
#[test]
fn nan_max_min_f32() {
    let shapes: &[(&[usize], isize, &[usize])] = &[
        (&[6, 37], 1, &[0, 1, 2, 3]),
        (&[3, 9000], -1, &[0, 3]),
        (&[2, 5001], 1, &[0, 1, 2, 3]),
        (&[5000, 3], 0, &[1, 2]),
    ];
    indices_case::<f32>(58, shapes, &[(0.0003, 0.0003), (0.01, 0.02)]);
}
#[test]
fn nan_max_min_f16_f64() {
    let Some(c) = client() else { return };
    let shapes = NAN_SHAPES_SMALL;
    if supports(&c, DType::F16) {
        indices_case::<f16>(59, shapes, &[(0.001, 0.001)]);
    }
    if supports(&c, DType::F64) {
        indices_case::<f64>(60, shapes, &[(0.001, 0.001)]);
    }
}

/// Minimal NaN case: cummax / cummin of `[1, NaN, 2]` is `[1, NaN, NaN]` with indices
/// `[0, 1, 1]` (PyTorch semantics, as `cpu::scan_with_indices`).
#[test]
fn nan_minimal() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let x = upload(&c, &[1.0f32, f32::NAN, 2.0], &[3]);
    for op in [ScanOp::Max, ScanOp::Min] {
        let d = ScanOptions::default();
        let y: Vec<f32> = cubeprim::scan(&c, &x, 0, op, d, &mut ws)
            .unwrap()
            .to_vec(&c);
        let (v, i) = cubeprim::scan_with_indices(&c, &x, 0, op, d, &mut ws).unwrap();
        let (v, i) = (v.to_vec::<f32>(&c), read_indices(&c, &i));
        let ok = |v: &[f32]| v[0] == 1.0 && v[1].is_nan() && v[2].is_nan();
        assert!(
            ok(&y),
            "{op:?} of [1, NaN, 2]: got {y:?}, want [1, NaN, NaN]"
        );
        assert!(
            ok(&v),
            "indexed {op:?} of [1, NaN, 2]: got {v:?}, want [1, NaN, NaN]"
        );
        assert_eq!(i, [0, 1, 1], "indexed {op:?} of [1, NaN, 2]: indices");
    }
}

/// Indexed scans under the forced look-back and both plane settings.
#[test]
fn indices_algorithms() {
    let Some(c) = client() else { return };
    let mut rng = rng(57);
    let mut ws = workspace();
    let all = variants(ScanOptions::default());
    // (shape, axis, algorithm, plane setting): the look-back forced on a short row, plane
    // operations forced on short and multi-tile rows (`indices_f32` runs them off).
    let cases: [(&[usize], isize, ScanAlgorithm, PlaneOps); 6] = [
        (&[6, 37], 1, ScanAlgorithm::DecoupledLookback, PlaneOps::Off),
        (
            &[6, 37],
            1,
            ScanAlgorithm::DecoupledLookback,
            PlaneOps::Force,
        ),
        (&[6, 37], 1, ScanAlgorithm::Auto, PlaneOps::Force),
        (&[3, 9000], 1, ScanAlgorithm::Auto, PlaneOps::Force),
        (&[5000, 3], 0, ScanAlgorithm::Auto, PlaneOps::Force),
        (
            &[5000, 3],
            0,
            ScanAlgorithm::DecoupledLookback,
            PlaneOps::Force,
        ),
    ];
    for (k, &(shape, axis, alg, plane)) in cases.iter().enumerate() {
        let n: usize = shape.iter().product();
        let data: Vec<f32> = tie_values(&mut rng, n, 0.001, 0.0);
        let x = upload(&c, &data, shape);
        // Variants and ops take turns.
        for (j, op) in [ScanOp::Max, ScanOp::Min].into_iter().enumerate() {
            let opts = all[(k + 2 * j) % 4].algorithm(alg).plane_ops(plane);
            check_scan_indices::<f32>(&c, &mut ws, &x, axis, op, opts);
        }
    }
}

/// Indexed scans of strided views along both axes.
fn indices_views(seed: u64, views: &[ViewFn]) {
    let Some(c) = client() else { return };
    let mut rng = rng(seed);
    let mut ws = workspace();
    for f in views {
        let all: Vec<f32> = tie_values(&mut rng, 5000 * 6, 0.001, 0.0);
        let x = f(upload(&c, &all, &[5000, 6]));
        for op in [ScanOp::Max, ScanOp::Min] {
            for opts in variants(ScanOptions::default()) {
                check_scan_indices::<f32>(&c, &mut ws, &x, 1, op, opts);
                check_scan_indices::<f32>(&c, &mut ws, &x, 0, op, opts);
            }
        }
    }
}

/// Transposed (stride 6 along the long axis), narrowed, both; no offset.
#[test]
fn indices_views_strided() {
    indices_views(
        58,
        &[
            Box::new(|t| t.transpose(0, 1).unwrap()),
            Box::new(|t| t.narrow(1, 0, 4).unwrap()),
            Box::new(|t| t.transpose(0, 1).unwrap().narrow(1, 0, 4500).unwrap()),
        ],
    );
}

/// As [`indices_views_strided`], narrowed from a start > 0 (an offset).
#[test]
fn indices_views_with_offset() {
    indices_views(
        59,
        &[
            Box::new(|t| t.narrow(1, 1, 4).unwrap()),
            Box::new(|t| t.transpose(0, 1).unwrap().narrow(1, 3, 4500).unwrap()),
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// 6. Determinism
// ---------------------------------------------------------------------------------------------

#[test]
fn determinism_f32_sum() {
    let Some(c) = client() else { return };
    let mut rng = rng(60);
    let n = 3_000_017;
    let data: Vec<f32> = values_for(&mut rng, n, ScanOp::Sum);
    let x = upload(&c, &data, &[n]);
    let mut ws = workspace();
    for opts in [
        ScanOptions::default(),
        ScanOptions::default().plane_ops(PlaneOps::Force),
    ] {
        let runs: Vec<Vec<u32>> = (0..3)
            .map(|_| {
                let y = cubeprim::scan(&c, &x, 0, ScanOp::Sum, opts, &mut ws).unwrap();
                y.to_vec::<f32>(&c).iter().map(|v| v.to_bits()).collect()
            })
            .collect();
        for (k, r) in runs.iter().enumerate().skip(1) {
            let diff = r.iter().zip(&runs[0]).position(|(a, b)| a != b);
            assert_eq!(
                diff, None,
                "{opts:?}: run {k} differs from run 0 at {diff:?}"
            );
        }
        let got: Vec<f32> = runs[0].iter().map(|&b| f32::from_bits(b)).collect();
        let want = cubeprim::cpu::scan(&data, &[n], 0, ScanOp::Sum, opts).unwrap();
        compare(&got, &want, &data, &[n], 0, ScanOp::Sum, opts).unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// 7. Workspace
// ---------------------------------------------------------------------------------------------

/// One growing workspace across calls of different sizes, dtypes, ops and indexing; smaller
/// after larger (stale look-back state from earlier calls must not leak in).
#[test]
fn workspace_reuse() {
    let Some(c) = client() else { return };
    let mut rng = rng(70);
    let mut ws = workspace();
    let mut last = 0;
    // Odd lengths (one kernel per op: the compile cost stays low), short and long mixed.
    for round in 0..2 {
        for &n in &[
            10_001usize,
            5,
            70_001,
            3,
            200_001,
            4097,
            1_048_577,
            9001,
            12_289,
            33,
        ] {
            let data: Vec<f32> = values_for(&mut rng, n, ScanOp::Sum);
            let x = upload(&c, &data, &[n]);
            check_scan_data(
                &c,
                &mut ws,
                &x,
                &data,
                0,
                ScanOp::Sum,
                ScanOptions::default(),
            );
            let data: Vec<i32> = values_for(&mut rng, 2 * n, ScanOp::Max);
            let x = upload(&c, &data, &[2, n]);
            let opts = ScanOptions::default().exclusive().reverse();
            check_scan_data(&c, &mut ws, &x, &data, 1, ScanOp::Max, opts);
            let data: Vec<f32> = tie_values(&mut rng, n, 0.001, 0.0);
            let x = upload(&c, &data, &[n]);
            check_scan_indices::<f32>(&c, &mut ws, &x, 0, ScanOp::Min, ScanOptions::default());
            assert!(
                ws.bytes() >= last,
                "round {round}: a growing workspace shrank"
            );
            last = ws.bytes();
        }
    }
    assert!(last > 0, "multi-tile scans used no workspace");
}

/// A fixed workspace of exactly `scan_workspace_bytes` serves the call (and many repeats of
/// it); one byte-word less is `ScratchTooSmall`.
#[test]
fn workspace_fixed_capacity() {
    let Some(c) = client() else { return };
    let mut rng = rng(71);
    for (shape, axis, indexed) in [
        (&[1usize << 20][..], 0isize, false),
        (&[3, 70_001], 1, false),
        (&[5000, 3], 0, true),
        (&[2, 9000], -1, true),
    ] {
        let n: usize = shape.iter().product();
        let opts = ScanOptions::default();
        let bytes =
            cubeprim::scan_workspace_bytes(&c, shape, axis, DType::F32, indexed, opts).unwrap();
        assert!(
            bytes > 0,
            "{shape:?}: a multi-tile scan needs look-back state"
        );
        let mut ws = Workspace::with_capacity(&c, bytes);
        for _ in 0..3 {
            let data: Vec<f32> = tie_values(&mut rng, n, 0.001, 0.0);
            let x = upload(&c, &data, shape);
            let op = ScanOp::Max;
            if indexed {
                check_scan_indices::<f32>(&c, &mut ws, &x, axis, op, opts);
            } else {
                check_scan_data(&c, &mut ws, &x, &data, axis, op, opts);
            }
        }
        assert_eq!(ws.bytes(), bytes.div_ceil(4) * 4, "a fixed workspace grew");

        let mut small = Workspace::with_capacity(&c, bytes - 4);
        let data: Vec<f32> = values_for(&mut rng, n, ScanOp::Max);
        let x = upload(&c, &data, shape);
        let got = if indexed {
            cubeprim::scan_with_indices(&c, &x, axis, ScanOp::Max, opts, &mut small).map(|_| ())
        } else {
            cubeprim::scan(&c, &x, axis, ScanOp::Max, opts, &mut small).map(|_| ())
        };
        match got {
            Err(Error::ScratchTooSmall { needed, available }) => {
                assert_eq!(needed, bytes, "{shape:?}");
                assert!(available < needed, "{shape:?}");
            }
            other => panic!("{shape:?}: too small a workspace gave {other:?}"),
        }
    }
    // Single-tile rows need nothing: a zero-capacity workspace works.
    let bytes =
        cubeprim::scan_workspace_bytes(&c, &[7, 100], 1, DType::F32, false, ScanOptions::default())
            .unwrap();
    assert_eq!(bytes, 0);
    let mut ws = Workspace::with_capacity(&c, 0);
    let data: Vec<f32> = values_for(&mut rng, 700, ScanOp::Sum);
    check_scan_data(
        &c,
        &mut ws,
        &upload(&c, &data, &[7, 100]),
        &data,
        1,
        ScanOp::Sum,
        ScanOptions::default(),
    );
}

/// The look-back state carries an epoch that wraps after 2^14 - 1 launches (the workspace is
/// then cleared): results stay right across the wrap.
#[test]
fn workspace_epoch_wrap() {
    let Some(c) = client() else { return };
    let mut rng = rng(72);
    let n = 2 * 4096 + 8; // three tiles
    let opts = ScanOptions::default();
    let bytes = cubeprim::scan_workspace_bytes(&c, &[n], 0, DType::I32, false, opts).unwrap();
    let mut ws = Workspace::with_capacity(&c, bytes);
    let inputs: Vec<Vec<i32>> = (0..2)
        .map(|_| values_for(&mut rng, n, ScanOp::Sum))
        .collect();
    let tensors: Vec<_> = inputs.iter().map(|d| upload(&c, d, &[n])).collect();
    let wants: Vec<Vec<i32>> = inputs
        .iter()
        .map(|d| cubeprim::cpu::scan(d, &[n], 0, ScanOp::Sum, opts).unwrap())
        .collect();
    let calls = (1 << 14) + 40;
    for call in 0..calls {
        let k = call % 2;
        let y = cubeprim::scan(&c, &tensors[k], 0, ScanOp::Sum, opts, &mut ws).unwrap();
        if call % 1024 == 0 || call + 80 >= calls {
            assert_eq!(y.to_vec::<i32>(&c), wants[k], "call {call}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Decoupled fallback
// ---------------------------------------------------------------------------------------------

/// Tiny tiles (32 units × 1 vector) and a fallback after one silent round, so cubes often
/// reduce a predecessor's tile themselves (lavapipe runs several cubes at once). Whoever
/// computes a tile's aggregate must compute the same bits: the result must equal the CPU
/// reference and, bit for bit, the result with the default (patient) look-back.
#[test]
fn eager_fallback_gives_the_same_bits() {
    let Some(c) = client() else { return };
    let mut rng = rng(77);
    let n = 200_003;
    let data: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    let x = upload(&c, &data, &[n]);
    let eager = ScanTuning {
        threads: 32,
        vectors_per_thread: 1,
        windows: 8,
        spins: 1,
        // The fallback reduces other tiles while the cube's own tile is parked in shared
        // memory.
        stage: true,
        async_copy: true,
    };
    // One vector per unit: the staged tile combines in the unstaged order, so the patient
    // unstaged run must give the same bits. Four vectors per unit: staged both times (the
    // staged tile folds each unit's chunk, another fixed order).
    let wide = ScanTuning {
        vectors_per_thread: 4,
        ..eager
    };
    for (eager, patient_stage) in [(eager, false), (wide, true)] {
        for plane in [PlaneOps::Force, PlaneOps::Off] {
            for op in [ScanOp::Sum, ScanOp::Max] {
                let base = ScanOptions::default()
                    .algorithm(ScanAlgorithm::DecoupledLookback)
                    .plane_ops(plane);
                let patient = ScanTuning {
                    spins: 1_000,
                    stage: patient_stage,
                    ..eager
                };
                let mut ws = workspace();
                let a: Vec<f32> = cubeprim::scan(&c, &x, 0, op, base.tuning(eager), &mut ws)
                    .unwrap()
                    .to_vec(&c);
                let b: Vec<f32> = cubeprim::scan(&c, &x, 0, op, base.tuning(patient), &mut ws)
                    .unwrap()
                    .to_vec(&c);
                assert!(
                    a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()),
                    "{plane:?} {op:?}: eager fallback changed the bits"
                );
                let want = cubeprim::cpu::scan(&data, &[n], 0, op, base).unwrap();
                let mut run = 0.0f64;
                for i in 0..n {
                    run += data[i].abs() as f64;
                    let tol = 1e-5 * (run + 1.0);
                    assert!(
                        ((a[i] - want[i]) as f64).abs() <= tol,
                        "{plane:?} {op:?} at {i}: {} vs {}",
                        a[i],
                        want[i]
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 9. Lengths held on the device
// ---------------------------------------------------------------------------------------------

/// `scan_len_into` with a `u32` count on the device: only the first `count` elements are
/// scanned (forward, reverse, exclusive; values and indices); the outputs past the count keep
/// their poison; counts 0, 1, tile ± 1, a multi-tile count and the capacity itself, on every
/// algorithm. A host `Len` gives the same result.
#[test]
fn device_resident_length() {
    let Some(c) = client() else { return };
    let mut rng = rng(90);
    let cap = 3 * tile_len(1) + 77;
    let data: Vec<f32> = values_for(&mut rng, cap, ScanOp::Sum);
    let x = upload(&c, &data, &[cap]);
    let mut ws = workspace();
    let poison = f32::from_bits(0x7fc0_dead);
    let t = tile_len(1);
    for (k, &count) in [0usize, 1, t - 1, t + 1, 2 * t + 5, cap].iter().enumerate() {
        let opts = variants(ScanOptions::default())[k % 4];
        for algorithm in [
            ScanAlgorithm::Auto,
            ScanAlgorithm::DecoupledLookback,
            ScanAlgorithm::ReduceThenScan,
        ] {
            let opts = opts.algorithm(algorithm);
            let n_dev = DeviceTensor::from_slice(&c, &[count as u32], &[1]).unwrap();
            let out = upload(&c, &vec![poison; cap], &[cap]);
            cubeprim::scan_len_into(
                &c,
                &x,
                &out,
                None,
                cubeprim::Len::Device {
                    count: &n_dev,
                    capacity: cap,
                },
                ScanOp::Sum,
                opts,
                &mut ws,
            )
            .unwrap();
            let got: Vec<f32> = out.to_vec(&c);
            let want = cubeprim::cpu::scan(&data[..count], &[count], 0, ScanOp::Sum, opts).unwrap();
            let what = format!("count {count} of {cap}, {opts:?}");
            compare(
                &got[..count],
                &want,
                &data[..count],
                &[count],
                0,
                ScanOp::Sum,
                opts,
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(
                got[count..].iter().all(|v| v.to_bits() == poison.to_bits()),
                "{what}: wrote past the count"
            );
            // The same length given on the host.
            let out_h = upload(&c, &vec![poison; cap], &[cap]);
            let len = cubeprim::Len::Host(count);
            cubeprim::scan_len_into(&c, &x, &out_h, None, len, ScanOp::Sum, opts, &mut ws).unwrap();
            let got_h: Vec<f32> = out_h.to_vec(&c);
            compare(
                &got_h[..count],
                &want,
                &data[..count],
                &[count],
                0,
                ScanOp::Sum,
                opts,
            )
            .unwrap_or_else(|e| panic!("host {what}: {e}"));
        }
    }
    // cummax with indices over a device count.
    let count = t + 3;
    let vals: Vec<f32> = tie_values(&mut rng, cap, 0.05, 0.01);
    let xv = upload(&c, &vals, &[cap]);
    let n_dev = DeviceTensor::from_slice(&c, &[count as u32], &[1]).unwrap();
    let out = upload(&c, &vec![poison; cap], &[cap]);
    let idx = DeviceTensor::empty(&c, &[cap], index_dtype(&c));
    let len = cubeprim::Len::Device {
        count: &n_dev,
        capacity: cap,
    };
    let opts = ScanOptions::default().algorithm(ScanAlgorithm::DecoupledLookback);
    cubeprim::scan_len_into(&c, &xv, &out, Some(&idx), len, ScanOp::Max, opts, &mut ws).unwrap();
    let (want, want_idx) =
        cubeprim::cpu::scan_with_indices(&vals[..count], &[count], 0, ScanOp::Max, opts).unwrap();
    let got: Vec<f32> = out.to_vec(&c);
    let got_idx = read_indices(&c, &idx);
    for i in 0..count {
        assert_eq!(got[i].to_bits(), want[i].to_bits(), "cummax value {i}");
        assert_eq!(got_idx[i], want_idx[i], "cummax index {i}");
    }
}

/// Bad device counts are typed errors.
#[test]
fn device_resident_length_errors() {
    let Some(c) = client() else { return };
    let x = upload(&c, &[1.0f32; 10], &[10]);
    let out = DeviceTensor::empty(&c, &[10], DType::F32);
    let mut ws = workspace();
    let run = |count: &DeviceTensor<R>, capacity: usize, ws: &mut Workspace<R>| {
        cubeprim::scan_len_into(
            &c,
            &x,
            &out,
            None,
            cubeprim::Len::Device { count, capacity },
            ScanOp::Sum,
            ScanOptions::default(),
            ws,
        )
    };
    let as_i32 = DeviceTensor::from_slice(&c, &[3i32], &[1]).unwrap();
    assert!(matches!(
        run(&as_i32, 10, &mut ws),
        Err(Error::UnsupportedDType { .. })
    ));
    let two = DeviceTensor::from_slice(&c, &[3u32, 4], &[2]).unwrap();
    assert!(matches!(
        run(&two, 10, &mut ws),
        Err(Error::LengthMismatch { .. })
    ));
    let one = DeviceTensor::from_slice(&c, &[3u32], &[1]).unwrap();
    assert!(matches!(
        run(&one, 11, &mut ws),
        Err(Error::LengthMismatch { .. })
    ));
    let x2 = upload(&c, &[1.0f32; 4], &[2, 2]);
    assert!(matches!(
        cubeprim::scan_len_into(
            &c,
            &x2,
            &x2,
            None,
            cubeprim::Len::Host(2),
            ScanOp::Sum,
            ScanOptions::default(),
            &mut ws
        ),
        Err(Error::Unsupported(_))
    ));
}

/// Look-back tiles parked in shared memory (`ScanTuning::stage`; the default where the device
/// has the shared memory for it, which lavapipe's 32 KiB lacks at the default tile): small
/// staged tiles here, vectorised and not, every variant, against the CPU reference.
#[test]
fn staged_tiles() {
    let Some(c) = client() else { return };
    let mut rng = rng(95);
    let mut ws = workspace();
    let staged = ScanOptions::default()
        .algorithm(ScanAlgorithm::DecoupledLookback)
        .tuning(ScanTuning {
            threads: 64,
            vectors_per_thread: 4,
            windows: 8,
            spins: 16,
            stage: true,
            async_copy: true,
        });
    for (shape, op) in [
        (&[3usize, 9000][..], ScanOp::Sum),
        (&[2, 5001][..], ScanOp::Sum),
        (&[3, 9000][..], ScanOp::Max),
        (&[40_001][..], ScanOp::Min),
    ] {
        for opts in variants(staged) {
            let n: usize = shape.iter().product();
            let data: Vec<f32> = values_for(&mut rng, n, op);
            let x = upload(&c, &data, shape);
            check_scan_data(&c, &mut ws, &x, &data, -1, op, opts);
        }
    }
}

// The tests above with tile ids from the cube position and the shared-memory look-back
// (`POSITION`: CUDA's order, carried on lavapipe by the look-back's fallback).
crate::tuning_variants!(position_variants: [POSITION] =>
    long_rows_2d,
    huge_1d_sum_f32,
    huge_1d_sum_i32,
    device_resident_length,
);
