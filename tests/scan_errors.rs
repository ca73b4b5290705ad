//! Bad input to the scans gets its typed `Error`, never a panic or a wrong result.
//!
//! Without a device the tests skip, except under `CI=true`, where they fail
//! (`common::client`).

use crate::common;

use common::*;
use cubeprim::scan::ScanTuning;
use cubeprim::{DType, DeviceTensor, Error, ScanAlgorithm, ScanOp, ScanOptions, Workspace};

fn small(c: &Client) -> DeviceTensor<R> {
    let data: Vec<f32> = (0..12).map(|i| i as f32).collect();
    upload(c, &data, &[3, 4])
}

/// The result without its value (tensors are not comparable).
fn unit<T>(r: cubeprim::Result<T>) -> Result<(), Error> {
    r.map(|_| ())
}

#[test]
fn axis_out_of_range() {
    let Some(c) = client() else { return };
    let x = small(&c);
    let mut ws = Workspace::new();
    let d = ScanOptions::default();
    for axis in [2isize, 3, 100, -3, -4, isize::MIN, isize::MAX] {
        let want = Err(Error::AxisOutOfRange { axis, rank: 2 });
        for op in OPS {
            assert_eq!(
                unit(cubeprim::scan(&c, &x, axis, op, d, &mut ws)),
                want,
                "scan {op:?} axis {axis}"
            );
        }
        for op in [ScanOp::Max, ScanOp::Min] {
            assert_eq!(
                unit(cubeprim::scan_with_indices(&c, &x, axis, op, d, &mut ws)),
                want,
                "scan_with_indices {op:?} axis {axis}"
            );
        }
        assert_eq!(
            unit(cubeprim::cumsum(&c, &x, axis)),
            want,
            "cumsum axis {axis}"
        );
        assert_eq!(
            unit(cubeprim::cummax_with_indices(&c, &x, axis)),
            want,
            "cummax_with_indices axis {axis}"
        );
        assert_eq!(
            unit(cubeprim::scan_workspace_bytes(
                &c,
                &[3, 4],
                axis,
                DType::F32,
                false,
                d
            )),
            want,
            "scan_workspace_bytes axis {axis}"
        );
    }
    // The valid range is -rank..rank.
    for axis in [-2isize, -1, 0, 1] {
        assert!(cubeprim::scan(&c, &x, axis, ScanOp::Sum, d, &mut ws).is_ok());
    }
    // A rank-0 tensor has no axis at all.
    let s = upload(&c, &[1.0f32], &[]);
    for axis in [0isize, -1] {
        assert_eq!(
            unit(cubeprim::scan(&c, &s, axis, ScanOp::Sum, d, &mut ws)),
            Err(Error::AxisOutOfRange { axis, rank: 0 }),
            "rank 0, axis {axis}"
        );
    }
}

#[test]
fn indices_for_sum_and_prod_are_unsupported() {
    let Some(c) = client() else { return };
    let x = small(&c);
    let mut ws = Workspace::new();
    for op in [ScanOp::Sum, ScanOp::Prod] {
        for opts in variants(ScanOptions::default()) {
            let got = cubeprim::scan_with_indices(&c, &x, 1, op, opts, &mut ws);
            assert!(
                matches!(got, Err(Error::Unsupported(_))),
                "indices for {op:?} {opts:?}: {:?}",
                got.map(|_| ())
            );
        }
    }
}

#[test]
fn reduce_then_scan_with_indices_is_unsupported() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let opts = ScanOptions::default().algorithm(ScanAlgorithm::ReduceThenScan);
    // Short rows and rows of several tiles alike.
    for n in [12usize, 10_000] {
        let data: Vec<f32> = (0..n).map(|i| (i % 5) as f32).collect();
        let x = upload(&c, &data, &[n]);
        for op in [ScanOp::Max, ScanOp::Min] {
            let got = cubeprim::scan_with_indices(&c, &x, 0, op, opts, &mut ws);
            assert!(
                matches!(got, Err(Error::Unsupported(_))),
                "reduce-then-scan {op:?} with indices, n = {n}: {:?}",
                got.map(|_| ())
            );
        }
        let got = cubeprim::scan_workspace_bytes(&c, &[n], 0, DType::F32, true, opts);
        assert!(
            matches!(got, Err(Error::Unsupported(_))),
            "scan_workspace_bytes of reduce-then-scan with indices, n = {n}: {got:?}"
        );
        // Without indices it is fine.
        assert!(cubeprim::scan(&c, &x, 0, ScanOp::Max, opts, &mut ws).is_ok());
    }
}

