//! The burn extension methods against the CPU reference, on Wgpu (fused and unfused; lavapipe
//! in CI) and NdArray: every method, ranks 1–4, every axis, f32 / f16 / f64 / int, strided
//! inputs, long rows (look-back), the fusion stream order, and the argument panics; the sort
//! family (sort, argsort, with indices, top-k, bottom-k on every axis; searchsorted).

mod common;

use burn::backend::{NdArray, Wgpu};
use burn::tensor::{DType as BDType, Element as BurnElement, Int, Tensor, TensorData};
use burn_cubecl::CubeBackend;
use common::{compare, tie_values, values_for, variants, TestElem, OPS};
use cubecl::wgpu::WgpuRuntime;
use cubeprim::burn::prelude::*;
use cubeprim::burn::NumericKind;
use cubeprim::cpu::{self, ScanElement, SortElement};
use half::f16;
use rand::rngs::StdRng;

type WgpuFused = Wgpu;
type WgpuPlain = CubeBackend<WgpuRuntime, f32, i32, u32>;
type Cpu = NdArray<f32, i64>;

/// Values of `E` for `op`, with many ties when `ties`.
fn values<E: TestElem>(rng: &mut StdRng, n: usize, op: ScanOp, ties: bool) -> Vec<E> {
    if ties {
        tie_values(rng, n, 0.05, 0.02)
    } else {
        values_for(rng, n, op)
    }
}

/// Reads `data` as `E` (its own dtype).
fn read<E: BurnElement>(data: &TensorData) -> Vec<E> {
    data.to_vec::<E>()
        .unwrap_or_else(|e| panic!("read {:?}: {e:?}", data.dtype))
}

/// Checks a scan result (and its indices) against `cpu` on the input `x`.
#[allow(clippy::too_many_arguments)]
fn check_as<E: ScanElement + BurnElement>(
    x: &TensorData,
    y: &TensorData,
    idx: Option<&TensorData>,
    axis: usize,
    op: ScanOp,
    opts: ScanOptions,
    what: &str,
) {
    let shape = x.shape.to_vec();
    assert_eq!(y.shape.to_vec(), shape, "{what}: output shape");
    assert_eq!(y.dtype, x.dtype, "{what}: output dtype");
    let input: Vec<E> = read(x);
    let got: Vec<E> = read(y);
    let (want, want_idx) = cpu::scan_with_indices(&input, &shape, axis, op, opts);
    if let Err(e) = compare(&got, &want, &input, &shape, axis, op, opts) {
        panic!("{what}: {e}");
    }
    if let Some(idx) = idx {
        assert_eq!(idx.shape.to_vec(), shape, "{what}: index shape");
        let got_idx: Vec<i64> = read(&idx.clone().convert::<i64>());
        if let Some(i) = (0..got_idx.len()).find(|&i| got_idx[i] != want_idx[i]) {
            panic!(
                "{what}: index at flat {i}: got {}, want {}",
                got_idx[i], want_idx[i]
            );
        }
    }
}

fn check(
    x: &TensorData,
    y: &TensorData,
    idx: Option<&TensorData>,
    axis: usize,
    op: ScanOp,
    opts: ScanOptions,
    what: &str,
) {
    match x.dtype {
        BDType::F32 => check_as::<f32>(x, y, idx, axis, op, opts, what),
        BDType::F16 => check_as::<f16>(x, y, idx, axis, op, opts, what),
        BDType::F64 => check_as::<f64>(x, y, idx, axis, op, opts, what),
        BDType::I32 => check_as::<i32>(x, y, idx, axis, op, opts, what),
        BDType::I64 => check_as::<i64>(x, y, idx, axis, op, opts, what),
        d => panic!("{what}: no reference for {d:?}"),
    }
}

