//! Every integration test, in one test binary: each file of `tests/` is a module here (its
//! tests are named `file::test`, so `cargo test --test suite -- sort::` runs `tests/sort.rs`).
//! One binary instead of one per file: each test binary compiles its own copy of every generic
//! launch it reaches (cubecl's kernels, the burn and candle adapters) and links against cubecl,
//! burn and candle, which took most of CI's time when each file was its own binary.
//!
//! The wgpu tests run on the device of [`common::client`] (lavapipe in CI); the `codegen*`
//! modules generate CUDA C++ and Metal source without a device.

mod common;

#[cfg(all(feature = "burn-fusion", feature = "burn-ndarray"))]
mod burn;
#[cfg(feature = "candle")]
mod candle;
#[cfg(feature = "candle")]
mod candle_codegen;
#[cfg(feature = "candle-cuda")]
mod candle_cuda;
#[cfg(feature = "candle")]
mod candle_grad;
mod codegen;
mod codegen_compact;
mod codegen_histogram;
mod codegen_sort;
mod fuzz;
#[cfg(all(
    feature = "burn-autodiff",
    feature = "burn-fusion",
    feature = "burn-ndarray"
))]
mod grad;
mod histogram;
mod logsumexp;
mod longrun;
mod msrv;
mod pipeline;
mod recurrence;
mod reduce;
mod runs;
mod scan;
mod scan_errors;
mod select;
mod signed_zero;
mod sort;
mod trust;
mod trust_args;
mod unique;
mod user_op;
