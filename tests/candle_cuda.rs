//! The CUDA path of the candle adapter (feature `candle-cuda`, never built in CI: candle's
//! `cuda` feature needs nvcc).
//!
//! - NVRTC compiles the CUDA C++ of every variant to PTX for sm_90a (needs libnvrtc and the
//!   CUDA headers under `$CUDA_PATH`, no GPU);
//! - on a CUDA device, every op on candle CUDA tensors matches the CPU path (skipped, with a
//!   message, where `Device::new_cuda(0)` fails).
#![cfg(feature = "candle-cuda")]

use candle_core::{DType as CDType, Device, Tensor, D};
use cubeprim::candle::cuda::compile_ptx;
use cubeprim::candle::kernels::{scan_rows_source, Target, SCAN_ROWS};
use cubeprim::candle::{DeviceLimits, ScanExt, ScanLaunch};
use cubeprim::{DType, ScanOp, ScanOptions};

/// Every dtype the generated CUDA kernels take.
const CUDA_DTYPES: [DType; 7] = [
    DType::F32,
    DType::F64,
    DType::F16,
    DType::BF16,
    DType::U32,
    DType::I32,
    DType::I64,
];

#[test]
fn nvrtc_compiles_every_variant() {
    let mut count = 0;
    for dtype in CUDA_DTYPES {
        for op in [ScanOp::Sum, ScanOp::Prod, ScanOp::Max, ScanOp::Min] {
            let indexed = matches!(op, ScanOp::Max | ScanOp::Min);
            for (shape, axis) in [(&[3usize, 100][..], 1usize), (&[40_001, 2][..], 0)] {
                let strides = [shape[1], 1];
                let opts = ScanOptions::default().exclusive();
                let l = ScanLaunch::new(
                    DeviceLimits::CUDA,
                    shape,
                    &strides,
                    0,
                    axis,
                    dtype,
                    indexed,
                    opts,
                )
                .unwrap();
                let src = scan_rows_source(dtype, op, &l, Target::Cuda).unwrap();
                let ptx = compile_ptx(&src.source, (9, 0))
                    .unwrap_or_else(|e| panic!("{dtype} {op:?} {shape:?}: {e}"));
                assert!(ptx.to_src().contains(&format!(".entry {SCAN_ROWS}")));
                count += 1;
            }
        }
    }
    assert_eq!(count, 7 * 4 * 2);
}

#[test]
fn every_op_on_cuda_matches_the_cpu() {
    let dev = match Device::new_cuda(0) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("no CUDA device ({e}): skipped");
            return;
        }
    };
    for dt in [CDType::F32, CDType::F16, CDType::U32, CDType::I64] {
        for shape in [
            vec![5usize, 300],
            vec![1 << 20],
            vec![70_000, 3],
            vec![2, 3, 4, 5],
        ] {
            let n: usize = shape.iter().product();
            let data: Vec<f64> = (0..n).map(|i| ((i * 7919) % 5) as f64).collect();
            let h = Tensor::from_vec(data, &*shape, &Device::Cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let g = h.to_device(&dev).unwrap();
            for axis in 0..shape.len() {
                for op in [ScanOp::Sum, ScanOp::Max] {
                    let want = h.scan(axis, op, ScanOptions::default()).unwrap();
                    let got = g.scan(axis, op, ScanOptions::default()).unwrap();
                    let to = |t: Tensor| {
                        t.to_dtype(CDType::F64)
                            .unwrap()
                            .flatten_all()
                            .unwrap()
                            .to_vec1::<f64>()
                            .unwrap()
                    };
                    let (got, want) = (to(got.to_device(&Device::Cpu).unwrap()), to(want));
                    for (a, b) in got.iter().zip(&want) {
                        assert!(
                            a == b
                                || (a - b).abs() <= 2e-2 * (1.0 + b.abs())
                                || (a.is_infinite() && b.is_infinite()),
                            "{dt:?} {shape:?} axis {axis} {op:?}: {a} vs {b}"
                        );
                    }
                }
                // Indices: the kernel's i64 cast to u32 (`u32::MAX` where an exclusive scan
                // has no element yet), as the CPU path writes them.
                let idx = |t: &Tensor, opts| {
                    let (_, i) = t.scan_with_indices(axis, ScanOp::Max, opts).unwrap();
                    assert_eq!(i.dtype(), CDType::U32);
                    let i = i.to_device(&Device::Cpu).unwrap().flatten_all().unwrap();
                    i.to_vec1::<u32>().unwrap()
                };
                for opts in [ScanOptions::default(), ScanOptions::default().exclusive()] {
                    assert_eq!(idx(&g, opts), idx(&h, opts), "{dt:?} {shape:?} axis {axis}");
                }
            }
        }
    }
}