/// A float tensor of `dtype` with values for `op`.
fn float_input<B: PrimBackend, const D: usize>(
    dev: &B::Device,
    shape: [usize; D],
    dtype: BDType,
    op: ScanOp,
    ties: bool,
    rng: &mut StdRng,
) -> Tensor<B, D> {
    let n = shape.iter().product();
    let v: Vec<f32> = match dtype {
        BDType::F16 => values::<f16>(rng, n, op, ties)
            .into_iter()
            .map(f16::to_f32)
            .collect(),
        _ => values::<f32>(rng, n, op, ties),
    };
    Tensor::<B, D>::from_data(TensorData::new(v, shape), dev).cast(dtype)
}

/// An int tensor (the backend's int dtype) with `i32` values for `op`.
fn int_input<B: PrimBackend, const D: usize>(
    dev: &B::Device,
    shape: [usize; D],
    op: ScanOp,
    ties: bool,
    rng: &mut StdRng,
) -> Tensor<B, D, Int> {
    let n = shape.iter().product();
    let v: Vec<i32> = values(rng, n, op, ties);
    Tensor::<B, D, Int>::from_data(TensorData::new(v, shape), dev)
}

/// What a case runs: the named methods, or also every exclusive / reverse variant.
#[derive(Clone, Copy, PartialEq)]
enum Depth {
    Named,
    Variants,
}

/// Every method on every axis of tensors from `make(op, ties)`; with `swap`, the input is a
/// strided view (first and last axes swapped) of the made tensor.
fn check_methods<B: PrimBackend, const D: usize, K: NumericKind<B>>(
    make: &mut dyn FnMut(ScanOp, bool) -> Tensor<B, D, K>,
    depth: Depth,
    swap: bool,
    label: &str,
) {
    for axis in 0..D {
        // Half the axes by their negative name.
        let dim = if axis % 2 == 1 {
            axis as isize - D as isize
        } else {
            axis as isize
        };
        for op in OPS {
            for ties in [false, true] {
                if ties && !matches!(op, ScanOp::Max | ScanOp::Min) {
                    continue;
                }
                let mut x = make(op, ties);
                if swap && D > 1 {
                    x = x.swap_dims(0, D - 1);
                }
                let xd = x.to_data();
                let what = format!("{label} shape {:?} axis {axis} {op:?}", xd.shape);
                let named = match op {
                    ScanOp::Sum => x.clone().prim_cumsum(dim),
                    ScanOp::Prod => x.clone().prim_cumprod(dim),
                    ScanOp::Max => x.clone().prim_cummax(dim),
                    ScanOp::Min => x.clone().prim_cummin(dim),
                };
                let base = ScanOptions::default();
                check(&xd, &named.to_data(), None, axis, op, base, &what);
                if depth == Depth::Variants {
                    for opts in variants(base) {
                        let y = x.clone().prim_scan(dim, op, opts);
                        let what = format!("{what} {opts:?}");
                        check(&xd, &y.to_data(), None, axis, op, opts, &what);
                    }
                }
                if !matches!(op, ScanOp::Max | ScanOp::Min) {
                    continue;
                }
                let (v, i) = if op == ScanOp::Max {
                    x.clone().prim_cummax_with_indices(dim)
                } else {
                    x.clone().prim_cummin_with_indices(dim)
                };
                let what = format!("{what} with indices (ties {ties})");
                check(&xd, &v.to_data(), Some(&i.to_data()), axis, op, base, &what);
                if depth == Depth::Variants {
                    for opts in variants(base) {
                        let (v, i) = x.clone().prim_scan_with_indices(dim, op, opts);
                        let what = format!("{what} {opts:?}");
                        check(&xd, &v.to_data(), Some(&i.to_data()), axis, op, opts, &what);
                    }
                }
            }
        }
    }
}

/// Ranks 1–4, every axis, for float tensors of `dtype`.
fn float_ranks<B: PrimBackend>(dev: &B::Device, dtype: BDType, seed: u64) {
    let rng = &mut common::rng(seed);
    let label = format!("{} {dtype:?}", std::any::type_name::<B>());
    check_methods::<B, 1, _>(
        &mut |op, t| float_input(dev, [37], dtype, op, t, rng),
        Depth::Variants,
        false,
        &label,
    );
    check_methods::<B, 2, _>(
        &mut |op, t| float_input(dev, [5, 33], dtype, op, t, rng),
        Depth::Named,
        true,
        &label,
    );
    check_methods::<B, 3, _>(
        &mut |op, t| float_input(dev, [3, 4, 17], dtype, op, t, rng),
        Depth::Variants,
        false,
        &label,
    );
    check_methods::<B, 4, _>(
        &mut |op, t| float_input(dev, [2, 3, 4, 9], dtype, op, t, rng),
        Depth::Named,
        true,
        &label,
    );
}

