//! Stream compaction on the device (wgpu; lavapipe in CI) against `cubeprim::cpu`: select
//! (single buffer and key-value pairs), partition, nonzero, masked_select and the count; flag
//! patterns all-false, all-true, alternating and random densities 0.1% / 50% / 99.9%; sizes
//! around tile boundaries up to two million; non-0/1 flags (2.5, -1, NaN are set, -0.0 is not);
//! device-resident lengths; bad inputs. Results are exact.

use crate::common;

use common::*;
use cubeprim::{DType, DeviceTensor, Element, Error, Len, Workspace};
use half::f16;
use rand::Rng;

/// Flags of `n` elements: pattern 0 all-false, 1 all-true, 2 alternating, else density `p`.
fn flags(rng: &mut rand::rngs::StdRng, n: usize, pattern: usize, p: f64) -> Vec<f32> {
    (0..n)
        .map(|i| match pattern {
            0 => 0.0,
            1 => 1.0,
            2 => (i % 2) as f32,
            _ => {
                if rng.random_bool(p) {
                    // Any non-zero value is set.
                    [1.0, 2.5, -1.0, f32::NAN][i % 4]
                } else if i % 3 == 0 {
                    -0.0
                } else {
                    0.0
                }
            }
        })
        .collect()
}

const SIZES: &[usize] = &[0, 1, 5, 2047, 2048, 2049, 8191, 8193, 65_537, 300_001];

#[test]
fn select_matches_cpu_across_patterns_and_sizes() {
    let Some(c) = client() else { return };
    let mut rng = rng(1);
    let mut ws = workspace();
    for &n in SIZES {
        for (pattern, p) in [
            (0, 0.0),
            (1, 1.0),
            (2, 0.0),
            (3, 0.001),
            (3, 0.5),
            (3, 0.999),
        ] {
            let f = flags(&mut rng, n, pattern, p);
            let data: Vec<i32> = (0..n as i32).map(|i| i * 7 - 3).collect();
            let (out, count) = cubeprim::select(
                &c,
                &upload(&c, &data, &[n]),
                &upload(&c, &f, &[n]),
                n,
                &mut ws,
            )
            .unwrap();
            let want = cubeprim::cpu::select(&data, &f);
            eprintln!("n={n} pattern={pattern} p={p}");
            let k = cubeprim::read_count(&c, &count);
            assert_eq!(k, want.len(), "count n={n} pattern={pattern} p={p}");
            assert_eq!(
                &out.to_vec::<i32>(&c)[..k],
                &want[..],
                "n={n} pattern={pattern} p={p}"
            );
        }
    }
}

#[test]
fn select_large_and_dtypes() {
    let Some(c) = client() else { return };
    let mut rng = rng(2);
    let mut ws = workspace();
    // Two million f32 at 50%, flags u32 with values other than 1.
    let n = 2_000_003;
    let data: Vec<f32> = (0..n).map(|_| rng.random_range(-4.0..4.0)).collect();
    let f: Vec<u32> = (0..n)
        .map(|_| rng.random_range(0..2) * rng.random_range(1..9))
        .collect();
    let (out, count) = cubeprim::select(
        &c,
        &upload(&c, &data, &[n]),
        &upload(&c, &f, &[n]),
        n,
        &mut ws,
    )
    .unwrap();
    let want = cubeprim::cpu::select(&data, &f);
    let k = cubeprim::read_count(&c, &count);
    assert_eq!(k, want.len());
    assert_eq!(&out.to_vec::<f32>(&c)[..k], &want[..]);

    // i64 data with i32 flags, f16 data with f16 flags (where the runtime has them).
    let n = 10_001;
    let f: Vec<i32> = (0..n).map(|_| rng.random_range(-1..2)).collect();
    if supports(&c, DType::I64) {
        let data: Vec<i64> = (0..n as i64).map(|i| i << 33 | i).collect();
        let (out, count) = cubeprim::select(
            &c,
            &upload(&c, &data, &[n]),
            &upload(&c, &f, &[n]),
            n,
            &mut ws,
        )
        .unwrap();
        let want = cubeprim::cpu::select(&data, &f);
        let k = cubeprim::read_count(&c, &count);
        assert_eq!(&out.to_vec::<i64>(&c)[..k], &want[..]);
    }
    if supports(&c, DType::F16) {
        let data: Vec<f16> = (0..n).map(|i| f16::from_f32(i as f32 * 0.5)).collect();
        let fl: Vec<f16> = f.iter().map(|&x| f16::from_f32(x as f32)).collect();
        let (out, count) = cubeprim::select(
            &c,
            &upload(&c, &data, &[n]),
            &upload(&c, &fl, &[n]),
            n,
            &mut ws,
        )
        .unwrap();
        let want = cubeprim::cpu::select(&data, &fl);
        let k = cubeprim::read_count(&c, &count);
        assert_eq!(&out.to_vec::<f16>(&c)[..k], &want[..]);
    }
}

