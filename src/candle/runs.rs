//! Runs, unique values and histograms of candle tensors: [`RunsExt`].

use super::cpu::{with_cpu_storage, IntoCpuStorage, Rows};
use super::ops::{apply, bad_dtype, outputs, widen, OnDevice, PrimOp};
use crate::cpu::SortElement;
use crate::{DeviceTensor, ReduceOp};
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, DType, Layout, Result, Shape, Tensor};
use cubecl::prelude::*;
use rayon::prelude::*;

/// Runs of equal values, unique values and counts of [`Tensor`]s, over the whole tensor in
/// row-major order (as PyTorch with `dim=None`). Values are equal when `==` says so: every NaN
/// is its own run, `-0.0 == 0.0`. Counts and inverse indices are i64, as PyTorch's. The number
/// of runs is data-dependent: on a GPU it is read back once (4 bytes, a sync) to size the
/// outputs. No gradient.
pub trait RunsExt {
    /// The first value of each run of equal consecutive values, and the run lengths
    /// (`torch.unique_consecutive(t, return_counts=True)`).
    ///
    /// # Errors
    ///
    /// candle's `DeviceMismatchBinaryOp` for tensors on different devices, `UnsupportedDTypeForOp`
    /// for a dtype the op does not take, an error of candle's for a device without the adapter's
    /// path (`Msg`). On a GPU device, a cubeprim [`Error`](crate::Error) the device path returns,
    /// wrapped in candle's `Error::Wrapped`.
    fn unique_consecutive(&self) -> Result<(Tensor, Tensor)>;
    /// [`unique_consecutive`](Self::unique_consecutive) and, for every element (`self`'s
    /// shape), the index of its run (`return_inverse=True`).
    ///
    /// # Errors
    ///
    /// As [`unique_consecutive`](Self::unique_consecutive).
    fn unique_consecutive_with_inverse(&self) -> Result<(Tensor, Tensor, Tensor)>;
    /// The sorted distinct values and how often each occurs
    /// (`torch.unique(t, sorted=True, return_counts=True)`).
    ///
    /// # Errors
    ///
    /// As [`unique_consecutive`](Self::unique_consecutive).
    fn unique(&self) -> Result<(Tensor, Tensor)>;
    /// [`unique`](Self::unique) and, for every element (`self`'s shape), the index of its
    /// value (`return_inverse=True`).
    ///
    /// # Errors
    ///
    /// As [`unique_consecutive`](Self::unique_consecutive).
    fn unique_with_inverse(&self) -> Result<(Tensor, Tensor, Tensor)>;
    /// `out[b]` = how many elements equal `b`, for `b < bins`; values outside `[0, bins)` are
    /// not counted (`torch.bincount(t, minlength=bins)[:bins]` of the values in range). Integer
    /// tensors (u8, u32, i16, i32, i64); u32 counts.
    ///
    /// # Errors
    ///
    /// candle's `UnsupportedDTypeForOp` for keys that are not integers; otherwise as
    /// [`unique_consecutive`](Self::unique_consecutive).
    fn histogram(&self, bins: usize) -> Result<Tensor>;
    /// Segmented reduction over the runs of `self` (the keys): the first key of each run of
    /// equal consecutive keys, and the fold of the run's `values` (same shape as `self`,
    /// flattened alike) with `op`; both 1-D, one element per run. Keys and values may have
    /// different dtypes; the values keep theirs (f16 / bf16 accumulate in f32, integers wrap,
    /// max / min propagate NaN). (`torch_scatter.segment_*_coo` over the run indices; no
    /// PyTorch built-in.)
    ///
    /// # Errors
    ///
    /// candle's `ShapeMismatchBinaryOp` for `values` of another shape; otherwise as
    /// [`unique_consecutive`](Self::unique_consecutive).
    fn reduce_by_key(&self, values: &Tensor, op: ReduceOp) -> Result<(Tensor, Tensor)>;
}

impl RunsExt for Tensor {
    fn unique_consecutive(&self) -> Result<(Tensor, Tensor)> {
        let [v, c] = runs(self, false, false)?;
        Ok((v, c))
    }
    fn unique_consecutive_with_inverse(&self) -> Result<(Tensor, Tensor, Tensor)> {
        let [v, c, i] = runs(self, false, true)?;
        Ok((v, c, i))
    }
    fn unique(&self) -> Result<(Tensor, Tensor)> {
        let [v, c] = runs(self, true, false)?;
        Ok((v, c))
    }
    fn unique_with_inverse(&self) -> Result<(Tensor, Tensor, Tensor)> {
        let [v, c, i] = runs(self, true, true)?;
        Ok((v, c, i))
    }
    fn histogram(&self, bins: usize) -> Result<Tensor> {
        let keys = match (self.device().is_cpu(), self.dtype()) {
            (true, _) | (false, DType::U32 | DType::I32 | DType::I64) => self.clone(),
            (false, DType::U8) => self.to_dtype(DType::U32)?,
            (false, DType::I16) => self.to_dtype(DType::I32)?,
            (_, d) => return Err(bad_dtype(d, "cubeprim histogram")),
        };
        let [h] = outputs(apply(&Histogram { bins }, &[&keys])?);
        Ok(h)
    }
    fn reduce_by_key(&self, values: &Tensor, op: ReduceOp) -> Result<(Tensor, Tensor)> {
        if self.shape() != values.shape() {
            return Err(candle_core::Error::ShapeMismatchBinaryOp {
                lhs: self.shape().clone(),
                rhs: values.shape().clone(),
                op: "reduce_by_key",
            }
            .bt());
        }
        let (keys, key_dtype) = widen(self)?;
        let (values, value_dtype) = widen(values)?;
        let [k, v] = outputs(apply(&ReduceByKey { op }, &[&keys, &values])?);
        Ok((k.to_dtype(key_dtype)?, v.to_dtype(value_dtype)?))
    }
}