/// Ranks 1–4, every axis, for int tensors.
fn int_ranks<B: PrimBackend>(dev: &B::Device, seed: u64) {
    let rng = &mut common::rng(seed);
    let label = format!("{} int", std::any::type_name::<B>());
    check_methods::<B, 1, _>(
        &mut |op, t| int_input(dev, [41], op, t, rng),
        Depth::Named,
        false,
        &label,
    );
    check_methods::<B, 2, _>(
        &mut |op, t| int_input(dev, [6, 19], op, t, rng),
        Depth::Variants,
        true,
        &label,
    );
    check_methods::<B, 3, _>(
        &mut |op, t| int_input(dev, [2, 5, 13], op, t, rng),
        Depth::Named,
        true,
        &label,
    );
    check_methods::<B, 4, _>(
        &mut |op, t| int_input(dev, [3, 2, 4, 5], op, t, rng),
        Depth::Named,
        false,
        &label,
    );
}

/// Rows longer than one tile (decoupled look-back), along the last and the first axis.
fn long_rows<B: PrimBackend>(dev: &B::Device, seed: u64) {
    let rng = &mut common::rng(seed);
    for (shape, axis) in [([2, 9001], 1), ([5000, 3], 0)] {
        let x = float_input::<B, 2>(dev, shape, BDType::F32, ScanOp::Sum, false, rng);
        let xd = x.to_data();
        let what = format!("long {shape:?} axis {axis}");
        let opts = ScanOptions::default();
        check(
            &xd,
            &x.clone().prim_cumsum(axis).to_data(),
            None,
            axis,
            ScanOp::Sum,
            opts,
            &what,
        );
        let rev = opts.exclusive().reverse();
        let y = x.prim_scan(axis, ScanOp::Sum, rev);
        check(&xd, &y.to_data(), None, axis, ScanOp::Sum, rev, &what);
        let x = float_input::<B, 2>(dev, shape, BDType::F32, ScanOp::Max, true, rng);
        let xd = x.to_data();
        let (v, i) = x.prim_cummax_with_indices(axis);
        check(
            &xd,
            &v.to_data(),
            Some(&i.to_data()),
            axis,
            ScanOp::Max,
            opts,
            &what,
        );
    }
}