/// Every dtype the runtime lacks is `UnsupportedDType` (on lavapipe: bf16). Dtypes the runtime
/// has are exercised by `tests/scan.rs`.
#[test]
fn unsupported_dtypes() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let mut checked = Vec::new();
    for dtype in DType::ALL {
        if supports(&c, dtype) {
            continue;
        }
        // Any bytes will do: the dtype is refused before the data is read.
        let x = DeviceTensor::<R>::from_parts(
            c.create_from_slice(&[0u8; 64]),
            vec![2, 4],
            vec![4, 1],
            0,
            dtype,
        );
        for op in OPS {
            for opts in [
                ScanOptions::default(),
                ScanOptions::default().algorithm(ScanAlgorithm::ReduceThenScan),
            ] {
                let got = cubeprim::scan(&c, &x, 1, op, opts, &mut ws);
                assert!(
                    matches!(&got, Err(Error::UnsupportedDType { dtype: d, .. }) if *d == dtype),
                    "{dtype} {op:?} {opts:?}: {:?}",
                    got.map(|_| ())
                );
            }
        }
        for op in [ScanOp::Max, ScanOp::Min] {
            let got = cubeprim::scan_with_indices(&c, &x, 1, op, ScanOptions::default(), &mut ws);
            assert!(
                matches!(&got, Err(Error::UnsupportedDType { dtype: d, .. }) if *d == dtype),
                "{dtype} indexed {op:?}: {:?}",
                got.map(|_| ())
            );
        }
        checked.push(dtype);
    }
    eprintln!("unsupported dtypes checked: {checked:?}");
}

#[test]
fn scratch_too_small() {
    let Some(c) = client() else { return };
    let d = ScanOptions::default();
    for (n, indexed) in [(10_000usize, false), (1 << 20, false), (70_001, true)] {
        let data: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let x = upload(&c, &data, &[n]);
        let needed = cubeprim::scan_workspace_bytes(&c, &[n], 0, DType::F32, indexed, d).unwrap();
        assert!(
            needed > 0,
            "n = {n}: a multi-tile scan needs look-back state"
        );
        for available in [0, 4, needed / 2, needed - 4] {
            let mut ws = Workspace::with_capacity(&c, available);
            let got = if indexed {
                unit(cubeprim::scan_with_indices(
                    &c,
                    &x,
                    0,
                    ScanOp::Max,
                    d,
                    &mut ws,
                ))
            } else {
                unit(cubeprim::scan(&c, &x, 0, ScanOp::Sum, d, &mut ws))
            };
            assert_eq!(
                got,
                Err(Error::ScratchTooSmall {
                    needed,
                    available: ws.bytes()
                }),
                "n = {n}, indexed = {indexed}, capacity {available}"
            );
            assert!(ws.bytes() < needed);
        }
    }
    // Forcing the look-back on a short row needs state too.
    let data: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let short = upload(&c, &data, &[100]);
    let lb = d.algorithm(ScanAlgorithm::DecoupledLookback);
    let needed = cubeprim::scan_workspace_bytes(&c, &[100], 0, DType::F32, false, lb).unwrap();
    assert!(needed > 0, "the look-back always keeps state");
    let mut ws = Workspace::with_capacity(&c, 0);
    assert_eq!(
        unit(cubeprim::scan(&c, &short, 0, ScanOp::Sum, lb, &mut ws)),
        Err(Error::ScratchTooSmall {
            needed,
            available: 0
        }),
        "forced look-back on a short row"
    );
}

