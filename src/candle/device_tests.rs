//! The device path of every [`PrimOp`] (what the CUDA bridge runs on cubecl's CUDA runtime)
//! against its CPU path, on the wgpu runtime (lavapipe in CI): same kernels and host code as on
//! CUDA, without the bridge's copies. Skipped without a wgpu device unless `CI=true`.

use super::ops::{apply, OnDevice, PrimOp};
use super::reduce::Reduce;
use super::runs::{Histogram, Runs};
use super::select::{MaskedSelect, NonZero};
use super::sort::{SearchSorted, Sort, TopK};
use crate::{DType, DeviceTensor, ReduceOp, Side, Workspace};
use candle_core::{DType as CDType, Device, Tensor};
use cubecl::prelude::*;
use cubecl::wgpu::{WgpuDevice, WgpuRuntime};

type R = WgpuRuntime;

/// The wgpu device; `None` (skipped) where there is none, a failure under `CI=true`.
fn client() -> Option<ComputeClient<R>> {
    if crate::device::wgpu_available() {
        return Some(WgpuRuntime::client(&WgpuDevice::default()));
    }
    assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "no wgpu device");
    eprintln!("no wgpu device: skipped");
    None
}

/// A candle CPU tensor as a contiguous device tensor.
fn upload(c: &ComputeClient<R>, t: &Tensor) -> DeviceTensor<R> {
    let flat = t.flatten_all().unwrap();
    match t.dtype() {
        CDType::F32 => DeviceTensor::from_slice(c, &flat.to_vec1::<f32>().unwrap(), t.dims()),
        CDType::U32 => DeviceTensor::from_slice(c, &flat.to_vec1::<u32>().unwrap(), t.dims()),
        CDType::I32 => DeviceTensor::from_slice(c, &flat.to_vec1::<i32>().unwrap(), t.dims()),
        d => panic!("no {d:?} here"),
    }
}

/// A device tensor's elements, row-major, as f64.
fn read(c: &ComputeClient<R>, t: &DeviceTensor<R>) -> Vec<f64> {
    if t.num_elements() == 0 {
        return Vec::new();
    }
    match t.dtype {
        DType::F32 => t.to_vec::<f32>(c).into_iter().map(f64::from).collect(),
        DType::U32 => t.to_vec::<u32>(c).into_iter().map(f64::from).collect(),
        DType::I32 => t.to_vec::<i32>(c).into_iter().map(f64::from).collect(),
        DType::I64 => t.to_vec::<i64>(c).into_iter().map(|x| x as f64).collect(),
        d => panic!("no {d} here"),
    }
}

/// `op` on the device and on the CPU: same number of outputs, shapes and values.
fn same<O: PrimOp>(c: &ComputeClient<R>, ws: &mut Workspace<R>, op: &O, inputs: &[&Tensor]) {
    let what = format!("{} of {:?}", O::NAME, inputs[0].dims());
    let want = apply(op, inputs).unwrap();
    let on = OnDevice {
        client: c,
        inputs: inputs.iter().map(|t| upload(c, t)).collect(),
        ws,
    };
    let got = op.device(on).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got.len(), want.len(), "{what}: outputs");
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.shape, w.dims(), "{what}: shape of output {k}");
        let w = w
            .flatten_all()
            .unwrap()
            .to_dtype(CDType::F64)
            .unwrap()
            .to_vec1::<f64>()
            .unwrap();
        let g = read(c, g);
        let ok = g.len() == w.len()
            && g.iter()
                .zip(&w)
                .all(|(a, b)| a == b || (a.is_nan() && b.is_nan()));
        assert!(ok, "{what}: output {k}\n got {g:?}\nwant {w:?}");
    }
}

/// Small integers (exact sums in f32), ties, and NaN for floats.
fn tensor(shape: &[usize], dtype: CDType, seed: usize) -> Tensor {
    let n: usize = shape.iter().product();
    let data: Vec<f32> = (0..n)
        .map(|i| match (i * 7919 + seed * 104_729) % 97 {
            0 if dtype == CDType::F32 => f32::NAN,
            v => (v % 9) as f32 - if dtype == CDType::U32 { 0.0 } else { 3.0 },
        })
        .collect();
    Tensor::from_vec(data, shape, &Device::Cpu)
        .unwrap()
        .to_dtype(dtype)
        .unwrap()
}

#[test]
fn every_op_on_a_device_matches_its_cpu_path() {
    let Some(c) = client() else { return };
    let mut ws = Workspace::new();
    // One tile per row, several, and rows long enough for the device-wide radix passes.
    for shape in [
        vec![3usize, 10],
        vec![4, 300],
        vec![2, 5000],
        vec![1, 70_000],
    ] {
        for dtype in [CDType::F32, CDType::U32, CDType::I32] {
            let x = tensor(&shape, dtype, shape[1]);
            for (values, indices) in [(true, true), (true, false), (false, true)] {
                for asc in [true, false] {
                    let op = Sort {
                        asc,
                        values,
                        indices,
                    };
                    same(&c, &mut ws, &op, &[&x]);
                }
            }
            for k in [1, 5] {
                for largest in [true, false] {
                    same(&c, &mut ws, &TopK { k, largest }, &[&x]);
                }
            }
            let sorted = apply(
                &Sort {
                    asc: true,
                    values: true,
                    indices: false,
                },
                &[&x],
            )
            .unwrap()
            .remove(0);
            let queries = tensor(&[shape[0], 7], dtype, 3);
            for side in [Side::Left, Side::Right] {
                same(&c, &mut ws, &SearchSorted { side }, &[&sorted, &queries]);
            }
            for axis in 0..2 {
                for op in [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min] {
                    same(&c, &mut ws, &Reduce { axis, op }, &[&x]);
                }
            }
            let mask = tensor(&shape, CDType::U32, 5);
            same(&c, &mut ws, &MaskedSelect, &[&x, &mask]);
            same(&c, &mut ws, &NonZero, &[&x]);
            for sorted in [false, true] {
                for inverse in [false, true] {
                    same(&c, &mut ws, &Runs { sorted, inverse }, &[&x]);
                }
            }
            if dtype != CDType::F32 {
                for bins in [4, 300] {
                    same(&c, &mut ws, &Histogram { bins }, &[&x]);
                }
            }
        }
    }
}
