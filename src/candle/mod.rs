//! cubeprim's ops on [`candle_core::Tensor`]s, as methods of extension traits.
//!
//! ```
//! use candle_core::{Device, Tensor};
//! use cubeprim::candle::{ReduceExt, RunsExt, ScanExt, SelectExt, SortExt};
//!
//! let x = Tensor::new(&[[3f32, 1., 2.], [4., 5., 6.]], &Device::Cpu)?;
//! assert_eq!(x.scan_sum(1)?.to_vec2::<f32>()?, [[3., 4., 6.], [4., 9., 15.]]);
//! let (m, i) = x.scan_max_with_indices(0)?;
//! assert_eq!(i.to_vec2::<i64>()?, [[0, 0, 0], [1, 1, 1]]);
//! let (_, i) = x.sort_stable(true)?; // along the last dim, stable, u32 indices
//! assert_eq!(i.to_vec2::<u32>()?, [[1, 2, 0], [0, 1, 2]]);
//! let (v, _) = x.top_k(1)?;
//! assert_eq!(v.to_vec2::<f32>()?, [[3.], [6.]]);
//! assert_eq!(x.reduce_prod(1)?.to_vec1::<f32>()?, [6., 120.]);
//! assert_eq!(x.masked_select(&x.gt(2.5)?)?.to_vec1::<f32>()?, [3., 4., 5., 6.]);
//! let ids = Tensor::new(&[2u32, 2, 0, 3], &Device::Cpu)?;
//! assert_eq!(ids.histogram(4)?.to_vec1::<u32>()?, [1, 0, 2, 1]);
//! let (u, counts) = ids.unique()?;
//! assert_eq!(counts.to_vec1::<i64>()?, [1, 2, 1]);
//! # Ok::<(), candle_core::Error>(())
//! ```
//!
//! | family (trait) | cubeprim method | candle built-in | PyTorch |
//! |---|---|---|---|
//! | scan ([`ScanExt`]) | `scan_sum(d)`, `exclusive_scan_sum(d)`, `scan_prod/max/min(d)`, `scan_max/min_with_indices(d)`, `scan(d, op, opts)` | `cumsum(d)` (O(n²)) | `cumsum`, `cumprod`, `cummax`, `cummin` |
//! | sort ([`SortExt`], last dim) | `sort_stable(asc)` → (values, u32 indices) | `sort_last_dim(asc)` | `torch.sort(t, stable=True)` |
//! | | `sort_stable_values(asc)` | — | `torch.sort(..).values` |
//! | | `arg_sort_stable(asc)` → u32 | `arg_sort_last_dim(asc)` | `torch.argsort(t, stable=True)` |
//! | | `top_k(k)` / `bottom_k(k)` → (values, u32 indices) | — | `torch.topk(t, k, largest=True/False)` |
//! | | `sorted.search_sorted(&values, Side::Left/Right)` → u32 | — | `torch.searchsorted(sorted, values, side=..)` |
//! | | `keys.sort_pairs(&values, asc)` → (sorted keys, values moved alike; stable) | — | `torch.sort(keys, stable=True)` + `gather(values, -1, indices)`; CUB `SortPairs` |
//! | | `t.bucketize(&boundaries, right)` → u32 (`boundaries` 1-D, sorted) | — | `torch.bucketize(t, boundaries, right=..)` |
//! | reduce ([`ReduceExt`]) | `reduce_sum/prod/max/min(d)`, `reduce(d, op)` | `sum(d)`, —, `max(d)`, `min(d)` | `sum`, `prod`, `amax`, `amin` |
//! | compaction ([`SelectExt`]) | `masked_select(&mask)` → 1-D | — | `torch.masked_select` |
//! | | `partition(&mask)` → (all elements, set ones first, both stable; u32 `[1]` count) | — | `torch.cat([t[m], t[~m]])` |
//! | | `nonzero()` → `[count, rank]` i64 | — | `torch.nonzero` |
//! | | `count_nonzero()` → u32 `[1]`, on the device (no read back) | — | `torch.count_nonzero` |
//! | runs ([`RunsExt`], flattened) | `unique_consecutive()` / `_with_inverse()` → (values, i64 counts[, i64 inverse]) | — | `torch.unique_consecutive(return_counts=True[, return_inverse=True])` |
//! | | `unique()` / `unique_with_inverse()` (sorted) | — | `torch.unique(sorted=True, return_counts=True[, ..])` |
//! | | `histogram(bins)` → u32 `[bins]` | — | `torch.bincount(t, minlength=bins)[:bins]` |
//! | | `keys.reduce_by_key(&values, op)` → (first key of each run, fold of its values) | — | none built in; `torch_scatter.segment_*_coo` over the run indices |
//!
//! The names never collide with candle's own methods (candle's inherent `cumsum` or
//! `sort_last_dim` would win over a trait method of that name, silently).
//!
//! Devices:
//! - **CPU**: every method, any layout (strides, offsets, broadcast masks) read in place,
//!   outputs contiguous, work split over rows (rayon) where the op has rows. dtypes: f32 / f64 /
//!   f16 / bf16 / u32 / i32 / i64, and u8 / i16 (widened to u32 / i32 by candle and cast back:
//!   same order, equality and wrapping arithmetic); masks and `nonzero` read any of these;
//!   histogram keys are u8 / u32 / i16 / i32 / i64. The 8-bit and smaller floats are refused.
//!   Sums of f16 / bf16 accumulate in f32, integer sums wrap, max / min propagate NaN; sorts
//!   put NaN last ascending and `-0.0` equal to `+0.0`.
//! - **CUDA** (feature `candle-cuda`; nvcc at build time): the scans launch cubecl-generated
//!   CUDA C++ through candle's cudarc on candle's stream, on candle's memory (the `cuda`
//!   module). Every other family runs cubeprim's own host code on cubecl's `CudaRuntime` in the
//!   same CUDA context, with one device-to-device copy per input and per output and host syncs
//!   between the two runtimes' streams (see the `bridge` module's docs for why and what it
//!   costs). Sorts have no row-length limit (candle's own GPU `arg_sort_last_dim` sorts a row
//!   in one block and fails past its size).
//! - **Metal** (feature `candle-metal`, macOS): the scans as MSL on candle's device and encoder
//!   (the `metal` module, no copy). Every other family runs cubeprim's own host code on cubecl's
//!   wgpu runtime, which is Metal there with kernels compiled to MSL, the data staged through
//!   host memory (one copy in per input, one out per output; see the `staged` module). Written,
//!   MSL generated and the Metal code type-checked in CI (`.ci/metal-check`), the staging run
//!   in CI on lavapipe; **not yet run on Apple hardware**.
//!
//! Data-sized outputs (`masked_select`, `nonzero`, `unique*`, `reduce_by_key`): candle's
//! shapes are static, so the output's length must be known when the tensor is made. On the CPU
//! it is counted; on a GPU the op runs on the device and leaves the count there, and the count
//! is read back once (4 bytes, one host sync) to size the output — the one read these ops
//! make. `partition` returns every element, so it reads nothing: its count stays on the device
//! as a `[1]` u32 tensor.
//!
//! The scans are candle custom ops ([`candle_core::CustomOp1`]); `scan_sum` has a backward
//! pass. The other ops have more than one input or output and no gradient: they dispatch on
//! the storage directly and return tensors without a backprop node.

#[cfg(feature = "candle-cuda")]
mod bridge;
mod cpu;
// Internal: public for the tests.
#[cfg(feature = "candle-cuda")]
#[doc(hidden)]
pub mod cuda;
#[cfg(feature = "candle-cuda")]
mod cuda_sort;
#[cfg(all(test, feature = "wgpu"))]
mod device_tests;
// Internal: public for the tests.
#[doc(hidden)]
pub mod kernels;
#[cfg(all(feature = "candle-metal", target_os = "macos"))]
mod metal;
mod ops;
mod plan;
mod reduce;
mod runs;
mod scan;
mod select;
mod sort;
#[cfg(any(
    all(test, feature = "wgpu"),
    all(feature = "candle-metal", target_os = "macos")
))]
mod staged;

#[doc(hidden)]
pub use crate::scan::DeviceLimits;
pub use crate::{ReduceOp, Side};
#[doc(hidden)]
pub use plan::ScanLaunch;
pub use reduce::ReduceExt;
pub use runs::RunsExt;
pub use scan::ScanExt;
pub use select::SelectExt;
pub use sort::SortExt;

/// A cubeprim error as a candle error.
pub(crate) fn wrap(e: crate::Error) -> candle_core::Error {
    candle_core::Error::wrap(e)
}
