//! cubeprim's ops on [`candle_core::Tensor`]s, as methods of extension traits.
//!
//! `use cubeprim::candle::prelude::*;` brings every trait and the argument types the methods
//! take ([`ReduceOp`], [`ScanOp`], [`ScanOptions`], [`Side`]). Dimensions are any
//! [`Dim`](candle_core::shape::Dim), as candle's own methods take them (`1`, `D::Minus1`, …),
//! in PyTorch's place: `sort_stable(dim, asc)`, `top_k(k, dim)`.
//!
//! ```
//! use candle_core::{Device, Tensor, D};
//! use cubeprim::candle::prelude::*;
//!
//! let x = Tensor::new(&[[3f32, 1., 2.], [4., 5., 6.]], &Device::Cpu)?;
//! assert_eq!(x.scan_sum(1)?.to_vec2::<f32>()?, [[3., 4., 6.], [4., 9., 15.]]);
//! let (m, i) = x.scan_max_with_indices(0)?;
//! assert_eq!(i.to_vec2::<u32>()?, [[0, 0, 0], [1, 1, 1]]);
//! let (_, i) = x.sort_stable(D::Minus1, true)?; // stable, u32 indices
//! assert_eq!(i.to_vec2::<u32>()?, [[1, 2, 0], [0, 1, 2]]);
//! let (v, _) = x.top_k(1, D::Minus1)?;
//! assert_eq!(v.to_vec2::<f32>()?, [[3.], [6.]]);
//! let (v, i) = x.bottom_k(1, 0)?; // along the columns
//! assert_eq!(v.to_vec2::<f32>()?, [[3., 1., 2.]]);
//! assert_eq!(i.to_vec2::<u32>()?, [[0, 0, 0]]);
//! assert_eq!(x.reduce_prod(1)?.to_vec1::<f32>()?, [6., 120.]);
//! assert_eq!(x.reduce_keepdim(1, ReduceOp::Max)?.to_vec2::<f32>()?, [[3.], [6.]]);
//! assert_eq!(x.masked_select(&x.gt(2.5)?)?.to_vec1::<f32>()?, [3., 4., 5., 6.]);
//! let ids = Tensor::new(&[2u32, 2, 0, 3], &Device::Cpu)?;
//! assert_eq!(ids.histogram(4)?.to_vec1::<u32>()?, [1, 0, 2, 1]);
//! let (u, counts) = ids.unique()?;
//! assert_eq!(counts.to_vec1::<u32>()?, [1, 2, 1]);
//! // No host read: the outputs sized for every element, the count left on the device.
//! let (u, counts, n) = ids.unique_padded()?;
//! assert_eq!((u.dims(), n.dims()), (&[4][..], &[1][..]));
//! # Ok::<(), candle_core::Error>(())
//! ```
//!
//! | family (trait) | cubeprim method | candle built-in | PyTorch |
//! |---|---|---|---|
//! | scan ([`ScanExt`]) | `scan_sum(d)`, `exclusive_scan_sum(d)`, `scan_prod/max/min(d)`, `scan_max/min_with_indices(d)` → (values, u32 indices), `scan(d, op, opts)` | `cumsum(d)` (O(n²)) | `cumsum`, `cumprod`, `cummax`, `cummin` |
//! | sort ([`SortExt`], any dim) | `sort_stable(d, asc)` → (values, u32 indices) | `sort_last_dim(asc)` | `torch.sort(t, d, stable=True)` |
//! | | `sort_stable_values(d, asc)` | — | `torch.sort(..).values` |
//! | | `arg_sort_stable(d, asc)` → u32 | `arg_sort_last_dim(asc)` | `torch.argsort(t, d, stable=True)` |
//! | | `top_k(k, d)` / `bottom_k(k, d)` → (values, u32 indices) | — | `torch.topk(t, k, d, largest=True/False)` |
//! | | `sorted.search_sorted(&values, d, Side::Left/Right)` → u32 | — | `torch.searchsorted(sorted, values, side=..)` (last dim) |
//! | | `keys.sort_pairs(&values, d, asc)` → (sorted keys, values moved alike; stable) | — | `torch.sort(keys, d, stable=True)` + `gather(values, d, indices)`; CUB `SortPairs` |
//! | | `t.bucketize(&boundaries, right)` → u32 (`boundaries` 1-D, sorted) | — | `torch.bucketize(t, boundaries, right=..)` |
//! | linear recurrence ([`RecurrenceExt`]) | `a.linear_recurrence(&b, h0, d, reverse)`: `h[t] = a[t] h[t-1] + b[t]` | — (a loop over `d`) | — (a loop; `associative_scan`) |
//! | reduce ([`ReduceExt`]) | `reduce_sum/prod/max/min(d)`, `reduce(d, op)` | `sum(d)`, —, `max(d)`, `min(d)` | `sum`, `prod`, `amax`, `amin` |
//! | | `reduce_sum/prod/max/min_keepdim(d)`, `reduce_keepdim(d, op)` | `sum_keepdim(d)`, —, `max_keepdim(d)`, `min_keepdim(d)` | the same, `keepdim=True` |
//! | compaction ([`SelectExt`]) | `masked_select(&mask)` → 1-D | — | `torch.masked_select` |
//! | | `masked_select_padded(&mask)` → (`[n]`, first `count` selected; u32 `[1]` count), no read | — | — |
//! | | `partition(&mask)` → (all elements, set ones first, both stable; u32 `[1]` count) | — | `torch.cat([t[m], t[~m]])` |
//! | | `nonzero()` → `[count, rank]` u32 | — | `torch.nonzero` |
//! | | `nonzero_padded()` → (`[n, rank]` u32, first `count` rows; u32 `[1]` count), no read | — | — |
//! | | `count_nonzero()` → u32 `[1]`, on the device (no read back) | — | `torch.count_nonzero` |
//! | runs ([`RunsExt`], flattened) | `unique_consecutive()` / `_with_inverse()` → (values, u32 counts[, u32 inverse]) | — | `torch.unique_consecutive(return_counts=True[, return_inverse=True])` |
//! | | `unique()` / `unique_with_inverse()` (sorted) | — | `torch.unique(sorted=True, return_counts=True[, ..])` |
//! | | `unique_consecutive_padded()`, `unique_padded()`, their `_with_inverse_padded()` → (values, counts[, inverse], u32 `[1]` count), no read | — | — |
//! | | `histogram(bins)` → u32 `[bins]` | — | `torch.bincount(t, minlength=bins)[:bins]` |
//! | | `keys.reduce_by_key(&values, op)` → (first key of each run, fold of its values) | — | none built in; `torch_scatter.segment_*_coo` over the run indices |
//! | | `keys.reduce_by_key_padded(&values, op)` → (keys, folds, u32 `[1]` count), no read | — | — |
//!
//! The names never collide with candle's own methods (candle's inherent `cumsum`,
//! `sum_keepdim` or `sort_last_dim` would win over a trait method of that name, silently).
//!
//! **Index dtype: u32.** Every index, position and count the methods return is u32, as
//! candle's own `arg_sort_last_dim`, `argmax` and `argmin` give and its `gather`,
//! `index_select` and `index_add` take: sort and top-k indices, searchsorted and bucketize
//! positions, the scans' indices (`u32::MAX` where an exclusive scan has no element yet),
//! `nonzero`, `unique*` counts and inverse, and every `[1]` count. PyTorch's i64 differs
//! (`to_dtype(DType::I64)` converts). An op whose indices range over more than `u32::MAX`
//! values (a sorted or indexed-scan dimension, or the elements of a counted tensor) is
//! refused with a wrapped cubeprim [`Error::TooLarge`](crate::Error::TooLarge); the GPU paths
//! take at most 2^31 elements anyway ([`MAX_ELEMENTS`](crate::MAX_ELEMENTS)). On a GPU the
//! kernels write the runtime's i64 (or i32) and the adapter narrows them to u32 on the device
//! (one element-wise pass).
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
//! Sorts along a `dim` other than the last move it last as a view (a transpose: the CPU path
//! reads it in place, the GPU paths as they read any strided view), sort there, and copy each
//! output back to the input's dimension order, contiguous (candle's copy; for i32 values on
//! CUDA and Metal, where candle 0.11 has no strided copy, the adapter's own route).
//!
//! Data-sized outputs (`masked_select`, `nonzero`, `unique*`, `reduce_by_key`): candle's
//! shapes are static, so the output's length must be known when the tensor is made. On the CPU
//! it is counted; on a GPU the op runs on the device and leaves the count there, and the count
//! is read back once (4 bytes, one host sync) to size the output — the one read these ops
//! make. Their `_padded` variants are the same ops without that read, for a pipeline that
//! chains them with no host sync (as the core API's [`Len::Device`](crate::Len::Device)):
//! outputs sized for every element of the input, whose first `count` elements (rows for
//! `nonzero`) are the result and the rest unspecified (zeros on the CPU, whatever the device
//! buffer held on a GPU), and the count as a `[1]` u32 tensor on the input's device (counted
//! on the host on the CPU). `partition` returns every element, so it reads nothing: its count
//! stays on the device as a `[1]` u32 tensor.
//!
//! The scans are candle custom ops ([`candle_core::CustomOp1`]); the other ops dispatch on
//! the storage directly and return tensors without a backprop node.
//!
//! **Gradients** (candle `Var`s and `backward`, PyTorch's semantics): every scan (sum, prod,
//! max, min; exclusive, reverse, and the values of `scan_*_with_indices`), the values of
//! `sort_stable*`, `top_k` and `bottom_k`, `masked_select` (and `_padded`'s values), the
//! reductions, `reduce_by_key`'s folds (by the values) and `linear_recurrence` (by `a`, `b`
//! and `h0`). Where the input tracks a gradient
//! the differentiable output becomes a graph node of it (a custom op whose forward takes the
//! output already computed, no copy); the backward passes are made of cubeprim's and candle's
//! device ops, with no host read. An input that tracks nothing costs nothing more. Argsort,
//! `search_sorted`, `bucketize`, `nonzero`, `count_nonzero`, `unique*`, `histogram`,
//! `partition`, `sort_pairs` and every index and count have no gradient (untracked outputs).

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
mod grad;
// Internal: public for the tests.
#[doc(hidden)]
pub mod kernels;
#[cfg(all(feature = "candle-metal", target_os = "macos"))]
mod metal;
mod ops;
mod plan;
mod recurrence;
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
pub use crate::{ReduceOp, ScanOp, ScanOptions, Side};
#[doc(hidden)]
pub use plan::ScanLaunch;
pub use recurrence::RecurrenceExt;
pub use reduce::ReduceExt;
pub use runs::RunsExt;
pub use scan::ScanExt;
pub use select::SelectExt;
pub use sort::SortExt;

/// Everything a user of the candle methods needs: `use cubeprim::candle::prelude::*;`.
///
/// The extension traits ([`ScanExt`], [`SortExt`], [`ReduceExt`], [`SelectExt`],
/// [`RunsExt`]) and the argument types their methods take ([`ReduceOp`], [`ScanOp`],
/// [`ScanOptions`], [`Side`]).
pub mod prelude {
    pub use super::{RecurrenceExt, ReduceExt, RunsExt, ScanExt, SelectExt, SortExt};
    pub use crate::{ReduceOp, ScanOp, ScanOptions, Side};
}

/// A cubeprim error as a candle error.
pub(crate) fn wrap(e: crate::Error) -> candle_core::Error {
    candle_core::Error::wrap(e)
}
