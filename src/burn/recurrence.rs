//! The linear recurrence on burn tensors: [`RecurrenceExt`] and its op.

use super::backend::{run, AnyPrimitive, PrimBackend};
use super::grad::Saved;
use super::host::{with_host_data, HostTensor, IntoHostData};
use super::op::{check_inputs, device_dtype, same_shape, OutputSpec, PrimOp, TensorMeta};
use super::scan::take;
use crate::{DeviceTensor, Error, RecurrenceOptions, Result, Workspace};
use ::burn::tensor::ops::FloatTensor;
use ::burn::tensor::{AsIndex, Tensor, TensorPrimitive};
use cubecl::prelude::*;

/// `h[t] = a[t] * h[t-1] + b[t]` along `axis` ([`crate::linear_recurrence`]): inputs `a`, `b`
/// and, with `with_h0`, the initial state (the shape of `b` with 1 along `axis`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinearRecurrence {
    /// The axis (already resolved: non-negative).
    pub axis: usize,
    /// Run from the end of the axis.
    pub reverse: bool,
    /// A third input holds `h[-1]`.
    pub with_h0: bool,
}

impl LinearRecurrence {
    /// The shape of `h0` for inputs of `shape`: 1 along the axis.
    fn h0_shape(&self, shape: &[usize]) -> Vec<usize> {
        let mut s = shape.to_vec();
        s[self.axis] = 1;
        s
    }
}

impl PrimOp for LinearRecurrence {
    const NAME: &'static str = "cubeprim::linear_recurrence";

    fn outputs(&self, inputs: &[TensorMeta]) -> Result<Vec<OutputSpec>> {
        let count = if self.with_h0 { 3 } else { 2 };
        check_inputs(inputs, count, false, "linear recurrences")?;
        let (a, b) = (&inputs[0], &inputs[1]);
        if self.axis >= b.rank() {
            return Err(Error::AxisOutOfRange {
                axis: self.axis as isize,
                rank: b.rank(),
            });
        }
        same_shape(b, a)?;
        let dtype = b.prim_dtype()?;
        if !dtype.is_float() {
            return Err(Error::UnsupportedDType {
                dtype,
                reason: "a linear recurrence is defined for floats".into(),
            });
        }
        for x in &inputs[..count] {
            if x.dtype != b.dtype {
                return Err(Error::UnsupportedDType {
                    dtype: x.prim_dtype()?,
                    reason: format!("the inputs must all be {dtype}"),
                });
            }
        }
        if self.with_h0 && inputs[2].shape != self.h0_shape(&b.shape) {
            return Err(Error::ShapeMismatch {
                expected: self.h0_shape(&b.shape),
                got: inputs[2].shape.clone(),
            });
        }
        Ok(vec![OutputSpec::like(inputs, 1)])
    }

