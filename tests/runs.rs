//! Run-length ops on the device (wgpu; lavapipe in CI) against `cubeprim::cpu`:
//! unique_consecutive (values, counts, inverse) and reduce_by_key (sum, max, min, prod) over
//! keys with one run, all distinct, long and short runs, NaN keys (each NaN its own run) and
//! `-0.0 == 0.0`; sizes around tile boundaries up to two million; device lengths; bad inputs.
//! Integers exactly; float sums within `1e-5 * (sum |x| + 1)` of the run, max / min exact.

use crate::common;

use common::*;
use cubeprim::tuning::Tuning;
use cubeprim::{DType, DeviceTensor, Error, Len, ScanOp, Workspace};
use rand::Rng;

/// Keys of `n`: kind 0 one run, 1 all distinct, 2 long runs, 3 short runs.
fn keys(rng: &mut rand::rngs::StdRng, n: usize, kind: usize) -> Vec<i32> {
    let mut k = 0i32;
    (0..n)
        .map(|i| {
            match kind {
                0 => {}
                1 => k = i as i32,
                2 => {
                    if rng.random_bool(0.0005) {
                        k += 1
                    }
                }
                _ => {
                    if rng.random_bool(0.4) {
                        k += rng.random_range(1..3)
                    }
                }
            }
            k
        })
        .collect()
}

fn idx(c: &Client, t: &cubeprim::DeviceTensor<R>) -> Vec<i64> {
    if t.dtype == DType::I64 {
        t.to_vec::<i64>(c)
    } else {
        t.to_vec::<i32>(c).into_iter().map(i64::from).collect()
    }
}

#[test]
fn unique_consecutive_matches_cpu() {
    let Some(c) = client() else { return };
    let mut rng = rng(11);
    let mut ws = workspace();
    for &n in &[0usize, 1, 7, 2047, 2048, 2049, 8193, 100_001, 2_000_000] {
        for kind in 0..4 {
            if n == 2_000_000 && kind != 3 {
                continue;
            }
            let k = keys(&mut rng, n, kind);
            let kd = upload(&c, &k, &[n]);
            let u = cubeprim::unique_consecutive_sized(&c, &kd, true, true, &mut ws).unwrap();
            let (wu, wc, wi) = cubeprim::cpu::unique_consecutive(&k);
            assert_eq!(u.values.to_vec::<i32>(&c), wu, "values n={n} kind={kind}");
            assert_eq!(
                idx(&c, u.counts.as_ref().unwrap()),
                wc,
                "counts n={n} kind={kind}"
            );
            assert_eq!(
                idx(&c, u.inverse.as_ref().unwrap()),
                wi,
                "inverse n={n} kind={kind}"
            );
            // Without inverse the kernel finds runs from the head mask alone: counts, and
            // the values alone.
            let u = cubeprim::unique_consecutive_sized(&c, &kd, false, true, &mut ws).unwrap();
            assert_eq!(
                u.values.to_vec::<i32>(&c),
                wu,
                "values n={n} kind={kind}, counts"
            );
            assert_eq!(
                idx(&c, u.counts.as_ref().unwrap()),
                wc,
                "counts only n={n} kind={kind}"
            );
            let u = cubeprim::unique_consecutive_sized(&c, &kd, false, false, &mut ws).unwrap();
            assert_eq!(
                u.values.to_vec::<i32>(&c),
                wu,
                "values only n={n} kind={kind}"
            );
        }
    }
}

#[test]
fn nan_keys_are_each_their_own_run() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let k = [
        1.0f32,
        1.0,
        f32::NAN,
        f32::NAN,
        2.0,
        -0.0,
        0.0,
        f32::NAN,
        3.0,
        3.0,
    ];
    let n = k.len();
    let u = cubeprim::unique_consecutive_sized(&c, &upload(&c, &k, &[n]), false, true, &mut ws)
        .unwrap();
    let got = u.values.to_vec::<f32>(&c);
    let (wu, wc, _) = cubeprim::cpu::unique_consecutive(&k);
    assert_eq!(got.len(), wu.len());
    assert_eq!(wu.len(), 7);
    for (a, b) in got.iter().zip(&wu) {
        assert_eq!(a.to_bits() & 0x7fff_ffff, b.to_bits() & 0x7fff_ffff);
    }
    assert_eq!(idx(&c, u.counts.as_ref().unwrap()), wc);
}