#[test]
fn select_pairs_and_partition() {
    let Some(c) = client() else { return };
    let mut rng = rng(3);
    let mut ws = workspace();
    for &n in &[1usize, 2049, 100_001] {
        let keys: Vec<u32> = (0..n as u32).collect();
        let values: Vec<f64> = (0..n).map(|i| i as f64 * 0.25).collect();
        let f = flags(&mut rng, n, 3, 0.5);
        let (k_, v_, count) = cubeprim::select_pairs(
            &c,
            &upload(&c, &keys, &[n]),
            &upload(&c, &values, &[n]),
            &upload(&c, &f, &[n]),
            n,
            &mut ws,
        )
        .unwrap();
        let k = cubeprim::read_count(&c, &count);
        assert_eq!(
            &k_.to_vec::<u32>(&c)[..k],
            &cubeprim::cpu::select(&keys, &f)[..]
        );
        if supports(&c, DType::F64) {
            assert_eq!(
                &v_.to_vec::<f64>(&c)[..k],
                &cubeprim::cpu::select(&values, &f)[..]
            );
        }
        let (out, count) = cubeprim::partition(
            &c,
            &upload(&c, &keys, &[n]),
            &upload(&c, &f, &[n]),
            n,
            &mut ws,
        )
        .unwrap();
        let (want, wk) = cubeprim::cpu::partition(&keys, &f);
        assert_eq!(cubeprim::read_count(&c, &count), wk);
        assert_eq!(out.to_vec::<u32>(&c), want, "partition n={n}");
    }
}

/// `select_pairs` of `keys` and `values` under byte flags `f`, against the CPU.
fn check_byte_flag_pairs<K: Element, V: Element>(
    c: &Client,
    ws: &mut Workspace<R>,
    keys: &[K],
    values: &[V],
    f: &[u8],
) {
    let n = keys.len();
    let (k_, v_, count) = cubeprim::select_pairs(
        c,
        &upload(c, keys, &[n]),
        &upload(c, values, &[n]),
        &upload(c, f, &[n]),
        n,
        ws,
    )
    .unwrap_or_else(|e| panic!("{} pairs, {n} elements: {e}", K::DTYPE));
    let k = cubeprim::read_count(c, &count);
    assert_eq!(k_.to_vec::<K>(c)[..k], cubeprim::cpu::select(keys, f)[..]);
    assert_eq!(v_.to_vec::<V>(c)[..k], cubeprim::cpu::select(values, f)[..]);
}

/// Byte (u8) flags are read four to a word, so a unit stages at least four vectors; wide keys
/// and values at a capacity that allows 16-byte vectors once overflowed 32 KiB of shared
/// memory (lavapipe, Metal) and answered `Unsupported` instead of narrowing the vectors.
#[test]
fn select_pairs_with_byte_flags_fit_small_shared_memory() {
    let Some(c) = client() else { return };
    let mut rng = rng(31);
    let mut ws = workspace();
    for &n in &[4096usize, 4100, 65536] {
        let f: Vec<u8> = (0..n).map(|_| u8::from(rng.random_bool(0.4))).collect();
        let keys: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let values: Vec<u32> = (0..n as u32).collect();
        check_byte_flag_pairs(&c, &mut ws, &keys, &values, &f);
        if supports(&c, DType::U64) {
            let keys: Vec<u64> = keys.iter().map(|&x| u64::from(x) << 20).collect();
            let values: Vec<u64> = values.iter().map(|&x| u64::from(x) + (1 << 40)).collect();
            check_byte_flag_pairs(&c, &mut ws, &keys, &values, &f);
        }
    }
}

