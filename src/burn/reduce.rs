//! Reductions on burn tensors: [`ReduceExt`] and its op (sum, prod, max, min along a dim,
//! keeping it as burn's `sum_dim` does, or of the whole tensor). The result stays on the device.

use super::backend::{any, run, tensor, NumericKind, PrimBackend};
use super::grad::Saved;
use super::host::{with_host_data, HostTensor, IntoHostData};
use super::op::{check_inputs, device_dtype, OutputSpec, PrimOp, TensorMeta};
use super::scan::take;
use crate::cpu;
use crate::tensor::contiguous_strides;
use crate::{DeviceTensor, Error, ReduceOp, Result, Workspace};
use ::burn::tensor::ops::FloatTensor;
use ::burn::tensor::{AsIndex, Tensor};
use cubecl::prelude::*;
use rayon::prelude::*;

/// A reduction along `axis` (kept, of size 1), or of everything (`None`: shape `[1]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reduce {
    /// The reduced axis, kept with size 1; `None`: every element.
    pub axis: Option<usize>,
    /// The operator.
    pub op: ReduceOp,
}

impl Reduce {
    /// The output shape with the reduced axis removed (what [`crate::reduce_into`] writes).
    fn dropped(&self, shape: &[usize]) -> Vec<usize> {
        match self.axis {
            Some(a) => [&shape[..a], &shape[a + 1..]].concat(),
            None => vec![],
        }
    }
}

impl PrimOp for Reduce {
    const NAME: &'static str = "cubeprim::reduce";

    fn outputs(&self, inputs: &[TensorMeta]) -> Result<Vec<OutputSpec>> {
        check_inputs(inputs, 1, false, "reductions")?;
        let x = &inputs[0];
        let mut out = OutputSpec::like(inputs, 0);
        let n = match self.axis {
            Some(a) if a >= x.rank() => {
                return Err(Error::AxisOutOfRange {
                    axis: a as isize,
                    rank: x.rank(),
                })
            }
            Some(a) => {
                out.shape[a] = 1;
                x.shape[a]
            }
            None => {
                out.shape = vec![1];
                x.shape.iter().product()
            }
        };
        self.op.check_dtype(x.prim_dtype()?)?;
        if n == 0 && matches!(self.op, ReduceOp::Max | ReduceOp::Min) {
            return Err(Error::Unsupported(format!(
                "{:?} of no elements has no value",
                self.op
            )));
        }
        Ok(vec![out])
    }

