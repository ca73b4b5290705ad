//! Reductions on the device (wgpu; lavapipe in CI) against `cubeprim::cpu::reduce`: whole
//! buffers and every axis of N-d (also transposed) tensors, sum / prod / max / min, several
//! dtypes, sizes around tile boundaries up to a few million, device lengths, bad inputs.
//! Integers and max / min exactly; float sums within `1e-5 * (sum |x| + 1)` (f16: 1e-2).

use crate::common;

use common::*;
use cubeprim::{DType, Error, Len, ScanOp, Workspace};
use half::f16;
use rand::Rng;

#[test]
fn whole_buffer_sums_and_extrema() {
    let Some(c) = client() else { return };
    let mut rng = rng(21);
    let mut ws = workspace();
    for &n in &[
        1usize, 5, 1023, 1024, 8191, 8193, 65_537, 1_000_003, 4_194_304,
    ] {
        let x: Vec<f32> = (0..n).map(|_| rng.random_range(-4.0..4.0)).collect();
        let t = upload(&c, &x, &[n]);
        let s = cubeprim::reduce(&c, &t, None, ScanOp::Sum, &mut ws).unwrap();
        assert_eq!(s.shape, Vec::<usize>::new());
        let got = s.to_vec::<f32>(&c)[0];
        let want: f64 = x.iter().map(|&v| v as f64).sum();
        let abs: f64 = x.iter().map(|&v| v.abs() as f64).sum();
        assert!(
            (got as f64 - want).abs() <= 1e-5 * (abs + 1.0),
            "n={n}: {got} vs {want}"
        );
        for op in [ScanOp::Max, ScanOp::Min] {
            let got = cubeprim::reduce(&c, &t, None, op, &mut ws)
                .unwrap()
                .to_vec::<f32>(&c);
            assert_eq!(
                got,
                cubeprim::cpu::reduce(&x, &[n], None, op).unwrap(),
                "{op:?} n={n}"
            );
        }
        let xi: Vec<i32> = (0..n).map(|_| rng.random()).collect();
        let got = cubeprim::reduce(&c, &upload(&c, &xi, &[n]), None, ScanOp::Sum, &mut ws)
            .unwrap()
            .to_vec::<i32>(&c);
        assert_eq!(
            got,
            cubeprim::cpu::reduce(&xi, &[n], None, ScanOp::Sum).unwrap(),
            "i32 n={n}"
        );
    }
    // NaN propagates through max.
    let x = [1.0f32, f32::NAN, 3.0];
    let got = cubeprim::reduce(&c, &upload(&c, &x, &[3]), None, ScanOp::Max, &mut ws)
        .unwrap()
        .to_vec::<f32>(&c);
    assert!(got[0].is_nan());
}

#[test]
fn every_axis_of_nd_tensors() {
    let Some(c) = client() else { return };
    let mut rng = rng(22);
    let mut ws = workspace();
    for shape in [vec![3usize, 5, 7], vec![2, 9000], vec![3000, 3], vec![1, 1]] {
        let n: usize = shape.iter().product();
        let x: Vec<i64> = (0..n).map(|_| rng.random_range(-1000..1000)).collect();
        let xu: Vec<u32> = (0..n).map(|_| rng.random_range(1..4)).collect();
        for axis in 0..shape.len() {
            if supports(&c, DType::I64) {
                for op in [ScanOp::Sum, ScanOp::Max, ScanOp::Min] {
                    let got = cubeprim::reduce(
                        &c,
                        &upload(&c, &x, &shape),
                        Some(axis as isize),
                        op,
                        &mut ws,
                    )
                    .unwrap();
                    let want = cubeprim::cpu::reduce(&x, &shape, Some(axis), op).unwrap();
                    assert_eq!(got.to_vec::<i64>(&c), want, "{shape:?} axis {axis} {op:?}");
                }
            }
            let got = cubeprim::reduce(
                &c,
                &upload(&c, &xu, &shape),
                Some(axis as isize),
                ScanOp::Prod,
                &mut ws,
            )
            .unwrap();
            let want = cubeprim::cpu::reduce(&xu, &shape, Some(axis), ScanOp::Prod).unwrap();
            assert_eq!(got.to_vec::<u32>(&c), want, "prod {shape:?} axis {axis}");
        }
        // A transposed view, reduced along axis 0 and as a whole.
        if shape.len() == 2 {
            let t = upload(&c, &xu, &shape).transpose(0, 1).unwrap();
            let host = cubeprim::cpu::gather(&xu, &t.shape, &t.strides, 0).unwrap();
            let got = cubeprim::reduce(&c, &t, Some(0), ScanOp::Sum, &mut ws).unwrap();
            assert_eq!(
                got.to_vec::<u32>(&c),
                cubeprim::cpu::reduce(&host, &t.shape, Some(0), ScanOp::Sum).unwrap()
            );
            let got = cubeprim::reduce(&c, &t, None, ScanOp::Sum, &mut ws).unwrap();
            assert_eq!(
                got.to_vec::<u32>(&c),
                cubeprim::cpu::reduce(&host, &t.shape, None, ScanOp::Sum).unwrap()
            );
        }
    }
    if supports(&c, DType::F16) {
        let x: Vec<f16> = (0..10_000)
            .map(|i| f16::from_f32((i % 7) as f32 * 0.25))
            .collect();
        let got = cubeprim::reduce(
            &c,
            &upload(&c, &x, &[100, 100]),
            Some(1),
            ScanOp::Sum,
            &mut ws,
        )
        .unwrap()
        .to_vec::<f16>(&c);
        let want = cubeprim::cpu::reduce(&x, &[100, 100], Some(1), ScanOp::Sum).unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!((g.to_f32() - w.to_f32()).abs() <= 1e-2 * (w.to_f32().abs() + 1.0));
        }
    }
}