#[test]
fn nonzero_and_masked_select() {
    let Some(c) = client() else { return };
    let mut rng = rng(4);
    let mut ws = workspace();
    for shape in [vec![7usize], vec![3, 5, 7], vec![40, 1, 300], vec![2, 3000]] {
        let n: usize = shape.iter().product();
        let x = flags(&mut rng, n, 3, 0.3);
        let got = cubeprim::nonzero(&c, &upload(&c, &x, &shape), &mut ws).unwrap();
        let want = cubeprim::cpu::nonzero(&x, &shape).unwrap();
        assert_eq!(got.shape, vec![want.len() / shape.len(), shape.len()]);
        let got: Vec<i64> = if got.dtype == DType::I64 {
            got.to_vec::<i64>(&c)
        } else {
            got.to_vec::<i32>(&c).into_iter().map(i64::from).collect()
        };
        assert_eq!(got, want, "nonzero {shape:?}");

        let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let got = cubeprim::masked_select(
            &c,
            &upload(&c, &data, &shape),
            &upload(&c, &x, &shape),
            &mut ws,
        )
        .unwrap();
        assert_eq!(got.to_vec::<f32>(&c), cubeprim::cpu::select(&data, &x));
    }
}

#[test]
fn device_length_selects_a_prefix() {
    let Some(c) = client() else { return };
    let mut rng = rng(5);
    let mut ws = workspace();
    let cap = 50_000;
    let f = flags(&mut rng, cap, 3, 0.5);
    select_device_prefixes(&c, &mut ws, &f, &[0, 1, 2049, 33_333, 50_000]);
}

/// Selects by the first `len` of `f` for each `len` (a count on the device), against the CPU.
fn select_device_prefixes<F: cubeprim::Element>(
    c: &Client,
    ws: &mut Workspace<R>,
    f: &[F],
    lens: &[u32],
) {
    let cap = f.len();
    let data: Vec<u32> = (0..cap as u32).collect();
    for &len in lens {
        let count_in = upload(c, &[len], &[1]);
        let (out, count) = cubeprim::select(
            c,
            &upload(c, &data, &[cap]),
            &upload(c, f, &[cap]),
            Len::Device {
                count: &count_in,
                capacity: cap,
            },
            ws,
        )
        .unwrap();
        let l = len as usize;
        let want = cubeprim::cpu::select(&data[..l], &f[..l]);
        let k = cubeprim::read_count(c, &count);
        assert_eq!(k, want.len(), "len {len}");
        assert_eq!(&out.to_vec::<u32>(c)[..k], &want[..]);
    }
}

#[test]
fn bad_inputs_are_errors() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let d = upload(&c, &[1.0f32, 2.0, 3.0, 4.0], &[4]);
    let f3 = upload(&c, &[1u32, 0, 1], &[3]);
    assert!(matches!(
        cubeprim::select(&c, &d, &f3, 4, &mut ws),
        Err(Error::LengthMismatch { .. })
    ));
    let f = upload(&c, &[1u32, 0, 1, 1], &[4]);
    let small = DeviceTensor::empty(&c, &[2], DType::F32);
    let count = cubeprim::new_count(&c);
    assert!(matches!(
        cubeprim::select_into(&c, &d, &f, 4, &small, &count, &mut ws),
        Err(Error::OutputTooSmall { needed: 4, got: 2 })
    ));
    let wrong = DeviceTensor::empty(&c, &[4], DType::I32);
    assert!(matches!(
        cubeprim::select_into(&c, &d, &f, 4, &wrong, &count, &mut ws),
        Err(Error::UnsupportedDType { .. })
    ));
    let m = upload(&c, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])
        .transpose(0, 1)
        .unwrap();
    assert!(matches!(
        cubeprim::masked_select(&c, &m, &upload(&c, &[1u32, 0, 1, 1], &[2, 2]), &mut ws),
        Err(Error::Unsupported(_))
    ));
    assert!(matches!(
        cubeprim::masked_select(&c, &d, &upload(&c, &[1u32, 0], &[2]), &mut ws),
        Err(Error::ShapeMismatch { .. })
    ));
    let bad_count = upload(&c, &[1i32], &[1]);
    assert!(matches!(
        cubeprim::select(
            &c,
            &d,
            &f,
            Len::Device {
                count: &bad_count,
                capacity: 4
            },
            &mut ws
        ),
        Err(Error::UnsupportedDType { .. })
    ));
    let ok_count = upload(&c, &[2u32], &[1]);
    assert!(matches!(
        cubeprim::select(
            &c,
            &d,
            &f,
            Len::Device {
                count: &ok_count,
                capacity: 9
            },
            &mut ws
        ),
        Err(Error::LengthMismatch { .. })
    ));
    if !supports(&c, DType::BF16) {
        let b = upload(&c, &[half::bf16::ONE; 4], &[4]);
        assert!(matches!(
            cubeprim::select(&c, &b, &f, 4, &mut ws),
            Err(Error::UnsupportedDType { .. })
        ));
    }
    let mut tiny = Workspace::with_capacity(&c, 8);
    assert!(matches!(
        cubeprim::select(&c, &d, &f, 4, &mut tiny),
        Err(Error::ScratchTooSmall { .. })
    ));
}

