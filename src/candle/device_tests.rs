//! The device path of every [`PrimOp`] (what the CUDA bridge runs on cubecl's CUDA runtime)
//! against its CPU path, on the wgpu runtime (lavapipe in CI): same kernels and host code as on
//! CUDA, without the bridge's copies. Skipped without a wgpu device unless `CI=true`.

use super::ops::{apply, Contiguous, OnDevice, PrimOp};
use super::reduce::Reduce;
use super::runs::{Histogram, ReduceByKey, Runs};
use super::select::{CountNonZero, MaskedSelect, NonZero, Partition};
use super::sort::{Bucketize, SearchSorted, Sort, SortPairs, TopK};
use super::staged::{self, Staged};
use crate::{DType, DeviceTensor, ReduceOp, Side, Workspace};
use candle_core::backend::BackendStorage;
use candle_core::op::BackpropOp;
use candle_core::{CpuStorage, DType as CDType, Device, Layout, Storage, Tensor};
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
        CDType::F32 => {
            DeviceTensor::from_slice(c, &flat.to_vec1::<f32>().unwrap(), t.dims()).unwrap()
        }
        CDType::U32 => {
            DeviceTensor::from_slice(c, &flat.to_vec1::<u32>().unwrap(), t.dims()).unwrap()
        }
        CDType::I32 => {
            DeviceTensor::from_slice(c, &flat.to_vec1::<i32>().unwrap(), t.dims()).unwrap()
        }
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

/// A tensor's elements, row-major, as f64.
fn values(t: &Tensor) -> Vec<f64> {
    t.flatten_all()
        .unwrap()
        .to_dtype(CDType::F64)
        .unwrap()
        .to_vec1::<f64>()
        .unwrap()
}

/// Equal element by element (NaN equal to NaN).
fn assert_same(what: &str, k: usize, got: &[f64], want: &[f64]) {
    let ok = got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(a, b)| a == b || (a.is_nan() && b.is_nan()));
    assert!(ok, "{what}: output {k}\n got {got:?}\nwant {want:?}");
}

/// One output as compared: shape, dtype, elements (row-major, as f64).
struct Out {
    shape: Vec<usize>,
    dtype: CDType,
    values: Vec<f64>,
}

/// The outputs of a device path against those of the CPU path: same number, shapes, dtypes
/// and values. `padded`: an op whose last output is the `[1]` count and whose other outputs
/// hold `count` rows and an unspecified rest, but those listed (complete, such as an inverse):
/// the rows past the count are not compared.
fn compare(what: &str, got: Vec<Out>, want: &[Tensor], padded: Option<&[usize]>) {
    assert_eq!(got.len(), want.len(), "{what}: outputs");
    let count = padded.map(|_| {
        let c = values(want.last().expect("a count"));
        assert_eq!(got.last().expect("a count").values, c, "{what}: count");
        c[0] as usize
    });
    let last = want.len() - 1;
    for (k, (g, w)) in got.into_iter().zip(want).enumerate() {
        assert_eq!(g.shape, w.dims(), "{what}: shape of output {k}");
        assert_eq!(g.dtype, w.dtype(), "{what}: dtype of output {k}");
        let want = values(w);
        match (count, padded) {
            (Some(count), Some(complete)) if k != last && !complete.contains(&k) => {
                let row: usize = g.shape[1..].iter().product();
                let m = count * row;
                assert_same(what, k, &g.values[..m], &want[..m]);
            }
            _ => assert_same(what, k, &g.values, &want),
        }
    }
}

/// candle's dtype of a device output.
fn candle_dtype(d: DType) -> CDType {
    match d {
        DType::F32 => CDType::F32,
        DType::U32 => CDType::U32,
        DType::I32 => CDType::I32,
        DType::I64 => CDType::I64,
        d => panic!("no {d} here"),
    }
}

/// `op` on the device and on the CPU: same number of outputs, shapes, dtypes and values.
fn same<O: PrimOp>(c: &ComputeClient<R>, ws: &mut Workspace<R>, op: &O, inputs: &[&Tensor]) {
    same_cut(c, ws, op, inputs, None)
}

/// [`same`], for a padded op ([`compare`]'s `padded`).
fn same_cut<O: PrimOp>(
    c: &ComputeClient<R>,
    ws: &mut Workspace<R>,
    op: &O,
    inputs: &[&Tensor],
    padded: Option<&[usize]>,
) {
    let what = format!("{} of {:?}", O::NAME, inputs[0].dims());
    let want = apply(op, inputs).unwrap();
    let on = OnDevice {
        client: c,
        inputs: inputs.iter().map(|t| upload(c, t)).collect(),
        ws,
    };
    let got = op.device(on).unwrap_or_else(|e| panic!("{what}: {e}"));
    let got = got
        .iter()
        .map(|g| Out {
            shape: g.shape.clone(),
            dtype: candle_dtype(g.dtype),
            values: read(c, g),
        })
        .collect();
    compare(&what, got, &want, padded);
}

