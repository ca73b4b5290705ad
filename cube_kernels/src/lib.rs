//! The `#[cube]` kernels of cubeprim, organised by level as CUB is:
//!
//! - [`ops`]: scan/reduce operators (identity + combine), one small impl each;
//! - [`plane`]: primitives over one plane (warp / subgroup);
//! - [`cube`]: primitives over one cube (block / workgroup): cube-wide scan, tile scan;
//! - [`device`]: the launchable kernels (device-wide algorithms) and the look-back tile state.
//!
//! The host side (dispatch, scratch, errors) lives in the `cubeprim` crate.

#![warn(missing_docs)]

pub mod cube;
pub mod device;
pub mod ops;
pub mod plane;