/// Byte flags (u8 / bool masks, read four to a word): select, masked_select, nonzero, partition
/// and device lengths against the CPU on the same flags as f32; lengths that are not multiples
/// of 4 or of the tile; any non-zero byte is set.
#[test]
fn byte_flags() {
    let Some(c) = client() else { return };
    let mut rng = rng(6);
    let mut ws = workspace();
    let bytes = |rng: &mut rand::rngs::StdRng, n: usize, p: f64| -> Vec<u8> {
        (0..n)
            .map(|_| {
                if rng.random_bool(p) {
                    rng.random_range(1..=255u8)
                } else {
                    0
                }
            })
            .collect()
    };
    let as_f32 = |b: &[u8]| b.iter().map(|&x| x as f32).collect::<Vec<f32>>();
    for &n in SIZES.iter().chain(&[3usize, 6, 4097, 1 << 20]) {
        for p in [0.0, 0.001, 0.5, 0.999, 1.0] {
            let f = bytes(&mut rng, n, p);
            let ff = as_f32(&f);
            let data: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 7.0).collect();
            let fd = upload(&c, &f, &[n]);
            let dd = upload(&c, &data, &[n]);
            let want = cubeprim::cpu::select(&data, &ff);
            let (out, count) = cubeprim::select(&c, &dd, &fd, n, &mut ws).unwrap();
            let k = cubeprim::read_count(&c, &count);
            assert_eq!(k, want.len(), "select count n={n} p={p}");
            assert_eq!(&out.to_vec::<f32>(&c)[..k], &want[..], "select n={n} p={p}");
            let got = cubeprim::masked_select(&c, &dd, &fd, &mut ws).unwrap();
            assert_eq!(got.to_vec::<f32>(&c), want, "masked_select n={n} p={p}");
            let (parted, count) = cubeprim::partition(&c, &dd, &fd, n, &mut ws).unwrap();
            let mut want_p = want.clone();
            want_p.extend(
                data.iter()
                    .zip(&f)
                    .filter(|(_, &b)| b == 0)
                    .map(|(&d, _)| d),
            );
            assert_eq!(cubeprim::read_count(&c, &count), want.len());
            assert_eq!(parted.to_vec::<f32>(&c), want_p, "partition n={n} p={p}");
        }
    }
    for shape in [vec![7usize], vec![3, 5, 7], vec![40, 1, 301], vec![2, 3001]] {
        let n: usize = shape.iter().product();
        let f = bytes(&mut rng, n, 0.3);
        let got = cubeprim::nonzero(&c, &upload(&c, &f, &shape), &mut ws).unwrap();
        let want = cubeprim::cpu::nonzero(&as_f32(&f), &shape).unwrap();
        let got: Vec<i64> = if got.dtype == DType::I64 {
            got.to_vec::<i64>(&c)
        } else {
            got.to_vec::<i32>(&c).into_iter().map(i64::from).collect()
        };
        assert_eq!(got, want, "nonzero {shape:?}");
    }
    let f = bytes(&mut rng, 50_001, 0.5);
    select_device_prefixes(&c, &mut ws, &f, &[0, 1, 2049, 33_333, 50_001]);
}

// The tests above with plane operations forced (`PLANE_OPS`): the kernels' plane variants,
// which wgpu does not report on CPU adapters although lavapipe runs them.
crate::tuning_variants!(plane_ops_variants: [PLANE_OPS] =>
    select_matches_cpu_across_patterns_and_sizes,
    select_large_and_dtypes,
    select_pairs_and_partition,
    select_pairs_with_byte_flags_fit_small_shared_memory,
    nonzero_and_masked_select,
    device_length_selects_a_prefix,
    bad_inputs_are_errors,
    byte_flags,
);

// The tests above with tile ids from the cube position and the shared-memory look-back
// (`POSITION`: CUDA's order, carried on lavapipe by the look-back's fallback).
crate::tuning_variants!(position_variants: [POSITION] =>
    select_matches_cpu_across_patterns_and_sizes,
    select_large_and_dtypes,
    select_pairs_and_partition,
    select_pairs_with_byte_flags_fit_small_shared_memory,
    nonzero_and_masked_select,
    device_length_selects_a_prefix,
    bad_inputs_are_errors,
    byte_flags,
);
