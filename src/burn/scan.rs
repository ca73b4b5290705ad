//! The scan family on burn tensors: [`ScanExt`] and its op.

use super::backend::{run, NumericKind, PrimBackend};
use super::grad::Saved;
use super::host::{self, with_host_data, HostTensor, IntoHostData};
use super::op::{check_inputs, device_dtype, OutputSpec, PrimOp, TensorMeta};
use crate::{DeviceTensor, Error, Result, ScanOp, ScanOptions, Workspace};
use ::burn::tensor::ops::FloatTensor;
use ::burn::tensor::{AsIndex, Int, Tensor};
use cubecl::prelude::*;

/// A scan along `axis` ([`crate::scan()`], or [`crate::scan_with_indices`] when `indexed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scan {
    /// The scanned axis (already resolved: non-negative).
    pub axis: usize,
    /// The operator.
    pub op: ScanOp,
    /// Exclusive / reverse and the algorithm.
    pub opts: ScanOptions,
    /// Also return the index of each running max / min.
    pub indexed: bool,
}

impl PrimOp for Scan {
    const NAME: &'static str = "cubeprim::scan";

    fn outputs(&self, inputs: &[TensorMeta]) -> Result<Vec<OutputSpec>> {
        check_inputs(inputs, 1, false, "scans")?;
        let x = &inputs[0];
        if self.axis >= x.rank() {
            return Err(Error::AxisOutOfRange {
                axis: self.axis as isize,
                rank: x.rank(),
            });
        }
        if self.indexed && !matches!(self.op, ScanOp::Max | ScanOp::Min) {
            return Err(Error::Unsupported(format!(
                "indices are defined for max and min, not {:?}",
                self.op
            )));
        }
        self.op.check_dtype(x.prim_dtype()?)?;
        let mut out = vec![OutputSpec::like(inputs, 0)];
        if self.indexed {
            out.push(OutputSpec::index(x.shape.clone()));
        }
        Ok(out)
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
        let axis = self.axis as isize;
        crate::scan_workspace_bytes(client, &x.shape, axis, dtype, self.indexed, self.opts)
            .map(drop)
    }

