//! Compaction on candle tensors: [`SelectExt`].

use super::cpu::{with_any_cpu_storage, IntoCpuStorage, Rows};
use super::grad::{differentiable, Backward};
use super::ops::{
    apply, apply_tracked, bad_dtype, count_storage, index_u32, outputs, pad, u32_len,
    widen_for_device, OnDevice, PrimOp,
};
use crate::DeviceTensor;
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, Layout, Result, Shape, Tensor, WithDType};
use cubecl::prelude::*;
use rayon::prelude::*;

/// Data-sized outputs: the number of selected elements is known only after the op has run.
/// On the CPU it is simply counted; on a GPU the selection runs on the device and the count
/// is read back once (one device-to-host read of 4 bytes, a sync) to size the output tensor,
/// which candle's static shapes need. The `_padded` variants make no read: their outputs are
/// sized for every element, the first `count` hold the result and the rest are unspecified
/// (zeros on the CPU, whatever the device buffer held on a GPU), and the count is a `[1]` u32
/// tensor on `self`'s device, for a pipeline to chain with no host sync
/// ([`partition`](SelectExt::partition) and [`count_nonzero`](SelectExt::count_nonzero) are
/// sized in advance too). A flag is set when it is non-zero (NaN is set, `-0.0` is not).
/// Indices and counts are u32 (a wrapped cubeprim [`Error::TooLarge`](crate::Error::TooLarge)
/// past `u32::MAX` elements). `masked_select`'s values (and `_padded`'s) have a gradient; the
/// other outputs (and `partition`'s) are untracked.
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
    /// [`masked_select`](Self::masked_select) with no host read: (a 1-D tensor of `self`'s
    /// element count whose first `count` elements are the selected ones, the rest
    /// unspecified; `count`, a `[1]` u32 tensor on `self`'s device).
    ///
    /// # Errors
    ///
    /// As [`masked_select`](Self::masked_select), and a wrapped cubeprim
    /// [`Error::TooLarge`](crate::Error::TooLarge) past `u32::MAX` elements.
    ///
    /// # Example
    ///
    /// ```
    /// use candle_core::{Device, Tensor};
    /// use cubeprim::candle::prelude::*;
    ///
    /// let x = Tensor::new(&[[3f32, -1., 2.], [-4., 5., 6.]], &Device::Cpu)?;
    /// let (kept, count) = x.masked_select_padded(&x.gt(0.)?)?;
    /// assert_eq!((kept.dims(), count.to_vec1::<u32>()?), (&[6][..], vec![4]));
    /// // The first `count` elements (read here to check them; a pipeline keeps the count
    /// // on the device and passes it on).
    /// assert_eq!(kept.narrow(0, 0, 4)?.to_vec1::<f32>()?, [3., 2., 5., 6.]);
    /// let (idx, count) = x.nonzero_padded()?; // [6, 2] u32
    /// assert_eq!(count.to_vec1::<u32>()?, [6]);
    /// assert_eq!(idx.get(4)?.to_vec1::<u32>()?, [1, 1]);
    /// # Ok::<(), candle_core::Error>(())
    /// ```
    fn masked_select_padded(&self, mask: &Tensor) -> Result<(Tensor, Tensor)>;
    /// The row-major indices of the set elements, `[count, rank]` u32 (`torch.nonzero`, there
    /// i64).
    ///
    /// # Errors
    ///
    /// As [`masked_select_padded`](Self::masked_select_padded).
    fn nonzero(&self) -> Result<Tensor>;
    /// [`nonzero`](Self::nonzero) with no host read: (`[n, rank]` u32 for the `n` elements of
    /// `self`, whose first `count` rows are the indices and the rest unspecified; `count`, a
    /// `[1]` u32 tensor on `self`'s device). See
    /// [`masked_select_padded`](Self::masked_select_padded) for an example.
    ///
    /// # Errors
    ///
    /// As [`masked_select_padded`](Self::masked_select_padded).
    fn nonzero_padded(&self) -> Result<(Tensor, Tensor)>;
    /// Stable partition: the elements of `self` (row-major) where `mask` is set, then the
    /// others, each in order, as one 1-D tensor of all the elements; and the number selected,
    /// a u32 tensor of shape `[1]` on `self`'s device (`torch.cat([t[m], t[~m]])`). `mask` as
    /// in [`masked_select`](Self::masked_select). The output's length is every element, so
    /// nothing is read back: on a GPU the count stays on the device.
    ///
    /// # Errors
    ///
    /// As [`masked_select_padded`](Self::masked_select_padded).
    fn partition(&self, mask: &Tensor) -> Result<(Tensor, Tensor)>;
    /// The number of set elements of the whole tensor, a u32 tensor of shape `[1]` on
    /// `self`'s device (`torch.count_nonzero(t)`, there an i64 scalar). Sized in advance, so
    /// nothing is read back: on a GPU the count stays on the device.
    ///
    /// # Errors
    ///
    /// As [`masked_select_padded`](Self::masked_select_padded).
    fn count_nonzero(&self) -> Result<Tensor>;
}

