//! The linear recurrence on candle tensors: [`RecurrenceExt`].
//!
//! One candle custom op of `a`, `b` (and `h0`): its forward runs the CPU path, or cubeprim's
//! [`linear_recurrence`](crate::linear_recurrence) on the device (CUDA through the bridge,
//! Metal through the staged route), and its backward is another linear recurrence (the
//! adjoint, in the other direction) and element-wise products, so `Var`s of `a`, `b` and `h0`
//! train.

use super::ops::{bad_dtype, same_shape, OnDevice, PrimOp};
use crate::{DeviceTensor, RecurrenceOptions};
use candle_core::backend::BackendStorage;
use candle_core::shape::Dim;
use candle_core::{CpuStorage, CustomOp2, CustomOp3, Layout, Result, Shape, Tensor};
use cubecl::prelude::*;
use std::sync::Arc;

/// `h[t] = a[t] * h[t-1] + b[t]` along a dimension of candle tensors.
pub trait RecurrenceExt {
    /// `h[t] = a[t] * h[t-1] + b[t]` along `dim`, `self` holding the multipliers `a` and `b`
    /// the inputs (one shape, one float dtype), from `h[-1] = h0` (the shape without `dim`) or
    /// 0; with `reverse`, `h[t] = a[t] * h[t+1] + b[t]` from the end. f16 / bf16 compute in
    /// f32, f64 in f64 (on a GPU in chunks, not in one pass: see
    /// [`crate::linear_recurrence`]). Differentiable in `a`, `b` and `h0` (candle `Var`s).
    ///
    /// # Errors
    ///
    /// candle's `ShapeMismatchBinaryOp` for `a`, `b` or `h0` of other shapes,
    /// `UnsupportedDTypeForOp` for an integer dtype or mixed dtypes, `DimOutOfRange`, and on a
    /// GPU a cubeprim [`Error`](crate::Error) wrapped in candle's `Error::Wrapped`.
    ///
    /// # Example
    ///
    /// ```
    /// use candle_core::{Device, Tensor};
    /// use cubeprim::candle::prelude::*;
    ///
    /// // An exponential moving average with decay 0.5, from 8.
    /// let a = Tensor::new(&[[0.5f32, 0.5, 0.5]], &Device::Cpu)?;
    /// let b = Tensor::new(&[[4f32, 2., 1.]], &Device::Cpu)?;
    /// let h0 = Tensor::new(&[8f32], &Device::Cpu)?;
    /// let h = a.linear_recurrence(&b, Some(&h0), 1, false)?;
    /// assert_eq!(h.to_vec2::<f32>()?, [[8., 6., 4.]]);
    /// # Ok::<(), candle_core::Error>(())
    /// ```
    fn linear_recurrence<D: Dim>(
        &self,
        b: &Tensor,
        h0: Option<&Tensor>,
        dim: D,
        reverse: bool,
    ) -> Result<Tensor>;
}

impl RecurrenceExt for Tensor {
    fn linear_recurrence<D: Dim>(
        &self,
        b: &Tensor,
        h0: Option<&Tensor>,
        dim: D,
        reverse: bool,
    ) -> Result<Tensor> {
        const NAME: &str = "linear_recurrence";
        let axis = dim.to_index(b.shape(), NAME)?;
        same_shape(b, self, NAME)?;
        let dtype = b.dtype();
        if !dtype.is_float() || super::ops::dtype_of(dtype).is_none() {
            return Err(bad_dtype(dtype, NAME));
        }
        for t in std::iter::once(self).chain(h0) {
            if t.dtype() != dtype {
                return Err(bad_dtype(t.dtype(), NAME));
            }
        }
        let op = Recurrence { axis, reverse };
        let a = self.contiguous()?;
        let b = b.contiguous()?;
        match h0 {
            None => a.apply_op2_arc(&b, Arc::new(Box::new(op))),
            Some(h0) => {
                let mut want = b.dims().to_vec();
                want.remove(axis);
                if h0.dims() != want {
                    return Err(candle_core::Error::ShapeMismatchBinaryOp {
                        lhs: Shape::from(want),
                        rhs: h0.shape().clone(),
                        op: NAME,
                    }
                    .bt());
                }
                a.apply_op3_arc(&b, &h0.contiguous()?, Arc::new(Box::new(op)))
            }
        }
    }
}

/// The op: inputs `a`, `b`, and `h0` when it has three.
#[derive(Debug, Clone, Copy)]
struct Recurrence {
    axis: usize,
    reverse: bool,
}

/// The elements of a contiguous view.
fn elems<'a, E>(v: &'a [E], l: &Layout) -> Result<&'a [E]> {
    match l.contiguous_offsets() {
        Some((s, e)) => Ok(&v[s..e]),
        None => Err(candle_core::Error::Msg(
            "cubeprim linear_recurrence: a strided input (made contiguous first)".into(),
        )),
    }
}

