//! Runs, unique values and histograms of candle tensors: [`RunsExt`].

use super::cpu::{with_cpu_storage, IntoCpuStorage, Rows};
use super::grad::{differentiable, Backward};
use super::ops::{
    apply, apply_tracked, bad_dtype, count_storage, index_u32, outputs, pad, same_shape, u32_len,
    widen, OnDevice, PrimOp,
};
use crate::cpu::SortElement;
use crate::{DeviceTensor, ReduceOp};
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, DType, Layout, Result, Shape, Tensor};
use cubecl::prelude::*;
use rayon::prelude::*;

/// Runs of equal values, unique values and counts of [`Tensor`]s, over the whole tensor in
/// row-major order (as PyTorch with `dim=None`). Values are equal when `==` says so: every NaN
/// is its own run, `-0.0 == 0.0`. Counts and inverse indices are u32 (PyTorch's are i64; a
/// wrapped cubeprim [`Error::TooLarge`](crate::Error::TooLarge) past `u32::MAX` elements).
/// The number of runs is data-dependent: on a GPU it is read back once (4 bytes, a sync) to
/// size the outputs. The `_padded` variants make no read: their run outputs are sized for
/// every element, the first `count` hold the runs and the rest are unspecified (zeros on the
/// CPU, whatever the device buffer held on a GPU), and the number of runs is a `[1]` u32
/// tensor on `self`'s device. Only `reduce_by_key`'s folds have a gradient (by the values); the
/// other outputs are keys, counts or indices, untracked.
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
    /// [`unique_consecutive`](Self::unique_consecutive) with no host read: (values, counts,
    /// count), values and counts of `self`'s element count, their first `count` elements the
    /// runs.
    ///
    /// # Errors
    ///
    /// As [`unique_consecutive`](Self::unique_consecutive).
    ///
    /// # Example
    ///
    /// ```
    /// use candle_core::{Device, Tensor};
    /// use cubeprim::candle::prelude::*;
    ///
    /// let x = Tensor::new(&[7u32, 7, 2, 7, 7, 7], &Device::Cpu)?;
    /// let (values, counts, runs) = x.unique_consecutive_padded()?;
    /// assert_eq!((values.dims(), runs.to_vec1::<u32>()?), (&[6][..], vec![3]));
    /// assert_eq!(values.narrow(0, 0, 3)?.to_vec1::<u32>()?, [7, 2, 7]);
    /// assert_eq!(counts.narrow(0, 0, 3)?.to_vec1::<u32>()?, [2, 1, 3]);
    /// // The counts' offsets, on the device: an exclusive scan of the padded counts.
    /// let starts = counts.exclusive_scan_sum(0)?;
    /// assert_eq!(starts.narrow(0, 0, 3)?.to_vec1::<u32>()?, [0, 2, 3]);
    /// let (values, counts, inverse, runs) = x.unique_with_inverse_padded()?;
    /// assert_eq!(runs.to_vec1::<u32>()?, [2]);
    /// assert_eq!(values.narrow(0, 0, 2)?.to_vec1::<u32>()?, [2, 7]);
    /// assert_eq!(counts.narrow(0, 0, 2)?.to_vec1::<u32>()?, [1, 5]);
    /// assert_eq!(inverse.to_vec1::<u32>()?, [1, 1, 0, 1, 1, 1]); // complete, `x`'s shape
    /// # Ok::<(), candle_core::Error>(())
    /// ```
    fn unique_consecutive_padded(&self) -> Result<(Tensor, Tensor, Tensor)>;
    /// [`unique_consecutive_with_inverse`](Self::unique_consecutive_with_inverse) with no host
    /// read: (values, counts, inverse, count); the inverse is complete (`self`'s shape).
    ///
    /// # Errors
    ///
    /// As [`unique_consecutive`](Self::unique_consecutive).
    fn unique_consecutive_with_inverse_padded(&self) -> Result<(Tensor, Tensor, Tensor, Tensor)>;
    /// [`unique`](Self::unique) with no host read: (values, counts, count).
    ///
    /// # Errors
    ///
    /// As [`unique_consecutive`](Self::unique_consecutive).
    fn unique_padded(&self) -> Result<(Tensor, Tensor, Tensor)>;
    /// [`unique_with_inverse`](Self::unique_with_inverse) with no host read: (values, counts,
    /// inverse, count); the inverse is complete (`self`'s shape).
    ///
    /// # Errors
    ///
    /// As [`unique_consecutive`](Self::unique_consecutive).
    fn unique_with_inverse_padded(&self) -> Result<(Tensor, Tensor, Tensor, Tensor)>;
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
    /// [`reduce_by_key`](Self::reduce_by_key) with no host read: (keys, folds, count), keys
    /// and folds of `self`'s element count, their first `count` elements the runs.
    ///
    /// # Errors
    ///
    /// As [`reduce_by_key`](Self::reduce_by_key), and a wrapped cubeprim
    /// [`Error::TooLarge`](crate::Error::TooLarge) past `u32::MAX` elements.
    ///
    /// # Example
    ///
    /// ```
    /// use candle_core::{Device, Tensor};
    /// use cubeprim::candle::prelude::*;
    ///
    /// let keys = Tensor::new(&[7u32, 7, 2, 2, 2, 7], &Device::Cpu)?;
    /// let vals = Tensor::new(&[1f32, 2., 3., 4., 5., 6.], &Device::Cpu)?;
    /// let (k, sums, runs) = keys.reduce_by_key_padded(&vals, ReduceOp::Sum)?;
    /// assert_eq!((k.dims(), runs.to_vec1::<u32>()?), (&[6][..], vec![3]));
    /// assert_eq!(k.narrow(0, 0, 3)?.to_vec1::<u32>()?, [7, 2, 7]);
    /// assert_eq!(sums.narrow(0, 0, 3)?.to_vec1::<f32>()?, [3., 12., 6.]);
    /// # Ok::<(), candle_core::Error>(())
    /// ```
    fn reduce_by_key_padded(
        &self,
        values: &Tensor,
        op: ReduceOp,
    ) -> Result<(Tensor, Tensor, Tensor)>;
}

