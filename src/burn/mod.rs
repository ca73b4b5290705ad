//! cubeprim's ops as methods on burn tensors (feature `burn`).
//!
//! ```
//! use burn::backend::NdArray;
//! use burn::tensor::{Int, Tensor};
//! use cubeprim::burn::prelude::*;
//!
//! let dev = Default::default();
//! let x = Tensor::<NdArray, 2>::from_floats([[1.0, -2.0, 3.0], [4.0, 0.0, -6.0]], &dev);
//! let y = x.clone().prim_cumsum(1); // Tensor<B, D, K> -> Tensor<B, D, K>
//! let (m, i) = x.clone().prim_cummax_with_indices(-1); // values and Int indices
//! let e = x.clone().prim_scan(0, ScanOp::Sum, ScanOptions::default().exclusive().reverse());
//! let s = x.clone().prim_sum_dim(1); // keepdim, as burn's sum_dim
//! // h[t] = 0.5 h[t-1] + x[t] along dim 1 (an exponential moving average, unnormalised).
//! let h = x.ones_like().mul_scalar(0.5).prim_linear_recurrence(x.clone(), 1, false);
//! let v = x.clone().prim_masked_select(x.greater_elem(0.0)); // 1-D, one count read
//! let ids = Tensor::<NdArray, 1, Int>::from_ints([3, 1, 3, 2, 1, 3], &dev);
//! let (u, counts) = ids.prim_unique_with_counts();
//!
//! let f = |t: Tensor<NdArray, 2>| t.into_data().to_vec::<f32>().unwrap();
//! assert_eq!(f(y), [1., -1., 2., 4., 4., -2.]);
//! assert_eq!(f(m), [1., 1., 3., 4., 4., 4.]);
//! assert_eq!(i.into_data().to_vec::<i64>().unwrap(), [0, 0, 2, 0, 0, 0]);
//! assert_eq!(f(e), [4., 0., -6., 0., 0., 0.]);
//! assert_eq!(f(s), [2., -2.]);
//! assert_eq!(v.into_data().to_vec::<f32>().unwrap(), [1., 3., 4.]);
//! assert_eq!(u.into_data().to_vec::<i64>().unwrap(), [1, 2, 3]);
//! assert_eq!(counts.into_data().to_vec::<i64>().unwrap(), [2, 1, 3]);
//! assert_eq!(f(h), [1., -1.5, 2.25, 4., 2., -5.]);
//! ```
//!
//! Every method starts with `prim_`, so none is shadowed by one of burn's inherent methods
//! (`cumsum`, `sort`, …): an inherent method always wins over a trait method of the same name.
//!
//! | cubeprim (burn tensor method)          | burn built-in | PyTorch                         |
//! |----------------------------------------|---------------|---------------------------------|
//! | `prim_cumsum(dim)`                     | `cumsum(dim)` | `torch.cumsum(x, dim)`          |
//! | `prim_cumprod(dim)`                    | `cumprod(dim)`| `torch.cumprod(x, dim)`         |
//! | `prim_cummax(dim)`                     | `cummax(dim)` | `torch.cummax(x, dim).values`   |
//! | `prim_cummin(dim)`                     | `cummin(dim)` | `torch.cummin(x, dim).values`   |
//! | `a.prim_linear_recurrence(b, dim, rev)` / `_from(b, h0, ..)` | — | a loop: `h = a[t] * h + b[t]` |
//! | `prim_cummax_with_indices(dim)`        | —             | `torch.cummax(x, dim)`          |
//! | `prim_cummin_with_indices(dim)`        | —             | `torch.cummin(x, dim)`          |
//! | `prim_scan(dim, op, opts)`             | —             | — (exclusive / reverse scans)   |
//! | `prim_scan_with_indices(dim, op, opts)`| —             | —                               |
//! | `prim_sort(dim)`                       | `sort(dim)`   | `torch.sort(x, dim, stable=True).values` |
//! | `prim_sort_descending(dim)`            | `sort_descending(dim)` | `torch.sort(x, dim, descending=True, stable=True).values` |
//! | `prim_sort_with_indices(dim)`          | `sort_with_indices(dim)` | `torch.sort(x, dim, stable=True)` |
//! | `prim_sort_descending_with_indices(dim)` | `sort_descending_with_indices(dim)` | `torch.sort(x, dim, descending=True, stable=True)` |
//! | `prim_argsort(dim)`                    | `argsort(dim)` | `torch.argsort(x, dim, stable=True)` |
//! | `prim_argsort_descending(dim)`         | `argsort_descending(dim)` | `torch.argsort(x, dim, descending=True, stable=True)` |
//! | `prim_topk(k, dim)`                    | `topk(k, dim)` | `torch.topk(x, k, dim).values`  |
//! | `prim_topk_with_indices(k, dim)`       | `topk_with_indices(k, dim)` | `torch.topk(x, k, dim)` |
//! | `prim_bottomk_with_indices(k, dim)`    | —             | `torch.topk(x, k, dim, largest=False)` |
//! | `sorted.prim_searchsorted(values, side)` | —           | `torch.searchsorted(sorted, values, side=..)` |
//! | `prim_sum_dim(dim)` / `prim_prod_dim(dim)` | `sum_dim` / `prod_dim` | `torch.sum` / `torch.prod(x, dim, keepdim=True)` |
//! | `prim_max_dim(dim)` / `prim_min_dim(dim)` | `max_dim` / `min_dim` | `torch.amax` / `torch.amin(x, dim, keepdim=True)` |
//! | `prim_reduce_dim(dim, op)`             | —             | —                               |
//! | `prim_sum()` / `prim_prod()` / `prim_max()` / `prim_min()` → `[1]` | `sum` / `prod` / `max` / `min` | `torch.sum(x)`, … (0-d) |
//! | `prim_reduce(op)` → `[1]`              | —             | —                               |
//! | `prim_masked_select(mask)` → 1-D *     | —             | `torch.masked_select(x, mask)`  |
//! | `prim_select(flags)` → 1-D *           | —             | `x[flags != 0]`                 |
//! | `prim_nonzero()` / `prim_argwhere()` → Int `[count, D]` * | bool `argwhere` | `torch.nonzero(x)` / `torch.argwhere(x)` |
//! | `prim_count_nonzero()` → Int `[1]`     | —             | `torch.count_nonzero(x)`        |
//! | `prim_unique_consecutive()` (`_with_counts`, `_with_inverse`, `_with(inverse, counts)`) * | — | `torch.unique_consecutive(x, return_inverse, return_counts)` |
//! | `prim_unique()` (`_with_counts`, `_with_inverse`, `_with(inverse, counts)`) * | — | `torch.unique(x, sorted=True, ..)` |
//! | `keys.prim_reduce_by_key(values, op)` * | —            | — (`torch_scatter.segment_*` of runs) |
//! | `prim_histogram(bins)` (Int)           | —             | `torch.bincount(x, minlength=bins)[:bins]` |
//! | `prim_bincount(minlength)` (Int) †     | —             | `torch.bincount(x, minlength=..)` |
//!
//! \* Sized by the data: the method reads one count back (one sync, the only host read these
//! methods do) and returns views cut to it; the op itself is one pass on the device into
//! buffers sized for every element (see below). † Reads the minimum and maximum back (one
//! sync) to size its result.
//!
//! Flattening methods (masked_select, select, nonzero, unique*, reduce_by_key, histogram) take
//! the row-major order of the tensor, as PyTorch does; a strided view is made contiguous first
//! (one copy, on `CubeBackend` / `Fusion`).
//!
//! # Backends
//! - `CubeBackend<R, F, I, BT>` (wgpu, CUDA): cubeprim's kernels on the tensor's own buffer
//!   and strides: no copy, no host read. Scratch comes from one [`crate::Workspace`] per
//!   device and stream, kept between calls.
//! - `Fusion<B>` (feature `burn-fusion`; `burn::backend::Wgpu`, `burn::backend::Cuda` with
//!   burn's `fusion`): a custom operation on the fusion stream, in order with the fused graph;
//!   no sync, no host read.
//! - `NdArray` (feature `burn-ndarray`): cubeprim's CPU path, parallel over rows (rayon): scans
//!   and reductions O(n); sorts are stable comparison sorts per row (O(n log n)); compaction,
//!   run-length and histograms are cubeprim's CPU reference (O(n), `unique` O(n log n)).
//! - `Autodiff<B>` (feature `burn-autodiff`), for each backend above: the op runs on the inner
//!   backend, and its backward pass (cubeprim's own ops on the device, no host read) is
//!   recorded for the float output that has a gradient. Ops whose outputs are integers or keys
//!   (argsort, searchsorted, nonzero, counts, unique, histograms) have none: autodiff sees them
//!   as constants (see `burn-autodiff` in the README).
//!
//! # Outputs sized by the data
//! On `Fusion`, an op's output shapes are fixed when it is registered, before it runs. The
//! data-sized ops therefore declare outputs sized for every element plus a `u32[1]` count
//! ([`OutputSpec::count`]); the extension method reads the count back (`into_data` of one
//! element: the stream runs up to the op, one sync) and returns `slice(0..count)` of each
//! output — a view, or on some backends a copy of the `count` kept elements. The same code runs
//! on every backend; the op itself is one pass (a sort, then one pass, for `unique`).
//!
//! # Bool tensors
//! Masks and flags are read as `u32` 0 / 1: `CubeBackend` with `u32` bools (burn's `Wgpu`
//! default) uses the buffer as it is; `u8` bools (burn's `Cuda` default) are copied to `u32`
//! once per call (one element-wise kernel); NdArray's `bool` arrays are copied to `u32` on the
//! host.
//!
//! # Dtypes and errors
//! Outputs take the input's dtype (f32, f16, bf16, f64, i32, u32, i64, u64, as the tensor
//! holds them; f16 / bf16 accumulate in f32); indices take the backend's int dtype. Invalid
//! arguments panic before anything is queued, as burn's methods do: a dim out of range, a
//! dtype cubeprim or the device lacks (e.g. bf16 on Vulkan, f64 on Metal), indices with a sum,
//! a max / min of no elements, shapes that do not match, histogram keys other than i32 / u32
//! on a device.
//!
//! # Adding an op
//! Implement [`PrimOp`] (outputs, device run, host run, and where it has one, its gradient:
//! [`PrimOp::grad_output`], [`PrimOp::backward`]) and one extension method that calls [`run`];
//! the backends need nothing more. See `scan.rs`.