    fn check_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[TensorMeta],
    ) -> Result<()> {
        let x = &inputs[0];
        let dtype = device_dtype(client, x)?;
        if x.shape.contains(&0) {
            return Ok(());
        }
        let axis = self.axis.map(|a| a as isize);
        crate::reduce_workspace_bytes(client, &x.shape, axis, dtype).map(drop)
    }

    fn run_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[DeviceTensor<R>],
        ws: &mut Workspace<R>,
    ) -> Result<Vec<DeviceTensor<R>>> {
        let x = &inputs[0];
        let kept = match self.axis {
            Some(a) => {
                let mut s = x.shape.clone();
                s[a] = 1;
                s
            }
            None => vec![1],
        };
        let out = DeviceTensor::try_empty(client, &kept, x.dtype)?;
        let dropped = self.dropped(&x.shape);
        let strides = contiguous_strides(&dropped);
        let target = DeviceTensor::from_parts(out.handle.clone(), dropped, strides, 0, x.dtype);
        let axis = self.axis.map(|a| a as isize);
        crate::reduce_into(client, x, axis, self.op, &target, ws)?;
        Ok(vec![out])
    }

    fn run_host(&self, inputs: &[HostTensor<'_>]) -> Result<Vec<HostTensor<'static>>> {
        let x = &inputs[0];
        let shape = &x.shape;
        let mut kept = shape.clone();
        let op = self.op;
        with_host_data!(&x.data, |v: E| {
            let out: Vec<E> = match self.axis {
                // Slabs `[n, inner]` of the outer axes in parallel.
                Some(a) => {
                    let (n, inner) = (shape[a], shape[a + 1..].iter().product::<usize>());
                    kept[a] = 1;
                    let outer: usize = shape[..a].iter().product();
                    let slab = (n * inner).max(1);
                    let parts: Vec<Vec<E>> = (0..outer)
                        .into_par_iter()
                        .map(|o| {
                            let x = v.get(o * slab..(o + 1) * slab).unwrap_or(&[]);
                            cpu::reduce(x, &[n, inner], Some(0), op)
                        })
                        .collect::<Result<_>>()?;
                    parts.concat()
                }
                None => {
                    kept = vec![1];
                    cpu::reduce(v, shape, None, op)?
                }
            };
            Ok(vec![HostTensor {
                shape: kept,
                data: E::into_host(out),
            }])
        })
    }

    fn grad_output(&self) -> Option<usize> {
        Some(0)
    }

    fn backward<B: PrimBackend>(
        &self,
        saved: &Saved<B>,
        grad: FloatTensor<B>,
    ) -> Vec<Option<FloatTensor<B>>> {
        super::grad::reduce_backward(self, saved, grad)
    }
}

/// Reductions of burn float and int tensors, on any [`PrimBackend`]: along `dim` (kept with
/// size 1, as burn's `sum_dim`), or of the whole tensor (shape `[1]`). Results stay on the
/// device (no host read). Float sums run in a fixed order (the same result on every run); f16
/// / bf16 accumulate in f32; integer sums and products wrap; max / min propagate NaN. Invalid
/// arguments panic, as burn's methods do: a dim out of range, a max / min of no elements.
pub trait ReduceExt<B: PrimBackend, const D: usize, K: NumericKind<B>>: Sized {
    /// `op` along `dim`, kept with size 1.
    ///
    /// # Panics
    ///
    /// Before anything is queued (burn's convention for invalid arguments), with the message of a
    /// cubeprim [`Error`](crate::Error): [`Error::AxisOutOfRange`](crate::Error::AxisOutOfRange)
    /// for a `dim` out of range, [`Error::Unsupported`](crate::Error::Unsupported) for a max / min
    /// of no elements, [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for a dtype
    /// cubeprim does not take, and, on a device, where the op cannot run there (for example
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for bf16 on Vulkan).
    fn prim_reduce_dim(self, dim: impl AsIndex, op: ReduceOp) -> Self;
    /// `op` over every element: shape `[1]`.
    ///
    /// # Panics
    ///
    /// As [`prim_reduce_dim`](Self::prim_reduce_dim).
    fn prim_reduce(self, op: ReduceOp) -> Tensor<B, 1, K>;

    /// Sum along `dim` (burn's `sum_dim`, `torch.sum(x, dim, keepdim=True)`).
    ///
    /// # Panics
    ///
    /// As [`prim_reduce_dim`](Self::prim_reduce_dim).
    fn prim_sum_dim(self, dim: impl AsIndex) -> Self {
        self.prim_reduce_dim(dim, ReduceOp::Sum)
    }
    /// Product along `dim` (burn's `prod_dim`).
    ///
    /// # Panics
    ///
    /// As [`prim_reduce_dim`](Self::prim_reduce_dim).
    fn prim_prod_dim(self, dim: impl AsIndex) -> Self {
        self.prim_reduce_dim(dim, ReduceOp::Prod)
    }
    /// Maximum along `dim` (burn's `max_dim`, `torch.amax(x, dim, keepdim=True)`).
    ///
    /// # Panics
    ///
    /// As [`prim_reduce_dim`](Self::prim_reduce_dim).
    fn prim_max_dim(self, dim: impl AsIndex) -> Self {
        self.prim_reduce_dim(dim, ReduceOp::Max)
    }
    /// Minimum along `dim` (burn's `min_dim`, `torch.amin(x, dim, keepdim=True)`).
    ///
    /// # Panics
    ///
    /// As [`prim_reduce_dim`](Self::prim_reduce_dim).
    fn prim_min_dim(self, dim: impl AsIndex) -> Self {
        self.prim_reduce_dim(dim, ReduceOp::Min)
    }
    /// `log(sum(exp(x)))` along `dim` (`torch.logsumexp(x, dim, keepdim=True)`; float
    /// tensors only, stable for large inputs, -inf over no element). Differentiable.
    ///
    /// # Panics
    ///
    /// As [`prim_reduce_dim`](Self::prim_reduce_dim), and with
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for an int tensor.
    fn prim_logsumexp_dim(self, dim: impl AsIndex) -> Self {
        self.prim_reduce_dim(dim, ReduceOp::LogSumExp)
    }
    /// Sum of every element (burn's `sum`).
    ///
    /// # Panics
    ///
    /// As [`prim_reduce`](Self::prim_reduce).
    fn prim_sum(self) -> Tensor<B, 1, K> {
        self.prim_reduce(ReduceOp::Sum)
    }
    /// Product of every element (burn's `prod`).
    ///
    /// # Panics
    ///
    /// As [`prim_reduce`](Self::prim_reduce).
    fn prim_prod(self) -> Tensor<B, 1, K> {
        self.prim_reduce(ReduceOp::Prod)
    }
    /// Maximum of every element (burn's `max`).
    ///
    /// # Panics
    ///
    /// As [`prim_reduce`](Self::prim_reduce).
    fn prim_max(self) -> Tensor<B, 1, K> {
        self.prim_reduce(ReduceOp::Max)
    }
    /// Minimum of every element (burn's `min`).
    ///
    /// # Panics
    ///
    /// As [`prim_reduce`](Self::prim_reduce).
    fn prim_min(self) -> Tensor<B, 1, K> {
        self.prim_reduce(ReduceOp::Min)
    }
}

impl<B: PrimBackend, const D: usize, K: NumericKind<B>> ReduceExt<B, D, K> for Tensor<B, D, K> {
    fn prim_reduce_dim(self, dim: impl AsIndex, op: ReduceOp) -> Self {
        let axis = Some(dim.expect_dim_index(D));
        let [out] = take(run::<B, _>(&Reduce { axis, op }, vec![any(self)]));
        tensor(out)
    }

    fn prim_reduce(self, op: ReduceOp) -> Tensor<B, 1, K> {
        let [out] = take(run::<B, _>(&Reduce { axis: None, op }, vec![any(self)]));
        tensor(out)
    }
}
