//! Compaction on candle tensors: [`SelectExt`].

use super::cpu::{with_any_cpu_storage, IntoCpuStorage, Rows};
use super::ops::{apply, bad_dtype, outputs, widen_for_device, OnDevice, PrimOp};
use crate::DeviceTensor;
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, Layout, Result, Shape, Tensor, WithDType};
use cubecl::prelude::*;
use rayon::prelude::*;

/// Data-sized outputs: the number of selected elements is known only after the op has run.
/// On the CPU it is simply counted; on a GPU the selection runs on the device and the count
/// is read back once (one device-to-host read of 4 bytes, a sync) to size the output tensor,
/// which candle's static shapes need (not [`partition`](SelectExt::partition), whose output
/// has every element). A flag is set when it is non-zero (NaN is set, `-0.0` is not). No
/// gradient.
pub trait SelectExt {
    /// The elements of `self` where `mask` is set, in row-major order, 1-D
    /// (`torch.masked_select`). `mask` has any dtype (candle's comparisons give u8) and
    /// broadcasts to `self`'s shape.
    ///
    /// # Errors
    ///
    /// candle's error for a mask that does not broadcast to `self`'s shape; otherwise candle's
    /// `DeviceMismatchBinaryOp` for tensors on different devices, `UnsupportedDTypeForOp` for a
    /// dtype the op does not take, an error of candle's for a device without the adapter's path
    /// (`Msg`). On a GPU device, a cubeprim [`Error`](crate::Error) the device path returns,
    /// wrapped in candle's `Error::Wrapped`.
    fn masked_select(&self, mask: &Tensor) -> Result<Tensor>;
    /// The row-major indices of the set elements, `[count, rank]` i64 (`torch.nonzero`).
    ///
    /// # Errors
    ///
    /// As [`masked_select`](Self::masked_select).
    fn nonzero(&self) -> Result<Tensor>;
    /// Stable partition: the elements of `self` (row-major) where `mask` is set, then the
    /// others, each in order, as one 1-D tensor of all the elements; and the number selected,
    /// a u32 tensor of shape `[1]` on `self`'s device (`torch.cat([t[m], t[~m]])`). `mask` as
    /// in [`masked_select`](Self::masked_select). The output's length is every element, so
    /// nothing is read back: on a GPU the count stays on the device.
    ///
    /// # Errors
    ///
    /// As [`masked_select`](Self::masked_select).
    fn partition(&self, mask: &Tensor) -> Result<(Tensor, Tensor)>;
    /// The number of set elements of the whole tensor, a u32 tensor of shape `[1]` on
    /// `self`'s device (`torch.count_nonzero(t)`, there an i64 scalar). Sized in advance, so
    /// nothing is read back: on a GPU the count stays on the device.
    ///
    /// # Errors
    ///
    /// As [`masked_select`](Self::masked_select).
    fn count_nonzero(&self) -> Result<Tensor>;
}

impl SelectExt for Tensor {
    fn masked_select(&self, mask: &Tensor) -> Result<Tensor> {
        let mask = widen_for_device(&mask.broadcast_as(self.shape())?)?;
        let [y] = outputs(apply(&MaskedSelect, &[&widen_for_device(self)?, &mask])?);
        y.to_dtype(self.dtype())
    }
    fn nonzero(&self) -> Result<Tensor> {
        let [y] = outputs(apply(&NonZero, &[&widen_for_device(self)?])?);
        Ok(y)
    }
    fn partition(&self, mask: &Tensor) -> Result<(Tensor, Tensor)> {
        let mask = widen_for_device(&mask.broadcast_as(self.shape())?)?;
        let [y, count] = outputs(apply(&Partition, &[&widen_for_device(self)?, &mask])?);
        Ok((y.to_dtype(self.dtype())?, count))
    }
    fn count_nonzero(&self) -> Result<Tensor> {
        let [count] = outputs(apply(&CountNonZero, &[&widen_for_device(self)?])?);
        Ok(count)
    }
}

/// Whether each element of a view (row-major) is set.
fn flags(s: &CpuStorage, l: &Layout) -> Result<Vec<bool>> {
    with_any_cpu_storage!(
        s,
        |v| Ok(Rows::flat(v, l)
            .par_iter()
            .map(|x| x.to_f64() != 0.0)
            .collect()),
        Err(bad_dtype(s.dtype(), "cubeprim flags"))
    )
}

