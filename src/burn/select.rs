//! Stream compaction on burn tensors: [`SelectExt`] (masked_select, select by flags) and
//! [`NonZeroExt`] (nonzero / argwhere, count_nonzero), with their ops.
//!
//! Outputs sized by the data are made in one pass into buffers sized for every element, with
//! the count left on the device; the extension method reads that count (the one host read these
//! methods do) and returns views cut to it. A flag is set when it is non-zero (NaN is set,
//! `-0.0` is not; bool tensors: `true`).

use super::backend::{any, read_count, run, tensor, NumericKind, PrimBackend, PrimKind};
use super::grad::Saved;
use super::host::{with_host_data, HostTensor, IntoHostData};
use super::op::{check_inputs, device_dtype, same_shape, OutputSpec, PrimOp, TensorMeta};
use super::scan::take;
use crate::cpu;
use crate::{DeviceTensor, Error, Result, Workspace};
use ::burn::tensor::ops::FloatTensor;
use ::burn::tensor::{Bool, Int, Tensor};
use cubecl::prelude::*;
use rayon::prelude::*;

/// The elements of input 0 whose flag (input 1, same shape, any kind) is set, in row-major
/// order: `torch.masked_select`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Select;

/// The row-major N-d indices of the non-zero elements: `torch.nonzero` / `argwhere`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NonZero;

/// How many elements are non-zero: `torch.count_nonzero`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CountNonZero;

/// `x` as a contiguous 1-D view (the adapters hand contiguous inputs to these ops).
pub(crate) fn flat<R: Runtime>(x: &DeviceTensor<R>) -> DeviceTensor<R> {
    let n = x.num_elements();
    DeviceTensor::from_parts(x.handle.clone(), vec![n], vec![1], 0, x.dtype)
}

/// Whether each flag is set (non-zero), in parallel.
pub(crate) fn host_flags(flags: &HostTensor<'_>) -> Vec<bool> {
    with_host_data!(&flags.data, |v: F| v
        .par_iter()
        .map(|&f| cpu::is_set::<F>(f))
        .collect())
}

/// Device support of a selection of `data` by `flags`.
fn check_select<R: Runtime>(
    client: &ComputeClient<R>,
    data: &TensorMeta,
    flags: &TensorMeta,
) -> Result<()> {
    let (d, f) = (device_dtype(client, data)?, device_dtype(client, flags)?);
    let n = data.shape.iter().product();
    crate::select_workspace_bytes(client, n, f, d).map(drop)
}

/// `v` padded to `n` elements (a capacity-sized output; the padding is never read).
pub(crate) fn pad<E: Copy>(mut v: Vec<E>, n: usize, fill: E) -> Vec<E> {
    v.resize(n, fill);
    v
}

impl PrimOp for Select {
    const NAME: &'static str = "cubeprim::masked_select";

    fn needs_contiguous(&self) -> bool {
        true
    }

    fn reads_byte_flags(&self, input: usize) -> bool {
        input == 1
    }

    fn outputs(&self, inputs: &[TensorMeta]) -> Result<Vec<OutputSpec>> {
        check_inputs(inputs, 2, true, "masked_select")?;
        same_shape(&inputs[0], &inputs[1])?;
        Ok(vec![OutputSpec::flat(inputs, 0), OutputSpec::count()])
    }