impl PrimOp for Recurrence {
    const NAME: &'static str = "linear_recurrence";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let ((sa, la), (sb, lb)) = (inputs[0], inputs[1]);
        let dims = lb.dims().to_vec();
        macro_rules! run {
            ($a:expr, $b:expr, $v:ident) => {{
                let h0 = match inputs.get(2) {
                    Some((CpuStorage::$v(h), l)) => Some(elems(h, l)?),
                    Some((s, _)) => return Err(bad_dtype(s.dtype(), Self::NAME)),
                    None => None,
                };
                let h = crate::cpu::linear_recurrence(
                    elems($a, la)?,
                    elems($b, lb)?,
                    h0,
                    &dims,
                    self.axis,
                    self.reverse,
                )
                .map_err(super::wrap)?;
                CpuStorage::$v(h)
            }};
        }
        let out = match (sa, sb) {
            (CpuStorage::F32(a), CpuStorage::F32(b)) => run!(a, b, F32),
            (CpuStorage::F64(a), CpuStorage::F64(b)) => run!(a, b, F64),
            (CpuStorage::F16(a), CpuStorage::F16(b)) => run!(a, b, F16),
            (CpuStorage::BF16(a), CpuStorage::BF16(b)) => run!(a, b, BF16),
            _ => return Err(bad_dtype(sb.dtype(), Self::NAME)),
        };
        Ok(vec![(out, Shape::from(dims))])
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        let opts = RecurrenceOptions {
            reverse: self.reverse,
            ..Default::default()
        };
        let i = &d.inputs;
        let h = crate::linear_recurrence(
            d.client,
            &i[0],
            &i[1],
            i.get(2),
            self.axis as isize,
            opts,
            d.ws,
        )?;
        Ok(vec![h])
    }
}

impl Recurrence {
    fn first<S>(mut v: Vec<(S, Shape)>) -> Result<(S, Shape)> {
        v.pop()
            .ok_or_else(|| candle_core::Error::Msg("linear_recurrence: no output".into()))
    }

    /// The gradients of `a`, `b` (and `h0`): the adjoint `λ[t] = g[t] + a[t+1] λ[t+1]` (a
    /// linear recurrence in the other direction over the multipliers shifted by one), then
    /// `da[t] = λ[t] h[t-1]` (`h[-1]`: `h0` or 0), `db = λ`, `dh0 = a[0] λ[0]` (forward; a
    /// reverse recurrence mirrors it).
    fn grads(
        &self,
        a: &Tensor,
        h: &Tensor,
        h0: Option<&Tensor>,
        g: &Tensor,
    ) -> Result<(Tensor, Tensor, Option<Tensor>)> {
        let (a, h, g) = (a.detach(), h.detach(), g.detach());
        let axis = self.axis;
        let n = a.dims()[axis];
        if a.elem_count() == 0 {
            let dh0 = h0.map(|t| t.zeros_like()).transpose()?;
            return Ok((a.zeros_like()?, a.zeros_like()?, dh0));
        }
        let mut slot = a.dims().to_vec();
        slot[axis] = 1;
        let zero = Tensor::zeros(slot, a.dtype(), a.device())?;
        let start = match h0 {
            Some(h0) => h0.detach().unsqueeze(axis)?,
            None => zero.clone(),
        };
        // The next multiplier and the previous state of each step, in the forward's order.
        let (a_next, h_prev) = if n == 1 {
            (zero, start)
        } else if self.reverse {
            (
                Tensor::cat(&[&zero, &a.narrow(axis, 0, n - 1)?], axis)?,
                Tensor::cat(&[&h.narrow(axis, 1, n - 1)?, &start], axis)?,
            )
        } else {
            (
                Tensor::cat(&[&a.narrow(axis, 1, n - 1)?, &zero], axis)?,
                Tensor::cat(&[&start, &h.narrow(axis, 0, n - 1)?], axis)?,
            )
        };
        let lambda = a_next.linear_recurrence(&g, None, axis, !self.reverse)?;
        let da = lambda.mul(&h_prev)?;
        let dh0 = match h0 {
            Some(_) => {
                let first = if self.reverse { n - 1 } else { 0 };
                Some(a.mul(&lambda)?.narrow(axis, first, 1)?.squeeze(axis)?)
            }
            None => None,
        };
        Ok((da, lambda, dh0))
    }
}

impl CustomOp2 for Recurrence {
    fn name(&self) -> &'static str {
        "cubeprim-linear-recurrence"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        Self::first(self.cpu(&[(s1, l1), (s2, l2)])?)
    }

    #[cfg(feature = "candle-cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        Self::first(super::bridge::run(self, &[(s1, l1), (s2, l2)])?)
    }

    #[cfg(all(feature = "candle-metal", target_os = "macos"))]
    fn metal_fwd(
        &self,
        s1: &candle_core::MetalStorage,
        l1: &Layout,
        s2: &candle_core::MetalStorage,
        l2: &Layout,
    ) -> Result<(candle_core::MetalStorage, Shape)> {
        Self::first(super::staged::on_metal(self, &[(s1, l1), (s2, l2)])?)
    }

    fn bwd(
        &self,
        a: &Tensor,
        _b: &Tensor,
        h: &Tensor,
        g: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let (da, db, _) = self.grads(a, h, None, g)?;
        Ok((Some(da), Some(db)))
    }
}

impl CustomOp3 for Recurrence {
    fn name(&self) -> &'static str {
        "cubeprim-linear-recurrence"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        Self::first(self.cpu(&[(s1, l1), (s2, l2), (s3, l3)])?)
    }

    #[cfg(feature = "candle-cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
        s3: &candle_core::CudaStorage,
        l3: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        Self::first(super::bridge::run(self, &[(s1, l1), (s2, l2), (s3, l3)])?)
    }

    #[cfg(all(feature = "candle-metal", target_os = "macos"))]
    fn metal_fwd(
        &self,
        s1: &candle_core::MetalStorage,
        l1: &Layout,
        s2: &candle_core::MetalStorage,
        l2: &Layout,
        s3: &candle_core::MetalStorage,
        l3: &Layout,
    ) -> Result<(candle_core::MetalStorage, Shape)> {
        Self::first(super::staged::on_metal(
            self,
            &[(s1, l1), (s2, l2), (s3, l3)],
        )?)
    }

    fn bwd(
        &self,
        a: &Tensor,
        _b: &Tensor,
        h0: &Tensor,
        h: &Tensor,
        g: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let (da, db, dh0) = self.grads(a, h, Some(h0), g)?;
        Ok((Some(da), Some(db), dh0))
    }
}