/// The op between element-wise ops (fused on `Fusion` backends) sees and feeds them in order.
fn in_stream_order<B: PrimBackend>(dev: &B::Device) {
    let x = Tensor::<B, 2>::from_data([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dev);
    let y = ((x * 2.0 + 1.0).prim_cumsum(1) - 1.0) * 0.5;
    let got: Vec<f32> = y.into_data().convert::<f32>().to_vec().unwrap();
    // x*2+1 = [[3,5,7],[9,11,13]]; cumsum = [[3,8,15],[9,20,33]]; (c-1)/2:
    assert_eq!(got, vec![1.0, 3.5, 7.0, 4.0, 9.5, 16.0]);
    // An int op on the indices, then a float op on the values.
    let x = Tensor::<B, 1>::from_data([3.0, 1.0, 4.0, 1.0, 5.0], dev);
    let (v, i) = (x + 0.0).prim_cummax_with_indices(0);
    let i: Vec<i64> = (i * 10).into_data().convert::<i64>().to_vec().unwrap();
    let v: Vec<f32> = (v - 1.0).into_data().convert::<f32>().to_vec().unwrap();
    assert_eq!(i, vec![0, 0, 20, 20, 40]);
    assert_eq!(v, vec![2.0, 2.0, 3.0, 3.0, 4.0]);
}

/// Empty tensors keep their shape.
fn empty<B: PrimBackend>(dev: &B::Device) {
    let x = Tensor::<B, 2>::zeros([0, 4], dev);
    assert_eq!(x.clone().prim_cumsum(1).dims(), [0, 4]);
    let (v, i) = x.prim_cummin_with_indices(0);
    assert_eq!((v.dims(), i.dims()), ([0, 4], [0, 4]));
}

/// Same bits, or both NaN.
fn same<E: BurnElement + SortElement>(a: E, b: E) -> bool {
    a.sort_cmp(&b) == std::cmp::Ordering::Equal
        && (cubeprim::Element::to_f64(a).is_nan()
            || bytemuck::bytes_of(&a) == bytemuck::bytes_of(&b))
}

/// Checks a sort-family result of `x` along its last axis against `cpu`: `k` of `n` kept.
fn check_sort_as<E: SortElement + BurnElement>(
    x: &TensorData,
    y: Option<&TensorData>,
    idx: Option<&TensorData>,
    k: usize,
    descending: bool,
    what: &str,
) {
    let input: Vec<E> = read(x);
    let n = *x.shape.last().unwrap();
    let order = cpu::argsort_rows(&input, n, descending);
    let rows = input.len().checked_div(n).unwrap_or(0);
    let want_idx: Vec<u32> = (0..rows)
        .flat_map(|r| order[r * n..r * n + k].to_vec())
        .collect();
    let want: Vec<E> = want_idx
        .iter()
        .enumerate()
        .map(|(i, &j)| input[i / k.max(1) * n + j as usize])
        .collect();
    if let Some(y) = y {
        let got: Vec<E> = read(y);
        assert_eq!(got.len(), want.len(), "{what}: length");
        if let Some(i) = (0..got.len()).find(|&i| !same(got[i], want[i])) {
            panic!(
                "{what}: value at flat {i}: got {:?}, want {:?}",
                got[i], want[i]
            );
        }
    }
    if let Some(idx) = idx {
        let got: Vec<i64> = read(&idx.clone().convert::<i64>());
        assert_eq!(got.len(), want_idx.len(), "{what}: index length");
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want_idx[i] as i64) {
            panic!(
                "{what}: index at flat {i}: got {}, want {}",
                got[i], want_idx[i]
            );
        }
    }
}

fn check_sort(
    x: &TensorData,
    y: Option<&TensorData>,
    idx: Option<&TensorData>,
    k: usize,
    descending: bool,
    what: &str,
) {
    match x.dtype {
        BDType::F32 => check_sort_as::<f32>(x, y, idx, k, descending, what),
        BDType::F16 => check_sort_as::<f16>(x, y, idx, k, descending, what),
        BDType::F64 => check_sort_as::<f64>(x, y, idx, k, descending, what),
        BDType::I32 => check_sort_as::<i32>(x, y, idx, k, descending, what),
        BDType::I64 => check_sort_as::<i64>(x, y, idx, k, descending, what),
        d => panic!("{what}: no reference for {d:?}"),
    }
}

/// Every sort-family method along every axis of tensors from `make()` (ties, NaN).
fn check_sorts<B: PrimBackend, const D: usize, K: NumericKind<B>>(
    make: &mut dyn FnMut() -> Tensor<B, D, K>,
    label: &str,
) {
    for axis in 0..D {
        let dim = if axis % 2 == 1 {
            axis as isize - D as isize
        } else {
            axis as isize
        };
        let x = make();
        // The input with `axis` last: the layout the reference sorts in.
        let last = |t: Tensor<B, D, K>| t.swap_dims(axis, D - 1).to_data();
        let last_i = |t: Tensor<B, D, Int>| t.swap_dims(axis, D - 1).to_data();
        let xd = last(x.clone());
        let n = x.dims()[axis];
        let what = format!("{label} shape {:?} axis {axis}", x.dims());
        for desc in [false, true] {
            let w = format!("{what} descending {desc}");
            let (y, i) = if desc {
                (
                    x.clone().prim_sort_descending(dim),
                    x.clone().prim_argsort_descending(dim),
                )
            } else {
                (x.clone().prim_sort(dim), x.clone().prim_argsort(dim))
            };
            check_sort(&xd, Some(&last(y)), Some(&last_i(i)), n, desc, &w);
            let (y, i) = if desc {
                x.clone().prim_sort_descending_with_indices(dim)
            } else {
                x.clone().prim_sort_with_indices(dim)
            };
            check_sort(
                &xd,
                Some(&last(y)),
                Some(&last_i(i)),
                n,
                desc,
                &format!("{w} with indices"),
            );
        }
        let k = n.min(3);
        let (y, i) = x.clone().prim_topk_with_indices(k, dim);
        check_sort(
            &xd,
            Some(&last(y)),
            Some(&last_i(i)),
            k,
            true,
            &format!("{what} topk {k}"),
        );
        let y = x.clone().prim_topk(k, dim);
        check_sort(
            &xd,
            Some(&last(y)),
            None,
            k,
            true,
            &format!("{what} topk {k}"),
        );
        let (y, i) = x.clone().prim_bottomk_with_indices(k, dim);
        check_sort(
            &xd,
            Some(&last(y)),
            Some(&last_i(i)),
            k,
            false,
            &format!("{what} bottomk {k}"),
        );
    }
}

