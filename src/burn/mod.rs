//! cubeprim's ops as methods on burn tensors (feature `burn`).
//!
//! ```ignore
//! use cubeprim::burn::prelude::*;
//! let y = x.prim_cumsum(1);                       // Tensor<B, D, K> -> Tensor<B, D, K>
//! let (m, i) = x.prim_cummax_with_indices(-1);    // values and Int indices
//! let e = x.prim_scan(0, ScanOp::Sum, ScanOptions::default().exclusive().reverse());
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
//!
//! # Backends
//! - `CubeBackend<R, F, I, BT>` (wgpu, CUDA): cubeprim's kernels on the tensor's own buffer
//!   and strides: no copy, no host read. Scratch comes from one [`crate::Workspace`] per
//!   device and stream, kept between calls.
//! - `Fusion<B>` (`burn::backend::Wgpu`, `burn::backend::Cuda` with burn's `fusion`): a custom
//!   operation on the fusion stream, in order with the fused graph; no sync, no host read.
//! - `NdArray`: cubeprim's CPU path, parallel over rows (rayon): scans O(n); sorts are
//!   stable comparison sorts per row (O(n log n)).
//! - `Autodiff<B>`: not supported — calling a method does not compile (no gradient is
//!   defined): `PrimBackend` is not implemented for `Autodiff<B>`, so the call below fails
//!   with E0599 (method exists but its trait bounds are not satisfied). Take the inner
//!   tensor first (`x.inner()`), or use burn's differentiable built-ins.
//!
//! ```ignore
//! use burn::backend::{Autodiff, NdArray};
//! use burn::tensor::Tensor;
//! use cubeprim::burn::prelude::*;
//! let x = Tensor::<Autodiff<NdArray>, 1>::from_floats([1.0, 2.0], &Default::default());
//! let _ = x.prim_cumsum(0);
//! ```
//!
//! # Dtypes and errors
//! Outputs take the input's dtype (f32, f16, bf16, f64, i32, u32, i64, u64, as the tensor
//! holds them; f16 / bf16 accumulate in f32); indices take the backend's int dtype. Invalid
//! arguments panic before anything is queued, as burn's methods do: a dim out of range, a
//! dtype cubeprim or the device lacks (e.g. bf16 on Vulkan, f64 on Metal), indices with a sum.
//!
//! # Adding an op
//! Implement [`PrimOp`] (outputs, device run, host run) and one extension method that calls
//! [`run`]; the three backends need nothing more. See `scan.rs`.

mod backend;
mod cube;
mod fusion;
mod host;
mod ndarray;
mod op;
mod scan;
mod sort;

pub use backend::{run, AnyPrimitive, NumericKind, PrimBackend, PrimKind};
pub use host::{HostData, HostTensor};
pub use op::{Kind, OutDType, OutputSpec, PrimOp, TensorMeta};
pub use scan::{Scan, ScanExt};
pub use sort::{SearchSorted, Sort, SortExt, SortOutputs, TopK};

/// The extension traits and the types their methods take.
pub mod prelude {
    pub use super::{PrimBackend, ScanExt, SortExt};
    pub use crate::{ScanOp, ScanOptions, Side};
}
