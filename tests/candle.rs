//! The candle extension traits on the CPU device, against cubeprim's CPU reference: every
//! method, dtype, rank 1–4, every axis, contiguous and strided (transposed, narrowed,
//! permuted) inputs. The CPU path and the reference do the same operations in the same order
//! per row, so results must match bit for bit.
#![cfg(feature = "candle")]

use candle_core::{DType as CDType, Device, Tensor, Var, WithDType, D};
// Everything the methods need, as a user imports it.
use cubeprim::candle::prelude::*;
use cubeprim::cpu::{self, ScanElement};
use half::{bf16, f16};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const OPS: [ScanOp; 4] = [ScanOp::Sum, ScanOp::Prod, ScanOp::Max, ScanOp::Min];

fn variants() -> [ScanOptions; 4] {
    let o = ScanOptions::default();
    [o, o.exclusive(), o.reverse(), o.exclusive().reverse()]
}

/// Bits of a value, so that NaN == NaN.
trait Bits: Copy {
    fn bits(self) -> u64;
}
macro_rules! bits {
    ($($t:ty => |$x:ident| $e:expr),*) => {$(
        impl Bits for $t { fn bits(self) -> u64 { let $x = self; $e } }
    )*};
}
bits!(f32 => |x| x.to_bits() as u64, f64 => |x| x.to_bits(), f16 => |x| x.to_bits() as u64,
    bf16 => |x| x.to_bits() as u64, u32 => |x| x as u64, i32 => |x| x as u64, i64 => |x| x as u64);

/// Random values for an op: near 1 for products (no overflow), a few NaN / ties for floats.
fn values<E: WithDType>(rng: &mut StdRng, n: usize, op: ScanOp, float: bool) -> Vec<E> {
    (0..n)
        .map(|_| {
            let v = match (op, float) {
                (ScanOp::Prod, true) => rng.random_range(0.5..1.5),
                (ScanOp::Prod, false) => rng.random_range(0..3) as f64,
                (_, true) if rng.random_range(0..50) == 0 => f64::NAN,
                (_, true) => (rng.random_range(-8..8) as f64) * 0.25,
                (_, false) => rng.random_range(0..9) as f64,
            };
            E::from_f64(v)
        })
        .collect()
}

/// A view of a fresh tensor: contiguous, transposed, narrowed or permuted (all but the first
/// are non-contiguous when the shape allows it). Returns the view and its rank-`dims` shape.
fn view(t: &Tensor, kind: usize) -> Tensor {
    let rank = t.rank();
    match kind % 4 {
        0 => t.clone(),
        1 if rank >= 2 => t.transpose(0, rank - 1).unwrap(),
        2 if t.dim(rank - 1).unwrap() > 1 => {
            let n = t.dim(rank - 1).unwrap();
            t.narrow(rank - 1, 1, n - 1).unwrap()
        }
        3 if rank >= 3 => t.permute((1..rank).chain([0]).collect::<Vec<_>>()).unwrap(),
        _ => t.clone(),
    }
}

