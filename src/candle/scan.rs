//! The scan family on candle tensors: [`ScanExt`] and its custom op.

use super::cpu::{scan_view, with_cpu_storage, IntoCpuStorage};
use crate::{ScanOp, ScanOptions};
use candle_core::backend::BackendStorage;
use candle_core::op::BackpropOp;
use candle_core::shape::Dim;
use candle_core::{CpuStorage, CustomOp1, Layout, Result, Shape, Storage, Tensor};
use std::sync::{Arc, Mutex, OnceLock};

/// Scans on [`Tensor`]s (any device, any layout). Outputs are contiguous, of the input's
/// shape and dtype; indices are u32 positions along `dim` (the adapter's index dtype, see the
/// [module docs](crate::candle)), `u32::MAX` where no element is selected (the first slot of
/// an exclusive scan; PyTorch has no exclusive `cummax`).
pub trait ScanExt {
    /// Scan along `dim` with any operator and options (exclusive, reverse).
    ///
    /// # Errors
    ///
    /// candle's `DimOutOfRange` for a dimension past the rank, `UnsupportedDTypeForOp` for a
    /// dtype the scans do not take (see the [module docs](crate::candle)), candle's error for a
    /// device without the adapter's path. On a GPU device, a cubeprim [`Error`](crate::Error)
    /// of the device path, wrapped in candle's `Error::Wrapped`: for example
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for a dtype the device lacks,
    /// or [`Error::Unsupported`](crate::Error::Unsupported) for
    /// [`ScanAlgorithm::ReduceThenScan`](crate::ScanAlgorithm::ReduceThenScan).
    fn scan<D: Dim>(&self, dim: D, op: ScanOp, opts: ScanOptions) -> Result<Tensor>;
    /// Running max / min along `dim` and the index of the element holding it (ties and NaN
    /// pick the later index, as `torch.cummax`).
    ///
    /// # Errors
    ///
    /// As [`scan`](Self::scan), and a wrapped [`Error::Unsupported`](crate::Error::Unsupported) for
    /// [`ScanOp::Sum`] / [`ScanOp::Prod`] (indices are defined for max and min only), a wrapped
    /// [`Error::TooLarge`](crate::Error::TooLarge) for a `dim` longer than `u32::MAX` (the
    /// indices are u32).
    fn scan_with_indices<D: Dim>(
        &self,
        dim: D,
        op: ScanOp,
        opts: ScanOptions,
    ) -> Result<(Tensor, Tensor)>;

    /// Inclusive running sum (`torch.cumsum`; candle's `cumsum`, which is O(n²)).
    ///
    /// # Errors
    ///
    /// As [`scan`](Self::scan).
    fn scan_sum<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.scan(dim, ScanOp::Sum, ScanOptions::default())
    }
    /// Exclusive running sum: element `i` is the sum of the elements before it (offsets
    /// from counts).
    ///
    /// # Errors
    ///
    /// As [`scan`](Self::scan).
    fn exclusive_scan_sum<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.scan(dim, ScanOp::Sum, ScanOptions::default().exclusive())
    }
    /// Inclusive running product (`torch.cumprod`).
    ///
    /// # Errors
    ///
    /// As [`scan`](Self::scan).
    fn scan_prod<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.scan(dim, ScanOp::Prod, ScanOptions::default())
    }
    /// Inclusive running maximum (`torch.cummax(..).values`).
    ///
    /// # Errors
    ///
    /// As [`scan`](Self::scan).
    fn scan_max<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.scan(dim, ScanOp::Max, ScanOptions::default())
    }
    /// Inclusive running minimum (`torch.cummin(..).values`).
    ///
    /// # Errors
    ///
    /// As [`scan`](Self::scan).
    fn scan_min<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.scan(dim, ScanOp::Min, ScanOptions::default())
    }
    /// Running `log(sum(exp(t)))` (`torch.logcumsumexp`): floats only, stable for large
    /// inputs, NaN propagates. Differentiable (PyTorch's `logcumsumexp_backward`).
    ///
    /// # Errors
    ///
    /// As [`scan`](Self::scan); `UnsupportedDTypeForOp` for an integer dtype.
    fn logcumsumexp<D: Dim>(&self, dim: D) -> Result<Tensor> {
        self.scan(dim, ScanOp::LogSumExp, ScanOptions::default())
    }
    /// `torch.cummax`: running maximum and its index.
    ///
    /// # Errors
    ///
    /// As [`scan_with_indices`](Self::scan_with_indices).
    fn scan_max_with_indices<D: Dim>(&self, dim: D) -> Result<(Tensor, Tensor)> {
        self.scan_with_indices(dim, ScanOp::Max, ScanOptions::default())
    }
    /// `torch.cummin`: running minimum and its index.
    ///
    /// # Errors
    ///
    /// As [`scan_with_indices`](Self::scan_with_indices).
    fn scan_min_with_indices<D: Dim>(&self, dim: D) -> Result<(Tensor, Tensor)> {
        self.scan_with_indices(dim, ScanOp::Min, ScanOptions::default())
    }
}