#[test]
fn reduce_by_key_matches_cpu() {
    let Some(c) = client() else { return };
    let mut rng = rng(12);
    let mut ws = workspace();
    for &n in &[1usize, 2049, 8193, 300_001] {
        for kind in 0..4 {
            let k = keys(&mut rng, n, kind);
            let vf: Vec<f32> = (0..n).map(|_| rng.random_range(-4.0..4.0)).collect();
            let vi: Vec<i32> = (0..n).map(|_| rng.random()).collect();
            for op in [ScanOp::Sum, ScanOp::Max, ScanOp::Min] {
                let (ok, ov, count) = cubeprim::reduce_by_key(
                    &c,
                    &upload(&c, &k, &[n]),
                    &upload(&c, &vf, &[n]),
                    n,
                    op,
                    &mut ws,
                )
                .unwrap();
                let r = cubeprim::read_count(&c, &count);
                let (wk, wv) = cubeprim::cpu::reduce_by_key(&k, &vf, op);
                assert_eq!(r, wk.len(), "count n={n} kind={kind} {op:?}");
                assert_eq!(&ok.to_vec::<i32>(&c)[..r], &wk[..]);
                let got = ov.to_vec::<f32>(&c);
                // Tolerance: sum of |x| over each run.
                let (_, abs) = cubeprim::cpu::reduce_by_key(
                    &k,
                    &vf.iter().map(|x| x.abs()).collect::<Vec<_>>(),
                    ScanOp::Sum,
                );
                for j in 0..r {
                    let tol = if op == ScanOp::Sum {
                        1e-5 * (abs[j] + 1.0)
                    } else {
                        0.0
                    };
                    assert!(
                        (got[j] - wv[j]).abs() <= tol,
                        "n={n} kind={kind} {op:?} run {j}: {} vs {}",
                        got[j],
                        wv[j]
                    );
                }
            }
            let (_, ov, count) = cubeprim::reduce_by_key(
                &c,
                &upload(&c, &k, &[n]),
                &upload(&c, &vi, &[n]),
                n,
                ScanOp::Sum,
                &mut ws,
            )
            .unwrap();
            let r = cubeprim::read_count(&c, &count);
            let (_, wv) = cubeprim::cpu::reduce_by_key(&k, &vi, ScanOp::Sum);
            assert_eq!(
                &ov.to_vec::<i32>(&c)[..r],
                &wv[..],
                "i32 sum n={n} kind={kind}"
            );
        }
    }
}

/// unique_consecutive with counts of the first `len` of `k` (uploaded as `kd`), the length
/// given as a device count with the whole of `k` as capacity: runs, values and counts.
fn counts_with_device_len(
    c: &Client,
    kd: &cubeprim::DeviceTensor<R>,
    k: &[i32],
    len: u32,
    ws: &mut Workspace<R>,
    what: &str,
) {
    let cnt = upload(c, &[len], &[1]);
    let dev_len = Len::Device {
        count: &cnt,
        capacity: k.len(),
    };
    let u = cubeprim::unique_consecutive(c, kd, dev_len, false, true, ws).unwrap();
    let (wu, wc, _) = cubeprim::cpu::unique_consecutive(&k[..len as usize]);
    let r = cubeprim::read_count(c, &u.count);
    assert_eq!(r, wu.len(), "runs, {what}, device length {len}");
    assert_eq!(
        &u.values.to_vec::<i32>(c)[..r],
        &wu[..],
        "values, {what}, len {len}"
    );
    assert_eq!(
        &idx(c, u.counts.as_ref().unwrap())[..r],
        &wc[..],
        "counts, {what}, len {len}"
    );
}

