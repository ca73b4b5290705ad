//! cubeprim's ops on [`candle_core::Tensor`]s, as methods of extension traits.
//!
//! ```
//! use candle_core::{Device, Tensor};
//! use cubeprim::candle::ScanExt;
//!
//! let x = Tensor::new(&[[1f32, 2., 3.], [4., 5., 6.]], &Device::Cpu)?;
//! assert_eq!(x.scan_sum(1)?.to_vec2::<f32>()?, [[1., 3., 6.], [4., 9., 15.]]);
//! let (m, i) = x.scan_max_with_indices(0)?;
//! assert_eq!(i.to_vec2::<i64>()?, [[0, 0, 0], [1, 1, 1]]);
//! # Ok::<(), candle_core::Error>(())
//! ```
//!
//! The names never collide with candle's own methods (candle's inherent `cumsum` would win
//! over a trait method of that name, silently): see the table in the README.
//!
//! Each method is a candle custom op ([`candle_core::CustomOp1`]), so it takes any layout
//! (strides, offsets) and composes with the rest of a graph:
//! - **CPU**: O(n), parallel over rows, f32 / f64 / f16 / bf16 / u32 / i32 / i64 (candle's u8
//!   and i16 are refused with an error). `scan_sum` has a backward pass.
//! - **CUDA** (feature `candle-cuda`; nvcc at build time): the CubeCL kernels compiled to
//!   CUDA C++ by cubecl's own compiler, turned into PTX by NVRTC and launched through candle's
//!   cudarc on candle's stream, reading and writing candle's device memory directly (see the
//!   `cuda` module); NVRTC-checked here, not yet run on a GPU.
//! - **Metal** (feature `candle-metal`, macOS): the same kernels as MSL on candle's Metal device.
//!   Written, not yet run on hardware; the MSL of every kernel it launches is generated in CI.

mod cpu;
#[cfg(feature = "candle-cuda")]
pub mod cuda;
pub mod kernels;
#[cfg(all(feature = "candle-metal", target_os = "macos"))]
mod metal;
mod plan;
mod scan;

pub use plan::{DeviceLimits, ScanLaunch};
pub use scan::ScanExt;

/// A cubeprim error as a candle error.
pub(crate) fn wrap(e: crate::Error) -> candle_core::Error {
    candle_core::Error::wrap(e)
}