impl RunsExt for Tensor {
    fn unique_consecutive(&self) -> Result<(Tensor, Tensor)> {
        let [v, c] = runs(self, false, false, false)?;
        Ok((v, c))
    }
    fn unique_consecutive_with_inverse(&self) -> Result<(Tensor, Tensor, Tensor)> {
        let [v, c, i] = runs(self, false, true, false)?;
        Ok((v, c, i))
    }
    fn unique(&self) -> Result<(Tensor, Tensor)> {
        let [v, c] = runs(self, true, false, false)?;
        Ok((v, c))
    }
    fn unique_with_inverse(&self) -> Result<(Tensor, Tensor, Tensor)> {
        let [v, c, i] = runs(self, true, true, false)?;
        Ok((v, c, i))
    }
    fn unique_consecutive_padded(&self) -> Result<(Tensor, Tensor, Tensor)> {
        let [v, c, k] = runs(self, false, false, true)?;
        Ok((v, c, k))
    }
    fn unique_consecutive_with_inverse_padded(&self) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
        let [v, c, i, k] = runs(self, false, true, true)?;
        Ok((v, c, i, k))
    }
    fn unique_padded(&self) -> Result<(Tensor, Tensor, Tensor)> {
        let [v, c, k] = runs(self, true, false, true)?;
        Ok((v, c, k))
    }
    fn unique_with_inverse_padded(&self) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
        let [v, c, i, k] = runs(self, true, true, true)?;
        Ok((v, c, i, k))
    }
    fn histogram(&self, bins: usize) -> Result<Tensor> {
        u32_len(self.elem_count(), "histogram's keys")?;
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
        let [k, v] = reduce_by_key(self, values, op, false)?;
        Ok((k, v))
    }
    fn reduce_by_key_padded(
        &self,
        values: &Tensor,
        op: ReduceOp,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let [k, v, count] = reduce_by_key(self, values, op, true)?;
        Ok((k, v, count))
    }
}

/// Values, counts and (when asked) inverse of the runs of `t` (sorted first when `sorted`),
/// and the number of runs when `padded`.
fn runs<const N: usize>(
    t: &Tensor,
    sorted: bool,
    inverse: bool,
    padded: bool,
) -> Result<[Tensor; N]> {
    u32_len(t.elem_count(), "unique's input")?;
    let (keys, dtype) = widen(t)?;
    let op = Runs {
        sorted,
        inverse,
        padded,
    };
    let mut out = apply(&op, &[&keys])?;
    out[0] = out[0].to_dtype(dtype)?;
    Ok(outputs(out))
}

/// The keys and folds of the runs of `keys` over `values` (and the number of runs when
/// `padded`).
fn reduce_by_key<const N: usize>(
    keys: &Tensor,
    values: &Tensor,
    op: ReduceOp,
    padded: bool,
) -> Result<[Tensor; N]> {
    same_shape(keys, values, "reduce_by_key")?;
    if padded {
        u32_len(keys.elem_count(), "reduce_by_key's keys")?;
    }
    let (k, key_dtype) = widen(keys)?;
    let (v, value_dtype) = widen(values)?;
    let r = ReduceByKey { op, padded };
    let mut out = if differentiable(&v) {
        // The folds a graph node of the values.
        apply_tracked(&r, &[&k, &v], &v, 1, |_| {
            Ok(Backward::ByKey {
                keys: k.clone(),
                op,
            })
        })?
    } else {
        apply(&r, &[&k, &v])?
    };
    out[0] = out[0].to_dtype(key_dtype)?;
    out[1] = out[1].to_dtype(value_dtype)?;
    Ok(outputs(out))
}