#[test]
fn device_length_and_errors() {
    let Some(c) = client() else { return };
    let mut rng = rng(13);
    let mut ws = workspace();
    let cap = 20_000;
    let k = keys(&mut rng, cap, 3);
    let v: Vec<u32> = (0..cap as u32).collect();
    for len in [0u32, 1, 4097, 20_000] {
        let cnt = upload(&c, &[len], &[1]);
        let (ok, ov, count) = cubeprim::reduce_by_key(
            &c,
            &upload(&c, &k, &[cap]),
            &upload(&c, &v, &[cap]),
            Len::Device {
                count: &cnt,
                capacity: cap,
            },
            ScanOp::Sum,
            &mut ws,
        )
        .unwrap();
        let l = len as usize;
        let (wk, wv) = cubeprim::cpu::reduce_by_key(&k[..l], &v[..l], ScanOp::Sum);
        let r = cubeprim::read_count(&c, &count);
        assert_eq!(r, wk.len(), "len {len}");
        assert_eq!(&ok.to_vec::<i32>(&c)[..r], &wk[..]);
        assert_eq!(&ov.to_vec::<u32>(&c)[..r], &wv[..]);
    }
    let kk = upload(&c, &k, &[cap]);
    for len in [0u32, 1, 4097, 20_000] {
        counts_with_device_len(&c, &kk, &k, len, &mut ws, "unique_consecutive");
    }
    let short = upload(&c, &v[..10], &[10]);
    assert!(matches!(
        cubeprim::reduce_by_key(&c, &kk, &short, cap, ScanOp::Sum, &mut ws),
        Err(Error::LengthMismatch { .. })
    ));
    let small = cubeprim::DeviceTensor::empty(&c, &[10], DType::I32);
    let sv = cubeprim::DeviceTensor::empty(&c, &[cap], DType::U32);
    let count = cubeprim::new_count(&c);
    assert!(matches!(
        cubeprim::reduce_by_key_into(
            &c,
            &kk,
            &upload(&c, &v, &[cap]),
            cap,
            ScanOp::Sum,
            &small,
            &sv,
            &count,
            &mut ws
        ),
        Err(Error::OutputTooSmall { .. })
    ));
}

/// Counts of runs that span hundreds of tiles: the run lengths that cross tiles are written
/// after the single pass, by one unit per tile that finds the last head before its tile
/// among the earlier tiles (cubes of 256 tiles walk back over the cubes before them).
#[test]
fn counts_of_runs_across_many_tiles() {
    let Some(c) = client() else { return };
    let mut rng = rng(17);
    let mut ws = workspace();
    let n = 3_000_000usize;
    let patterns: [Vec<i32>; 4] = [
        vec![5; n],
        (0..n)
            .map(|i| (i >= 10) as i32 + (i >= n - 10) as i32)
            .collect(),
        (0..n).map(|i| (i >= 1_600_000) as i32).collect(),
        keys(&mut rng, n, 2),
    ];
    for (p, k) in patterns.iter().enumerate() {
        let kd = upload(&c, k, &[n]);
        let (wu, wc, _) = cubeprim::cpu::unique_consecutive(k);
        let u = cubeprim::unique_consecutive_sized(&c, &kd, false, true, &mut ws).unwrap();
        assert_eq!(u.values.to_vec::<i32>(&c), wu, "values, pattern {p}");
        assert_eq!(
            idx(&c, u.counts.as_ref().unwrap()),
            wc,
            "counts, pattern {p}"
        );
        // The same keys with a device length that ends inside the long run.
        counts_with_device_len(&c, &kd, k, 2_500_001, &mut ws, &format!("pattern {p}"));
    }
}

