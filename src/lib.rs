// The README is the crate documentation; its examples (burn, candle and the wgpu runtime) are
// doc tests, so it is included where those features are on (as on docs.rs and in CI; the
// burn example runs on `NdArray`: feature `burn-ndarray`).
#![cfg_attr(
    all(feature = "burn-ndarray", feature = "candle", feature = "wgpu"),
    doc = include_str!("../README.md")
)]
#![cfg_attr(
    not(all(feature = "burn-ndarray", feature = "candle", feature = "wgpu")),
    doc = "# cubeprim\n\nDevice-wide parallel primitives for tensor code, written once in CubeCL \
           and run on CUDA, wgpu (Vulkan / Metal / DX12) and, through the CPU implementation, \
           anywhere. Built with the features `burn-ndarray`, `candle` and `wgpu` (as on \
           docs.rs), this page opens with the README: installation, examples and the \
           conventions of every op."
)]
//!
//! ## The API by family
//!
//! - **scans**: [`scan()`], [`scan_into`], [`scan_len_into`], [`scan_with_indices`], and the
//!   shorthands [`cumsum`], [`cumprod`], [`cummax`], [`cummin`], [`logcumsumexp`],
//!   [`cummax_with_indices`], [`cummin_with_indices`];
//! - **reduce**: [`reduce()`], [`reduce_into`], [`reduce_len_into`];
//! - **user-defined operators** ([`ops::ScanOp`]): [`scan_with`], [`scan_with_into`],
//!   [`reduce_with`], [`reduce_with_into`];
//! - **compaction**: [`select()`], [`select_pairs`], [`partition`], [`masked_select`],
//!   [`nonzero`], [`count_nonzero_into`] and their `_into` forms; [`read_count`] reads a device
//!   count;
//! - **run-length**: [`reduce_by_key`], [`unique_consecutive`], [`unique_consecutive_sized`],
//!   [`unique()`], [`histogram()`];
//! - **sort**: [`sort()`], [`sort_with_indices`], [`argsort`], [`sort_pairs`], [`sort_into`],
//!   [`top_k`], [`searchsorted`], [`bucketize`];
//! - scratch: [`Workspace`] and the `*_workspace_bytes` size queries; lengths: [`Len`];
//! - extension methods on burn tensors (module `burn`, feature `burn`) and candle tensors
//!   (module `candle`, feature `candle`); the CPU implementation of every op: [`cpu`].
//!
//! Kernels live in the `cubeprim-kernels` crate (plane → cube → device); this crate holds the
//! host side: planning and dispatch, scratch, errors ([`Error`]) and the CPU implementation.
//!
//! ## Arguments are checked, never trusted
//!
//! Every function that returns a [`Result`] reports bad arguments as an [`Error`] and does not
//! panic (`tests/trust_args.rs`, `no_panic_from_the_public_api`, holds it to that). Before it
//! allocates or launches anything, each entry point checks every tensor it is given
//! ([`DeviceTensor::check`]): strides of its rank, at most [`MAX_ELEMENTS`] (2^31) elements
//! and a reach of at most as many (the kernels' positions are 32-bit: [`Error::TooLarge`]),
//! and a reach inside its handle's memory, for inputs and outputs alike
//! ([`Error::OutOfBounds`]); a handle cut from a buffer must start on a multiple of the
//! device's memory alignment ([`Error::InvalidArgument`]). No output may share memory with an
//! input or another output ([`Error::Aliased`]: no kernel runs in place; reading one tensor
//! twice is fine). The exceptions, documented on each: [`DeviceTensor::to_vec`] and
//! [`read_count`] panic on the wrong dtype ([`DeviceTensor::try_to_vec`] does not),
//! [`DeviceTensor::empty`] where cubecl cannot allocate.

#![warn(missing_docs)]

mod alloc;
#[cfg(feature = "burn")]
pub mod burn;
#[cfg(feature = "candle")]
pub mod candle;
mod count;
pub mod cpu;
pub mod device;
mod dispatch;
mod dtype;
mod error;
pub mod histogram;
pub mod recurrence;
pub mod reduce;

/// Scan / reduce operators for [`scan_with`] and [`reduce_with`]: the kernel trait
/// [`ops::ScanOp`] that a user-defined operator implements (in a `#[cube]` impl block), the
/// built-in operators behind [`ScanOp`] and the `#[cube]` helpers they use ([`ops::lowest`] /
/// [`ops::highest`]: -inf / +inf for floats, the extremes for integers; [`ops::is_nan`]).
pub mod ops {
    pub use cubeprim_kernels::ops::{
        highest, is_nan, log_add_exp, lowest, Add, Affine, LogAddExp, Max, Min, Mul, ScanOp,
    };
}
pub mod runs;
pub mod scan;
pub mod select;
pub mod sort;
mod tensor;
pub mod tuning;
pub mod unique;
mod validate;
mod workspace;

pub use alloc::max_buffer_bytes;
pub use count::Len;
pub use dtype::{DType, Element};
pub use error::{Error, Result};
pub use histogram::{histogram, histogram_into, histogram_workspace_bytes};
pub use recurrence::{linear_recurrence, linear_recurrence_into, RecurrenceOptions};
pub use reduce::{
    reduce, reduce_into, reduce_len_into, reduce_with, reduce_with_into, reduce_workspace_bytes,
    ReduceOp,
};
pub use runs::{
    reduce_by_key, reduce_by_key_into, runs_workspace_bytes, unique_consecutive,
    unique_consecutive_sized, UniqueConsecutive,
};
pub use scan::{
    cummax, cummax_with_indices, cummin, cummin_with_indices, cumprod, cumsum, index_dtype,
    logcumsumexp, scan, scan_into, scan_len_into, scan_with, scan_with_indices, scan_with_into,
    scan_workspace_bytes, supports_dtype, PlaneOps, ScanAlgorithm, ScanOp, ScanOptions, ScanTuning,
};
pub use select::{
    count_nonzero_into, masked_select, new_count, nonzero, nonzero_index_dtype, nonzero_into,
    partition, partition_into, read_count, select, select_into, select_pairs, select_pairs_into,
    select_workspace_bytes,
};
pub use sort::{
    argsort, argsort_plan, bucketize, searchsorted, searchsorted_into, sort, sort_into, sort_pairs,
    sort_pairs_into, sort_plan, sort_with_indices, sort_workspace_bytes, top_k, top_k_into,
    top_k_into_with, top_k_with, top_k_workspace_bytes, IndexType, Payload, Side, SortOptions,
    SortTuning, TopKMethod,
};
pub use tensor::{DeviceTensor, MAX_ELEMENTS};
pub use unique::unique;
pub use workspace::{workspace_bytes, Workspace};

pub use cubecl;