/// Values, counts and (when asked) inverse of the runs of `t` (sorted first when `sorted`).
fn runs<const N: usize>(t: &Tensor, sorted: bool, inverse: bool) -> Result<[Tensor; N]> {
    let (keys, dtype) = widen(t)?;
    let mut out = apply(&Runs { sorted, inverse }, &[&keys])?;
    out[0] = out[0].to_dtype(dtype)?;
    Ok(outputs(out))
}

pub(super) struct Runs {
    pub(super) sorted: bool,
    pub(super) inverse: bool,
}

/// The runs of the row-major elements: (values, counts, inverse).
fn runs_of<E: SortElement + PartialEq + Send + Sync>(
    data: &[E],
    layout: &Layout,
    sorted: bool,
) -> (Vec<E>, Vec<i64>, Vec<i64>) {
    let flat = Rows::flat(data, layout);
    if sorted {
        crate::cpu::unique(&flat)
    } else {
        crate::cpu::unique_consecutive(&flat)
    }
}

impl PrimOp for Runs {
    const NAME: &'static str = "unique";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let (s, l) = inputs[0];
        let (values, counts, inverse) = with_cpu_storage!(
            s,
            |v| {
                let (u, c, i) = runs_of(v, l, self.sorted);
                (IntoCpuStorage::into_storage(u), c, i)
            },
            return Err(bad_dtype(s.dtype(), "cubeprim unique"))
        );
        let k = counts.len();
        let mut out = vec![
            (values, Shape::from(k)),
            (CpuStorage::I64(counts), Shape::from(k)),
        ];
        if self.inverse {
            out.push((CpuStorage::I64(inverse), l.shape().clone()));
        }
        Ok(out)
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        let x = &d.inputs[0];
        let u = if self.sorted {
            crate::unique(d.client, x, self.inverse, true, d.ws)?
        } else {
            crate::unique_consecutive_sized(d.client, x, self.inverse, true, d.ws)?
        };
        let counts = u.counts.expect("counts were asked for");
        Ok([Some(u.values), Some(counts), u.inverse]
            .into_iter()
            .flatten()
            .collect())
    }
}

pub(super) struct ReduceByKey {
    pub(super) op: ReduceOp,
}

impl PrimOp for ReduceByKey {
    const NAME: &'static str = "reduce_by_key";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let ((ks, kl), (vs, vl)) = (inputs[0], inputs[1]);
        if kl.shape() != vl.shape() {
            return Err(candle_core::Error::ShapeMismatchBinaryOp {
                lhs: kl.shape().clone(),
                rhs: vl.shape().clone(),
                op: Self::NAME,
            }
            .bt());
        }
        let (keys, folds, runs) = with_cpu_storage!(
            ks,
            |k| {
                let k = Rows::flat(k, kl);
                with_cpu_storage!(
                    vs,
                    |v| {
                        let (u, f) = crate::cpu::reduce_by_key(&k, &Rows::flat(v, vl), self.op);
                        let runs = u.len();
                        (
                            IntoCpuStorage::into_storage(u),
                            IntoCpuStorage::into_storage(f),
                            runs,
                        )
                    },
                    return Err(bad_dtype(vs.dtype(), "cubeprim reduce_by_key"))
                )
            },
            return Err(bad_dtype(ks.dtype(), "cubeprim reduce_by_key"))
        );
        Ok(vec![(keys, Shape::from(runs)), (folds, Shape::from(runs))])
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        let (keys, values) = (&d.inputs[0], &d.inputs[1]);
        let n = keys.num_elements();
        let (k, v, count) = crate::reduce_by_key(d.client, keys, values, n, self.op, d.ws)?;
        // Outputs sized for every element; the run count read back once to cut them.
        let runs = crate::read_count(d.client, &count);
        Ok(vec![k.narrow(0, 0, runs)?, v.narrow(0, 0, runs)?])
    }
}

pub(super) struct Histogram {
    pub(super) bins: usize,
}

/// Keys per parallel task of the CPU histogram.
const HISTOGRAM_TASK: usize = 1 << 16;

impl PrimOp for Histogram {
    const NAME: &'static str = "histogram";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let (s, l) = inputs[0];
        let bins = self.bins;
        macro_rules! count {
            ($v:expr) => {{
                let flat = Rows::flat($v, l);
                flat.par_chunks(HISTOGRAM_TASK)
                    .map(|c| crate::cpu::histogram(c, bins))
                    .reduce(
                        || vec![0u32; bins],
                        |mut a, b| {
                            a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
                            a
                        },
                    )
            }};
        }
        let out = match s {
            CpuStorage::U8(v) => count!(v),
            CpuStorage::U32(v) => count!(v),
            CpuStorage::I16(v) => count!(v),
            CpuStorage::I32(v) => count!(v),
            CpuStorage::I64(v) => count!(v),
            s => return Err(bad_dtype(s.dtype(), "cubeprim histogram")),
        };
        Ok(vec![(CpuStorage::U32(out), Shape::from(bins))])
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        let x = &d.inputs[0];
        Ok(vec![crate::histogram(
            d.client,
            x,
            self.bins,
            x.num_elements(),
            d.ws,
        )?])
    }
}