/// A workspace of `runs_workspace_bytes` serves every unique_consecutive and reduce_by_key
/// call of that capacity (counts need the per-tile records of the fix-up too); a tiny one is
/// an error, not a panic.
#[test]
fn workspace_of_the_queried_size() {
    let Some(c) = client() else { return };
    let mut rng = rng(23);
    for &n in &[1usize, 8193, 16_384, 300_001] {
        let k = keys(&mut rng, n, 3);
        let kd = upload(&c, &k, &[n]);
        let (wu, wc, wi) = cubeprim::cpu::unique_consecutive(&k);
        let bytes = cubeprim::runs_workspace_bytes(&c, n, DType::I32, None).unwrap();
        let mut ws = Workspace::with_capacity(&c, bytes);
        for (inv, cnt) in [(false, true), (true, true), (false, false), (true, false)] {
            let u = cubeprim::unique_consecutive_sized(&c, &kd, inv, cnt, &mut ws).unwrap();
            assert_eq!(
                u.values.to_vec::<i32>(&c),
                wu,
                "n={n} inverse={inv} counts={cnt}"
            );
            if cnt {
                assert_eq!(idx(&c, u.counts.as_ref().unwrap()), wc, "n={n}");
            }
            if inv {
                assert_eq!(idx(&c, u.inverse.as_ref().unwrap()), wi, "n={n}");
            }
        }
        let v: Vec<u32> = (0..n as u32).collect();
        let bytes = cubeprim::runs_workspace_bytes(&c, n, DType::I32, Some(DType::U32)).unwrap();
        let mut ws = Workspace::with_capacity(&c, bytes);
        let (_, _, count) =
            cubeprim::reduce_by_key(&c, &kd, &upload(&c, &v, &[n]), n, ScanOp::Sum, &mut ws)
                .unwrap();
        assert_eq!(cubeprim::read_count(&c, &count), wu.len(), "n={n}");
        // f32 values, summed into caller-owned outputs.
        let vf: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let bytes = cubeprim::runs_workspace_bytes(&c, n, DType::I32, Some(DType::F32)).unwrap();
        let mut ws = Workspace::with_capacity(&c, bytes);
        let (ok, ov, oc) = (
            DeviceTensor::<R>::empty(&c, &[n], DType::I32),
            DeviceTensor::<R>::empty(&c, &[n], DType::F32),
            cubeprim::new_count(&c),
        );
        let vd = upload(&c, &vf, &[n]);
        cubeprim::reduce_by_key_into(&c, &kd, &vd, n, ScanOp::Sum, &ok, &ov, &oc, &mut ws)
            .unwrap_or_else(|e| panic!("n={n}, {bytes} bytes: {e:?}"));
        assert_eq!(cubeprim::read_count(&c, &oc), wu.len(), "n={n}");
        let mut tiny = Workspace::with_capacity(&c, 8);
        assert!(matches!(
            cubeprim::unique_consecutive(&c, &kd, n, false, true, &mut tiny),
            Err(Error::ScratchTooSmall { .. })
        ));
    }
}

/// Counts of keys that are not 4 bytes wide (their lengths are staged beside the keys instead
/// of in their place): f16, bf16, i64, u64 and f64 where the device has them.
#[test]
fn counts_of_narrow_and_wide_keys() {
    let Some(c) = client() else { return };
    let mut rng = rng(19);
    let mut ws = workspace();
    fn check<E: cubeprim::Element + PartialEq>(
        c: &Client,
        k: &[E],
        ws: &mut Workspace<R>,
        what: &str,
    ) {
        let n = k.len();
        let kd = upload(c, k, &[n]);
        let (wu, wc, _) = cubeprim::cpu::unique_consecutive(k);
        let u = cubeprim::unique_consecutive_sized(c, &kd, false, true, ws).unwrap();
        assert_eq!(u.values.to_vec::<E>(c), wu, "values {what} n={n}");
        assert_eq!(
            idx(c, u.counts.as_ref().unwrap()),
            wc,
            "counts {what} n={n}"
        );
    }
    let mut tested = 0;
    for &n in &[1usize, 4097, 100_001, 1_000_003] {
        let k = keys(&mut rng, n, if n > 100_001 { 2 } else { 3 });
        for dt in [DType::F16, DType::BF16, DType::I64, DType::U64, DType::F64] {
            if !cubeprim::supports_dtype(&c, dt) {
                continue;
            }
            tested += 1;
            match dt {
                DType::F16 => {
                    let v: Vec<half::f16> = k
                        .iter()
                        .map(|&x| half::f16::from_f32((x % 2000) as f32))
                        .collect();
                    check(&c, &v, &mut ws, "f16");
                }
                DType::BF16 => {
                    let v: Vec<half::bf16> = k
                        .iter()
                        .map(|&x| half::bf16::from_f32((x % 200) as f32))
                        .collect();
                    check(&c, &v, &mut ws, "bf16");
                }
                DType::I64 => {
                    let v: Vec<i64> = k.iter().map(|&x| x as i64 * 3_000_000_007).collect();
                    check(&c, &v, &mut ws, "i64");
                }
                DType::U64 => {
                    let v: Vec<u64> = k.iter().map(|&x| (x as u64) << 33).collect();
                    check(&c, &v, &mut ws, "u64");
                }
                _ => {
                    let v: Vec<f64> = k.iter().map(|&x| x as f64 * 0.5).collect();
                    check(&c, &v, &mut ws, "f64");
                }
            }
        }
    }
    eprintln!("{tested} key dtype / size cases besides the 4-byte ones");
}