#[test]
fn device_length_and_errors() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let cap = 100_000;
    let x: Vec<u32> = (0..cap as u32).collect();
    let t = upload(&c, &x, &[cap]);
    for len in [0u32, 1, 3, 8193, 99_999, 100_000] {
        let cnt = upload(&c, &[len], &[1]);
        let out = cubeprim::DeviceTensor::empty(&c, &[1], DType::U32);
        cubeprim::reduce_len_into(
            &c,
            &t,
            Len::Device {
                count: &cnt,
                capacity: cap,
            },
            ScanOp::Sum,
            &out,
            &mut ws,
        )
        .unwrap();
        let want: u32 = x[..len as usize]
            .iter()
            .fold(0u32, |a, b| a.wrapping_add(*b));
        assert_eq!(out.to_vec::<u32>(&c)[0], want, "len {len}");
    }
    assert!(matches!(
        cubeprim::reduce(&c, &t, Some(1), ScanOp::Sum, &mut ws),
        Err(Error::AxisOutOfRange { .. })
    ));
    let e = upload::<f32>(&c, &[], &[0]);
    assert!(matches!(
        cubeprim::reduce(&c, &e, None, ScanOp::Max, &mut ws),
        Err(Error::Unsupported(_))
    ));
    let s = cubeprim::reduce(&c, &e, None, ScanOp::Sum, &mut ws).unwrap();
    assert_eq!(s.to_vec::<f32>(&c), vec![0.0]);
    let wrong = cubeprim::DeviceTensor::empty(&c, &[1], DType::I32);
    assert!(matches!(
        cubeprim::reduce_into(&c, &t, None, ScanOp::Sum, &wrong, &mut ws),
        Err(Error::UnsupportedDType { .. })
    ));
}

/// A workspace of the size `reduce_workspace_bytes` answers is enough: whole buffers and rows
/// (one pass, which needs only the ticket word, and several).
#[test]
fn workspace_of_the_queried_size() {
    let Some(c) = client() else { return };
    for (shape, axis) in [
        (vec![16usize, 1024], Some(1isize)),
        (vec![5, 3], Some(0)),
        (vec![1], None),
        (vec![300_001], None),
        (vec![3, 200_000], Some(1)),
    ] {
        let n: usize = shape.iter().product();
        let x: Vec<u32> = (0..n as u32).map(|i| i % 5).collect();
        let bytes = cubeprim::reduce_workspace_bytes(&c, &shape, axis, DType::U32).unwrap();
        let mut ws = Workspace::with_capacity(&c, bytes);
        let got = cubeprim::reduce(&c, &upload(&c, &x, &shape), axis, ScanOp::Sum, &mut ws)
            .unwrap_or_else(|e| panic!("{shape:?} {axis:?}, {bytes} bytes: {e:?}"));
        let want = cubeprim::cpu::reduce(&x, &shape, axis.map(|a| a as usize), ScanOp::Sum);
        assert_eq!(got.to_vec::<u32>(&c), want.unwrap(), "{shape:?} {axis:?}");
    }
}

// The tests above with tile ids from the cube position and the shared-memory look-back
// (`POSITION`: CUDA's order, carried on lavapipe by the look-back's fallback).
crate::tuning_variants!(position_variants: [POSITION] =>
    whole_buffer_sums_and_extrema,
    every_axis_of_nd_tensors,
    device_length_and_errors,
);