/// Runs of the flattened input (sorted first when `sorted`): values, u32 counts, the u32
/// inverse when `inverse`; `padded`: values and counts sized for every element, then the
/// number of runs.
pub(super) struct Runs {
    pub(super) sorted: bool,
    pub(super) inverse: bool,
    pub(super) padded: bool,
}

/// The runs of the row-major elements: (values, counts, inverse), counts and inverse as u32
/// (the caller checked that the element count fits).
fn runs_of<E: SortElement + PartialEq + Send + Sync>(
    data: &[E],
    layout: &Layout,
    sorted: bool,
) -> (Vec<E>, Vec<u32>, Vec<u32>) {
    let flat = Rows::flat(data, layout);
    let (u, c, i) = if sorted {
        crate::cpu::unique(&flat)
    } else {
        crate::cpu::unique_consecutive(&flat)
    };
    let narrow = |v: Vec<i64>| v.into_iter().map(|x| x as u32).collect();
    (u, narrow(c), narrow(i))
}

impl PrimOp for Runs {
    const NAME: &'static str = "unique";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let (s, l) = inputs[0];
        let n = l.shape().elem_count();
        let (values, counts, inverse) = with_cpu_storage!(
            s,
            |v| {
                let (u, c, i) = runs_of(v, l, self.sorted);
                let u = if self.padded { pad(u, n) } else { u };
                (IntoCpuStorage::into_storage(u), c, i)
            },
            return Err(bad_dtype(s.dtype(), "cubeprim unique"))
        );
        let runs = counts.len();
        let (counts, k) = match self.padded {
            true => (pad(counts, n), n),
            false => (counts, runs),
        };
        let mut out = vec![
            (values, Shape::from(k)),
            (CpuStorage::U32(counts), Shape::from(k)),
        ];
        if self.inverse {
            out.push((CpuStorage::U32(inverse), l.shape().clone()));
        }
        if self.padded {
            out.push((count_storage(runs, Self::NAME)?, Shape::from(1)));
        }
        Ok(out)
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        let (client, x) = (d.client, &d.inputs[0]);
        let u = if self.sorted {
            crate::unique::unique_unsized(client, x, self.inverse, true, d.ws)?
        } else {
            let mut u =
                crate::unique_consecutive(client, x, x.num_elements(), self.inverse, true, d.ws)?;
            // One run index per key (the capacity), in the keys' shape.
            if let Some(i) = &mut u.inverse {
                i.shape = x.shape.clone();
                i.strides = crate::tensor::contiguous_strides(&x.shape);
            }
            u
        };
        let counts = u.counts.expect("counts were asked for");
        let (values, counts) = match self.padded {
            true => (u.values, counts),
            false => {
                let k = crate::read_count(client, &u.count);
                (u.values.narrow(0, 0, k)?, counts.narrow(0, 0, k)?)
            }
        };
        let mut out = vec![values, index_u32(client, counts)?];
        if let Some(i) = u.inverse {
            out.push(index_u32(client, i)?);
        }
        if self.padded {
            out.push(u.count);
        }
        Ok(out)
    }
}

/// The first key of each run of the first input and the fold of the second's elements over
/// it; `padded`: sized for every element, then the number of runs.
pub(super) struct ReduceByKey {
    pub(super) op: ReduceOp,
    pub(super) padded: bool,
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
        let n = kl.shape().elem_count();
        let (keys, folds, runs) = with_cpu_storage!(
            ks,
            |k| {
                let k = Rows::flat(k, kl);
                with_cpu_storage!(
                    vs,
                    |v| {
                        let (u, f) = crate::cpu::reduce_by_key(&k, &Rows::flat(v, vl), self.op);
                        let runs = u.len();
                        let (u, f) = match self.padded {
                            true => (pad(u, n), pad(f, n)),
                            false => (u, f),
                        };
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
        Ok(match self.padded {
            true => vec![
                (keys, Shape::from(n)),
                (folds, Shape::from(n)),
                (count_storage(runs, Self::NAME)?, Shape::from(1)),
            ],
            false => vec![(keys, Shape::from(runs)), (folds, Shape::from(runs))],
        })
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        let (keys, values) = (&d.inputs[0], &d.inputs[1]);
        let n = keys.num_elements();
        // Outputs sized for every element, the run count on the device.
        let (k, v, count) = crate::reduce_by_key(d.client, keys, values, n, self.op, d.ws)?;
        if self.padded {
            return Ok(vec![k, v, count]);
        }
        // The run count read back once to cut them.
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
