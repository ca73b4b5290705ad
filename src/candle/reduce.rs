//! Reductions along a dimension of candle tensors: [`ReduceExt`].

use super::cpu::{par_rows, with_cpu_storage, IntoCpuStorage, Rows};
use super::grad::{differentiable, Backward};
use super::ops::{apply, apply_tracked, bad_dtype, outputs, widen, OnDevice, PrimOp};
use crate::cpu::ScanElement;
use crate::{DeviceTensor, Element, ReduceOp};
use candle_core::backend::BackendStorage;
use candle_core::shape::Dim;
use candle_core::{CpuStorage, Layout, Result, Shape, Tensor};
use cubecl::prelude::*;

/// Folds along one dimension of [`Tensor`]s, which is removed from the shape (any device the
/// adapter supports, any layout). Same semantics as the scans: f16 / bf16 accumulate in f32,
/// integer sums and products wrap, max / min propagate NaN. A sum or product over an empty
/// dimension is 0 / 1; a max or min over one is an error. Differentiable (candle `Var`s): sum,
/// prod (zeros as PyTorch), max / min (shared evenly among ties, as `torch.amax`) and
/// logsumexp (`grad * exp(x - y)`).
pub trait ReduceExt {
    /// The fold of `dim` with any operator.
    ///
    /// # Errors
    ///
    /// candle's `DimOutOfRange` for a dimension past the rank, `Msg` for a max / min over an empty
    /// dimension; otherwise candle's `DeviceMismatchBinaryOp` for tensors on different devices,
    /// `UnsupportedDTypeForOp` for a dtype the op does not take, an error of candle's for a device
    /// without the adapter's path (`Msg`). On a GPU device, a cubeprim [`Error`](crate::Error) the
    /// device path returns, wrapped in candle's `Error::Wrapped`.
    fn reduce<D: Dim>(&self, dim: D, op: ReduceOp) -> Result<Tensor>;
    /// Sum (candle's `sum(dim)`, `torch.sum(t, dim)`).
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    fn reduce_sum<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.reduce(dim, ReduceOp::Sum)
    }
    /// Product (`torch.prod(t, dim)`; candle has none).
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    fn reduce_prod<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.reduce(dim, ReduceOp::Prod)
    }
    /// Maximum, NaN if any is (candle's `max(dim)`, `torch.amax(t, dim)`).
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    fn reduce_max<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.reduce(dim, ReduceOp::Max)
    }
    /// Minimum, NaN if any is (candle's `min(dim)`, `torch.amin(t, dim)`).
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    fn reduce_min<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.reduce(dim, ReduceOp::Min)
    }
    /// `log(sum(exp(t)))` along `dim` (`torch.logsumexp(t, dim)`): floats only, stable for
    /// large inputs, -inf over an empty dimension, NaN if any is.
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce); `UnsupportedDTypeForOp` for an integer dtype.
    fn logsumexp<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.reduce(dim, ReduceOp::LogSumExp)
    }
    /// [`reduce`](Self::reduce) keeping `dim` with length 1 (candle's `sum_keepdim` naming;
    /// `torch.sum(t, dim, keepdim=True)`), so that the result broadcasts against `self`.
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    ///
    /// # Example
    ///
    /// ```
    /// use candle_core::{Device, Tensor, D};
    /// use cubeprim::candle::prelude::*;
    ///
    /// let x = Tensor::new(&[[1f32, 2., 5.], [4., 3., 0.]], &Device::Cpu)?;
    /// let m = x.reduce_keepdim(D::Minus1, ReduceOp::Max)?; // [2, 1]
    /// assert_eq!(m.to_vec2::<f32>()?, [[5.], [4.]]);
    /// assert_eq!(x.broadcast_sub(&m)?.to_vec2::<f32>()?, [[-4., -3., 0.], [0., -1., -4.]]);
    /// assert_eq!(x.reduce_prod_keepdim(0)?.to_vec2::<f32>()?, [[4., 6., 0.]]);
    /// # Ok::<(), candle_core::Error>(())
    /// ```
    fn reduce_keepdim<D: Dim>(&self, dim: D, op: ReduceOp) -> Result<Tensor>;
    /// Sum keeping `dim` (candle's `sum_keepdim(dim)`, `torch.sum(t, dim, keepdim=True)`).
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    fn reduce_sum_keepdim<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.reduce_keepdim(dim, ReduceOp::Sum)
    }
    /// Product keeping `dim` (`torch.prod(t, dim, keepdim=True)`).
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    fn reduce_prod_keepdim<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.reduce_keepdim(dim, ReduceOp::Prod)
    }
    /// Maximum keeping `dim` (candle's `max_keepdim(dim)`, `torch.amax(t, dim, keepdim=True)`).
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    fn reduce_max_keepdim<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.reduce_keepdim(dim, ReduceOp::Max)
    }
    /// Minimum keeping `dim` (candle's `min_keepdim(dim)`, `torch.amin(t, dim, keepdim=True)`).
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    fn reduce_min_keepdim<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.reduce_keepdim(dim, ReduceOp::Min)
    }
}