fn sort_ranks<B: PrimBackend>(dev: &B::Device, dtype: BDType, seed: u64) {
    let rng = &mut common::rng(seed);
    let label = format!("{} {dtype:?}", std::any::type_name::<B>());
    let max = ScanOp::Max;
    check_sorts::<B, 1, _>(
        &mut || float_input(dev, [300], dtype, max, true, rng),
        &label,
    );
    check_sorts::<B, 2, _>(
        &mut || float_input(dev, [7, 45], dtype, max, false, rng),
        &label,
    );
    check_sorts::<B, 3, _>(
        &mut || float_input(dev, [3, 20, 6], dtype, max, true, rng),
        &label,
    );
    check_sorts::<B, 4, _>(
        &mut || float_input(dev, [2, 3, 5, 11], dtype, max, false, rng),
        &label,
    );
    let label = format!("{} int", std::any::type_name::<B>());
    check_sorts::<B, 2, _>(&mut || int_input(dev, [9, 33], max, true, rng), &label);
    check_sorts::<B, 3, _>(&mut || int_input(dev, [4, 3, 70], max, false, rng), &label);
    // A row longer than one tile (device-wide passes).
    check_sorts::<B, 1, _>(
        &mut || float_input(dev, [20000], dtype, max, false, rng),
        &label,
    );
}

/// searchsorted against `cpu`: a shared 1-D sorted tensor and row-wise sorted rows.
fn searchsorted_cases<B: PrimBackend>(dev: &B::Device, seed: u64) {
    let rng = &mut common::rng(seed);
    for side in [Side::Left, Side::Right] {
        let right = side == Side::Right;
        let sorted =
            float_input::<B, 1>(dev, [50], BDType::F32, ScanOp::Max, true, rng).prim_sort(0);
        let q = float_input::<B, 2>(dev, [4, 9], BDType::F32, ScanOp::Max, true, rng);
        let got: Vec<i64> = read(
            &sorted
                .clone()
                .prim_searchsorted(q.clone(), side)
                .to_data()
                .convert::<i64>(),
        );
        let s: Vec<f32> = read(&sorted.to_data());
        let qv: Vec<f32> = read(&q.to_data());
        let want = cpu::searchsorted(&s, 50, &qv, 9, right);
        assert_eq!(
            got,
            want.iter().map(|&v| v as i64).collect::<Vec<_>>(),
            "1-D {side:?}"
        );
        let sorted = int_input::<B, 2>(dev, [3, 40], ScanOp::Max, true, rng).prim_sort(1);
        let q = int_input::<B, 2>(dev, [3, 7], ScanOp::Max, true, rng)
            .swap_dims(0, 1)
            .swap_dims(0, 1);
        let got: Vec<i64> = read(
            &sorted
                .clone()
                .prim_searchsorted(q.clone(), side)
                .to_data()
                .convert::<i64>(),
        );
        let s: Vec<i64> = read(&sorted.to_data().convert::<i64>());
        let qv: Vec<i64> = read(&q.to_data().convert::<i64>());
        let want = cpu::searchsorted(&s, 40, &qv, 7, right);
        assert_eq!(
            got,
            want.iter().map(|&v| v as i64).collect::<Vec<_>>(),
            "rows {side:?}"
        );
    }
}

