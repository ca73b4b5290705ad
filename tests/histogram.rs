//! Histogram (bincount) on the device (wgpu; lavapipe in CI) against `cubeprim::cpu`:
//! u32, i32 and i64 keys (64-bit keys past 2^32 too), sizes 0 to 2^20 + 3, 1 to 70 000 bins (the last past shared memory:
//! global atomics), keys out of range and negative (ignored), device lengths, a reused
//! output (zeroed by the call), bad inputs. Exact counts.

use crate::common;

use common::*;
use cubeprim::{DType, Error, Len, Workspace};
use rand::Rng;

/// Keys mostly in `[0, bins)`, about 1 in 8 outside it (negative or `>= bins`).
fn keys(rng: &mut rand::rngs::StdRng, n: usize, bins: usize) -> Vec<i32> {
    let b = bins as i32;
    (0..n)
        .map(|_| {
            if rng.random_bool(0.125) {
                if rng.random_bool(0.5) {
                    rng.random_range(-b - 5..0)
                } else {
                    rng.random_range(b..2 * b + 5)
                }
            } else {
                rng.random_range(0..b)
            }
        })
        .collect()
}

#[test]
fn histogram_matches_cpu() {
    let Some(c) = client() else { return };
    let mut rng = rng(21);
    let mut ws = Workspace::new();
    // Both paths run: up to 256 bins fit shared memory, 70 000 do not.
    let smem = c.properties().hardware.max_shared_memory_size;
    assert!((1024..70_000 * 4).contains(&smem), "shared memory {smem}");
    for &n in &[0usize, 1, 1000, (1 << 20) + 3] {
        for &bins in &[1usize, 7, 256, 5000, 70_000] {
            let k = keys(&mut rng, n, bins);
            let got = cubeprim::histogram(&c, &upload(&c, &k, &[n]), bins, n, &mut ws).unwrap();
            assert_eq!(got.shape, vec![bins]);
            let want = cubeprim::cpu::histogram(&k, bins);
            assert_eq!(got.to_vec::<u32>(&c), want, "i32 n={n} bins={bins}");
            let total: u32 = want.iter().sum();
            assert!(
                n < 100 || (total as usize) < n,
                "some keys are out of range"
            );

            let u: Vec<u32> = k.iter().map(|&x| x as u32).collect();
            let got = cubeprim::histogram(&c, &upload(&c, &u, &[n]), bins, n, &mut ws).unwrap();
            assert_eq!(
                got.to_vec::<u32>(&c),
                cubeprim::cpu::histogram(&u, bins),
                "u32 n={n} bins={bins}"
            );

            // 64-bit keys, read as two words: every fifth key moved past 2^32 (a low word in
            // range, a high word that is not zero: out of range).
            let w: Vec<i64> = k
                .iter()
                .enumerate()
                .map(|(i, &x)| x as i64 + if i % 5 == 0 { 1 << 32 } else { 0 })
                .collect();
            let got = cubeprim::histogram(&c, &upload(&c, &w, &[n]), bins, n, &mut ws).unwrap();
            assert_eq!(
                got.to_vec::<u32>(&c),
                cubeprim::cpu::histogram(&w, bins),
                "i64 n={n} bins={bins}"
            );
        }
    }
}

#[test]
fn histogram_counts_only_the_device_length_and_overwrites_out() {
    let Some(c) = client() else { return };
    let mut rng = rng(22);
    let mut ws = Workspace::new();
    let cap = 300_001;
    let k = keys(&mut rng, cap, 300);
    let x = upload(&c, &k, &[cap]);
    let out = upload(&c, &vec![7u32; 512], &[512]);
    for &(bins, len) in &[(300usize, 123_457u32), (300, 0), (40_000, 250_000)] {
        let cnt = upload(&c, &[len], &[1]);
        let out = if bins <= 512 {
            out.clone()
        } else {
            cubeprim::DeviceTensor::empty(&c, &[bins], DType::U32)
        };
        let dl = Len::Device {
            count: &cnt,
            capacity: cap,
        };
        cubeprim::histogram_into(&c, &x, bins, dl, &out, &mut ws).unwrap();
        let got = out.to_vec::<u32>(&c);
        let want = cubeprim::cpu::histogram(&k[..len as usize], bins);
        assert_eq!(&got[..bins], &want[..], "bins={bins} len={len}");
        if bins < 512 {
            assert!(got[bins..].iter().all(|&v| v == 7), "past bins untouched");
        }
    }
    // A device count above the capacity counts the capacity.
    let cnt = upload(&c, &[u32::MAX], &[1]);
    let dl = Len::Device {
        count: &cnt,
        capacity: 1000,
    };
    let got = cubeprim::histogram(&c, &x, 300, dl, &mut ws).unwrap();
    assert_eq!(
        got.to_vec::<u32>(&c),
        cubeprim::cpu::histogram(&k[..1000], 300)
    );
}

#[test]
fn histogram_rejects_bad_input() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let f = upload(&c, &[1.0f32, 2.0], &[2]);
    assert!(matches!(
        cubeprim::histogram(&c, &f, 4, 2, &mut ws),
        Err(Error::UnsupportedDType { .. })
    ));
    let k = upload(&c, &[1u32, 2, 3, 0, 1, 2], &[2, 3]);
    assert!(matches!(
        cubeprim::histogram(&c, &k, 4, 7, &mut ws),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        cubeprim::histogram(&c, &k.transpose(0, 1).unwrap(), 4, 6, &mut ws),
        Err(Error::Unsupported(_))
    ));
    let small = cubeprim::DeviceTensor::empty(&c, &[3], DType::U32);
    assert!(cubeprim::histogram_into(&c, &k, 4, 6, &small, &mut ws).is_err());
    let wrong = cubeprim::DeviceTensor::empty(&c, &[4], DType::I32);
    assert!(matches!(
        cubeprim::histogram_into(&c, &k, 4, 6, &wrong, &mut ws),
        Err(Error::UnsupportedDType { .. })
    ));
    // A contiguous 2-D tensor is counted whole; zero bins give an empty result.
    let got = cubeprim::histogram(&c, &k, 4, 6, &mut ws).unwrap();
    assert_eq!(got.to_vec::<u32>(&c), vec![1, 2, 2, 1]);
    let got = cubeprim::histogram(&c, &k, 0, 6, &mut ws).unwrap();
    assert_eq!(got.num_elements(), 0);
}