impl ScanExt for Tensor {
    fn scan<D: Dim>(&self, dim: D, op: ScanOp, opts: ScanOptions) -> Result<Tensor> {
        let axis = dim.to_index(self.shape(), "scan")?;
        super::ops::check_op_dtype(self, op, "cubeprim scan")?;
        let custom = ScanCustomOp::new(axis, op, opts, false);
        if self.track_op() {
            // A graph node with the backward pass (`bwd`).
            self.apply_op1(custom)
        } else {
            self.apply_op1_no_bwd(&custom)
        }
    }

    fn scan_with_indices<D: Dim>(
        &self,
        dim: D,
        op: ScanOp,
        opts: ScanOptions,
    ) -> Result<(Tensor, Tensor)> {
        let axis = dim.to_index(self.shape(), "scan_with_indices")?;
        if !matches!(op, ScanOp::Max | ScanOp::Min) {
            return Err(super::wrap(crate::Error::Unsupported(format!(
                "indices are defined for max and min, not {op:?}"
            ))));
        }
        super::ops::u32_len(self.dims()[axis], "a scanned dimension with indices")?;
        let custom = ScanCustomOp::new(axis, op, opts, true);
        let (slot, saved) = (custom.indices.clone(), custom.saved_indices.clone());
        let tracked = self.track_op();
        let values = if tracked {
            // A graph node (the op moves into it; `slot` and `saved` stay shared).
            self.apply_op1(custom)?
        } else {
            self.apply_op1_no_bwd(&custom)?
        };
        let indices = slot
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| candle_core::Error::Msg("the scan wrote no indices".into()))?;
        let indices = Tensor::from_storage(indices, self.shape(), BackpropOp::none(), false);
        // The CUDA and Metal kernels write i64 (`-1`: none), cast here (`u32::MAX`: none); the
        // CPU path writes u32.
        let indices = indices.to_dtype(candle_core::DType::U32)?;
        if tracked {
            // For the backward pass (shared, no copy).
            let _ = saved.set(indices.clone());
        }
        Ok((values, indices))
    }
}

/// One scan as a candle custom op. An indexed scan writes both outputs in one pass; the op
/// returns the values and keeps the indices (in a slot shared with the caller, which the op
/// may move into candle's graph).
pub(crate) struct ScanCustomOp {
    pub axis: usize,
    pub op: ScanOp,
    pub opts: ScanOptions,
    pub indexed: bool,
    indices: Arc<Mutex<Option<Storage>>>,
    /// The indices of an indexed scan whose input tracks a gradient, for the backward pass.
    saved_indices: Arc<OnceLock<Tensor>>,
}

impl ScanCustomOp {
    fn new(axis: usize, op: ScanOp, opts: ScanOptions, indexed: bool) -> Self {
        Self {
            axis,
            op,
            opts,
            indexed,
            indices: Arc::new(Mutex::new(None)),
            saved_indices: Arc::new(OnceLock::new()),
        }
    }

    pub(crate) fn keep_indices(&self, s: Storage) {
        *self.indices.lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
    }
}

impl CustomOp1 for ScanCustomOp {
    fn name(&self) -> &'static str {
        "cubeprim-scan"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        with_cpu_storage!(
            storage,
            |v| {
                let (out, idx) = scan_view(v, layout, self.axis, self.op, self.opts, self.indexed);
                if self.indexed {
                    // Positions below `u32::MAX` (checked by the caller); `-1` (none) becomes
                    // `u32::MAX`, as the cast of the GPU paths' i64 indices.
                    let idx = idx.into_iter().map(|i| i as u32).collect();
                    self.keep_indices(Storage::Cpu(CpuStorage::U32(idx)));
                }
                Ok((IntoCpuStorage::into_storage(out), layout.shape().clone()))
            },
            Err(candle_core::Error::UnsupportedDTypeForOp(
                storage.dtype(),
                "cubeprim scan"
            ))
        )
    }

    #[cfg(feature = "candle-cuda")]
    fn cuda_fwd(
        &self,
        storage: &candle_core::CudaStorage,
        layout: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        super::cuda::scan(self, storage, layout)
    }

    #[cfg(all(feature = "candle-metal", target_os = "macos"))]
    fn metal_fwd(
        &self,
        storage: &candle_core::MetalStorage,
        layout: &Layout,
    ) -> Result<(candle_core::MetalStorage, Shape)> {
        super::metal::scan(self, storage, layout)
    }

    /// The backward pass of every scan (see [`super::grad`]): sum → the sum scan of the
    /// gradient in the other direction; prod → PyTorch's cumprod backward; max / min → the
    /// gradient scattered to the elements the forward's indices pick.
    fn bwd(&self, arg: &Tensor, res: &Tensor, grad: &Tensor) -> Result<Option<Tensor>> {
        let (x, y) = (arg.detach(), res.detach());
        let indices = self.saved_indices.get().cloned();
        super::grad::scan_grad(&x, &y, grad, self.axis, self.op, self.opts, indices).map(Some)
    }
}