impl ReduceExt for Tensor {
    fn reduce<D: Dim>(&self, dim: D, op: ReduceOp) -> Result<Tensor> {
        let axis = dim.to_index(self.shape(), "reduce")?;
        super::ops::check_op_dtype(self, op, "cubeprim reduce")?;
        if self.dims()[axis] == 0 && matches!(op, ReduceOp::Max | ReduceOp::Min) {
            return Err(candle_core::Error::Msg(format!(
                "reduce: {op:?} over an empty dimension has no value"
            )));
        }
        let (wide, dtype) = widen(self)?;
        let r = Reduce { axis, op };
        let [y] = if differentiable(&wide) {
            outputs(apply_tracked(&r, &[&wide], &wide, 0, |_| {
                Ok(Backward::Reduce { axis, op })
            })?)
        } else {
            outputs(apply(&r, &[&wide])?)
        };
        y.to_dtype(dtype)
    }
    fn reduce_keepdim<D: Dim>(&self, dim: D, op: ReduceOp) -> Result<Tensor> {
        let axis = dim.to_index(self.shape(), "reduce_keepdim")?;
        self.reduce(axis, op)?.unsqueeze(axis)
    }
}

pub(super) struct Reduce {
    pub(super) axis: usize,
    pub(super) op: ReduceOp,
}

/// The fold of every line of a view along `axis`, in line order.
fn fold_lines<E: ScanElement + Send + Sync>(
    data: &[E],
    layout: &Layout,
    axis: usize,
    op: ReduceOp,
) -> Vec<E> {
    let rows = Rows::new(layout, axis);
    let mut out = vec![E::from_acc(E::identity(op)); rows.starts.len()];
    par_rows(&mut out, 1, |r, o| {
        let s = rows.starts[r];
        let mut a = E::identity(op);
        for j in 0..rows.n {
            a = E::combine(op, a, E::to_acc(data[s + j * rows.step]));
        }
        o[0] = E::from_acc(a);
    });
    out
}

impl PrimOp for Reduce {
    const NAME: &'static str = "reduce";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let (s, l) = inputs[0];
        let out = with_cpu_storage!(
            s,
            |v| IntoCpuStorage::into_storage(fold_lines(v, l, self.axis, self.op)),
            return Err(bad_dtype(s.dtype(), "cubeprim reduce"))
        );
        let mut dims = l.dims().to_vec();
        dims.remove(self.axis);
        Ok(vec![(out, Shape::from(dims))])
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        let x = &d.inputs[0];
        let mut dims = x.shape.clone();
        dims.remove(self.axis);
        if x.num_elements() == 0 {
            // Nothing to read: the identity everywhere (max / min refused).
            let id = match self.op {
                ReduceOp::Prod => 1.0,
                ReduceOp::LogSumExp => f64::NEG_INFINITY,
                _ => 0.0,
            };
            let n = dims.iter().product();
            return Ok(vec![crate::dispatch::with_dtype!(x.dtype, |T, _A| {
                DeviceTensor::from_slice(d.client, &vec![<T as Element>::from_f64(id); n], &dims)?
            })]);
        }
        let out = DeviceTensor::try_empty(d.client, &dims, x.dtype)?;
        crate::reduce_into(d.client, x, Some(self.axis as isize), self.op, &out, d.ws)?;
        Ok(vec![out])
    }
}