fn wgpu_device() -> burn::backend::wgpu::WgpuDevice {
    // Fails under CI=true when there is no device (the shared test rule).
    let _ = common::client();
    Default::default()
}

macro_rules! backend_tests {
    ($m:ident, $B:ty, $dev:expr, [$($dtype:ident),*]) => {
        mod $m {
            use super::*;
            #[test]
            fn floats_every_rank_and_axis() {
                $(float_ranks::<$B>(&$dev, BDType::$dtype, 1);)*
            }
            #[test]
            fn ints_every_rank_and_axis() {
                int_ranks::<$B>(&$dev, 2);
            }
            #[test]
            fn sorts_every_rank_and_axis() {
                $(sort_ranks::<$B>(&$dev, BDType::$dtype, 4);)*
            }
            #[test]
            fn searchsorted_1d_and_rows() {
                searchsorted_cases::<$B>(&$dev, 5);
            }
            #[test]
            fn long_rows_look_back() {
                long_rows::<$B>(&$dev, 3);
            }
            #[test]
            fn runs_in_stream_order() {
                in_stream_order::<$B>(&$dev);
            }
            #[test]
            fn empty_tensors() {
                empty::<$B>(&$dev);
            }
            #[test]
            #[should_panic(expected = "indices are defined for max and min")]
            fn indices_with_sum_panic() {
                let x = Tensor::<$B, 1>::from_data([1.0, 2.0], &$dev);
                let _ = x.prim_scan_with_indices(0, ScanOp::Sum, ScanOptions::default());
            }
            #[test]
            #[should_panic]
            fn dim_out_of_range_panics() {
                let x = Tensor::<$B, 2>::zeros([2, 2], &$dev);
                let _ = x.prim_cumsum(2);
            }
        }
    };
}

backend_tests!(wgpu_fused, WgpuFused, wgpu_device(), [F32, F16]);
backend_tests!(wgpu_plain, WgpuPlain, wgpu_device(), [F32, F16]);
backend_tests!(ndarray, Cpu, Default::default(), [F32, F64]);

/// Index outputs take the backend's int dtype (i32 on Wgpu, where lavapipe computes i64).
#[test]
fn index_dtype_is_the_backends() {
    let dev = wgpu_device();
    let x = Tensor::<WgpuFused, 1>::from_data([1.0, 3.0, 2.0], &dev);
    let (_, i) = x.prim_cummax_with_indices(0);
    assert_eq!(i.dtype(), BDType::I32);
    let x = Tensor::<Cpu, 1>::from_data([1.0, 3.0, 2.0], &Default::default());
    let (_, i) = x.prim_cummax_with_indices(0);
    assert_eq!(i.dtype(), BDType::I64);
}

/// A dtype the device lacks is refused before anything is queued (bf16 on lavapipe).
#[test]
fn unsupported_device_dtype_is_refused() {
    let dev = wgpu_device();
    let c = common::client();
    if c.as_ref()
        .is_none_or(|c| cubeprim::supports_dtype(c, cubeprim::DType::BF16))
    {
        return; // the device has bf16: nothing to refuse
    }
    let x = Tensor::<WgpuFused, 1>::zeros([4], &dev);
    let meta = cubeprim::burn::TensorMeta {
        kind: cubeprim::burn::Kind::Float,
        shape: vec![4],
        dtype: BDType::BF16,
    };
    let op = cubeprim::burn::Scan {
        axis: 0,
        op: ScanOp::Sum,
        opts: ScanOptions::default(),
        indexed: false,
    };
    let err = <WgpuFused as PrimBackend>::prim_check(&op, &[meta], &dev).unwrap_err();
    assert!(
        matches!(err, cubeprim::Error::UnsupportedDType { .. }),
        "{err}"
    );
    drop(x);
}