    fn check_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[TensorMeta],
    ) -> Result<()> {
        let dtype = device_dtype(client, &inputs[1])?;
        crate::recurrence::check_dtype(client, dtype)
    }

    fn run_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[DeviceTensor<R>],
        ws: &mut Workspace<R>,
    ) -> Result<Vec<DeviceTensor<R>>> {
        // h0 without its axis of one element (a view of the same memory).
        let h0 = inputs.get(2).map(|h| {
            let keep = |v: &[usize]| -> Vec<usize> {
                v.iter()
                    .enumerate()
                    .filter(|&(d, _)| d != self.axis)
                    .map(|(_, &x)| x)
                    .collect()
            };
            DeviceTensor::from_parts(
                h.handle.clone(),
                keep(&h.shape),
                keep(&h.strides),
                h.offset,
                h.dtype,
            )
        });
        let opts = RecurrenceOptions {
            reverse: self.reverse,
            ..Default::default()
        };
        let h = crate::linear_recurrence(
            client,
            &inputs[0],
            &inputs[1],
            h0.as_ref(),
            self.axis as isize,
            opts,
            ws,
        )?;
        Ok(vec![h])
    }

    fn run_host(&self, inputs: &[HostTensor<'_>]) -> Result<Vec<HostTensor<'static>>> {
        let b = &inputs[1];
        let shape = b.shape.clone();
        with_host_data!(&b.data, |v: E| {
            let a = typed::<E>(&inputs[0])?;
            let h0 = inputs.get(2).map(typed::<E>).transpose()?;
            let h = crate::cpu::linear_recurrence(a, v, h0, &shape, self.axis, self.reverse)?;
            Ok(vec![HostTensor {
                shape,
                data: E::into_host(h),
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
        super::grad::recurrence_backward(self, saved, grad)
    }
}

/// The elements of `t` as `E` (the inputs share `b`'s dtype: checked by `outputs`).
fn typed<'b, E: IntoHostData>(t: &'b HostTensor<'_>) -> Result<&'b [E]> {
    E::slice_of(&t.data).ok_or_else(|| Error::UnsupportedDType {
        dtype: t.data.dtype(),
        reason: "the inputs of a linear recurrence share one dtype".into(),
    })
}

/// The linear recurrence on burn float tensors, on any [`PrimBackend`]; `self` holds the
/// multipliers `a`. Differentiable in `a`, `b` and `h0`.
///
/// `dim` may be negative (counted from the end). Invalid arguments panic, as burn's own
/// methods do.
pub trait RecurrenceExt<B: PrimBackend, const D: usize>: Sized {
    /// `h[t] = a[t] * h[t-1] + b[t]` along `dim` from `h[-1] = 0` (with `reverse`,
    /// `h[t] = a[t] * h[t+1] + b[t]` from the end): [`crate::linear_recurrence`].
    ///
    /// # Panics
    ///
    /// Before anything is queued, with the message of a cubeprim [`Error`](crate::Error): shapes
    /// or dtypes of `a` and `b` that differ, an int dtype, a `dim` out of range, and f64 on a
    /// runtime without it ([`Error::UnsupportedDType`](crate::Error::UnsupportedDType)).
    fn prim_linear_recurrence(self, b: Self, dim: impl AsIndex, reverse: bool) -> Self;

    /// [`prim_linear_recurrence`](Self::prim_linear_recurrence) from the state `h0` (the shape
    /// of `b` with 1 along `dim`).
    ///
    /// # Panics
    ///
    /// As [`prim_linear_recurrence`](Self::prim_linear_recurrence), and for `h0` of another
    /// shape or dtype.
    fn prim_linear_recurrence_from(
        self,
        b: Self,
        h0: Self,
        dim: impl AsIndex,
        reverse: bool,
    ) -> Self;
}

impl<B: PrimBackend, const D: usize> RecurrenceExt<B, D> for Tensor<B, D> {
    fn prim_linear_recurrence(self, b: Self, dim: impl AsIndex, reverse: bool) -> Self {
        recurrence(vec![self, b], dim.expect_dim_index(D), reverse)
    }

    fn prim_linear_recurrence_from(
        self,
        b: Self,
        h0: Self,
        dim: impl AsIndex,
        reverse: bool,
    ) -> Self {
        recurrence(vec![self, b, h0], dim.expect_dim_index(D), reverse)
    }
}

fn recurrence<B: PrimBackend, const D: usize>(
    inputs: Vec<Tensor<B, D>>,
    axis: usize,
    reverse: bool,
) -> Tensor<B, D> {
    let op = LinearRecurrence {
        axis,
        reverse,
        with_h0: inputs.len() == 3,
    };
    let inputs = inputs
        .into_iter()
        .map(|t| AnyPrimitive::Float(t.into_primitive().tensor()))
        .collect();
    let [h] = take(run::<B, _>(&op, inputs));
    match h {
        AnyPrimitive::Float(t) => Tensor::from_primitive(TensorPrimitive::Float(t)),
        other => panic!("a linear recurrence returned {:?}", other.kind()),
    }
}
