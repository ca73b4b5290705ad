//! Shared-memory counters that a cube counts into with atomic adds (histograms of digits).
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use cubecl::prelude::*;

/// Zeroes the first `len` counters, striped over the cube's `threads` units: unit `t` clears
/// `t`, `t + threads`, .... The caller syncs the cube before the first count.
#[cube]
pub fn clear_shared_counters(
    counters: &SharedMemory<Atomic<u32>>,
    #[comptime] len: u32,
    #[comptime] threads: u32,
) {
    #[unroll]
    for k in 0..comptime![len.div_ceil(threads)] {
        let w = k * threads + UNIT_POS;
        if w < len {
            counters[w as usize].store(0u32);
        }
    }
}