    fn run_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[DeviceTensor<R>],
        ws: &mut Workspace<R>,
    ) -> Result<Vec<DeviceTensor<R>>> {
        let (x, axis) = (&inputs[0], self.axis as isize);
        if self.indexed {
            let (v, i) = crate::scan_with_indices(client, x, axis, self.op, self.opts, ws)?;
            Ok(vec![v, i])
        } else {
            Ok(vec![crate::scan(client, x, axis, self.op, self.opts, ws)?])
        }
    }

    fn run_host(&self, inputs: &[HostTensor<'_>]) -> Result<Vec<HostTensor<'static>>> {
        let x = &inputs[0];
        let shape = x.shape.clone();
        with_host_data!(&x.data, |v: E| {
            let (out, idx) =
                host::scan::<E>(v, &shape, self.axis, self.op, self.opts, self.indexed)?;
            let mut outs = vec![HostTensor {
                shape: shape.clone(),
                data: E::into_host(out),
            }];
            if self.indexed {
                outs.push(HostTensor {
                    shape,
                    data: i64::into_host(idx),
                });
            }
            Ok(outs)
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
        super::grad::scan_backward(self, saved, grad)
    }
}

/// Scans on burn float and int tensors, on any [`PrimBackend`].
///
/// `dim` may be negative (counted from the end). Invalid arguments panic, as burn's own
/// methods do: a dim out of range, a dtype cubeprim or the device lacks, indices with a sum or
/// a product.
pub trait ScanExt<B: PrimBackend, const D: usize>: Sized {
    /// Scan with `op` along `dim`; `opts` picks exclusive and / or reverse.
    ///
    /// # Panics
    ///
    /// Before anything is queued (burn's convention for invalid arguments), with the message of a
    /// cubeprim [`Error`](crate::Error): [`Error::AxisOutOfRange`](crate::Error::AxisOutOfRange)
    /// for a `dim` out of range, [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for a
    /// dtype cubeprim does not take, and, on a device, where the op cannot run there (for example
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for bf16 on Vulkan).
    fn prim_scan(self, dim: impl AsIndex, op: ScanOp, opts: ScanOptions) -> Self;

    /// Running max / min with the index along `dim` of the element holding it (ties and NaN:
    /// the latest; `-1` in the first slot of an exclusive scan). Indices have the backend's int
    /// dtype.
    ///
    /// # Panics
    ///
    /// As [`prim_scan`](Self::prim_scan), and with
    /// [`Error::Unsupported`](crate::Error::Unsupported) for [`ScanOp::Sum`] / [`ScanOp::Prod`]
    /// (indices are defined for max and min only).
    fn prim_scan_with_indices(
        self,
        dim: impl AsIndex,
        op: ScanOp,
        opts: ScanOptions,
    ) -> (Self, Tensor<B, D, Int>);

    /// Inclusive running sum (burn's `cumsum`).
    ///
    /// # Panics
    ///
    /// As [`prim_scan`](Self::prim_scan).
    fn prim_cumsum(self, dim: impl AsIndex) -> Self {
        self.prim_scan(dim, ScanOp::Sum, ScanOptions::default())
    }
    /// Inclusive running product (burn's `cumprod`).
    ///
    /// # Panics
    ///
    /// As [`prim_scan`](Self::prim_scan).
    fn prim_cumprod(self, dim: impl AsIndex) -> Self {
        self.prim_scan(dim, ScanOp::Prod, ScanOptions::default())
    }
    /// Inclusive running maximum (burn's `cummax`).
    ///
    /// # Panics
    ///
    /// As [`prim_scan`](Self::prim_scan).
    fn prim_cummax(self, dim: impl AsIndex) -> Self {
        self.prim_scan(dim, ScanOp::Max, ScanOptions::default())
    }
    /// Inclusive running minimum (burn's `cummin`).
    ///
    /// # Panics
    ///
    /// As [`prim_scan`](Self::prim_scan).
    fn prim_cummin(self, dim: impl AsIndex) -> Self {
        self.prim_scan(dim, ScanOp::Min, ScanOptions::default())
    }
    /// Inclusive running `log(sum(exp(x)))` (`torch.logcumsumexp`; float tensors only, stable
    /// for large inputs, NaN propagates). Differentiable.
    ///
    /// # Panics
    ///
    /// As [`prim_scan`](Self::prim_scan), and with
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for an int tensor.
    fn prim_logcumsumexp(self, dim: impl AsIndex) -> Self {
        self.prim_scan(dim, ScanOp::LogSumExp, ScanOptions::default())
    }
    /// Running maximum and its indices (PyTorch's `torch.cummax`).
    ///
    /// # Panics
    ///
    /// As [`prim_scan`](Self::prim_scan).
    fn prim_cummax_with_indices(self, dim: impl AsIndex) -> (Self, Tensor<B, D, Int>) {
        self.prim_scan_with_indices(dim, ScanOp::Max, ScanOptions::default())
    }
    /// Running minimum and its indices (PyTorch's `torch.cummin`).
    ///
    /// # Panics
    ///
    /// As [`prim_scan`](Self::prim_scan).
    fn prim_cummin_with_indices(self, dim: impl AsIndex) -> (Self, Tensor<B, D, Int>) {
        self.prim_scan_with_indices(dim, ScanOp::Min, ScanOptions::default())
    }
}

impl<B: PrimBackend, const D: usize, K: NumericKind<B>> ScanExt<B, D> for Tensor<B, D, K> {
    fn prim_scan(self, dim: impl AsIndex, op: ScanOp, opts: ScanOptions) -> Self {
        let axis = dim.expect_dim_index(D);
        let scan = Scan {
            axis,
            op,
            opts,
            indexed: false,
        };
        let [out] = take(run::<B, _>(&scan, vec![K::into_any(self.into_primitive())]));
        Tensor::from_primitive(K::from_any(out))
    }

    fn prim_scan_with_indices(
        self,
        dim: impl AsIndex,
        op: ScanOp,
        opts: ScanOptions,
    ) -> (Self, Tensor<B, D, Int>) {
        let axis = dim.expect_dim_index(D);
        let scan = Scan {
            axis,
            op,
            opts,
            indexed: true,
        };
        let [out, idx] = take(run::<B, _>(&scan, vec![K::into_any(self.into_primitive())]));
        (
            Tensor::from_primitive(K::from_any(out)),
            Tensor::from_primitive(<Int as super::backend::PrimKind<B>>::from_any(idx)),
        )
    }
}

/// The outputs of an op as an array (their number is fixed by the op).
pub(crate) fn take<T, const N: usize>(v: Vec<T>) -> [T; N] {
    let got = v.len();
    v.try_into()
        .unwrap_or_else(|_| panic!("an op returned {got} outputs, {N} expected"))
}
