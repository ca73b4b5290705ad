//! The CUDA path of the candle adapter (feature `candle-cuda`, never built in CI: candle's
//! `cuda` feature needs nvcc).
//!
//! - NVRTC compiles the CUDA C++ of every variant to PTX for sm_90a (needs libnvrtc and the
//!   CUDA headers under `$CUDA_PATH`, no GPU);
//! - on a CUDA device, every op on candle CUDA tensors matches the CPU path (skipped, with a
//!   message, where `Device::new_cuda(0)` fails).
#![cfg(feature = "candle-cuda")]

use candle_core::{DType as CDType, Device, Tensor};
use cubeprim::candle::cuda::compile_ptx;
use cubeprim::candle::kernels::{scan_rows_source, Target, SCAN_ROWS};
use cubeprim::candle::{DeviceLimits, ScanExt, ScanLaunch};
use cubeprim::{DType, ScanOp, ScanOptions};

#[test]
fn nvrtc_compiles_every_variant() {
    let mut count = 0;
    for dtype in [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::U32,
        DType::I32,
        DType::I64,
    ] {
        for op in [ScanOp::Sum, ScanOp::Prod, ScanOp::Max, ScanOp::Min] {
            let indexed = matches!(op, ScanOp::Max | ScanOp::Min);
            for (shape, axis) in [(&[3usize, 100][..], 1usize), (&[40_001, 2][..], 0)] {
                let strides = [shape[1], 1];
                let opts = ScanOptions::default().exclusive();
                let l = ScanLaunch::new(
                    DeviceLimits::CUDA,
                    shape,
                    &strides,
                    0,
                    axis,
                    dtype,
                    indexed,
                    opts,
                )
                .unwrap();
                let src = scan_rows_source(dtype, op, &l, Target::Cuda).unwrap();
                let ptx = compile_ptx(&src.source, (9, 0))
                    .unwrap_or_else(|e| panic!("{dtype} {op:?} {shape:?}: {e}"));
                assert!(ptx.to_src().contains(&format!(".entry {SCAN_ROWS}")));
                count += 1;
            }
        }
    }
    assert_eq!(count, 7 * 4 * 2);
}

#[test]
fn every_op_on_cuda_matches_the_cpu() {
    let dev = match Device::new_cuda(0) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("no CUDA device ({e}): skipped");
            return;
        }
    };
    for dt in [CDType::F32, CDType::F16, CDType::U32, CDType::I64] {
        for shape in [
            vec![5usize, 300],
            vec![1 << 20],
            vec![70_000, 3],
            vec![2, 3, 4, 5],
        ] {
            let n: usize = shape.iter().product();
            let data: Vec<f64> = (0..n).map(|i| ((i * 7919) % 5) as f64).collect();
            let h = Tensor::from_vec(data, &*shape, &Device::Cpu)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let g = h.to_device(&dev).unwrap();
            for axis in 0..shape.len() {
                for op in [ScanOp::Sum, ScanOp::Max] {
                    let want = h.scan(axis, op, ScanOptions::default()).unwrap();
                    let got = g.scan(axis, op, ScanOptions::default()).unwrap();
                    let to = |t: Tensor| {
                        t.to_dtype(CDType::F64)
                            .unwrap()
                            .flatten_all()
                            .unwrap()
                            .to_vec1::<f64>()
                            .unwrap()
                    };
                    let (got, want) = (to(got.to_device(&Device::Cpu).unwrap()), to(want));
                    for (a, b) in got.iter().zip(&want) {
                        assert!(
                            a == b
                                || (a - b).abs() <= 2e-2 * (1.0 + b.abs())
                                || (a.is_infinite() && b.is_infinite()),
                            "{dt:?} {shape:?} axis {axis} {op:?}: {a} vs {b}"
                        );
                    }
                }
            }
        }
    }
}
