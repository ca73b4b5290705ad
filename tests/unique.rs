//! unique (sorted, with counts and inverse) on the device (wgpu; lavapipe in CI) against
//! `cubeprim::cpu::unique`: i32 keys with few and many distinct values, f32 keys with NaN (each
//! NaN its own entry) and signed zeros, sizes 0, 1, 5000, 2^20 + 1, an N-d input (inverse
//! keeps its shape), a strided 1-D view, and a non-contiguous N-d input (an error).

use crate::common;

use common::*;
use cubeprim::{DType, Error, Workspace};
use rand::Rng;

fn idx(c: &Client, t: &cubeprim::DeviceTensor<R>) -> Vec<i64> {
    if t.dtype == DType::I64 {
        t.to_vec::<i64>(c)
    } else {
        t.to_vec::<i32>(c).into_iter().map(i64::from).collect()
    }
}

/// Checks values (bitwise), counts and inverse of `x` against the CPU.
fn check<E: cubeprim::cpu::SortElement + PartialEq + std::fmt::Debug>(
    c: &Client,
    x: &cubeprim::DeviceTensor<R>,
    data: &[E],
    bits: impl Fn(&E) -> u64,
    what: &str,
    ws: &mut Workspace<R>,
) {
    let u = cubeprim::unique(c, x, true, true, ws).unwrap();
    let (wv, wc, wi) = cubeprim::cpu::unique(data);
    let gv = u.values.to_vec::<E>(c);
    assert_eq!(gv.len(), wv.len(), "{what}: number of unique values");
    assert!(
        gv.iter().zip(&wv).all(|(a, b)| bits(a) == bits(b)),
        "{what}: values"
    );
    assert_eq!(idx(c, u.counts.as_ref().unwrap()), wc, "{what}: counts");
    let inv = u.inverse.unwrap();
    assert_eq!(inv.shape, x.shape, "{what}: inverse shape");
    assert_eq!(idx(c, &inv), wi, "{what}: inverse");
}

#[test]
fn unique_ints_match_cpu() {
    let Some(c) = client() else { return };
    let mut rng = rng(31);
    let mut ws = workspace();
    for &n in &[0usize, 1, 5000, (1 << 20) + 1] {
        for &distinct in &[3i32, 1 << 30] {
            let k: Vec<i32> = (0..n)
                .map(|_| rng.random_range(-distinct..distinct))
                .collect();
            let x = upload(&c, &k, &[n]);
            check(
                &c,
                &x,
                &k,
                |v| *v as u32 as u64,
                &format!("i32 n={n} d={distinct}"),
                &mut ws,
            );
        }
    }
    // N-d input: flattened, inverse shaped like the input.
    let k: Vec<u32> = (0..6000).map(|_| rng.random_range(0..100)).collect();
    let x = upload(&c, &k, &[20, 30, 10]);
    check(&c, &x, &k, |v| *v as u64, "u32 [20, 30, 10]", &mut ws);
}

#[test]
fn unique_floats_with_nan_match_cpu() {
    let Some(c) = client() else { return };
    let mut rng = rng(32);
    let mut ws = workspace();
    for &n in &[1usize, 5000, (1 << 20) + 1] {
        let k: Vec<f32> = (0..n)
            .map(|_| match rng.random_range(0..20) {
                0 => f32::NAN,
                1 => -0.0,
                2 => 0.0,
                _ => rng.random_range(-50..50) as f32 * 0.5,
            })
            .collect();
        let x = upload(&c, &k, &[n]);
        check(
            &c,
            &x,
            &k,
            |v| v.to_bits() as u64,
            &format!("f32 n={n}"),
            &mut ws,
        );
        if n > 1 {
            let nans = k.iter().filter(|v| v.is_nan()).count();
            let u = cubeprim::unique(&c, &x, false, false, &mut ws).unwrap();
            let got = u.values.to_vec::<f32>(&c);
            assert_eq!(
                got.iter().filter(|v| v.is_nan()).count(),
                nans,
                "one entry per NaN"
            );
            assert!(u.counts.is_none() && u.inverse.is_none());
        }
    }
}

#[test]
fn unique_views_and_errors() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let k: Vec<i32> = (0..200).map(|i| (i * 7) % 13).collect();
    let x = upload(&c, &k, &[20, 10]);
    // A strided 1-D view (column 3).
    let col = x.transpose(0, 1).unwrap().narrow(0, 3, 1).unwrap();
    let col = cubeprim::DeviceTensor::from_parts(
        col.handle.clone(),
        vec![20],
        vec![10],
        col.offset,
        DType::I32,
    );
    let data: Vec<i32> = (0..20).map(|r| k[r * 10 + 3]).collect();
    check(
        &c,
        &col,
        &data,
        |v| *v as u32 as u64,
        "strided column",
        &mut ws,
    );
    assert!(matches!(
        cubeprim::unique(&c, &x.transpose(0, 1).unwrap(), true, true, &mut ws),
        Err(Error::Unsupported(_))
    ));
}

// The tests above with plane operations forced (`PLANE_OPS`): the kernels' plane variants,
// which wgpu does not report on CPU adapters although lavapipe runs them.
crate::tuning_variants!(plane_ops_variants: [PLANE_OPS] =>
    unique_ints_match_cpu,
    unique_floats_with_nan_match_cpu,
    unique_views_and_errors,
);

// The tests above with tile ids from the cube position and the shared-memory look-back
// (`POSITION`: CUDA's order, carried on lavapipe by the look-back's fallback).
crate::tuning_variants!(position_variants: [POSITION] =>
    unique_ints_match_cpu,
    unique_floats_with_nan_match_cpu,
    unique_views_and_errors,
);
