//! Primitives over one plane (warp / subgroup). Plane width is read at run time
//! (`PLANE_DIM`): 32 on NVIDIA, 64 on AMD, 8 on lavapipe; nothing here assumes one.

mod plane_scan;

pub use plane_scan::plane_inclusive_scan;