    fn check_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[TensorMeta],
    ) -> Result<()> {
        check_select(client, &inputs[0], &inputs[1])
    }

    fn run_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[DeviceTensor<R>],
        ws: &mut Workspace<R>,
    ) -> Result<Vec<DeviceTensor<R>>> {
        let (data, flags) = (flat(&inputs[0]), flat(&inputs[1]));
        let n = data.num_elements();
        let (out, count) = crate::select(client, &data, &flags, n, ws)?;
        Ok(vec![out, count])
    }

    fn run_host(&self, inputs: &[HostTensor<'_>]) -> Result<Vec<HostTensor<'static>>> {
        let set = host_flags(&inputs[1]);
        let n = set.len();
        let (data, k) = with_host_data!(&inputs[0].data, |v: E| {
            let picked: Vec<E> = v
                .iter()
                .zip(&set)
                .filter(|(_, &s)| s)
                .map(|(x, _)| *x)
                .collect();
            let k = picked.len();
            let fill = v.first().copied();
            (E::into_host(pad(picked, n, fill.unwrap_or_default())), k)
        });
        Ok(vec![
            HostTensor {
                shape: vec![n],
                data,
            },
            count_tensor(k),
        ])
    }

    fn grad_output(&self) -> Option<usize> {
        Some(0)
    }

    fn backward<B: PrimBackend>(
        &self,
        saved: &Saved<B>,
        grad: FloatTensor<B>,
    ) -> Vec<Option<FloatTensor<B>>> {
        super::grad::select_backward(saved, grad)
    }
}

/// The `u32[1]` count output of the host path.
pub(crate) fn count_tensor(k: usize) -> HostTensor<'static> {
    HostTensor {
        shape: vec![1],
        data: u32::into_host(vec![k as u32]),
    }
}

impl PrimOp for NonZero {
    const NAME: &'static str = "cubeprim::nonzero";

    fn needs_contiguous(&self) -> bool {
        true
    }

    fn reads_byte_flags(&self, input: usize) -> bool {
        input == 0
    }

    fn outputs(&self, inputs: &[TensorMeta]) -> Result<Vec<OutputSpec>> {
        check_inputs(inputs, 1, true, "nonzero")?;
        let x = &inputs[0];
        let n = x.shape.iter().product();
        Ok(vec![
            OutputSpec::index(vec![n, x.rank()]),
            OutputSpec::count(),
        ])
    }

    fn check_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[TensorMeta],
    ) -> Result<()> {
        let x = &inputs[0];
        let dtype = device_dtype(client, x)?;
        if let Some(&s) = x.shape.iter().find(|&&s| u32::try_from(s).is_err()) {
            return Err(Error::Unsupported(format!("dimension {s}")));
        }
        let n = x.shape.iter().product();
        let idx = crate::nonzero_index_dtype(client);
        crate::select_workspace_bytes(client, n, dtype, idx).map(drop)
    }

    fn run_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[DeviceTensor<R>],
        ws: &mut Workspace<R>,
    ) -> Result<Vec<DeviceTensor<R>>> {
        let x = &inputs[0];
        let shape = [x.num_elements(), x.rank()];
        let out = DeviceTensor::try_empty(client, &shape, crate::nonzero_index_dtype(client))?;
        let count = crate::new_count(client);
        crate::nonzero_into(client, x, &out, &count, ws)?;
        Ok(vec![out, count])
    }

    fn run_host(&self, inputs: &[HostTensor<'_>]) -> Result<Vec<HostTensor<'static>>> {
        let x = &inputs[0];
        let (n, rank) = (x.shape.iter().product::<usize>(), x.shape.len());
        let idx = with_host_data!(&x.data, |v: E| cpu::nonzero::<E>(v, &x.shape))?;
        let k = idx.len() / rank.max(1);
        Ok(vec![
            HostTensor {
                shape: vec![n, rank],
                data: i64::into_host(pad(idx, n * rank, 0)),
            },
            count_tensor(k),
        ])
    }
}

impl PrimOp for CountNonZero {
    const NAME: &'static str = "cubeprim::count_nonzero";

    fn needs_contiguous(&self) -> bool {
        true
    }

    fn reads_byte_flags(&self, input: usize) -> bool {
        input == 0
    }

    fn outputs(&self, inputs: &[TensorMeta]) -> Result<Vec<OutputSpec>> {
        check_inputs(inputs, 1, true, "count_nonzero")?;
        Ok(vec![OutputSpec::index(vec![1])])
    }

    fn check_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[TensorMeta],
    ) -> Result<()> {
        check_select(client, &inputs[0], &inputs[0])
    }

    fn run_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[DeviceTensor<R>],
        ws: &mut Workspace<R>,
    ) -> Result<Vec<DeviceTensor<R>>> {
        let x = flat(&inputs[0]);
        let count = crate::new_count(client);
        crate::count_nonzero_into(client, &x, x.num_elements(), &count, ws)?;
        Ok(vec![count])
    }

    fn run_host(&self, inputs: &[HostTensor<'_>]) -> Result<Vec<HostTensor<'static>>> {
        let k = host_flags(&inputs[0]).into_iter().filter(|&s| s).count();
        Ok(vec![count_tensor(k)])
    }
}

/// Selection by flags on burn float and int tensors (`torch.masked_select`). The result is
/// 1-D, sized by the number of set flags: the method reads that count back (one host read, a
/// sync); the selection itself is one pass on the device.
pub trait SelectExt<B: PrimBackend, const D: usize, K: NumericKind<B>>: Sized {
    /// The elements where `mask` (same shape) is `true`, in row-major order
    /// (`torch.masked_select(x, mask)`).
    ///
    /// # Panics
    ///
    /// Before anything is queued (burn's convention for invalid arguments), with the message of a
    /// cubeprim [`Error`](crate::Error): [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) for
    /// a mask of another shape, [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for a
    /// dtype cubeprim does not take, and, on a device, where the op cannot run there (for example
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for bf16 on Vulkan).
    fn prim_masked_select(self, mask: Tensor<B, D, Bool>) -> Tensor<B, 1, K>;
    /// The elements whose flag (same shape, any kind: float, int or bool) is non-zero, in
    /// row-major order (`x[flags != 0]`).
    ///
    /// # Panics
    ///
    /// As [`prim_masked_select`](Self::prim_masked_select).
    fn prim_select<F: PrimKind<B>>(self, flags: Tensor<B, D, F>) -> Tensor<B, 1, K>;
}