/// f32 keys of `n` whose run boundaries and NaNs sit on and around multiples of 1024 (the
/// staged tile is 1024, 2048 or 4096 elements on the devices the tests meet, 4096 to 8192 on
/// large GPUs): pattern 0 runs of 1024, 1023, 1025, 1, 3072, 2049, 4096, 8192 in turn; 1 all
/// distinct with NaN at every `1024 k - 1` and `1024 k`; 2 one run over every tile but a NaN
/// at 3072; 3 heads exactly at every `512 k`; 4 heads at every `1024 k + 1`, the others equal.
fn boundary_keys(n: usize, pattern: usize) -> Vec<f32> {
    let lens = [1024usize, 1023, 1025, 1, 3072, 2049, 4096, 8192];
    let mut out = Vec::with_capacity(n);
    let (mut key, mut left, mut li) = (0.0f32, lens[0], 0);
    for i in 0..n {
        let k = match pattern {
            0 => {
                if left == 0 {
                    li = (li + 1) % lens.len();
                    left = lens[li];
                    key += 1.0;
                }
                left -= 1;
                key
            }
            1 if i % 1024 == 1023 || (i % 1024 == 0 && i > 0) => f32::NAN,
            1 => i as f32,
            2 if i == 3072 => f32::NAN,
            2 => 7.0,
            3 => (i / 512) as f32,
            _ => (i.saturating_sub(1) / 1024) as f32,
        };
        out.push(k);
    }
    out
}

#[test]
fn runs_across_tile_boundaries() {
    let Some(c) = client() else { return };
    let mut ws = workspace();
    let same = |a: &[f32], b: &[f32]| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits())
    };
    for &n in &[
        1023usize, 1024, 1025, 4095, 4096, 4097, 8191, 8192, 8193, 40_960, 65_537,
    ] {
        for pattern in 0..5 {
            let k = boundary_keys(n, pattern);
            let kd = upload(&c, &k, &[n]);
            let u = cubeprim::unique_consecutive_sized(&c, &kd, true, true, &mut ws).unwrap();
            let (wu, wc, wi) = cubeprim::cpu::unique_consecutive(&k);
            let at = format!("n={n} pattern={pattern}");
            assert!(same(&u.values.to_vec::<f32>(&c), &wu), "values {at}");
            assert_eq!(idx(&c, u.counts.as_ref().unwrap()), wc, "counts {at}");
            assert_eq!(idx(&c, u.inverse.as_ref().unwrap()), wi, "inverse {at}");
            // Counts alone (the benchmarked call) and the inverse alone.
            let u = cubeprim::unique_consecutive_sized(&c, &kd, false, true, &mut ws).unwrap();
            assert_eq!(idx(&c, u.counts.as_ref().unwrap()), wc, "counts only {at}");
            let u = cubeprim::unique_consecutive_sized(&c, &kd, true, false, &mut ws).unwrap();
            assert!(
                same(&u.values.to_vec::<f32>(&c), &wu),
                "values, inverse {at}"
            );
            assert_eq!(
                idx(&c, u.inverse.as_ref().unwrap()),
                wi,
                "inverse only {at}"
            );
            // reduce_by_key: exact integer sums and f32 maxima.
            let vi: Vec<u32> = (0..n as u32)
                .map(|i| i.wrapping_mul(2_654_435_761))
                .collect();
            let vf: Vec<f32> = (0..n).map(|i| ((i * 37) % 1001) as f32 - 500.0).collect();
            let (ok, ov, count) =
                cubeprim::reduce_by_key(&c, &kd, &upload(&c, &vi, &[n]), n, ScanOp::Sum, &mut ws)
                    .unwrap();
            let r = cubeprim::read_count(&c, &count);
            let (wk, wv) = cubeprim::cpu::reduce_by_key(&k, &vi, ScanOp::Sum);
            assert_eq!(r, wk.len(), "count {at}");
            assert!(same(&ok.to_vec::<f32>(&c)[..r], &wk), "keys {at}");
            assert_eq!(&ov.to_vec::<u32>(&c)[..r], &wv[..], "u32 sums {at}");
            let (_, ov, _) =
                cubeprim::reduce_by_key(&c, &kd, &upload(&c, &vf, &[n]), n, ScanOp::Max, &mut ws)
                    .unwrap();
            let (_, wv) = cubeprim::cpu::reduce_by_key(&k, &vf, ScanOp::Max);
            assert!(same(&ov.to_vec::<f32>(&c)[..r], &wv), "f32 max {at}");
        }
    }
}

