//! The candle extension traits on the CPU device, against cubeprim's CPU reference: every
//! method, dtype, rank 1–4, every axis, contiguous and strided (transposed, narrowed,
//! permuted) inputs. The CPU path and the reference do the same operations in the same order
//! per row, so results must match bit for bit.
#![cfg(feature = "candle")]

use candle_core::{DType as CDType, Device, Tensor, Var, WithDType, D};
use cubeprim::candle::ScanExt;
use cubeprim::cpu::{self, ScanElement};
use cubeprim::{ScanOp, ScanOptions};
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
                        let want = cpu::scan(&dense, x.dims(), axis, op, opts);
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
                            let (wv, wi) = cpu::scan_with_indices(&dense, x.dims(), axis, op, opts);
                            let v: Vec<E> = v.flatten_all().unwrap().to_vec1().unwrap();
                            let i: Vec<i64> = i.flatten_all().unwrap().to_vec1().unwrap();
                            assert_eq!(
                                v.iter().map(|v| v.bits()).collect::<Vec<_>>(),
                                wv.iter().map(|v| v.bits()).collect::<Vec<_>>()
                            );
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
    assert_eq!(i.to_vec2::<i64>().unwrap(), [[0, 0, 2, 2], [0, 1, 1, 1]]);
    let (m, i) = x.scan_min_with_indices(1).unwrap();
    assert_eq!(v2(m), [[3., 1., 1., 1.], [5., 5., 2., 2.]]);
    assert_eq!(i.to_vec2::<i64>().unwrap(), [[0, 1, 1, 3], [0, 0, 2, 2]]);
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
            );
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
