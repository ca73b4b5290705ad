//! # cubeprim
//!
//! Device-wide parallel primitives for tensor code, written once in CubeCL and run on CUDA,
//! wgpu (Vulkan / Metal / DX12) and — through the CPU reference — anywhere.
//!
//! - **scans** ([`scan()`], [`cumsum`], …: inclusive or exclusive, forward or reverse, any axis of a
//!   strided N-d tensor; max / min also with indices; 1-D scans of any length);
//! - **reduce** ([`reduce()`]), **compaction** ([`select()`], [`partition`], [`masked_select`],
//!   [`nonzero`]), **run-length** ([`reduce_by_key`], [`unique_consecutive`], [`unique()`]),
//!   [`histogram()`];
//! - **sort** ([`sort()`], [`argsort`], [`sort_pairs`], row-wise, [`top_k`], [`searchsorted`]);
//! - extension methods on **burn** (feature `burn`) and **candle** (feature `candle`) tensors.
//!
//! Device-wide ops take their length as [`Len`]: a host number, or a count left on the device by
//! an earlier op, so pipelines run without host syncs.
//!
//! ```no_run
//! use cubeprim::{DeviceTensor, ScanOp, ScanOptions, Workspace};
//! use cubecl::wgpu::{WgpuDevice, WgpuRuntime};
//! use cubecl::Runtime;
//!
//! let client = WgpuRuntime::client(&WgpuDevice::default());
//! let x = DeviceTensor::<WgpuRuntime>::from_slice(&client, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])
//!     .unwrap();
//! let mut ws = Workspace::new();
//! let y = cubeprim::scan(&client, &x, 1, ScanOp::Sum, ScanOptions::default(), &mut ws).unwrap();
//! assert_eq!(y.to_vec::<f32>(&client), vec![1.0, 3.0, 3.0, 7.0]);
//! ```
//!
//! # Arguments are checked, never trusted
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
//!
//! Kernels live in the `cubeprim-kernels` crate (plane → cube → device); this crate holds the
//! host side: planning and dispatch, scratch ([`Workspace`]), errors ([`Error`]) and the CPU
//! implementation of every op ([`cpu`]).

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
pub mod reduce;
pub mod runs;
pub mod scan;
pub mod select;
pub mod sort;
mod tensor;
pub mod unique;
mod validate;
mod workspace;

pub use alloc::max_buffer_bytes;
pub use count::Len;
pub use dtype::{DType, Element};
pub use error::{Error, Result};
pub use histogram::{histogram, histogram_into, histogram_workspace_bytes};
pub use reduce::{reduce, reduce_into, reduce_len_into, reduce_workspace_bytes, ReduceOp};
pub use runs::{
    reduce_by_key, reduce_by_key_into, runs_workspace_bytes, unique_consecutive,
    unique_consecutive_sized, UniqueConsecutive,
};
pub use scan::{
    cummax, cummax_with_indices, cummin, cummin_with_indices, cumprod, cumsum, index_dtype, scan,
    scan_into, scan_len_into, scan_with_indices, scan_workspace_bytes, supports_dtype, PlaneOps,
    ScanAlgorithm, ScanOp, ScanOptions, ScanTuning,
};
pub use select::{
    count_nonzero_into, masked_select, new_count, nonzero, nonzero_index_dtype, nonzero_into,
    partition, partition_into, read_count, select, select_into, select_pairs, select_pairs_into,
    select_workspace_bytes,
};
pub use sort::{
    argsort, argsort_plan, bucketize, searchsorted, searchsorted_into, sort, sort_into, sort_pairs,
    sort_pairs_into, sort_plan, sort_with_indices, sort_workspace_bytes, top_k, top_k_into,
    top_k_into_with, top_k_with, top_k_workspace_bytes, IndexType, Payload, Side, SortAlgorithm,
    SortOptions, SortTuning, TopKMethod,
};
pub use tensor::{DeviceTensor, MAX_ELEMENTS};
pub use unique::unique;
pub use workspace::{workspace_bytes, Workspace};

pub use cubecl;