// The tests above with plane operations forced (`PLANE_OPS`): the kernels' plane variants,
// which wgpu does not report on CPU adapters although lavapipe runs them.
crate::tuning_variants!(plane_ops_variants: [PLANE_OPS] =>
    unique_consecutive_matches_cpu,
    nan_keys_are_each_their_own_run,
    reduce_by_key_matches_cpu,
    device_length_and_errors,
    counts_of_runs_across_many_tiles,
    workspace_of_the_queried_size,
    counts_of_narrow_and_wide_keys,
    runs_across_tile_boundaries,
);

// The tests above with tile ids from the cube position and the shared-memory look-back
// (`POSITION`: CUDA's order, carried on lavapipe by the look-back's fallback).
crate::tuning_variants!(position_variants: [POSITION] =>
    unique_consecutive_matches_cpu,
    nan_keys_are_each_their_own_run,
    reduce_by_key_matches_cpu,
    device_length_and_errors,
    counts_of_runs_across_many_tiles,
    workspace_of_the_queried_size,
    counts_of_narrow_and_wide_keys,
    runs_across_tile_boundaries,
);

/// The unstaged run-length tile: each unit loads its vectors from global memory, looks back,
/// then writes its outputs in place. The planner chooses it where even one staged vector per
/// unit does not fit the device's shared memory (on lavapipe's 32 KiB, the 512-unit tiles of
/// the ops with folds and an inverse); this override takes it for every op.
const UNSTAGED: Tuning = Tuning {
    runs_vectors_per_unit: Some(0),
    ..Tuning::DEFAULT
};

/// The smallest staged tile: 128 units of one vector.
const ONE_VECTOR: Tuning = Tuning {
    runs_units: Some(128),
    runs_vectors_per_unit: Some(1),
    ..Tuning::DEFAULT
};

/// The two tunings above plan what they name on the test device, for every run-length op.
#[test]
fn the_tile_variants_plan_what_they_name() {
    use cubeprim::runs::{run_length_tile, PassLimits};
    use cubeprim::tuning::Policy;
    use cubeprim_kernels::device::run_length::RunConfig;
    let Some(c) = client() else { return };
    for ones in [false, true] {
        for inverse in [false, true] {
            for write_values in [false, true] {
                let run = RunConfig {
                    ones,
                    inverse,
                    write_values,
                };
                for (tuning, staged) in [(UNSTAGED, false), (ONE_VECTOR, true)] {
                    let limits = PassLimits::from_policy(&Policy::of(&c, &tuning));
                    let values = (!ones).then_some(4);
                    let plan = run_length_tile(limits, &tuning, 1 << 20, 4, values, 4, run);
                    assert_eq!(plan.3, staged, "{run:?} under {tuning:?}: {plan:?}");
                    if staged {
                        assert_eq!((plan.1, plan.2), (128, 1), "{run:?}: {plan:?}");
                    }
                }
            }
        }
    }
}

crate::tuning_variants!(unstaged_variants: [UNSTAGED] =>
    unique_consecutive_matches_cpu,
    nan_keys_are_each_their_own_run,
    reduce_by_key_matches_cpu,
    counts_of_narrow_and_wide_keys,
    runs_across_tile_boundaries,
);

crate::tuning_variants!(one_vector_variants: [ONE_VECTOR] => runs_across_tile_boundaries);