pub(super) struct MaskedSelect;

impl PrimOp for MaskedSelect {
    const NAME: &'static str = "masked_select";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let ((d, dl), (m, ml)) = (inputs[0], inputs[1]);
        let set = flags(m, ml)?;
        let (out, count) = with_any_cpu_storage!(
            d,
            |v| {
                let kept: Vec<_> = Rows::flat(v, dl)
                    .par_iter()
                    .zip(set.par_iter())
                    .filter(|(_, &f)| f)
                    .map(|(x, _)| *x)
                    .collect();
                let count = kept.len();
                (IntoCpuStorage::into_storage(kept), count)
            },
            return Err(bad_dtype(d.dtype(), "cubeprim masked_select"))
        );
        Ok(vec![(out, Shape::from(count))])
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        Ok(vec![crate::masked_select(
            d.client,
            &d.inputs[0],
            &d.inputs[1],
            d.ws,
        )?])
    }
}

pub(super) struct Partition;

impl PrimOp for Partition {
    const NAME: &'static str = "partition";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let ((d, dl), (m, ml)) = (inputs[0], inputs[1]);
        let set = flags(m, ml)?;
        let (out, count) = with_any_cpu_storage!(
            d,
            |v| {
                let flat = Rows::flat(v, dl);
                let side = |keep: bool| {
                    flat.par_iter()
                        .zip(set.par_iter())
                        .filter(move |(_, &f)| f == keep)
                        .map(|(x, _)| *x)
                };
                // (collect and par_extend keep the order)
                let mut out: Vec<_> = side(true).collect();
                let count = out.len();
                out.par_extend(side(false));
                (IntoCpuStorage::into_storage(out), count)
            },
            return Err(bad_dtype(d.dtype(), "cubeprim partition"))
        );
        let n = dl.shape().elem_count();
        Ok(vec![
            (out, Shape::from(n)),
            (count_storage(count, "partition")?, Shape::from(1)),
        ])
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        let (data, flags) = (&d.inputs[0], &d.inputs[1]);
        let (out, count) = crate::partition(d.client, data, flags, data.num_elements(), d.ws)?;
        Ok(vec![out, count])
    }
}

/// A host count as the `u32[1]` storage of a device count.
fn count_storage(count: usize, op: &str) -> Result<CpuStorage> {
    let count = u32::try_from(count).map_err(|_| {
        candle_core::Error::Msg(format!("cubeprim {op}: {count} selected, past u32"))
    })?;
    Ok(CpuStorage::U32(vec![count]))
}

pub(super) struct CountNonZero;

impl PrimOp for CountNonZero {
    const NAME: &'static str = "count_nonzero";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let (s, l) = inputs[0];
        let count = flags(s, l)?.par_iter().filter(|&&f| f).count();
        Ok(vec![(
            count_storage(count, "count_nonzero")?,
            Shape::from(1),
        )])
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        let x = &d.inputs[0];
        let count = crate::new_count(d.client);
        crate::count_nonzero_into(d.client, x, x.num_elements(), &count, d.ws)?;
        Ok(vec![count])
    }
}

pub(super) struct NonZero;

impl PrimOp for NonZero {
    const NAME: &'static str = "nonzero";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let (s, l) = inputs[0];
        let set = flags(s, l)?;
        let dims = l.dims();
        let idx: Vec<i64> = set
            .par_iter()
            .enumerate()
            .filter(|(_, &f)| f)
            .flat_map_iter(|(i, _)| {
                let mut rem = i;
                let mut at = vec![0i64; dims.len()];
                for d in (0..dims.len()).rev() {
                    at[d] = (rem % dims[d]) as i64;
                    rem /= dims[d];
                }
                at
            })
            .collect();
        let count = idx.len() / dims.len().max(1);
        let count = if dims.is_empty() {
            set.iter().filter(|&&f| f).count()
        } else {
            count
        };
        Ok(vec![(
            CpuStorage::I64(idx),
            Shape::from((count, dims.len())),
        )])
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        Ok(vec![crate::nonzero(d.client, &d.inputs[0], d.ws)?])
    }
}