impl<B: PrimBackend, const D: usize, K: NumericKind<B>> SelectExt<B, D, K> for Tensor<B, D, K> {
    fn prim_masked_select(self, mask: Tensor<B, D, Bool>) -> Tensor<B, 1, K> {
        self.prim_select(mask)
    }

    fn prim_select<F: PrimKind<B>>(self, flags: Tensor<B, D, F>) -> Tensor<B, 1, K> {
        let (outs, k) = read_count(run::<B, _>(&Select, vec![any(self), any(flags)]));
        let [out] = take(outs);
        tensor::<B, 1, K>(out).slice(0..k)
    }
}

/// Where the non-zero elements are, on burn tensors of every kind (float, int, bool).
pub trait NonZeroExt<B: PrimBackend, const D: usize>: Sized {
    /// The indices of the non-zero (`true`) elements, one row of `D` per element in row-major
    /// order: `[count, D]` (`torch.nonzero(x)`, `torch.argwhere(x)`, burn's bool `argwhere`).
    /// Reads the count back (one host read, a sync); the indices are one pass on the device.
    ///
    /// # Panics
    ///
    /// Before anything is queued (burn's convention for invalid arguments), with the message of a
    /// cubeprim [`Error`](crate::Error):
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for a dtype cubeprim does not
    /// take, and, on a device, where the op cannot run there (for example
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for bf16 on Vulkan).
    fn prim_nonzero(self) -> Tensor<B, 2, Int>;
    /// Same as [`NonZeroExt::prim_nonzero`] (`torch.argwhere`).
    ///
    /// # Panics
    ///
    /// As [`prim_nonzero`](Self::prim_nonzero).
    fn prim_argwhere(self) -> Tensor<B, 2, Int> {
        self.prim_nonzero()
    }
    /// How many elements are non-zero, as a `[1]` int tensor left on the device (no host read;
    /// `torch.count_nonzero(x)`).
    ///
    /// # Panics
    ///
    /// As [`prim_nonzero`](Self::prim_nonzero).
    fn prim_count_nonzero(self) -> Tensor<B, 1, Int>;
}

impl<B: PrimBackend, const D: usize, K: PrimKind<B>> NonZeroExt<B, D> for Tensor<B, D, K> {
    fn prim_nonzero(self) -> Tensor<B, 2, Int> {
        let (outs, k) = read_count(run::<B, _>(&NonZero, vec![any(self)]));
        let [out] = take(outs);
        tensor::<B, 2, Int>(out).slice(0..k)
    }

    fn prim_count_nonzero(self) -> Tensor<B, 1, Int> {
        let [out] = take(run::<B, _>(&CountNonZero, vec![any(self)]));
        tensor(out)
    }
}