/// Checks every op / variant / axis of one dtype on random shapes of every rank.
fn check_dtype<E: WithDType + ScanElement + Bits>(seed: u64) {
    let float = <E as cubeprim::Element>::DTYPE.is_float();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut checked = 0;
    for rank in 1..=4 {
        for case in 0..4 {
            let shape: Vec<usize> = (0..rank)
                .map(|_| rng.random_range(if case == 3 { 0..3 } else { 1..7 }))
                .collect();
            let n: usize = shape.iter().product();
            for &op in &OPS {
                let base =
                    Tensor::from_vec(values::<E>(&mut rng, n, op, float), &*shape, &Device::Cpu)
                        .unwrap();
                let x = view(&base, case + rank);
                // (candle's to_vec1 panics on an empty view with an offset)
                let dense: Vec<E> = if x.elem_count() == 0 {
                    Vec::new()
                } else {
                    x.flatten_all().unwrap().to_vec1().unwrap()
                };
                for axis in 0..rank {
                    for opts in variants() {
                        let got: Vec<E> = x
                            .scan(axis, op, opts)
                            .unwrap()
                            .flatten_all()
                            .unwrap()
                            .to_vec1()
                            .unwrap();
                        let want = cpu::scan(&dense, x.dims(), axis, op, opts).unwrap();
                        assert_eq!(
                            got.iter().map(|v| v.bits()).collect::<Vec<_>>(),
                            want.iter().map(|v| v.bits()).collect::<Vec<_>>(),
                            "{:?} {op:?} {opts:?} axis {axis} of {:?} (strides {:?})",
                            <E as cubeprim::Element>::DTYPE,
                            x.dims(),
                            x.stride()
                        );
                        if matches!(op, ScanOp::Max | ScanOp::Min) {
                            let (v, i) = x.scan_with_indices(axis, op, opts).unwrap();
                            let (wv, wi) =
                                cpu::scan_with_indices(&dense, x.dims(), axis, op, opts).unwrap();
                            let v: Vec<E> = v.flatten_all().unwrap().to_vec1().unwrap();
                            assert_eq!(i.dtype(), CDType::U32);
                            let i: Vec<u32> = i.flatten_all().unwrap().to_vec1().unwrap();
                            assert_eq!(
                                v.iter().map(|v| v.bits()).collect::<Vec<_>>(),
                                wv.iter().map(|v| v.bits()).collect::<Vec<_>>()
                            );
                            // The reference's `-1` (no element yet) is `u32::MAX`.
                            let wi: Vec<u32> = wi
                                .iter()
                                .map(|&w| if w < 0 { u32::MAX } else { w as u32 })
                                .collect();
                            assert_eq!(i, wi, "indices {op:?} {opts:?} axis {axis}");
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 100);
}

#[test]
fn every_method_matches_the_reference_f32() {
    check_dtype::<f32>(1);
}
#[test]
fn every_method_matches_the_reference_f64() {
    check_dtype::<f64>(2);
}
#[test]
fn every_method_matches_the_reference_f16() {
    check_dtype::<f16>(3);
}
#[test]
fn every_method_matches_the_reference_bf16() {
    check_dtype::<bf16>(4);
}
#[test]
fn every_method_matches_the_reference_u32() {
    check_dtype::<u32>(5);
}
#[test]
fn every_method_matches_the_reference_i32() {
    check_dtype::<i32>(6);
}
#[test]
fn every_method_matches_the_reference_i64() {
    check_dtype::<i64>(7);
}

#[test]
fn shorthands_are_the_general_scan() {
    let x = Tensor::new(&[[3f32, 1., 4., 1.], [5., 9., 2., 6.]], &Device::Cpu).unwrap();
    let v2 = |t: Tensor| t.to_vec2::<f32>().unwrap();
    assert_eq!(
        v2(x.scan_sum(1).unwrap()),
        [[3., 4., 8., 9.], [5., 14., 16., 22.]]
    );
    assert_eq!(
        v2(x.exclusive_scan_sum(D::Minus1).unwrap()),
        [[0., 3., 4., 8.], [0., 5., 14., 16.]]
    );
    assert_eq!(
        v2(x.scan_prod(0).unwrap()),
        [[3., 1., 4., 1.], [15., 9., 8., 6.]]
    );
    assert_eq!(
        v2(x.scan_max(1).unwrap()),
        [[3., 3., 4., 4.], [5., 9., 9., 9.]]
    );
    assert_eq!(
        v2(x.scan_min(1).unwrap()),
        [[3., 1., 1., 1.], [5., 5., 2., 2.]]
    );
    let (m, i) = x.scan_max_with_indices(1).unwrap();
    assert_eq!(v2(m), [[3., 3., 4., 4.], [5., 9., 9., 9.]]);
    // Ties pick the later index, as torch.cummax.
    assert_eq!(i.to_vec2::<u32>().unwrap(), [[0, 0, 2, 2], [0, 1, 1, 1]]);
    let (m, i) = x.scan_min_with_indices(1).unwrap();
    assert_eq!(v2(m), [[3., 1., 1., 1.], [5., 5., 2., 2.]]);
    assert_eq!(i.to_vec2::<u32>().unwrap(), [[0, 1, 1, 3], [0, 0, 2, 2]]);
    // Exclusive: no element before the first, `u32::MAX`; along dim 0 (D::Minus2).
    let (m, i) = x
        .scan_with_indices(D::Minus2, ScanOp::Max, ScanOptions::default().exclusive())
        .unwrap();
    assert_eq!(i.dtype(), CDType::U32);
    assert_eq!(i.to_vec2::<u32>().unwrap(), [[u32::MAX; 4], [0, 0, 0, 0]]);
    assert_eq!(
        m.get(1).unwrap().to_vec1::<f32>().unwrap(),
        [3., 1., 4., 1.]
    );
}

#[test]
fn agrees_with_candles_cumsum() {
    let mut rng = StdRng::seed_from_u64(9);
    let data: Vec<f32> = (0..3 * 257).map(|_| rng.random_range(-1.0..1.0)).collect();
    let x = Tensor::from_vec(data, (3, 257), &Device::Cpu).unwrap();
    for axis in 0..2 {
        let ours = x.scan_sum(axis).unwrap();
        let theirs = x.cumsum(axis).unwrap();
        let diff: f32 = (ours - theirs)
            .unwrap()
            .abs()
            .unwrap()
            .max_all()
            .unwrap()
            .to_scalar()
            .unwrap();
        assert!(diff < 1e-4, "axis {axis}: {diff}");
    }
}

#[test]
fn long_rows_and_many_rows_use_every_thread() {
    // Enough elements for the parallel path, along and across the rows.
    let mut rng = StdRng::seed_from_u64(10);
    for shape in [(64usize, 5000usize), (5000, 64), (1, 100_000), (100_000, 1)] {
        let data: Vec<i64> = (0..shape.0 * shape.1)
            .map(|_| rng.random_range(-5..5))
            .collect();
        let x = Tensor::from_vec(data.clone(), shape, &Device::Cpu).unwrap();
        for axis in 0..2 {
            let got: Vec<i64> = x
                .scan_sum(axis)
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1()
                .unwrap();
            let want = cpu::scan(
                &data,
                &[shape.0, shape.1],
                axis,
                ScanOp::Sum,
                ScanOptions::default(),
            )
            .unwrap();
            assert_eq!(got, want, "{shape:?} axis {axis}");
        }
    }
}

#[test]
fn scan_sum_has_a_backward_pass() {
    let x = Var::from_vec(vec![1f32, 2., 3., 4., 5., 6.], (2, 3), &Device::Cpu).unwrap();
    let w = Tensor::new(&[[1f32, 10., 100.], [1., 2., 3.]], &Device::Cpu).unwrap();
    for (opts, want) in [
        (ScanOptions::default(), [[111f32, 110., 100.], [6., 5., 3.]]),
        (
            ScanOptions::default().exclusive(),
            [[110., 100., 0.], [5., 3., 0.]],
        ),
        (
            ScanOptions::default().reverse(),
            [[1., 11., 111.], [1., 3., 6.]],
        ),
    ] {
        let y = x.as_tensor().scan(1, ScanOp::Sum, opts).unwrap();
        let loss = (y * &w).unwrap().sum_all().unwrap();
        let grads = loss.backward().unwrap();
        let g = grads.get(x.as_tensor()).unwrap().to_vec2::<f32>().unwrap();
        assert_eq!(g, want, "{opts:?}");
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let x = Tensor::new(&[1u8, 2, 3], &Device::Cpu).unwrap();
    assert!(x.scan_sum(0).is_err(), "u8 is not a cubeprim dtype");
    let y = Tensor::new(&[1f32, 2., 3.], &Device::Cpu).unwrap();
    assert!(y.scan_sum(1).is_err(), "axis out of range");
    assert!(y
        .scan_with_indices(0, ScanOp::Sum, ScanOptions::default())
        .is_err());
    let s = Tensor::new(2f32, &Device::Cpu).unwrap();
    assert!(s.scan_sum(0).is_err(), "rank 0 has no axis");
    // candle's dtypes cubeprim scans all work.
    for dt in [
        CDType::F32,
        CDType::F64,
        CDType::F16,
        CDType::BF16,
        CDType::U32,
        CDType::I32,
        CDType::I64,
    ] {
        let t = Tensor::ones((2, 3), dt, &Device::Cpu).unwrap();
        let got = t
            .scan_sum(1)
            .unwrap()
            .to_dtype(CDType::F64)
            .unwrap()
            .to_vec2::<f64>()
            .unwrap();
        assert_eq!(got, [[1., 2., 3.], [1., 2., 3.]], "{dt:?}");
    }
}

// ---- Sorts, reduce, compaction, runs, histogram ----------------------------------------

use cubeprim::cpu::SortElement;

/// Random shapes of every rank 1–4: sizes 1–6, then with zeros, then all ones.
fn shapes(rng: &mut StdRng) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for rank in 1..=4 {
        for case in 0..4 {
            out.push(
                (0..rank)
                    .map(|_| match case {
                        2 => rng.random_range(0..3),
                        3 => 1,
                        _ => rng.random_range(1..7),
                    })
                    .collect(),
            );
        }
    }
    out
}

/// `f(rng, x)` for every view `x` of random values of `E` ([`values`] of a sum), of every
/// shape of [`shapes`], one random stream from `seed`.
fn each_view<E: WithDType + cubeprim::Element>(seed: u64, mut f: impl FnMut(&mut StdRng, Tensor)) {
    let float = <E as cubeprim::Element>::DTYPE.is_float();
    let mut rng = StdRng::seed_from_u64(seed);
    for shape in shapes(&mut rng) {
        for x in views(&mut rng, &shape, |r, n| {
            values::<E>(r, n, ScanOp::Sum, float)
        }) {
            f(&mut rng, x);
        }
    }
}

/// Every view kind of a fresh tensor of `shape` filled by `fill`.
fn views<E: WithDType>(
    rng: &mut StdRng,
    shape: &[usize],
    fill: impl Fn(&mut StdRng, usize) -> Vec<E>,
) -> Vec<Tensor> {
    (0..4)
        .map(|kind| {
            let n = shape.iter().product();
            let base = Tensor::from_vec(fill(rng, n), shape, &Device::Cpu).unwrap();
            view(&base, kind)
        })
        .collect()
}

/// The elements of a view, row-major.
fn dense<E: WithDType>(x: &Tensor) -> Vec<E> {
    if x.elem_count() == 0 {
        Vec::new()
    } else {
        x.flatten_all().unwrap().to_vec1().unwrap()
    }
}

fn bits_of<E: Bits>(v: &[E]) -> Vec<u64> {
    v.iter().map(|x| x.bits()).collect()
}

/// The reference's i64 indices and counts as the adapter's u32.
fn as_u32(v: &[i64]) -> Vec<u32> {
    v.iter().map(|&x| u32::try_from(x).unwrap()).collect()
}

/// Row-major `d` of shape `dims` with `axis` moved last (the other axes keeping their order),
/// and the moved shape: host index arithmetic, independent of candle's transposes.
fn axis_last<E: Copy>(d: &[E], dims: &[usize], axis: usize) -> (Vec<E>, Vec<usize>) {
    let mut moved: Vec<usize> = dims.to_vec();
    let n = moved.remove(axis);
    moved.push(n);
    let out = (0..d.len())
        .map(|j| {
            // `j` as an index of `moved`, then of `dims`.
            let mut at = unravel(j, &moved);
            let a = at.pop().unwrap();
            at.insert(axis, a);
            d[ravel(&at, dims)]
        })
        .collect();
    (out, moved)
}

/// [`axis_last`] undone: `d` of shape `moved` (`axis` last) in the order of `dims`, where
/// `axis` has the last length of `moved`.
fn axis_back<E: Copy>(d: &[E], moved: &[usize], axis: usize) -> Vec<E> {
    let mut dims = moved.to_vec();
    let n = dims.pop().unwrap();
    dims.insert(axis, n);
    (0..d.len())
        .map(|i| {
            let mut at = unravel(i, &dims);
            let a = at.remove(axis);
            at.push(a);
            d[ravel(&at, moved)]
        })
        .collect()
}

fn unravel(mut i: usize, dims: &[usize]) -> Vec<usize> {
    let mut at = vec![0; dims.len()];
    for k in (0..dims.len()).rev() {
        at[k] = i % dims[k];
        i /= dims[k];
    }
    at
}

fn ravel(at: &[usize], dims: &[usize]) -> usize {
    at.iter().zip(dims).fold(0, |acc, (&a, &d)| acc * d + a)
}

/// `axis` of a rank-`rank` tensor counted from the end.
fn from_end(axis: usize, rank: usize) -> D {
    match rank - axis {
        1 => D::Minus1,
        2 => D::Minus2,
        m => D::Minus(m),
    }
}

/// Sorts, top-k, searchsorted and sort_pairs along every axis (by index and from the end) of
/// one dtype against the CPU reference run on the host-permuted data; the indices gather the
/// values back with candle's own `gather` (which takes contiguous u32 indices only).
fn check_dims<E: WithDType + SortElement + Bits>(seed: u64) {
    let float = <E as cubeprim::Element>::DTYPE.is_float();
    let mut checked = 0;
    each_view::<E>(seed, |rng, x| {
        let d: Vec<E> = dense(&x);
        let rank = x.rank();
        for axis in 0..rank {
            let ctx = format!(
                "{:?} {:?} strides {:?} axis {axis}",
                <E as WithDType>::DTYPE,
                x.dims(),
                x.stride()
            );
            let (m, moved) = axis_last(&d, x.dims(), axis);
            let n = x.dims()[axis];
            for asc in [true, false] {
                let order = cpu::argsort_rows(&m, n, !asc);
                let want_v = axis_back(&cpu::permute_rows(&m, n, &order).unwrap(), &moved, axis);
                let want_i = axis_back(&order, &moved, axis);
                let (v, i) = x.sort_stable(axis, asc).unwrap();
                assert!(v.is_contiguous() && i.is_contiguous(), "{ctx}");
                assert_eq!((v.dims(), i.dims()), (x.dims(), x.dims()), "{ctx}");
                assert_eq!(
                    bits_of(&dense::<E>(&v)),
                    bits_of(&want_v),
                    "sort {asc} {ctx}"
                );
                assert_eq!(dense::<u32>(&i), want_i, "sort indices {asc} {ctx}");
                if x.elem_count() > 0 {
                    // (candle's gather takes a contiguous source as well)
                    let g = x.contiguous().unwrap().gather(&i, axis).unwrap();
                    assert_eq!(bits_of(&dense::<E>(&g)), bits_of(&want_v), "gather {ctx}");
                }
                let neg = from_end(axis, rank);
                let i = x.arg_sort_stable(neg, asc).unwrap();
                assert_eq!(dense::<u32>(&i), want_i, "arg_sort {neg:?} {ctx}");
                let v = x.sort_stable_values(neg, asc).unwrap();
                assert_eq!(bits_of(&dense::<E>(&v)), bits_of(&want_v), "{neg:?} {ctx}");
                // sort_pairs: the positions (i64, a fresh contiguous tensor) moved alike.
                let pos: Vec<i64> = (0..d.len() as i64).collect();
                let pt = Tensor::from_vec(pos.clone(), x.dims(), &Device::Cpu).unwrap();
                let (pm, _) = axis_last(&pos, x.dims(), axis);
                let want_p = axis_back(&cpu::permute_rows(&pm, n, &order).unwrap(), &moved, axis);
                let (k, p) = x.sort_pairs(&pt, axis, asc).unwrap();
                assert_eq!(bits_of(&dense::<E>(&k)), bits_of(&want_v), "pairs {ctx}");
                assert_eq!(dense::<i64>(&p), want_p, "pairs values {asc} {ctx}");
            }
            for k in [0, 1, n / 2, n] {
                if k > n {
                    continue;
                }
                for largest in [true, false] {
                    let (wv, wi) = cpu::top_k_rows(&m, n, k, largest);
                    let mut kdims = moved.clone();
                    *kdims.last_mut().unwrap() = k;
                    let (wv, wi) = (axis_back(&wv, &kdims, axis), axis_back(&wi, &kdims, axis));
                    for (name, by) in [("usize", false), ("from the end", true)] {
                        let (v, i) = match (largest, by) {
                            (true, false) => x.top_k(k, axis).unwrap(),
                            (false, false) => x.bottom_k(k, axis).unwrap(),
                            (true, true) => x.top_k(k, from_end(axis, rank)).unwrap(),
                            (false, true) => x.bottom_k(k, from_end(axis, rank)).unwrap(),
                        };
                        let mut dims = x.dims().to_vec();
                        dims[axis] = k;
                        assert_eq!((v.dims(), i.dims()), (&dims[..], &dims[..]), "{ctx}");
                        assert!(v.is_contiguous() && i.is_contiguous(), "{ctx}");
                        assert_eq!(
                            bits_of(&dense::<E>(&v)),
                            bits_of(&wv),
                            "top {k} {name} {ctx}"
                        );
                        assert_eq!(dense::<u32>(&i), wi, "top {k} indices {name} {ctx}");
                    }
                }
            }
            assert!(x.top_k(n + 1, axis).is_err(), "{ctx}");
            // searchsorted along `axis`: the sorted x, queries of the same shape but a
            // length of their own along `axis`.
            let sorted = x.sort_stable_values(axis, true).unwrap();
            let (sm, _) = axis_last(&dense::<E>(&sorted), x.dims(), axis);
            let mut qdims = x.dims().to_vec();
            qdims[axis] = rng.random_range(0..4);
            let qn = qdims.iter().product();
            let q = Tensor::from_vec(
                values::<E>(rng, qn, ScanOp::Sum, float),
                &*qdims,
                &Device::Cpu,
            )
            .unwrap();
            let (qm, qmoved) = axis_last(&dense::<E>(&q), &qdims, axis);
            for side in [Side::Left, Side::Right] {
                let right = side == Side::Right;
                let want = cpu::searchsorted(&sm, n, &qm, qdims[axis], right).unwrap();
                let want = axis_back(&want, &qmoved, axis);
                for got in [
                    sorted.search_sorted(&q, axis, side).unwrap(),
                    sorted
                        .search_sorted(&q, from_end(axis, rank), side)
                        .unwrap(),
                ] {
                    assert_eq!((got.dims(), got.dtype()), (&qdims[..], CDType::U32));
                    assert_eq!(dense::<u32>(&got), want, "searchsorted {side:?} {ctx}");
                }
            }
            checked += 1;
        }
        // Dimensions that are not the tensor's.
        assert!(x.sort_stable(rank, true).is_err());
        assert!(x.arg_sort_stable(D::Minus(rank + 1), true).is_err());
        assert!(x.top_k(0, rank).is_err());
        assert!(x.bottom_k(0, D::Minus(rank + 1)).is_err());
        assert!(x.sort_pairs(&x, rank, true).is_err());
        assert!(x.search_sorted(&x, rank, Side::Left).is_err());
    });
    assert!(checked >= 160, "{checked}");
}

/// Sorts, top-k, bottom-k and searchsorted of one dtype against the CPU reference.
fn check_sorts<E: WithDType + SortElement + Bits>(seed: u64) {
    let float = <E as cubeprim::Element>::DTYPE.is_float();
    let mut checked = 0;
    each_view::<E>(seed, |rng, x| {
        let d: Vec<E> = dense(&x);
        let n = *x.dims().last().unwrap();
        let ctx = format!(
            "{:?} {:?} strides {:?}",
            <E as WithDType>::DTYPE,
            x.dims(),
            x.stride()
        );
        for asc in [true, false] {
            let want_i = cpu::argsort_rows(&d, n, !asc);
            let want_v = cpu::permute_rows(&d, n, &want_i).unwrap();
            let (v, i) = x.sort_stable(D::Minus1, asc).unwrap();
            assert_eq!(v.dims(), x.dims(), "{ctx}");
            assert_eq!(i.dtype(), CDType::U32);
            assert_eq!(
                bits_of(&dense::<E>(&v)),
                bits_of(&want_v),
                "sort {asc} {ctx}"
            );
            assert_eq!(dense::<u32>(&i), want_i, "sort indices {asc} {ctx}");
            let v = x.sort_stable_values(D::Minus1, asc).unwrap();
            assert_eq!(bits_of(&dense::<E>(&v)), bits_of(&want_v), "values {ctx}");
            let i = x.arg_sort_stable(D::Minus1, asc).unwrap();
            assert_eq!(dense::<u32>(&i), want_i, "arg_sort {asc} {ctx}");
            // sort_pairs: the keys themselves as values, and i64 positions (a strided view
            // where the rank allows) moved alike.
            let (k, p) = x.sort_pairs(&x, D::Minus1, asc).unwrap();
            assert_eq!((k.dims(), p.dims()), (x.dims(), x.dims()), "{ctx}");
            assert_eq!(bits_of(&dense::<E>(&k)), bits_of(&want_v), "pairs {ctx}");
            assert_eq!(bits_of(&dense::<E>(&p)), bits_of(&want_v), "pairs {ctx}");
            let pos: Vec<i64> = (0..d.len() as i64).collect();
            let pt = if x.rank() >= 2 {
                let r = x.rank() - 1;
                let mut td = x.dims().to_vec();
                td.swap(0, r);
                Tensor::from_vec(pos.clone(), td, &Device::Cpu)
                    .unwrap()
                    .transpose(0, r)
                    .unwrap()
            } else {
                Tensor::from_vec(pos.clone(), x.dims(), &Device::Cpu).unwrap()
            };
            let pd: Vec<i64> = dense(&pt);
            let (k, p) = x.sort_pairs(&pt, D::Minus1, asc).unwrap();
            assert_eq!(p.dtype(), CDType::I64);
            assert_eq!(bits_of(&dense::<E>(&k)), bits_of(&want_v), "pairs {ctx}");
            assert_eq!(
                dense::<i64>(&p),
                cpu::permute_rows(&pd, n, &want_i).unwrap(),
                "pairs values {asc} {ctx}"
            );
        }
        for k in [0, 1, n / 2, n] {
            if k > n {
                continue;
            }
            for largest in [true, false] {
                let (wv, wi) = cpu::top_k_rows(&d, n, k, largest);
                let (v, i) = if largest {
                    x.top_k(k, D::Minus1).unwrap()
                } else {
                    x.bottom_k(k, D::Minus1).unwrap()
                };
                let mut dims = x.dims().to_vec();
                *dims.last_mut().unwrap() = k;
                assert_eq!(v.dims(), &dims[..], "{ctx}");
                assert_eq!(bits_of(&dense::<E>(&v)), bits_of(&wv), "top {k} {ctx}");
                assert_eq!(dense::<u32>(&i), wi, "top {k} indices {ctx}");
            }
        }
        assert!(x.top_k(n + 1, D::Minus1).is_err());
        // searchsorted: the sorted rows of x (a narrowed view stays sorted), queries of the
        // same leading dimensions; and one shared 1-D row.
        let sorted = x.sort_stable_values(D::Minus1, true).unwrap();
        let sorted = if n > 1 {
            sorted.narrow(D::Minus1, 1, n - 1).unwrap()
        } else {
            sorted
        };
        let sn = *sorted.dims().last().unwrap();
        let sd: Vec<E> = dense(&sorted);
        let mut qdims = x.dims().to_vec();
        *qdims.last_mut().unwrap() = rng.random_range(0..5);
        let m = qdims[qdims.len() - 1];
        let qn = qdims.iter().product();
        let q = Tensor::from_vec(
            values::<E>(rng, qn, ScanOp::Sum, float),
            qdims,
            &Device::Cpu,
        )
        .unwrap();
        let q = view(&q, 2);
        let qd: Vec<E> = dense(&q);
        for side in [Side::Left, Side::Right] {
            let right = side == Side::Right;
            let got = sorted.search_sorted(&q, D::Minus1, side).unwrap();
            assert_eq!(got.dims(), q.dims());
            let want = cpu::searchsorted(&sd, sn, &qd, q.dims()[q.rank() - 1], right).unwrap();
            assert_eq!(dense::<u32>(&got), want, "searchsorted {side:?} {ctx}");
            let row = Tensor::from_vec(
                cpu::sort_rows(&values::<E>(rng, 7, ScanOp::Sum, float), 7, false),
                7,
                &Device::Cpu,
            )
            .unwrap();
            let rd: Vec<E> = dense(&row);
            let got = row.search_sorted(&q, 0, side).unwrap();
            let want = cpu::searchsorted(&rd, 7, &qd, m, right).unwrap();
            assert_eq!(dense::<u32>(&got), want, "shared row {side:?} {ctx}");
        }
        // bucketize of x (any view) among strided 1-D boundaries (every other element of
        // a sorted row): searchsorted with the roles swapped, `right` its side.
        let b = Tensor::from_vec(
            cpu::sort_rows(&values::<E>(rng, 14, ScanOp::Sum, float), 14, false),
            (7, 2),
            &Device::Cpu,
        )
        .unwrap()
        .t()
        .unwrap()
        .narrow(0, 0, 1)
        .unwrap()
        .squeeze(0)
        .unwrap();
        assert!(!b.is_contiguous());
        let bd: Vec<E> = dense(&b);
        for right in [false, true] {
            let got = x.bucketize(&b, right).unwrap();
            assert_eq!((got.dims(), got.dtype()), (x.dims(), CDType::U32));
            let want = cpu::searchsorted(&bd, 7, &d, n, right).unwrap();
            assert_eq!(dense::<u32>(&got), want, "bucketize {right} {ctx}");
        }
        checked += 1;
    });
    assert_eq!(checked, 64);
}

/// Reductions along every axis of one dtype against the CPU reference.
fn check_reduce<E: WithDType + ScanElement + Bits>(seed: u64) {
    let float = <E as cubeprim::Element>::DTYPE.is_float();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut checked = 0;
    for shape in shapes(&mut rng) {
        for &op in &OPS {
            for x in views(&mut rng, &shape, |r, n| values::<E>(r, n, op, float)) {
                let d: Vec<E> = dense(&x);
                for axis in 0..x.rank() {
                    if x.dims()[axis] == 0 && matches!(op, ScanOp::Max | ScanOp::Min) {
                        assert!(x.reduce(axis, op).is_err());
                        continue;
                    }
                    let got = x.reduce(axis, op).unwrap();
                    let mut dims = x.dims().to_vec();
                    dims.remove(axis);
                    assert_eq!(got.dims(), &dims[..]);
                    let want = cpu::reduce(&d, x.dims(), Some(axis), op).unwrap();
                    assert_eq!(
                        bits_of(&dense::<E>(&got)),
                        bits_of(&want),
                        "{:?} {op:?} axis {axis} of {:?} strides {:?}",
                        <E as WithDType>::DTYPE,
                        x.dims(),
                        x.stride()
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 500, "{checked}");
}

/// A padded output (1-D, or rows of `width` for `nonzero`) and its count: the count is the
/// `[1]` u32 of `want`'s rows, the first `count` rows are `want` (as bits), the rest zeros (the
/// CPU's padding).
fn assert_padded(got: &Tensor, count: &Tensor, want: &[u64], width: usize, what: &str, ctx: &str) {
    assert_eq!(
        (count.dims(), count.dtype()),
        (&[1][..], CDType::U32),
        "{what} {ctx}"
    );
    let rows = want.len() / width.max(1);
    assert_eq!(
        count.to_vec1::<u32>().unwrap(),
        [rows as u32],
        "{what} count {ctx}"
    );
    let got: Vec<u64> = match got.dtype() {
        CDType::U32 => dense::<u32>(got).into_iter().map(u64::from).collect(),
        CDType::F32 => bits_of(&dense::<f32>(got)),
        CDType::F64 => bits_of(&dense::<f64>(got)),
        CDType::F16 => bits_of(&dense::<f16>(got)),
        CDType::BF16 => bits_of(&dense::<bf16>(got)),
        CDType::I32 => bits_of(&dense::<i32>(got)),
        CDType::I64 => bits_of(&dense::<i64>(got)),
        d => panic!("{d:?}"),
    };
    assert!(got.len() >= want.len(), "{what} {ctx}");
    assert_eq!(&got[..want.len()], want, "{what} {ctx}");
    assert!(
        got[want.len()..].iter().all(|&b| b == 0),
        "{what} padding {ctx}"
    );
}

/// The `_padded` unique variants (sorted or consecutive) against the reference's runs.
fn check_unique_padded<E: WithDType + Bits>(
    x: &Tensor,
    (wu, wc, wi): (&[E], &[i64], &[i64]),
    sorted: bool,
    ctx: &str,
) {
    let n = x.elem_count();
    let counts: Vec<u64> = wc.iter().map(|&c| c as u64).collect();
    let (u, c, i, k) = if sorted {
        x.unique_with_inverse_padded().unwrap()
    } else {
        x.unique_consecutive_with_inverse_padded().unwrap()
    };
    let (u2, c2, k2) = if sorted {
        x.unique_padded().unwrap()
    } else {
        x.unique_consecutive_padded().unwrap()
    };
    for (u, c, k) in [(&u, &c, &k), (&u2, &c2, &k2)] {
        assert_eq!((u.dims(), c.dims()), (&[n][..], &[n][..]), "{ctx}");
        assert_eq!((u.dtype(), c.dtype()), (x.dtype(), CDType::U32), "{ctx}");
        assert_padded(u, k, &bits_of(wu), 1, "unique values", ctx);
        assert_padded(c, k, &counts, 1, "unique counts", ctx);
    }
    assert_eq!((i.dims(), i.dtype()), (x.dims(), CDType::U32), "{ctx}");
    assert_eq!(dense::<u32>(&i), as_u32(wi), "unique inverse {ctx}");
}

/// `data` in `x`'s shape, row-major, as a strided view where the rank allows (a transposed
/// copy transposed back).
fn transposed_like<E: WithDType>(x: &Tensor, data: Vec<E>) -> Tensor {
    let t = Tensor::from_vec(data, x.dims(), &Device::Cpu).unwrap();
    match x.rank() {
        0 | 1 => t,
        rank => {
            let moved = t.transpose(0, rank - 1).unwrap().contiguous().unwrap();
            moved.transpose(0, rank - 1).unwrap()
        }
    }
}

/// Compaction and runs of one dtype against the CPU reference.
fn check_compaction<E: WithDType + SortElement + ScanElement + Bits>(seed: u64) {
    each_view::<E>(seed, |rng, x| {
        let d: Vec<E> = dense(&x);
        let ctx = format!(
            "{:?} {:?} strides {:?}",
            <E as WithDType>::DTYPE,
            x.dims(),
            x.stride()
        );
        // A u8 mask (candle's comparisons) in a transposed view, and the tensor itself.
        let mask = transposed_like(&x, (0..d.len()).map(|_| rng.random_range(0..2u8)).collect());
        let md: Vec<u8> = dense(&mask);
        let want: Vec<E> = d
            .iter()
            .zip(&md)
            .filter(|(_, &f)| f != 0)
            .map(|(v, _)| *v)
            .collect();
        let got = x.masked_select(&mask).unwrap();
        assert_eq!(got.rank(), 1);
        assert_eq!(
            bits_of(&dense::<E>(&got)),
            bits_of(&want),
            "masked_select {ctx}"
        );
        let (got, count) = x.masked_select_padded(&mask).unwrap();
        assert_padded(&got, &count, &bits_of(&want), 1, "masked_select", &ctx);
        let got = x.masked_select(&x).unwrap();
        assert_eq!(
            bits_of(&dense::<E>(&got)),
            bits_of(&cpu::select(&d, &d)),
            "{ctx}"
        );
        let nz = x.nonzero().unwrap();
        let want = cpu::nonzero(&d, x.dims()).unwrap();
        assert_eq!(nz.dims(), &[want.len() / x.rank(), x.rank()], "{ctx}");
        assert_eq!(nz.dtype(), CDType::U32);
        assert_eq!(dense::<u32>(&nz), as_u32(&want), "nonzero {ctx}");
        let (nz, count) = x.nonzero_padded().unwrap();
        assert_eq!(nz.dims(), &[d.len(), x.rank()], "{ctx}");
        let want64: Vec<u64> = want.iter().map(|&v| v as u64).collect();
        assert_padded(&nz, &count, &want64, x.rank(), "nonzero", &ctx);
        let count = x.count_nonzero().unwrap();
        assert_eq!((count.dims(), count.dtype()), (&[1][..], CDType::U32));
        let want = [(want.len() / x.rank()) as u32];
        assert_eq!(count.to_vec1::<u32>().unwrap(), want, "count_nonzero {ctx}");
        let (u, c, i) = x.unique_consecutive_with_inverse().unwrap();
        let (wu, wc, wi) = cpu::unique_consecutive(&d);
        assert_eq!(
            bits_of(&dense::<E>(&u)),
            bits_of(&wu),
            "unique_consecutive {ctx}"
        );
        assert_eq!((c.dtype(), i.dtype()), (CDType::U32, CDType::U32));
        assert_eq!(dense::<u32>(&c), as_u32(&wc), "{ctx}");
        assert_eq!(i.dims(), x.dims());
        assert_eq!(dense::<u32>(&i), as_u32(&wi), "{ctx}");
        let (u2, c2) = x.unique_consecutive().unwrap();
        assert_eq!(bits_of(&dense::<E>(&u2)), bits_of(&wu));
        assert_eq!(dense::<u32>(&c2), as_u32(&wc));
        check_unique_padded(&x, (&wu, &wc, &wi), false, &ctx);
        let (u, c, i) = x.unique_with_inverse().unwrap();
        let (wu, wc, wi) = cpu::unique(&d);
        assert_eq!(bits_of(&dense::<E>(&u)), bits_of(&wu), "unique {ctx}");
        assert_eq!(dense::<u32>(&c), as_u32(&wc), "{ctx}");
        assert_eq!(dense::<u32>(&i), as_u32(&wi), "{ctx}");
        let (u2, c2) = x.unique().unwrap();
        assert_eq!(bits_of(&dense::<E>(&u2)), bits_of(&wu));
        assert_eq!(dense::<u32>(&c2), as_u32(&wc));
        check_unique_padded(&x, (&wu, &wc, &wi), true, &ctx);
        // Partition by the u8 mask (strided) and by the tensor itself.
        for (m, want) in [
            (&mask, cpu::partition(&d, &md)),
            (&x, cpu::partition(&d, &d)),
        ] {
            let (p, k) = x.partition(m).unwrap();
            assert_eq!(p.dims(), &[d.len()], "{ctx}");
            assert_eq!(k.dims(), &[1]);
            assert_eq!(
                bits_of(&dense::<E>(&p)),
                bits_of(&want.0),
                "partition {ctx}"
            );
            assert_eq!(k.to_vec1::<u32>().unwrap(), [want.1 as u32], "{ctx}");
        }
        // reduce_by_key: keys with runs (u32, a strided view) over these values, and these
        // values as keys (NaN each its own run) over themselves.
        let keys = transposed_like(
            &x,
            (0..d.len()).map(|_| rng.random_range(0..3u32)).collect(),
        );
        let kd: Vec<u32> = dense(&keys);
        for op in OPS {
            let (u, f) = keys.reduce_by_key(&x, op).unwrap();
            let (wu, wf) = cpu::reduce_by_key(&kd, &d, op);
            assert_eq!((u.dims(), f.dims()), (&[wu.len()][..], &[wu.len()][..]));
            assert_eq!(dense::<u32>(&u), wu, "reduce_by_key {op:?} {ctx}");
            assert_eq!(
                bits_of(&dense::<E>(&f)),
                bits_of(&wf),
                "reduce_by_key {op:?} {ctx}"
            );
            let (u, f, count) = keys.reduce_by_key_padded(&x, op).unwrap();
            let wu64: Vec<u64> = wu.iter().map(|&v| v as u64).collect();
            let what = format!("reduce_by_key_padded {op:?}");
            assert_padded(&u, &count, &wu64, 1, &what, &ctx);
            assert_padded(&f, &count, &bits_of(&wf), 1, &what, &ctx);
            let (u, f) = x.reduce_by_key(&x, op).unwrap();
            let (wu, wf) = cpu::reduce_by_key(&d, &d, op);
            assert_eq!(bits_of(&dense::<E>(&u)), bits_of(&wu), "{op:?} {ctx}");
            assert_eq!(bits_of(&dense::<E>(&f)), bits_of(&wf), "{op:?} {ctx}");
        }
    });
}

macro_rules! family_tests {
    ($($name:ident: $t:ty = $seed:expr),*) => {
        mod families {
            use super::*;
            $(
                #[test]
                fn $name() {
                    check_sorts::<$t>($seed);
                    check_dims::<$t>($seed + 300);
                    check_reduce::<$t>($seed + 100);
                    check_compaction::<$t>($seed + 200);
                }
            )*
        }
    };
}
family_tests!(f32_: f32 = 11, f64_: f64 = 12, f16_: f16 = 13, bf16_: bf16 = 14, u32_: u32 = 15,
    i32_: i32 = 16, i64_: i64 = 17);

#[test]
fn histogram_of_every_integer_dtype() {
    let mut rng = StdRng::seed_from_u64(20);
    for dt in [
        CDType::U8,
        CDType::U32,
        CDType::I16,
        CDType::I32,
        CDType::I64,
    ] {
        let signed = matches!(dt, CDType::I16 | CDType::I32 | CDType::I64);
        for shape in shapes(&mut rng) {
            for x in views(&mut rng, &shape, |r, n| {
                (0..n)
                    .map(|_| r.random_range(if signed { -3..12i64 } else { 0..12 }))
                    .collect::<Vec<i64>>()
            }) {
                let x = x.to_dtype(dt).unwrap();
                let x = view(&x, 1);
                let d: Vec<i64> = dense(&x.to_dtype(CDType::I64).unwrap());
                for bins in [0, 1, 8, 300] {
                    let h = x.histogram(bins).unwrap();
                    assert_eq!(h.dims(), &[bins]);
                    assert_eq!(
                        dense::<u32>(&h),
                        cpu::histogram(&d, bins),
                        "{dt:?} {:?} bins {bins}",
                        x.dims()
                    );
                }
            }
        }
    }
    // Enough keys for the parallel path.
    let keys: Vec<u32> = (0..300_000).map(|_| rng.random_range(0..70)).collect();
    let h = Tensor::from_vec(keys.clone(), keys.len(), &Device::Cpu)
        .unwrap()
        .histogram(64)
        .unwrap();
    assert_eq!(h.to_vec1::<u32>().unwrap(), cpu::histogram(&keys, 64));
    let f = Tensor::new(&[1f32], &Device::Cpu).unwrap();
    assert!(f.histogram(4).is_err(), "float keys");
}

#[test]
fn small_integer_dtypes_are_widened_and_cast_back() {
    // u8 and i16 go through u32 / i32: same order, values, and wrapping arithmetic.
    let mut rng = StdRng::seed_from_u64(21);
    for (dt, wide) in [(CDType::U8, CDType::U32), (CDType::I16, CDType::I32)] {
        let data: Vec<i64> = (0..6 * 40).map(|_| rng.random_range(0..200)).collect();
        let x = Tensor::from_vec(data, (6, 40), &Device::Cpu)
            .unwrap()
            .to_dtype(dt)
            .unwrap()
            .t()
            .unwrap();
        let w = x.to_dtype(wide).unwrap();
        let same = |a: &Tensor, b: &Tensor| {
            assert_eq!(a.dtype(), dt);
            let a = dense::<i64>(&a.to_dtype(CDType::I64).unwrap());
            let b = dense::<i64>(&b.to_dtype(dt).unwrap().to_dtype(CDType::I64).unwrap());
            assert_eq!(a, b);
        };
        let ((v, i), (wv, wi)) = (
            x.sort_stable(D::Minus1, false).unwrap(),
            w.sort_stable(D::Minus1, false).unwrap(),
        );
        same(&v, &wv);
        assert_eq!(dense::<u32>(&i), dense::<u32>(&wi));
        let ((v, _), (wv, _)) = (x.top_k(3, 0).unwrap(), w.top_k(3, 0).unwrap());
        same(&v, &wv);
        for op in OPS {
            same(&x.reduce(0, op).unwrap(), &w.reduce(0, op).unwrap());
        }
        let ((u, c), (wu, wc)) = (x.unique().unwrap(), w.unique().unwrap());
        same(&u, &wu);
        assert_eq!(dense::<u32>(&c), dense::<u32>(&wc));
        let ((u, _), (wu, _)) = (
            x.unique_consecutive().unwrap(),
            w.unique_consecutive().unwrap(),
        );
        same(&u, &wu);
        let s = x.sort_stable_values(D::Minus1, true).unwrap();
        let ws = w.sort_stable_values(D::Minus1, true).unwrap();
        let got = s.search_sorted(&x, D::Minus1, Side::Right).unwrap();
        assert_eq!(
            dense::<u32>(&got),
            dense::<u32>(&ws.search_sorted(&w, D::Minus1, Side::Right).unwrap())
        );
        let ((k, p), (wk, wp)) = (
            x.sort_pairs(&x, 0, false).unwrap(),
            w.sort_pairs(&x, 0, false).unwrap(),
        );
        same(&k, &wk);
        same(&p, &wp);
        let b = Tensor::new(&[50i64, 100, 100, 150], &Device::Cpu).unwrap();
        for right in [false, true] {
            let got = x.bucketize(&b.to_dtype(dt).unwrap(), right).unwrap();
            let want = w.bucketize(&b.to_dtype(wide).unwrap(), right).unwrap();
            assert_eq!(dense::<u32>(&got), dense::<u32>(&want));
        }
        assert_eq!(
            x.count_nonzero().unwrap().to_vec1::<u32>().unwrap(),
            w.count_nonzero().unwrap().to_vec1::<u32>().unwrap()
        );
        let m = x.masked_select(&x.ge(100.0).unwrap()).unwrap();
        assert_eq!(m.dtype(), dt);
        assert_eq!(
            dense::<i64>(&m.to_dtype(CDType::I64).unwrap()),
            dense::<i64>(
                &w.masked_select(&w.ge(100.0).unwrap())
                    .unwrap()
                    .to_dtype(CDType::I64)
                    .unwrap()
            )
        );
    }
}

#[test]
fn long_rows_and_many_rows_sort_in_parallel() {
    let mut rng = StdRng::seed_from_u64(22);
    for shape in [(64usize, 5000usize), (5000, 64), (1, 100_000)] {
        let data: Vec<f32> = (0..shape.0 * shape.1)
            .map(|_| rng.random_range(-100..100) as f32)
            .collect();
        let x = Tensor::from_vec(data.clone(), shape, &Device::Cpu).unwrap();
        let (v, i) = x.sort_stable(D::Minus1, true).unwrap();
        let want_i = cpu::argsort_rows(&data, shape.1, false);
        assert_eq!(dense::<u32>(&i), want_i);
        assert_eq!(
            dense::<f32>(&v),
            cpu::permute_rows(&data, shape.1, &want_i).unwrap()
        );
        let (_, i) = x.top_k(10, D::Minus1).unwrap();
        assert_eq!(
            dense::<u32>(&i),
            cpu::top_k_rows(&data, shape.1, 10, true).1
        );
        let s = x.reduce_sum(1).unwrap();
        assert_eq!(
            dense::<f32>(&s),
            cpu::reduce(&data, &[shape.0, shape.1], Some(1), ScanOp::Sum).unwrap()
        );
        let s = x.reduce_max(0).unwrap();
        assert_eq!(
            dense::<f32>(&s),
            cpu::reduce(&data, &[shape.0, shape.1], Some(0), ScanOp::Max).unwrap()
        );
        let nz = x.nonzero().unwrap();
        assert_eq!(
            dense::<u32>(&nz),
            as_u32(&cpu::nonzero(&data, &[shape.0, shape.1]).unwrap())
        );
    }
}

#[test]
fn shorthands_and_candle_agree() {
    let x = Tensor::new(&[[3f32, 1., 4., 1.], [5., 9., 2., 6.]], &Device::Cpu).unwrap();
    let v2 = |t: Tensor| t.to_vec2::<f32>().unwrap();
    let (v, i) = x.sort_stable(D::Minus1, true).unwrap();
    assert_eq!(v2(v), [[1., 1., 3., 4.], [2., 5., 6., 9.]]);
    // Stable: the two 1s keep their order.
    assert_eq!(i.to_vec2::<u32>().unwrap(), [[1, 3, 0, 2], [2, 0, 3, 1]]);
    assert_eq!(
        x.arg_sort_stable(1, false)
            .unwrap()
            .to_vec2::<u32>()
            .unwrap(),
        [[2, 0, 1, 3], [1, 3, 0, 2]]
    );
    // Same as candle's own sort where there are no ties.
    let y = Tensor::new(&[[0.5f32, -1., 3., 2.], [7., 1., 0., 4.]], &Device::Cpu).unwrap();
    for asc in [true, false] {
        let (cv, ci) = y.sort_last_dim(asc).unwrap();
        let (v, i) = y.sort_stable(D::Minus1, asc).unwrap();
        assert_eq!(v2(v), v2(cv));
        assert_eq!(i.to_vec2::<u32>().unwrap(), ci.to_vec2::<u32>().unwrap());
    }
    let (v, i) = x.top_k(2, D::Minus1).unwrap();
    assert_eq!(v2(v), [[4., 3.], [9., 6.]]);
    assert_eq!(i.to_vec2::<u32>().unwrap(), [[2, 0], [1, 3]]);
    let (v, i) = x.bottom_k(1, 1).unwrap();
    assert_eq!(v2(v), [[1.], [2.]]);
    assert_eq!(i.to_vec2::<u32>().unwrap(), [[1], [2]]);
    let edges = Tensor::new(&[1f32, 2., 2., 5.], &Device::Cpu).unwrap();
    let q = Tensor::new(&[0f32, 2., 3., 9.], &Device::Cpu).unwrap();
    assert_eq!(
        edges
            .search_sorted(&q, 0, Side::Left)
            .unwrap()
            .to_vec1::<u32>()
            .unwrap(),
        [0, 1, 3, 4]
    );
    assert_eq!(
        edges
            .search_sorted(&q, D::Minus1, Side::Right)
            .unwrap()
            .to_vec1::<u32>()
            .unwrap(),
        [0, 3, 3, 4]
    );
    assert_eq!(
        x.reduce_sum(1).unwrap().to_vec1::<f32>().unwrap(),
        [9., 22.]
    );
    assert_eq!(
        x.reduce_prod(0).unwrap().to_vec1::<f32>().unwrap(),
        [15., 9., 8., 6.]
    );
    assert_eq!(x.reduce_max(1).unwrap().to_vec1::<f32>().unwrap(), [4., 9.]);
    assert_eq!(
        x.reduce_min(0).unwrap().to_vec1::<f32>().unwrap(),
        [3., 1., 2., 1.]
    );
    assert_eq!(
        x.sum(1).unwrap().to_vec1::<f32>().unwrap(),
        x.reduce_sum(1).unwrap().to_vec1::<f32>().unwrap()
    );
    let m = x.gt(3.0).unwrap();
    assert_eq!(
        x.masked_select(&m).unwrap().to_vec1::<f32>().unwrap(),
        [4., 5., 9., 6.]
    );
    // The mask broadcasts: one column mask for both rows.
    let col = Tensor::new(&[1u8, 0, 0, 1], &Device::Cpu).unwrap();
    assert_eq!(
        x.masked_select(&col).unwrap().to_vec1::<f32>().unwrap(),
        [3., 1., 5., 6.]
    );
    assert_eq!(
        m.nonzero().unwrap().to_vec2::<u32>().unwrap(),
        [[0, 2], [1, 0], [1, 1], [1, 3]]
    );
    let r = Tensor::new(&[2u32, 2, 7, 7, 7, 2, 0], &Device::Cpu).unwrap();
    let (u, c) = r.unique_consecutive().unwrap();
    assert_eq!(u.to_vec1::<u32>().unwrap(), [2, 7, 2, 0]);
    assert_eq!(c.to_vec1::<u32>().unwrap(), [2, 3, 1, 1]);
    let (u, c, i) = r.unique_with_inverse().unwrap();
    assert_eq!(u.to_vec1::<u32>().unwrap(), [0, 2, 7]);
    assert_eq!(c.to_vec1::<u32>().unwrap(), [1, 3, 3]);
    assert_eq!(i.to_vec1::<u32>().unwrap(), [1, 1, 2, 2, 2, 1, 0]);
    assert_eq!(
        r.histogram(4).unwrap().to_vec1::<u32>().unwrap(),
        [1, 0, 3, 0]
    );
}

#[test]
fn partition_and_reduce_by_key() {
    let dev = &Device::Cpu;
    // A transposed view and a u8 mask from a comparison: row-major order of the view.
    let x = Tensor::new(&[[1f32, -2., 3.], [-4., 5., -6.]], dev)
        .unwrap()
        .t()
        .unwrap();
    assert!(!x.is_contiguous());
    let (p, k) = x.partition(&x.gt(0.).unwrap()).unwrap();
    assert_eq!(p.to_vec1::<f32>().unwrap(), [1., 5., 3., -4., -2., -6.]);
    assert_eq!((k.dims(), k.dtype()), (&[1][..], CDType::U32));
    assert_eq!(k.to_vec1::<u32>().unwrap(), [3]);
    // The mask broadcasts; NaN is set, -0.0 is not.
    let m = Tensor::new(&[f32::NAN, -0.0], dev).unwrap();
    let (p, k) = x.partition(&m).unwrap();
    assert_eq!(p.to_vec1::<f32>().unwrap(), [1., -2., 3., -4., 5., -6.]);
    assert_eq!(k.to_vec1::<u32>().unwrap(), [3]);
    // Empty, and small integers (widened and cast back).
    let e = Tensor::zeros((0, 3), CDType::F32, dev).unwrap();
    let (p, k) = e.partition(&e).unwrap();
    assert_eq!((p.dims(), k.to_vec1::<u32>().unwrap()), (&[0][..], vec![0]));
    let b = Tensor::new(&[7u8, 0, 9, 0], dev).unwrap();
    let (p, k) = b.partition(&b).unwrap();
    assert_eq!(p.dtype(), CDType::U8);
    assert_eq!(p.to_vec1::<u8>().unwrap(), [7, 9, 0, 0]);
    assert_eq!(k.to_vec1::<u32>().unwrap(), [2]);
    assert!(x
        .partition(&Tensor::new(&[1u8, 0, 1], dev).unwrap())
        .is_err());

    // reduce_by_key: keys of one dtype, values of another, over a transposed view.
    let keys = Tensor::new(&[[1i64, 1, 2], [2, 2, 1]], dev)
        .unwrap()
        .t()
        .unwrap(); // row-major: 1 2, 1 2, 2 1
    let vals = Tensor::new(&[[1f32, 2., 3.], [4., 5., 6.]], dev)
        .unwrap()
        .t()
        .unwrap(); // 1 4 2 5 3 6
    let (u, s) = keys.reduce_by_key(&vals, ScanOp::Sum).unwrap();
    assert_eq!(u.to_vec1::<i64>().unwrap(), [1, 2, 1, 2, 1]);
    assert_eq!(s.to_vec1::<f32>().unwrap(), [1., 4., 2., 8., 6.]);
    let r = Tensor::new(&[3u32, 3, 3, 0, 0, 3], dev).unwrap();
    let v = Tensor::new(&[1f32, 5., 2., -1., -3., 4.], dev).unwrap();
    for (op, want) in [
        (ScanOp::Sum, [8f32, -4., 4.]),
        (ScanOp::Prod, [10., 3., 4.]),
        (ScanOp::Max, [5., -1., 4.]),
        (ScanOp::Min, [1., -3., 4.]),
    ] {
        let (u, f) = r.reduce_by_key(&v, op).unwrap();
        assert_eq!(u.to_vec1::<u32>().unwrap(), [3, 0, 3]);
        assert_eq!(f.to_vec1::<f32>().unwrap(), want, "{op:?}");
    }
    // NaN keys are each their own run; -0.0 == 0.0.
    let nk = Tensor::new(&[f32::NAN, f32::NAN, 0.0, -0.0, 1.0, 1.0], dev).unwrap();
    let nv = Tensor::new(&[1i32, 2, 3, 4, 5, 6], dev).unwrap();
    let (u, f) = nk.reduce_by_key(&nv, ScanOp::Sum).unwrap();
    let u = u.to_vec1::<f32>().unwrap();
    assert_eq!(u.len(), 4);
    assert!(u[0].is_nan() && u[1].is_nan());
    assert_eq!((u[2], u[3]), (0.0, 1.0));
    assert_eq!(f.to_vec1::<i32>().unwrap(), [1, 2, 7, 11]);
    // Small integers: u8 keys, i16 values, sums wrapping as i16.
    let bk = Tensor::new(&[200u8, 200, 7], dev).unwrap();
    let bv = Tensor::new(&[30_000i16, 10_000, -5], dev).unwrap();
    let (u, f) = bk.reduce_by_key(&bv, ScanOp::Sum).unwrap();
    assert_eq!((u.dtype(), f.dtype()), (CDType::U8, CDType::I16));
    assert_eq!(u.to_vec1::<u8>().unwrap(), [200, 7]);
    assert_eq!(
        f.to_vec1::<i16>().unwrap(),
        [30_000i16.wrapping_add(10_000), -5]
    );
    // Empty, rank 0, and values of another shape.
    let e = Tensor::zeros((2, 0), CDType::I32, dev).unwrap();
    let (u, f) = e.reduce_by_key(&e, ScanOp::Max).unwrap();
    assert_eq!((u.dims(), f.dims()), (&[0][..], &[0][..]));
    let s = Tensor::new(2f32, dev).unwrap();
    let (u, f) = s.reduce_by_key(&s, ScanOp::Sum).unwrap();
    assert_eq!(
        (u.to_vec1::<f32>().unwrap(), f.to_vec1::<f32>().unwrap()),
        (vec![2.], vec![2.])
    );
    let err = keys
        .reduce_by_key(&keys.flatten_all().unwrap(), ScanOp::Sum)
        .unwrap_err();
    assert!(
        err.to_string().contains("shape mismatch in reduce_by_key"),
        "{err}"
    );
}

#[test]
fn sort_pairs_bucketize_and_count_nonzero() {
    let dev = &Device::Cpu;
    // sort_pairs is stable: equal keys keep their values' order, ascending and descending;
    // NaN last ascending (first descending), -0.0 equal to +0.0 (input order, bits kept).
    let k = Tensor::new(&[[2f32, 1., 2., f32::NAN, 0.0, -0.0, 1.]], dev).unwrap();
    let v = Tensor::new(&[[0i64, 1, 2, 3, 4, 5, 6]], dev).unwrap();
    let (sk, sv) = k.sort_pairs(&v, D::Minus1, true).unwrap();
    let sk = sk.to_vec2::<f32>().unwrap().remove(0);
    assert_eq!(sv.to_vec2::<i64>().unwrap(), [[4, 5, 1, 6, 0, 2, 3]]);
    assert_eq!(&sk[..6], [0.0, -0.0, 1., 1., 2., 2.]);
    assert!(sk[0].is_sign_positive() && sk[1].is_sign_negative() && sk[6].is_nan());
    let (sk, sv) = k.sort_pairs(&v, 1, false).unwrap();
    let sk = sk.to_vec2::<f32>().unwrap().remove(0);
    assert_eq!(sv.to_vec2::<i64>().unwrap(), [[3, 0, 2, 1, 6, 4, 5]]);
    assert!(sk[0].is_nan() && sk[5].is_sign_positive() && sk[6].is_sign_negative());
    // Row by row, transposed keys, narrowed values of another dtype.
    let kt = Tensor::new(&[[3u32, 1], [1, 3], [2, 1]], dev)
        .unwrap()
        .t()
        .unwrap(); // [[3, 1, 2], [1, 3, 1]]
    let vn = Tensor::new(&[[9f32, 10., 11., 12.], [9., 13., 14., 15.]], dev)
        .unwrap()
        .narrow(1, 1, 3)
        .unwrap();
    assert!(!kt.is_contiguous() && !vn.is_contiguous());
    let (sk, sv) = kt.sort_pairs(&vn, D::Minus1, true).unwrap();
    assert_eq!(sk.to_vec2::<u32>().unwrap(), [[1, 2, 3], [1, 1, 3]]);
    assert_eq!(
        sv.to_vec2::<f32>().unwrap(),
        [[11., 12., 10.], [13., 15., 14.]]
    );
    let (sk, sv) = kt.sort_pairs(&vn, 1, false).unwrap();
    assert_eq!(sk.to_vec2::<u32>().unwrap(), [[3, 2, 1], [3, 1, 1]]);
    assert_eq!(
        sv.to_vec2::<f32>().unwrap(),
        [[10., 12., 11.], [14., 13., 15.]]
    );
    // Small integers (widened and cast back), each keeping its dtype.
    let bk = Tensor::new(&[200u8, 7, 200], dev).unwrap();
    let bv = Tensor::new(&[-1i16, 2, 3], dev).unwrap();
    let (sk, sv) = bk.sort_pairs(&bv, 0, false).unwrap();
    assert_eq!((sk.dtype(), sv.dtype()), (CDType::U8, CDType::I16));
    assert_eq!(sk.to_vec1::<u8>().unwrap(), [200, 200, 7]);
    assert_eq!(sv.to_vec1::<i16>().unwrap(), [-1, 3, 2]);
    // Empty rows.
    let e = Tensor::zeros((2, 0), CDType::F32, dev).unwrap();
    let ev = Tensor::zeros((2, 0), CDType::I32, dev).unwrap();
    let (sk, sv) = e.sort_pairs(&ev, D::Minus1, true).unwrap();
    assert_eq!((sk.dims(), sv.dims()), (&[2, 0][..], &[2, 0][..]));

    // bucketize: torch's example; a transposed input.
    let b = Tensor::new(&[1f32, 3., 5., 7., 9.], dev).unwrap();
    let x = Tensor::new(&[[3f32, 3.], [6., 6.], [9., 9.]], dev)
        .unwrap()
        .t()
        .unwrap();
    assert!(!x.is_contiguous());
    let got = x.bucketize(&b, false).unwrap();
    assert_eq!(got.dtype(), CDType::U32);
    assert_eq!(got.to_vec2::<u32>().unwrap(), [[1, 3, 4], [1, 3, 4]]);
    let got = x.bucketize(&b, true).unwrap();
    assert_eq!(got.to_vec2::<u32>().unwrap(), [[2, 3, 5], [2, 3, 5]]);
    // Ties among the boundaries, values outside them, NaN past every boundary.
    let b = Tensor::new(&[1i32, 2, 2, 5], dev).unwrap();
    let q = Tensor::new(&[0i32, 2, 3, 9, 1], dev).unwrap();
    assert_eq!(
        q.bucketize(&b, false).unwrap().to_vec1::<u32>().unwrap(),
        [0, 1, 3, 4, 0]
    );
    assert_eq!(
        q.bucketize(&b, true).unwrap().to_vec1::<u32>().unwrap(),
        [0, 3, 3, 4, 1]
    );
    let b = Tensor::new(&[1f32, 3., 5.], dev).unwrap();
    let q = Tensor::new(&[f32::NAN, 4.], dev).unwrap();
    for right in [false, true] {
        let got = q.bucketize(&b, right).unwrap().to_vec1::<u32>().unwrap();
        assert_eq!(got, [3, 2]);
    }
    // Rank 0, empty input, empty boundaries.
    let s = Tensor::new(4f32, dev).unwrap();
    let got = s.bucketize(&b, false).unwrap();
    assert_eq!((got.dims(), got.to_scalar::<u32>().unwrap()), (&[][..], 2));
    let got = e.bucketize(&b, true).unwrap();
    assert_eq!(got.dims(), &[2, 0]);
    let none = Tensor::zeros(0, CDType::F32, dev).unwrap();
    assert_eq!(
        x.bucketize(&none, false).unwrap().to_vec2::<u32>().unwrap(),
        [[0; 3]; 2]
    );

    // count_nonzero: NaN counts, -0.0 does not; a transposed and a broadcast view.
    let x = Tensor::new(&[[f32::NAN, -0.0], [0.0, 1.], [0., -2.]], dev)
        .unwrap()
        .t()
        .unwrap();
    let c = x.count_nonzero().unwrap();
    assert_eq!((c.dims(), c.dtype()), (&[1][..], CDType::U32));
    assert_eq!(c.to_vec1::<u32>().unwrap(), [3]);
    let bc = Tensor::new(&[1f32, 0.], dev)
        .unwrap()
        .broadcast_as((3, 2))
        .unwrap();
    assert_eq!(bc.count_nonzero().unwrap().to_vec1::<u32>().unwrap(), [3]);
    // A comparison's u8, i16, rank 0 and empty.
    let m = x.gt(0.).unwrap();
    assert_eq!(m.count_nonzero().unwrap().to_vec1::<u32>().unwrap(), [1]);
    let i = Tensor::new(&[0i16, -3, 0, 7], dev).unwrap();
    assert_eq!(i.count_nonzero().unwrap().to_vec1::<u32>().unwrap(), [2]);
    for (t, want) in [(Tensor::new(0f32, dev).unwrap(), 0), (s, 1), (e, 0)] {
        assert_eq!(t.count_nonzero().unwrap().to_vec1::<u32>().unwrap(), [want]);
    }
}

#[test]
fn bad_arguments_are_errors() {
    let x = Tensor::new(&[[1f32, 2.], [3., 4.]], &Device::Cpu).unwrap();
    let s = Tensor::new(2f32, &Device::Cpu).unwrap();
    assert!(s.sort_stable(D::Minus1, true).is_err(), "rank 0 has no dim");
    assert!(s.top_k(0, 0).is_err());
    assert!(x.reduce(2, ScanOp::Sum).is_err(), "axis out of range");
    let q = Tensor::new(&[[1f32], [2.], [3.]], &Device::Cpu).unwrap();
    assert!(
        x.search_sorted(&q, D::Minus1, Side::Left).is_err(),
        "leading dims differ"
    );
    let qi = Tensor::new(&[1u32], &Device::Cpu).unwrap();
    assert!(
        x.search_sorted(&qi, D::Minus1, Side::Left).is_err(),
        "dtypes differ"
    );
    let m = Tensor::new(&[1u8, 0, 1], &Device::Cpu).unwrap();
    assert!(x.masked_select(&m).is_err(), "mask does not broadcast");
    assert!(s.sort_pairs(&s, 0, true).is_err(), "rank 0 has no dim");
    assert!(
        x.sort_pairs(&q, 0, true).is_err(),
        "values of another shape"
    );
    assert!(x
        .sort_pairs(&x.t().unwrap().reshape(4).unwrap(), D::Minus1, true)
        .is_err());
    assert!(q.bucketize(&x, false).is_err(), "boundaries not 1-D");
    assert!(q.bucketize(&s, false).is_err(), "rank-0 boundaries");
    let bi = Tensor::new(&[1u32, 2], &Device::Cpu).unwrap();
    assert!(q.bucketize(&bi, false).is_err(), "dtypes differ");
    // Rank 0 where the op has no dimension.
    assert_eq!(s.nonzero().unwrap().dims(), &[1, 0]);
    let (u, c) = s.unique().unwrap();
    assert_eq!(
        (u.to_vec1::<f32>().unwrap(), c.to_vec1::<u32>().unwrap()),
        (vec![2.], vec![1])
    );
}

#[test]
fn keepdim_reductions_keep_the_dimension() {
    let mut rng = StdRng::seed_from_u64(30);
    let mut checked = 0;
    for shape in shapes(&mut rng) {
        for &op in &OPS {
            for x in views(&mut rng, &shape, |r, n| values::<f32>(r, n, op, true)) {
                let d: Vec<f32> = dense(&x);
                let rank = x.rank();
                for axis in 0..rank {
                    let end = from_end(axis, rank);
                    let named = |t: &Tensor, by_end: bool| match (op, by_end) {
                        (ScanOp::Sum, false) => t.reduce_sum_keepdim(axis),
                        (ScanOp::Prod, false) => t.reduce_prod_keepdim(axis),
                        (ScanOp::Max, false) => t.reduce_max_keepdim(axis),
                        (ScanOp::Min, false) => t.reduce_min_keepdim(axis),
                        (ScanOp::Sum, true) => t.reduce_sum_keepdim(end),
                        (ScanOp::Prod, true) => t.reduce_prod_keepdim(end),
                        (ScanOp::Max, true) => t.reduce_max_keepdim(end),
                        (ScanOp::Min, true) => t.reduce_min_keepdim(end),
                        (op, _) => unreachable!("{op:?} is not in this matrix"),
                    };
                    if x.dims()[axis] == 0 && matches!(op, ScanOp::Max | ScanOp::Min) {
                        assert!(x.reduce_keepdim(axis, op).is_err());
                        assert!(named(&x, true).is_err());
                        continue;
                    }
                    let mut dims = x.dims().to_vec();
                    dims[axis] = 1;
                    let want = cpu::reduce(&d, x.dims(), Some(axis), op).unwrap();
                    for got in [
                        x.reduce_keepdim(axis, op).unwrap(),
                        x.reduce_keepdim(end, op).unwrap(),
                        named(&x, false).unwrap(),
                        named(&x, true).unwrap(),
                    ] {
                        assert_eq!(
                            got.dims(),
                            &dims[..],
                            "{op:?} axis {axis} of {:?}",
                            x.dims()
                        );
                        assert_eq!(
                            bits_of(&dense::<f32>(&got)),
                            bits_of(&want),
                            "{op:?} axis {axis} of {:?} strides {:?}",
                            x.dims(),
                            x.stride()
                        );
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 400, "{checked}");
    // As candle's own `*_keepdim` (no NaN, no rounding differences here), and they broadcast.
    let dev = &Device::Cpu;
    let x = Tensor::new(&[[3f32, 1., 4.], [1., 5., 9.]], dev).unwrap();
    let v2 = |t: Tensor| t.to_vec2::<f32>().unwrap();
    assert_eq!(
        v2(x.reduce_sum_keepdim(1).unwrap()),
        v2(x.sum_keepdim(1).unwrap())
    );
    assert_eq!(
        v2(x.reduce_max_keepdim(0).unwrap()),
        v2(x.max_keepdim(0).unwrap())
    );
    assert_eq!(
        v2(x.reduce_min_keepdim(D::Minus1).unwrap()),
        v2(x.min_keepdim(D::Minus1).unwrap())
    );
    assert_eq!(
        v2(x.reduce_prod_keepdim(D::Minus1).unwrap()),
        [[12.], [45.]]
    );
    let m = x.reduce_max_keepdim(1).unwrap();
    assert_eq!(
        v2(x.broadcast_sub(&m).unwrap()),
        [[-1., -3., 0.], [-8., -4., 0.]]
    );
    // Small integers, widened and cast back.
    let b = Tensor::new(&[[200u8, 100], [7, 9]], dev).unwrap();
    let s = b.reduce_keepdim(0, ReduceOp::Sum).unwrap();
    assert_eq!(s.dtype(), CDType::U8);
    assert_eq!(s.to_vec2::<u8>().unwrap(), [[207, 109]]);
    assert!(x.reduce_keepdim(2, ReduceOp::Sum).is_err());
    assert!(x.reduce_sum_keepdim(D::Minus(3)).is_err());
    assert!(Tensor::new(1f32, dev)
        .unwrap()
        .reduce_sum_keepdim(0)
        .is_err());
}

/// candle's error under its optional backtrace wrapper.
fn inner(e: candle_core::Error) -> candle_core::Error {
    match e {
        candle_core::Error::WithBacktrace { inner, .. } => *inner,
        e => e,
    }
}

#[test]
fn dims_out_of_range_are_candles_typed_error() {
    let dev = &Device::Cpu;
    let x = Tensor::new(&[[1f32, 2.], [3., 4.]], dev).unwrap();
    let s = Tensor::new(2f32, dev).unwrap();
    let errors = [
        x.sort_stable(2, true).err(),
        x.sort_stable_values(D::Minus(3), true).err(),
        x.arg_sort_stable(5, false).err(),
        x.top_k(1, 2).err(),
        x.bottom_k(1, D::Minus(3)).err(),
        x.search_sorted(&x, 2, Side::Left).err(),
        x.sort_pairs(&x, D::Minus(3), true).err(),
        x.reduce_keepdim(2, ReduceOp::Max).err(),
        x.reduce_min_keepdim(D::Minus(3)).err(),
        s.sort_stable(0, true).err(),
        s.sort_stable(D::Minus1, true).err(),
        s.top_k(0, D::Minus1).err(),
        s.search_sorted(&s, 0, Side::Right).err(),
        s.reduce_keepdim(D::Minus1, ReduceOp::Sum).err(),
        x.scan_max_with_indices(2).err(),
    ];
    for (k, e) in errors.into_iter().enumerate() {
        let e = inner(e.unwrap_or_else(|| panic!("case {k}: not an error")));
        assert!(
            matches!(e, candle_core::Error::DimOutOfRange { .. }),
            "case {k}: {e:?}"
        );
    }
    // Shapes that differ along another dim than the searched one.
    let q = Tensor::new(&[[1f32, 2., 3.]], dev).unwrap(); // [1, 3]
    assert!(x.search_sorted(&q, 0, Side::Left).is_err());
    let q = Tensor::new(&[[1f32], [2.]], dev).unwrap(); // [2, 1]
    assert!(x.search_sorted(&q, 0, Side::Left).is_err());
    assert_eq!(
        x.search_sorted(&q, 1, Side::Left)
            .unwrap()
            .to_vec2::<u32>()
            .unwrap(),
        [[0], [0]]
    );
}

#[test]
fn indices_past_u32_are_refused_before_any_work() {
    // 2^32 elements, a broadcast view of one (nothing allocated): every op whose indices or
    // counts range over them refuses it up front with cubeprim's `TooLarge`, wrapped.
    let dev = &Device::Cpu;
    let n = 1usize << 32;
    let big = Tensor::zeros(1, CDType::F32, dev)
        .unwrap()
        .broadcast_as(n)
        .unwrap();
    let keys = Tensor::zeros(1, CDType::U32, dev)
        .unwrap()
        .broadcast_as(n)
        .unwrap();
    let q = Tensor::new(&[0f32], dev).unwrap();
    let small = Tensor::new(&[0f32, 1.], dev).unwrap();
    let errors = [
        big.sort_stable(0, true).err(),
        big.sort_stable_values(D::Minus1, true).err(),
        big.arg_sort_stable(0, false).err(),
        big.top_k(1, 0).err(),
        big.bottom_k(1, D::Minus1).err(),
        big.search_sorted(&q, 0, Side::Left).err(),
        big.sort_pairs(&big, 0, true).err(),
        small.bucketize(&big, false).err(),
        big.scan_max_with_indices(0).err(),
        big.scan_min_with_indices(D::Minus1).err(),
        big.nonzero().err(),
        big.nonzero_padded().err(),
        big.masked_select_padded(&big).err(),
        big.partition(&big).err(),
        big.count_nonzero().err(),
        big.unique().err(),
        big.unique_consecutive().err(),
        big.unique_padded().err(),
        big.unique_consecutive_with_inverse_padded().err(),
        keys.histogram(4).err(),
        keys.reduce_by_key_padded(&big, ReduceOp::Sum).err(),
    ];
    for (k, e) in errors.into_iter().enumerate() {
        let e = inner(e.unwrap_or_else(|| panic!("case {k}: not an error")));
        let msg = e.to_string();
        assert!(
            matches!(e, candle_core::Error::Wrapped(_))
                && msg.contains(&format!(
                    "of {n} elements is too large: at most {}",
                    u32::MAX
                )),
            "case {k}: {msg}"
        );
    }
}

#[test]
fn padded_variants_of_small_and_empty_inputs() {
    let dev = &Device::Cpu;
    // Empty: every padded output has no element, the count is [0].
    let e = Tensor::zeros((3, 0), CDType::F32, dev).unwrap();
    let (v, c) = e.masked_select_padded(&e).unwrap();
    assert_eq!((v.dims(), c.to_vec1::<u32>().unwrap()), (&[0][..], vec![0]));
    let (v, c) = e.nonzero_padded().unwrap();
    assert_eq!(
        (v.dims(), c.to_vec1::<u32>().unwrap()),
        (&[0, 2][..], vec![0])
    );
    let (v, counts, inv, c) = e.unique_with_inverse_padded().unwrap();
    assert_eq!(
        (v.dims(), counts.dims(), inv.dims()),
        (&[0][..], &[0][..], &[3, 0][..])
    );
    assert_eq!(c.to_vec1::<u32>().unwrap(), [0]);
    let (k, f, c) = e.reduce_by_key_padded(&e, ReduceOp::Max).unwrap();
    assert_eq!((k.dims(), f.dims()), (&[0][..], &[0][..]));
    assert_eq!(c.to_vec1::<u32>().unwrap(), [0]);
    // One element, and rank 0 (one row of no index).
    let one = Tensor::new(&[5i64], dev).unwrap();
    let (v, c, n) = one.unique_consecutive_padded().unwrap();
    assert_eq!(
        (
            v.to_vec1::<i64>().unwrap(),
            c.to_vec1::<u32>().unwrap(),
            n.to_vec1::<u32>().unwrap()
        ),
        (vec![5], vec![1], vec![1])
    );
    let s = Tensor::new(3f32, dev).unwrap();
    let (v, c) = s.nonzero_padded().unwrap();
    assert_eq!(
        (v.dims(), c.to_vec1::<u32>().unwrap()),
        (&[1, 0][..], vec![1])
    );
    let (v, c) = Tensor::new(0f32, dev).unwrap().nonzero_padded().unwrap();
    assert_eq!(
        (v.dims(), c.to_vec1::<u32>().unwrap()),
        (&[1, 0][..], vec![0])
    );
    let (v, c) = s.masked_select_padded(&s).unwrap();
    assert_eq!(
        (v.to_vec1::<f32>().unwrap(), c.to_vec1::<u32>().unwrap()),
        (vec![3.], vec![1])
    );
    // Small integers keep their dtype; the mask broadcasts.
    let b = Tensor::new(&[[7u8, 0], [9, 4]], dev).unwrap();
    let col = Tensor::new(&[1u8, 0], dev).unwrap();
    let (v, c) = b.masked_select_padded(&col).unwrap();
    assert_eq!(v.dtype(), CDType::U8);
    assert_eq!(v.to_vec1::<u8>().unwrap(), [7, 9, 0, 0]);
    assert_eq!(c.to_vec1::<u32>().unwrap(), [2]);
    let (u, counts, n) = b.unique_padded().unwrap();
    assert_eq!(u.dtype(), CDType::U8);
    assert_eq!(u.to_vec1::<u8>().unwrap(), [0, 4, 7, 9]);
    assert_eq!(counts.to_vec1::<u32>().unwrap(), [1, 1, 1, 1]);
    assert_eq!(n.to_vec1::<u32>().unwrap(), [4]);
    // The count chains into the next op on the device: the selected prefix's sum, with no
    // read of the count (a mask from an arange against the count).
    let x = Tensor::new(&[3f32, -1., 2., -4., 5.], dev).unwrap();
    let (kept, count) = x.masked_select_padded(&x.gt(0.).unwrap()).unwrap();
    let pos = Tensor::arange(0u32, 5, dev).unwrap();
    let live = pos.broadcast_lt(&count).unwrap();
    let sum = live.where_cond(&kept, &kept.zeros_like().unwrap()).unwrap();
    assert_eq!(sum.reduce_sum(0).unwrap().to_scalar::<f32>().unwrap(), 10.);
}