impl SelectExt for Tensor {
    fn masked_select(&self, mask: &Tensor) -> Result<Tensor> {
        let mask = widen_for_device(&mask.broadcast_as(self.shape())?)?;
        let op = MaskedSelect { padded: false };
        let [y] = outputs(select(&op, &widen_for_device(self)?, &mask)?);
        y.to_dtype(self.dtype())
    }
    fn masked_select_padded(&self, mask: &Tensor) -> Result<(Tensor, Tensor)> {
        let mask = mask.broadcast_as(self.shape())?;
        u32_len(self.elem_count(), "masked_select_padded's input")?;
        let op = MaskedSelect { padded: true };
        let mask = widen_for_device(&mask)?;
        let [y, count] = outputs(select(&op, &widen_for_device(self)?, &mask)?);
        Ok((y.to_dtype(self.dtype())?, count))
    }
    fn nonzero(&self) -> Result<Tensor> {
        u32_len(self.elem_count(), "nonzero's input")?;
        let [y] = outputs(apply(
            &NonZero { padded: false },
            &[&widen_for_device(self)?],
        )?);
        Ok(y)
    }
    fn nonzero_padded(&self) -> Result<(Tensor, Tensor)> {
        u32_len(self.elem_count(), "nonzero's input")?;
        let op = NonZero { padded: true };
        let [y, count] = outputs(apply(&op, &[&widen_for_device(self)?])?);
        Ok((y, count))
    }
    fn partition(&self, mask: &Tensor) -> Result<(Tensor, Tensor)> {
        let mask = mask.broadcast_as(self.shape())?;
        u32_len(self.elem_count(), "partition's input")?;
        let ins = [&widen_for_device(self)?, &widen_for_device(&mask)?];
        let [y, count] = outputs(apply(&Partition, &ins)?);
        Ok((y.to_dtype(self.dtype())?, count))
    }
    fn count_nonzero(&self) -> Result<Tensor> {
        u32_len(self.elem_count(), "count_nonzero's input")?;
        let [count] = outputs(apply(&CountNonZero, &[&widen_for_device(self)?])?);
        Ok(count)
    }
}

/// [`MaskedSelect`] of `x` by `mask`; the values a graph node of `x` where it tracks a
/// gradient.
fn select(op: &MaskedSelect, x: &Tensor, mask: &Tensor) -> Result<Vec<Tensor>> {
    if differentiable(x) {
        apply_tracked(op, &[x, mask], x, 0, |_| {
            Ok(Backward::Select { mask: mask.clone() })
        })
    } else {
        apply(op, &[x, mask])
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

/// The elements where the mask (second input, the data's shape) is set; `padded`: sized for
/// every element, with the count.
pub(super) struct MaskedSelect {
    pub(super) padded: bool,
}

impl PrimOp for MaskedSelect {
    const NAME: &'static str = "masked_select";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let ((d, dl), (m, ml)) = (inputs[0], inputs[1]);
        let set = flags(m, ml)?;
        let n = dl.shape().elem_count();
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
                let kept = if self.padded { pad(kept, n) } else { kept };
                (IntoCpuStorage::into_storage(kept), count)
            },
            return Err(bad_dtype(d.dtype(), "cubeprim masked_select"))
        );
        Ok(match self.padded {
            true => vec![
                (out, Shape::from(n)),
                (count_storage(count, Self::NAME)?, Shape::from(1)),
            ],
            false => vec![(out, Shape::from(count))],
        })
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        let (data, mask) = (&d.inputs[0], &d.inputs[1]);
        let (out, count) = crate::select(d.client, data, mask, data.num_elements(), d.ws)?;
        if self.padded {
            return Ok(vec![out, count]);
        }
        let k = crate::read_count(d.client, &count);
        Ok(vec![out.narrow(0, 0, k)?])
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

/// The row-major indices of the set elements, u32; `padded`: a row for every element, with
/// the count.
pub(super) struct NonZero {
    pub(super) padded: bool,
}

impl PrimOp for NonZero {
    const NAME: &'static str = "nonzero";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let (s, l) = inputs[0];
        let set = flags(s, l)?;
        let dims = l.dims();
        // Positions below `u32::MAX` (the caller checked the element count).
        let idx: Vec<u32> = set
            .par_iter()
            .enumerate()
            .filter(|(_, &f)| f)
            .flat_map_iter(|(i, _)| {
                let mut rem = i;
                let mut at = vec![0u32; dims.len()];
                for d in (0..dims.len()).rev() {
                    at[d] = (rem % dims[d]) as u32;
                    rem /= dims[d];
                }
                at
            })
            .collect();
        let count = match dims.len() {
            0 => set.iter().filter(|&&f| f).count(),
            rank => idx.len() / rank,
        };
        let rank = dims.len();
        Ok(match self.padded {
            true => {
                let n = set.len();
                vec![
                    (CpuStorage::U32(pad(idx, n * rank)), Shape::from((n, rank))),
                    (count_storage(count, Self::NAME)?, Shape::from(1)),
                ]
            }
            false => vec![(CpuStorage::U32(idx), Shape::from((count, rank)))],
        })
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        let (client, x) = (d.client, &d.inputs[0]);
        let out = DeviceTensor::try_empty(
            client,
            &[x.num_elements(), x.rank()],
            crate::nonzero_index_dtype(client),
        )?;
        let count = crate::new_count(client);
        crate::nonzero_into(client, x, &out, &count, d.ws)?;
        if self.padded {
            return Ok(vec![index_u32(client, out)?, count]);
        }
        let k = crate::read_count(client, &count);
        Ok(vec![index_u32(client, out.narrow(0, 0, k)?)?])
    }
}