/// `op` through the host-staged route of the Metal path ([`staged::run`]), here from candle's
/// CPU storage (views as they are: strided, offset) to the wgpu runtime and back, against
/// the op's CPU path.
fn same_staged<O: PrimOp>(st: &mut Staged<R>, op: &O, inputs: &[&Tensor]) {
    same_staged_cut(st, op, inputs, None)
}

/// [`same_staged`], for a padded op ([`compare`]'s `padded`).
fn same_staged_cut<O: PrimOp>(
    st: &mut Staged<R>,
    op: &O,
    inputs: &[&Tensor],
    padded: Option<&[usize]>,
) {
    let what = format!(
        "staged {} of {:?} (contiguous: {})",
        O::NAME,
        inputs[0].dims(),
        inputs[0].is_contiguous()
    );
    let want = apply(op, inputs).unwrap();
    let guards: Vec<_> = inputs.iter().map(|t| t.storage_and_layout()).collect();
    let ins: Vec<(&CpuStorage, &Layout)> = guards
        .iter()
        .map(|(s, l)| match &**s {
            Storage::Cpu(c) => (c, *l),
            _ => unreachable!("CPU tensors"),
        })
        .collect();
    let got = staged::run(op, st, &ins).unwrap_or_else(|e| panic!("{what}: {e}"));
    let got = got
        .into_iter()
        .map(|(s, shape)| {
            let dtype = s.dtype();
            let g = Tensor::from_storage(Storage::Cpu(s), shape, BackpropOp::none(), false);
            Out {
                shape: g.dims().to_vec(),
                dtype,
                values: values(&g),
            }
        })
        .collect();
    compare(&what, got, &want, padded);
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
            // Values of another dtype (f32, with NaN) and of the keys' own.
            let vals = tensor(&shape, CDType::F32, 11);
            for asc in [true, false] {
                same(&c, &mut ws, &SortPairs { asc }, &[&x, &vals]);
                same(&c, &mut ws, &SortPairs { asc }, &[&x, &x]);
            }
            // Boundaries: one sorted row (ties, the NaN of f32 last); inputs of two shapes.
            let boundaries = sorted.get(0).unwrap();
            for right in [false, true] {
                same(&c, &mut ws, &Bucketize { right }, &[&queries, &boundaries]);
                same(&c, &mut ws, &Bucketize { right }, &[&x, &boundaries]);
            }
            for axis in 0..2 {
                for op in [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min] {
                    same(&c, &mut ws, &Reduce { axis, op }, &[&x]);
                }
            }
            let mask = tensor(&shape, CDType::U32, 5);
            same(&c, &mut ws, &MaskedSelect { padded: false }, &[&x, &mask]);
            let op = MaskedSelect { padded: true };
            same_cut(&c, &mut ws, &op, &[&x, &mask], Some(&[]));
            same(&c, &mut ws, &Partition, &[&x, &mask]);
            same(&c, &mut ws, &NonZero { padded: false }, &[&x]);
            same_cut(&c, &mut ws, &NonZero { padded: true }, &[&x], Some(&[]));
            same(&c, &mut ws, &CountNonZero, &[&x]);
            same(&c, &mut ws, &CountNonZero, &[&mask]);
            // Keys with runs (sorted rows: 9 values each, the NaN of f32 keys last, each its
            // own run) and without (mostly runs of one), values of another dtype.
            let keys = tensor(&shape, CDType::I32, 9);
            let sorted_keys = apply(
                &Sort {
                    asc: true,
                    values: true,
                    indices: false,
                },
                &[&keys],
            )
            .unwrap()
            .remove(0);
            for op in [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min] {
                let rbk = ReduceByKey { op, padded: false };
                same(&c, &mut ws, &rbk, &[&sorted_keys, &x]);
                same(&c, &mut ws, &rbk, &[&keys, &x]);
                same(&c, &mut ws, &rbk, &[&sorted, &keys]);
                let rbk = ReduceByKey { op, padded: true };
                same_cut(&c, &mut ws, &rbk, &[&keys, &x], Some(&[]));
            }
            for sorted in [false, true] {
                for inverse in [false, true] {
                    let runs = Runs {
                        sorted,
                        inverse,
                        padded: false,
                    };
                    same(&c, &mut ws, &runs, &[&x]);
                    let runs = Runs {
                        sorted,
                        inverse,
                        padded: true,
                    };
                    // The inverse (third output when asked) is complete.
                    same_cut(&c, &mut ws, &runs, &[&x], Some(&[2]));
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

#[test]
fn every_op_through_host_staging_matches_its_cpu_path() {
    let Some(c) = client() else { return };
    let mut st = Staged::new(c);
    for (rows, cols) in [(3usize, 10usize), (4, 300)] {
        for dtype in [CDType::F32, CDType::I32, CDType::F16] {
            let x = tensor(&[rows, cols], dtype, cols);
            // The same shape as a transposed view and as an offset, strided narrow.
            let xt = tensor(&[cols, rows], dtype, 1).t().unwrap();
            let xn = tensor(&[rows, cols + 5], dtype, 2)
                .narrow(1, 3, cols)
                .unwrap();
            assert!(!xt.is_contiguous() && !xn.is_contiguous());
            for v in [&x, &xt, &xn] {
                // The copy of outputs moved back from a sort along another dim (i32: candle
                // has no strided copy of its own on CUDA and Metal).
                same_staged(&mut st, &Contiguous, &[v]);
                for asc in [true, false] {
                    let op = Sort {
                        asc,
                        values: true,
                        indices: true,
                    };
                    same_staged(&mut st, &op, &[v]);
                }
                same_staged(
                    &mut st,
                    &TopK {
                        k: 3,
                        largest: true,
                    },
                    &[v],
                );
                // Values of another dtype, strided; and the keys themselves.
                let pv = tensor(&[cols, rows], CDType::I32, 4).t().unwrap();
                for asc in [true, false] {
                    same_staged(&mut st, &SortPairs { asc }, &[v, &pv]);
                    same_staged(&mut st, &SortPairs { asc }, &[v, v]);
                }
                if dtype == CDType::F16 {
                    continue;
                }
                let sorted = apply(
                    &Sort {
                        asc: true,
                        values: true,
                        indices: false,
                    },
                    &[v],
                )
                .unwrap()
                .remove(0);
                let queries = tensor(&[rows, 7], dtype, 3);
                same_staged(
                    &mut st,
                    &SearchSorted { side: Side::Right },
                    &[&sorted, &queries],
                );
                // Boundaries as a strided 1-D view (every other element of a sorted row) and
                // as an offset one.
                let row = apply(
                    &Sort {
                        asc: true,
                        values: true,
                        indices: false,
                    },
                    &[&tensor(&[1, 2 * cols], dtype, 6)],
                )
                .unwrap()
                .remove(0);
                // (`get` would copy: it reshapes; `squeeze` keeps the stride.)
                let strided = row.reshape((cols, 2)).unwrap().t().unwrap();
                let strided = strided.narrow(0, 0, 1).unwrap().squeeze(0).unwrap();
                let offset = row.get(0).unwrap().narrow(0, 3, cols).unwrap();
                assert!(!strided.is_contiguous());
                for right in [false, true] {
                    same_staged(&mut st, &Bucketize { right }, &[v, &strided]);
                    same_staged(&mut st, &Bucketize { right }, &[v, &offset]);
                }
                same_staged(
                    &mut st,
                    &Reduce {
                        axis: 0,
                        op: ReduceOp::Sum,
                    },
                    &[v],
                );
                same_staged(
                    &mut st,
                    &Reduce {
                        axis: 1,
                        op: ReduceOp::Max,
                    },
                    &[v],
                );
                let mask = tensor(&[cols, rows], CDType::U32, 5).t().unwrap();
                same_staged(&mut st, &MaskedSelect { padded: false }, &[v, &mask]);
                let op = MaskedSelect { padded: true };
                same_staged_cut(&mut st, &op, &[v, &mask], Some(&[]));
                same_staged(&mut st, &Partition, &[v, &mask]);
                same_staged(&mut st, &NonZero { padded: false }, &[v]);
                same_staged_cut(&mut st, &NonZero { padded: true }, &[v], Some(&[]));
                same_staged(&mut st, &CountNonZero, &[v]);
                same_staged(&mut st, &CountNonZero, &[&mask]);
                let keys = tensor(&[cols, rows], CDType::I32, 9).t().unwrap();
                for op in [ReduceOp::Sum, ReduceOp::Max] {
                    let rbk = ReduceByKey { op, padded: false };
                    same_staged(&mut st, &rbk, &[&sorted, v]);
                    same_staged(&mut st, &rbk, &[v, &keys]);
                    let rbk = ReduceByKey { op, padded: true };
                    same_staged_cut(&mut st, &rbk, &[v, &keys], Some(&[]));
                }
                for (sorted, inverse) in [(false, true), (true, false)] {
                    let padded = false;
                    same_staged(
                        &mut st,
                        &Runs {
                            sorted,
                            inverse,
                            padded,
                        },
                        &[v],
                    );
                    let padded = true;
                    let runs = Runs {
                        sorted,
                        inverse,
                        padded,
                    };
                    same_staged_cut(&mut st, &runs, &[v], Some(&[2]));
                }
                if dtype == CDType::I32 {
                    same_staged(&mut st, &Histogram { bins: 4 }, &[v]);
                }
            }
        }
    }
    // A dtype the kernels do not take is an error, not a panic.
    let bytes = Tensor::new(&[1u8, 2, 3], &Device::Cpu).unwrap();
    let (s, l) = bytes.storage_and_layout();
    let Storage::Cpu(s) = &*s else { unreachable!() };
    let sort = Sort {
        asc: true,
        values: true,
        indices: false,
    };
    assert!(staged::run(&sort, &mut st, &[(s, l)]).is_err());
}