/// Indexed scans of 8-byte types over rows longer than one tile carry a 64-bit payload through
/// the look-back: they must run wherever the dtype is supported (values are checked by
/// `tests/scan.rs`).
#[test]
fn wide_indexed_long_rows() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    let n = 2 * cubeprim::scan::tile_len(1) + 1;
    for dtype in [DType::F64, DType::I64, DType::U64] {
        if !supports(&c, dtype) {
            continue;
        }
        let x = DeviceTensor::<R>::from_parts(
            c.create_from_slice(&vec![0u8; 8 * n]),
            vec![n],
            vec![1],
            0,
            dtype,
        );
        for op in [ScanOp::Max, ScanOp::Min] {
            let got = cubeprim::scan_with_indices(&c, &x, 0, op, ScanOptions::default(), &mut ws);
            assert!(
                got.is_ok(),
                "{dtype} indexed {op:?} of {n}: {:?}",
                got.map(|_| ())
            );
            let got = cubeprim::scan(&c, &x, 0, op, ScanOptions::default(), &mut ws);
            assert!(got.is_ok(), "{dtype} {op:?} of {n}: {:?}", got.map(|_| ()));
        }
    }
}

/// A tensor whose strides do not match its rank is refused.
#[test]
fn malformed_tensor() {
    let Some(c) = client() else { return };
    let x = small(&c);
    let bad = DeviceTensor::<R>::from_parts(x.handle.clone(), vec![3, 4], vec![4], 0, DType::F32);
    let got = cubeprim::scan(
        &c,
        &bad,
        1,
        ScanOp::Sum,
        ScanOptions::default(),
        &mut Workspace::new(),
    );
    assert!(
        matches!(got, Err(Error::ShapeMismatch { .. })),
        "strides of the wrong length: {:?}",
        got.map(|_| ())
    );
}

/// A tile shape (`ScanOptions::tuning`) whose shared memory exceeds the device's limit must be
/// refused with an error, not launched and answered with an unwritten output. (Where the device
/// has the room, the result must simply be right.)
#[test]
fn oversized_tile_is_refused() {
    let Some(c) = client() else { return };
    let n = 100_001;
    let data: Vec<f32> = (0..n).map(|i| (i % 3) as f32).collect();
    let x = upload(&c, &data, &[n]);
    let d = ScanOptions::default();
    let tuning = |threads, vectors_per_thread| ScanTuning {
        threads,
        vectors_per_thread,
        windows: 8,
        spins: 16,
        stage: true,
        async_copy: true,
    };
    // 256 × 64 f32 per tile: 64 KiB of rake buffer alone.
    let o = d.tuning(tuning(256, 64));
    match cubeprim::scan(&c, &x, 0, ScanOp::Sum, o, &mut Workspace::new()) {
        Err(_) => {}
        Ok(y) => {
            let want = cubeprim::cpu::scan(&data, &[n], 0, ScanOp::Sum, d).unwrap();
            let got = y.to_vec::<f32>(&c);
            let bad = (0..n).filter(|&i| got[i] != want[i]).count();
            assert_eq!(
                bad, 0,
                "tile 256 x 64 (f32 sum of {n}): Ok, but {bad} elements wrong"
            );
        }
    }
    // Indexed, 256 × 32.
    let o = d.tuning(tuning(256, 32));
    match cubeprim::scan_with_indices(&c, &x, 0, ScanOp::Max, o, &mut Workspace::new()) {
        Err(_) => {}
        Ok((y, _)) => {
            let want = cubeprim::cpu::scan(&data, &[n], 0, ScanOp::Max, d).unwrap();
            let got = y.to_vec::<f32>(&c);
            let bad = (0..n).filter(|&i| got[i] != want[i]).count();
            assert_eq!(
                bad, 0,
                "tile 256 x 32 (indexed f32 max of {n}): Ok, but {bad} wrong"
            );
        }
    }
}
