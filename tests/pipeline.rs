//! A chained pipeline with zero host reads between the steps: select → scan → reduce_by_key →
//! reduce, each step taking the previous step's device count as its length (`Len::Device`).
//! The only reads are at the end, to compare with the CPU.

use crate::common;

use common::*;
use cubeprim::{DType, DeviceTensor, Len, ScanOp, ScanOptions};
use rand::Rng;

#[test]
fn select_scan_reduce_by_key_reduce_without_host_sync() {
    let Some(c) = client() else { return };
    let mut rng = rng(31);
    let mut ws = workspace();
    let n = 300_000;
    let keys: Vec<u32> = {
        let mut k = 0u32;
        (0..n)
            .map(|_| {
                if rng.random_bool(0.01) {
                    k += 1
                }
                k
            })
            .collect()
    };
    let values: Vec<u32> = (0..n).map(|_| rng.random_range(0..100)).collect();
    let flags: Vec<u32> = (0..n).map(|_| rng.random_range(0..2)).collect();
    let (k_d, v_d, f_d) = (
        upload(&c, &keys, &[n]),
        upload(&c, &values, &[n]),
        upload(&c, &flags, &[n]),
    );

    // 1. select the flagged (key, value) pairs; the count stays on the device.
    let (sk, sv, selected) = cubeprim::select_pairs(&c, &k_d, &v_d, &f_d, n, &mut ws).unwrap();
    let len = Len::Device {
        count: &selected,
        capacity: n,
    };
    // 2. the running sum of the selected values (only the first `selected` elements).
    let running = DeviceTensor::empty(&c, &[n], DType::U32);
    let opts = ScanOptions::default();
    cubeprim::scan_len_into(&c, &sv, &running, None, len, ScanOp::Sum, opts, &mut ws).unwrap();
    // 3. runs of equal keys among them → (key, running sum at the run's end).
    let (rk, rv, runs) =
        cubeprim::reduce_by_key(&c, &sk, &running, len, ScanOp::Max, &mut ws).unwrap();
    // 4. the (wrapping) total of those.
    let total = DeviceTensor::empty(&c, &[1], DType::U32);
    cubeprim::reduce_len_into(
        &c,
        &rv,
        Len::Device {
            count: &runs,
            capacity: n,
        },
        ScanOp::Sum,
        &total,
        &mut ws,
    )
    .unwrap();

    // Only now read back.
    let wk = cubeprim::cpu::select(&keys, &flags);
    let wv = cubeprim::cpu::select(&values, &flags);
    let wrun = cubeprim::cpu::scan(&wv, &[wv.len()], 0, ScanOp::Sum, opts).unwrap();
    let (wrk, wrv) = cubeprim::cpu::reduce_by_key(&wk, &wrun, ScanOp::Max);
    let r = cubeprim::read_count(&c, &runs);
    assert_eq!(cubeprim::read_count(&c, &selected), wk.len());
    assert_eq!(&running.to_vec::<u32>(&c)[..wk.len()], &wrun[..]);
    assert_eq!(r, wrk.len());
    assert_eq!(&rk.to_vec::<u32>(&c)[..r], &wrk[..]);
    assert_eq!(&rv.to_vec::<u32>(&c)[..r], &wrv[..]);
    let want_total = wrv.iter().fold(0u32, |a, &b| a.wrapping_add(b));
    assert_eq!(total.to_vec::<u32>(&c)[0], want_total);
}

// The tests above with plane operations forced (`PLANE_OPS`): the kernels' plane variants,
// which wgpu does not report on CPU adapters although lavapipe runs them.
crate::tuning_variants!(plane_ops_variants: [PLANE_OPS] =>
    select_scan_reduce_by_key_reduce_without_host_sync,
);

// The tests above with tile ids from the cube position and the shared-memory look-back
// (`POSITION`: CUDA's order, carried on lavapipe by the look-back's fallback).
crate::tuning_variants!(position_variants: [POSITION] =>
    select_scan_reduce_by_key_reduce_without_host_sync,
);