#[cfg(feature = "burn-autodiff")]
mod autodiff;
mod backend;
mod cube;
#[cfg(feature = "burn-fusion")]
mod fusion;
mod grad;
mod host;
#[cfg(feature = "burn-ndarray")]
mod ndarray;
mod op;
mod recurrence;
mod reduce;
mod runs;
mod scan;
mod select;
mod sort;

pub use backend::{run, AnyPrimitive, NumericKind, PrimBackend, PrimKind};
pub use grad::Saved;
pub use host::{HostData, HostTensor};
pub use op::{Kind, OutDType, OutputSpec, PrimOp, TensorMeta};
pub use recurrence::{LinearRecurrence, RecurrenceExt};
pub use reduce::{Reduce, ReduceExt};
pub use runs::{Histogram, HistogramExt, ReduceByKey, Runs, RunsExt, UniqueOutput};
pub use scan::{Scan, ScanExt};
pub use select::{CountNonZero, NonZero, NonZeroExt, Select, SelectExt};
pub use sort::{SearchSorted, Sort, SortExt, SortOutputs, TopK};

/// The extension traits and the types their methods take.
pub mod prelude {
    pub use super::{
        HistogramExt, NonZeroExt, PrimBackend, RecurrenceExt, ReduceExt, RunsExt, ScanExt,
        SelectExt, SortExt, UniqueOutput,
    };
    pub use crate::{ReduceOp, ScanOp, ScanOptions, Side};
}