/// Bit-exact comparison through f64 (NaN == NaN), on the CPU.
fn same(got: &Tensor, want: &Tensor, what: &str) {
    assert_eq!(got.dims(), want.dims(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    let v = |t: &Tensor| {
        t.to_device(&Device::Cpu)
            .unwrap()
            .to_dtype(CDType::F64)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f64>()
            .unwrap()
    };
    let (a, b) = (v(got), v(want));
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!(
            x == y || (x.is_nan() && y.is_nan()),
            "{what}: [{i}] {x} vs {y}"
        );
    }
}

/// The outputs of a `_padded` call on CUDA against the CPU's (each list ending with the `[1]`
/// count): the counts equal, the GPU's left on the device, and the first `count` rows of
/// every other output equal (the rest is unspecified).
fn same_padded(got: &[&Tensor], want: &[&Tensor], what: &str) {
    let (gc, wc) = (got[got.len() - 1], want[want.len() - 1]);
    assert!(
        gc.device().is_cuda(),
        "{what}: the count stays on the device"
    );
    same(gc, wc, &format!("{what}: count"));
    let k = wc.to_vec1::<u32>().unwrap()[0] as usize;
    for (o, (g, w)) in got.iter().zip(want).take(got.len() - 1).enumerate() {
        let cut = |t: &Tensor| t.narrow(0, 0, k).unwrap();
        same(&cut(g), &cut(w), &format!("{what}: output {o}"));
    }
}

/// Every dtype the candle ops take on CUDA.
const DTYPES: [CDType; 7] = [
    CDType::F32,
    CDType::F16,
    CDType::BF16,
    CDType::U32,
    CDType::I32,
    CDType::I64,
    CDType::F64,
];

/// A fresh seed (printed) from the clock.
fn seeded() -> rand::rngs::StdRng {
    use rand::SeedableRng;
    let seed: u64 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    eprintln!("seed {seed}");
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// Fresh random inputs, `partition`, `reduce_by_key`, `sort_pairs`, `bucketize` and
/// `count_nonzero` (every dtype, contiguous and narrowed) on candle CUDA tensors against the
/// same call on the CPU.
#[test]
fn partition_reduce_by_key_and_friends_on_cuda_match_the_cpu() {
    use cubeprim::candle::{RunsExt, SelectExt, SortExt};
    use rand::Rng;
    let Ok(dev) = Device::new_cuda(0) else {
        eprintln!("no CUDA device: skipped");
        return;
    };
    let mut rng = seeded();
    let mut checked = 0;
    for shape in [
        vec![3usize, 100],
        vec![2, 1025],
        vec![1, 300_000],
        vec![700, 8],
    ] {
        let n: usize = shape.iter().product();
        for dt in DTYPES {
            let float = matches!(dt, CDType::F32 | CDType::F16 | CDType::BF16 | CDType::F64);
            // Few distinct values, so that runs of equal keys exist; NaN in floats.
            let data: Vec<f64> = (0..n)
                .map(|_| match float {
                    true if rng.random_range(0..100) == 0 => f64::NAN,
                    _ => rng.random_range(0..4) as f64,
                })
                .collect();
            let h = Tensor::from_vec(data, &*shape, &Device::Cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let vals: Vec<f32> = (0..n)
                .map(|_| rng.random_range(-64..64) as f32 * 0.25)
                .collect();
            let hv = Tensor::from_vec(vals, &*shape, &Device::Cpu).unwrap();
            let (g, gv) = (h.to_device(&dev).unwrap(), hv.to_device(&dev).unwrap());
            // Sorted boundaries with a tie, in the keys' dtype (2.5 truncated for integers).
            let hb = Tensor::new(&[0f64, 1., 1., 2.5, 3.], &Device::Cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let gb = hb.to_device(&dev).unwrap();
            let last = shape.len() - 1;
            let cut = shape[last] - shape[last] / 3;
            let narrow = |t: &Tensor| t.narrow(last, 1, cut - 1).unwrap();
            for (hx, gx, hy, gy) in [
                (h.clone(), g.clone(), hv.clone(), gv.clone()),
                (narrow(&h), narrow(&g), narrow(&hv), narrow(&gv)),
            ] {
                let what = format!("{dt:?} {:?}", hx.dims());
                eprintln!("case {what} {:?}", hx.stride());
                let hm = hy.ge(&hy.zeros_like().unwrap()).unwrap();
                let gm = hm.to_device(&dev).unwrap();
                let ((wp, wc), (gp, gc)) = (hx.partition(&hm).unwrap(), gx.partition(&gm).unwrap());
                same(&gp, &wp, &format!("partition {what}"));
                same(&gc, &wc, &format!("partition count {what}"));
                for op in [ScanOp::Sum, ScanOp::Max, ScanOp::Min] {
                    let ((wk, wv), (gk, gv)) = (
                        hx.reduce_by_key(&hy, op).unwrap(),
                        gx.reduce_by_key(&gy, op).unwrap(),
                    );
                    same(&gk, &wk, &format!("reduce_by_key {op:?} keys {what}"));
                    same(&gv, &wv, &format!("reduce_by_key {op:?} values {what}"));
                }
                // Few distinct keys: long runs of ties, so stability shows.
                for asc in [true, false] {
                    let ((wk, wv), (gk, gv)) = (
                        hx.sort_pairs(&hy, D::Minus1, asc).unwrap(),
                        gx.sort_pairs(&gy, D::Minus1, asc).unwrap(),
                    );
                    same(&gk, &wk, &format!("sort_pairs {asc} keys {what}"));
                    same(&gv, &wv, &format!("sort_pairs {asc} values {what}"));
                    // Along the first dim: a transposed view, sorted, copied back.
                    let ((wk, wv), (gk, gv)) = (
                        hx.sort_pairs(&hy, 0, asc).unwrap(),
                        gx.sort_pairs(&gy, 0, asc).unwrap(),
                    );
                    same(&gk, &wk, &format!("sort_pairs dim 0 {asc} keys {what}"));
                    same(&gv, &wv, &format!("sort_pairs dim 0 {asc} values {what}"));
                }
                for op in [ScanOp::Sum, ScanOp::Max] {
                    let (wk, wv, wc) = hx.reduce_by_key_padded(&hy, op).unwrap();
                    let (gk, gv, gc) = gx.reduce_by_key_padded(&gy, op).unwrap();
                    let what = format!("reduce_by_key_padded {op:?} {what}");
                    same_padded(&[&gk, &gv, &gc], &[&wk, &wv, &wc], &what);
                }
                for right in [false, true] {
                    same(
                        &gx.bucketize(&gb, right).unwrap(),
                        &hx.bucketize(&hb, right).unwrap(),
                        &format!("bucketize {right} {what}"),
                    );
                }
                for (h, g, of) in [(&hx, &gx, "data"), (&hm, &gm, "u8 mask")] {
                    let gc = g.count_nonzero().unwrap();
                    assert!(gc.device().is_cuda(), "count_nonzero stays on the device");
                    same(
                        &gc,
                        &h.count_nonzero().unwrap(),
                        &format!("count {of} {what}"),
                    );
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 4 * DTYPES.len() * 2);
}

/// Fresh random inputs (a new seed each run, printed), every op of the sort, reduce,
/// compaction and runs families on candle CUDA tensors against the same call on the CPU.
#[test]
fn every_family_on_cuda_matches_the_cpu() {
    use cubeprim::candle::{ReduceExt, RunsExt, SelectExt, Side, SortExt};
    use rand::Rng;
    let dev = match Device::new_cuda(0) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("no CUDA device ({e}): skipped");
            return;
        }
    };
    let mut rng = seeded();
    let cpu = Device::Cpu;
    let mut checked = 0;
    // `CUBEPRIM_CANDLE_SHAPES=3,4,5,6`: only these shapes (by index), e.g. to finish a run
    // that a time limit cut (each shape compiles new kernel variants with NVRTC: ~40 s each).
    let picked: Option<Vec<usize>> = std::env::var("CUBEPRIM_CANDLE_SHAPES").ok().map(|v| {
        v.split(',')
            .map(|i| i.trim().parse().expect("shape index"))
            .collect()
    });
    let shapes = [
        vec![3usize, 100],
        vec![4, 1024],
        vec![2, 1025],
        vec![3, 5000],
        vec![1, 300_000],
        vec![2, 3, 17],
        vec![700, 8],
    ];
    let runs = picked.unwrap_or((0..shapes.len()).collect());
    // Columns past candle's own GPU argsort limit (1024 in one block) included.
    for shape in runs.iter().map(|&i| shapes[i].clone()) {
        let n: usize = shape.iter().product();
        for dt in DTYPES {
            let float = matches!(dt, CDType::F32 | CDType::F16 | CDType::BF16 | CDType::F64);
            let data: Vec<f64> = (0..n)
                .map(|_| match float {
                    true if rng.random_range(0..100) == 0 => f64::NAN,
                    true => rng.random_range(-64..64) as f64 * 0.25,
                    false => rng.random_range(0..50) as f64,
                })
                .collect();
            let h = Tensor::from_vec(data, &*shape, &cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let g = h.to_device(&dev).unwrap();
            // Contiguous, and a narrowed view (offset, row stride larger than the row).
            let last = shape.len() - 1;
            let cut = shape[last] - shape[last] / 3;
            for (hx, gx) in [
                (h.clone(), g.clone()),
                (
                    h.narrow(last, 1, cut - 1).unwrap(),
                    g.narrow(last, 1, cut - 1).unwrap(),
                ),
            ] {
                let what = format!("{dt:?} {:?}", hx.dims());
                // Progress: a failure below names its case.
                eprintln!("case {what} {:?}", hx.stride());
                for asc in [true, false] {
                    let ((wv, wi), (gv, gi)) = (
                        hx.sort_stable(D::Minus1, asc).unwrap(),
                        gx.sort_stable(D::Minus1, asc).unwrap(),
                    );
                    same(&gv, &wv, &format!("sort {asc} {what}"));
                    same(&gi, &wi, &format!("sort indices {asc} {what}"));
                    same(
                        &gx.arg_sort_stable(D::Minus1, asc).unwrap(),
                        &wi,
                        &format!("arg_sort {what}"),
                    );
                    same(
                        &gx.sort_stable_values(D::Minus1, asc).unwrap(),
                        &wv,
                        &format!("values {what}"),
                    );
                    // Every other dim: moved last as a view, outputs copied back contiguous.
                    for dim in 0..last {
                        let ((wv, wi), (gv, gi)) = (
                            hx.sort_stable(dim, asc).unwrap(),
                            gx.sort_stable(dim, asc).unwrap(),
                        );
                        assert!(gi.is_contiguous(), "{what}");
                        same(&gv, &wv, &format!("sort dim {dim} {asc} {what}"));
                        same(&gi, &wi, &format!("sort dim {dim} indices {asc} {what}"));
                    }
                }
                let k = (hx.dims()[last] / 3).max(1);
                for (wt, gt) in [
                    (
                        hx.top_k(k, D::Minus1).unwrap(),
                        gx.top_k(k, D::Minus1).unwrap(),
                    ),
                    (
                        hx.bottom_k(k, D::Minus1).unwrap(),
                        gx.bottom_k(k, D::Minus1).unwrap(),
                    ),
                    (hx.top_k(1, 0).unwrap(), gx.top_k(1, 0).unwrap()),
                ] {
                    same(&gt.0, &wt.0, &format!("top_k {k} {what}"));
                    same(&gt.1, &wt.1, &format!("top_k {k} indices {what}"));
                }
                let sorted_h = hx.sort_stable_values(D::Minus1, true).unwrap();
                let sorted_g = sorted_h.to_device(&dev).unwrap();
                for side in [Side::Left, Side::Right] {
                    same(
                        &sorted_g.search_sorted(&gx, D::Minus1, side).unwrap(),
                        &sorted_h.search_sorted(&hx, D::Minus1, side).unwrap(),
                        &format!("search_sorted {side:?} {what}"),
                    );
                }
                if last > 0 {
                    let sorted_h = hx.sort_stable_values(0, true).unwrap();
                    let sorted_g = sorted_h.to_device(&dev).unwrap();
                    same(
                        &sorted_g.search_sorted(&gx, 0, Side::Right).unwrap(),
                        &sorted_h.search_sorted(&hx, 0, Side::Right).unwrap(),
                        &format!("search_sorted dim 0 {what}"),
                    );
                }
                for axis in 0..hx.rank() {
                    for op in [ScanOp::Sum, ScanOp::Max, ScanOp::Min] {
                        let (w, r) = (hx.reduce(axis, op).unwrap(), gx.reduce(axis, op).unwrap());
                        if float && op == ScanOp::Sum {
                            // Summation order differs: compare with a tolerance.
                            let d = (r.to_device(&cpu).unwrap().to_dtype(CDType::F64).unwrap()
                                - w.to_dtype(CDType::F64).unwrap())
                            .unwrap()
                            .abs()
                            .unwrap()
                            .flatten_all()
                            .unwrap()
                            .to_vec1::<f64>()
                            .unwrap();
                            let scale = hx.dims()[axis] as f64 * 16.0;
                            assert!(
                                d.iter().all(|d| d.is_nan() || *d <= 1e-2 * scale),
                                "sum {what}"
                            );
                        } else {
                            same(&r, &w, &format!("reduce {op:?} axis {axis} {what}"));
                        }
                    }
                }
                // The mask is made on the CPU and copied: candle's CUDA comparisons have no
                // i32 kernel ("dtype mismatch in binary op"), and a scalar comparison is f64.
                let hm = hx.ge(&hx.zeros_like().unwrap()).unwrap();
                let gm = hm.to_device(gx.device()).unwrap();
                same(
                    &gx.masked_select(&gm).unwrap(),
                    &hx.masked_select(&hm).unwrap(),
                    &format!("masked_select {what}"),
                );
                same(
                    &gx.nonzero().unwrap(),
                    &hx.nonzero().unwrap(),
                    &format!("nonzero {what}"),
                );
                // The padded variants: the count on the device, the first `count` rows.
                let (wp, wc) = hx.nonzero_padded().unwrap();
                let (gp, gc) = gx.nonzero_padded().unwrap();
                same_padded(&[&gp, &gc], &[&wp, &wc], &format!("nonzero_padded {what}"));
                let (wp, wc) = hx.masked_select_padded(&hm).unwrap();
                let (gp, gc) = gx.masked_select_padded(&gm).unwrap();
                let padded = format!("masked_select_padded {what}");
                same_padded(&[&gp, &gc], &[&wp, &wc], &padded);
                for sorted in [false, true] {
                    let ((wu, wc, wi, wk), (u, c, i, k)) = match sorted {
                        true => (
                            hx.unique_with_inverse_padded().unwrap(),
                            gx.unique_with_inverse_padded().unwrap(),
                        ),
                        false => (
                            hx.unique_consecutive_with_inverse_padded().unwrap(),
                            gx.unique_consecutive_with_inverse_padded().unwrap(),
                        ),
                    };
                    let padded = format!("unique padded {sorted} {what}");
                    same_padded(&[&u, &c, &k], &[&wu, &wc, &wk], &padded);
                    same(&i, &wi, &format!("{padded}: inverse"));
                }
                let (wu, wc, wi) = hx.unique_with_inverse().unwrap();
                let (u, c, i) = gx.unique_with_inverse().unwrap();
                same(&u, &wu, &format!("unique {what}"));
                same(&c, &wc, &format!("unique counts {what}"));
                same(&i, &wi, &format!("unique inverse {what}"));
                let (wu, wc, wi) = hx.unique_consecutive_with_inverse().unwrap();
                let (u, c, i) = gx.unique_consecutive_with_inverse().unwrap();
                same(&u, &wu, &format!("unique_consecutive {what}"));
                same(&c, &wc, &format!("unique_consecutive counts {what}"));
                same(&i, &wi, &format!("unique_consecutive inverse {what}"));
                if !float {
                    for bins in [1, 40, 5000] {
                        same(
                            &gx.histogram(bins).unwrap(),
                            &hx.histogram(bins).unwrap(),
                            &format!("histogram {bins} {what}"),
                        );
                    }
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, runs.len() * DTYPES.len() * 2);
}

/// Fresh random inputs, short rows (the one-cube sort launched on candle's stream, no copy):
/// transposed and permuted views (keys `in_stride` apart, leading strides of any order), more
/// rows than one grid dimension holds, one key per row; `sort` values and
/// `arg_sort_stable` indices against the same calls on the CPU, every dtype.
#[test]
fn short_row_sorts_on_candles_stream_match_the_cpu() {
    use cubeprim::candle::SortExt;
    use rand::Rng;
    let Ok(dev) = Device::new_cuda(0) else {
        eprintln!("no CUDA device: skipped");
        return;
    };
    let mut rng = seeded();
    let mut checked = 0;
    for shape in [
        vec![257usize, 6],
        vec![5, 7, 33],
        vec![70_000, 3],
        vec![9, 1],
        vec![2, 4096],
    ] {
        let n: usize = shape.iter().product();
        for dt in DTYPES {
            let float = matches!(dt, CDType::F32 | CDType::F16 | CDType::BF16 | CDType::F64);
            let data: Vec<f64> = (0..n)
                .map(|_| match (float, rng.random_range(0..50)) {
                    (true, 0) => f64::NAN,
                    (true, 1) => -0.0,
                    _ => rng.random_range(-20..20) as f64,
                })
                .collect();
            let h = Tensor::from_vec(data, &*shape, &Device::Cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let g = h.to_device(&dev).unwrap();
            // The first and last axes swapped: rows along the old first axis, strided.
            let last = shape.len() - 1;
            let views = [
                (h.clone(), g.clone(), "contiguous"),
                (
                    h.transpose(0, last).unwrap(),
                    g.transpose(0, last).unwrap(),
                    "transposed",
                ),
            ];
            for (hx, gx, what) in &views {
                for asc in [true, false] {
                    let what = format!("{dt:?} {shape:?} {what} asc {asc}");
                    let (gv, gi) = gx.sort_stable(D::Minus1, asc).unwrap();
                    let (hv, hi) = hx.sort_stable(D::Minus1, asc).unwrap();
                    same(&gv, &hv, &format!("sort values {what}"));
                    same(&gi, &hi, &format!("sort indices {what}"));
                    same(
                        &gx.arg_sort_stable(D::Minus1, asc).unwrap(),
                        &hx.arg_sort_stable(D::Minus1, asc).unwrap(),
                        &format!("arg_sort {what}"),
                    );
                    same(
                        &gx.sort_stable_values(D::Minus1, asc).unwrap(),
                        &hx.sort_stable_values(D::Minus1, asc).unwrap(),
                        &format!("sort values only {what}"),
                    );
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 5 * DTYPES.len() * 2 * 2);
}

/// NVRTC compiles the one-cube row sort the candle adapter launches itself, for every key
/// dtype and output form, with the tile the sort plan picks on CUDA, with CUB's PTX ballots
/// (the plan's choice on CUDA) and without.
#[test]
fn nvrtc_compiles_the_row_sort() {
    use cubeprim::candle::kernels::{radix_sort_rows_source, RowSortVariant, RADIX_SORT_ROWS};
    use cubeprim_kernels::cube::RadixConfig;
    let mut count = 0;
    for (cfg, ptx_ballot) in [((256, 16), true), ((256, 16), false), ((64, 4), true)] {
        for key in CUDA_DTYPES {
            for (indexed, write_keys) in [(true, true), (true, false), (false, true)] {
                let v = RowSortVariant {
                    key,
                    cfg: RadixConfig {
                        threads: cfg.0,
                        items: cfg.1,
                        plane_ops: true,
                        wide_counts: true,
                        plane_min: 32,
                        plane_max: 32,
                        plane_sync: true,
                        ptx_ballot,
                    },
                    indexed,
                    write_keys,
                };
                let src = radix_sort_rows_source(&v, Target::Cuda).unwrap();
                assert_eq!(src.source.contains("vote.sync.ballot.b32"), ptx_ballot);
                let ptx = compile_ptx(&src.source, (9, 0)).unwrap_or_else(|e| panic!("{v:?}: {e}"));
                assert!(ptx.to_src().contains(&format!(".entry {RADIX_SORT_ROWS}")));
                count += 1;
            }
        }
    }
    assert_eq!(count, 3 * 7 * 3);
}

/// Scans from several threads at once, on one candle `Device` and on devices with their own
/// streams (`Device::new_cuda_with_stream`): each stream has its own look-back state, so no
/// scan reads another's tiles. Before the state was kept per stream, two streams shared one
/// per ordinal, and the host-side lock ordered only the launches, not the kernels.
#[test]
fn scans_on_several_streams_at_once() {
    let Ok(shared) = Device::new_cuda(0) else {
        eprintln!("no CUDA device: skipped");
        return;
    };
    let n = 1usize << 24;
    let run = |dev: Device, seed: u64| {
        // Zeros and ones: every prefix sum is an integer below 2^24, exact in f32.
        let data: Vec<f32> = (0..n)
            .map(|i| (((i as u64).wrapping_mul(2654435761) ^ seed) >> 7 & 1) as f32)
            .collect();
        let mut want = Vec::with_capacity(n);
        let mut acc = 0.0f32;
        for &v in &data {
            acc += v;
            want.push(acc);
        }
        let x = Tensor::from_vec(data, n, &dev).unwrap();
        for round in 0..20 {
            let got: Vec<f32> = x.scan_sum(0).unwrap().to_vec1().unwrap();
            if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
                panic!(
                    "seed {seed} round {round} at {i}: {} vs {}",
                    got[i], want[i]
                );
            }
        }
    };
    std::thread::scope(|s| {
        for seed in 0..2 {
            let dev = shared.clone();
            s.spawn(move || run(dev, seed));
        }
        for seed in 2..4 {
            s.spawn(move || run(Device::new_cuda_with_stream(0).unwrap(), seed));
        }
    });
}
