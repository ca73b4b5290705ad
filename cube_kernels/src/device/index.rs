//! Index outputs narrowed to u32: `out[i] = src[i] as u32` (the candle adapter's index dtype,
//! from the runtime's i64 or i32).
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use cubecl::prelude::*;

/// `out[i] = src[i] as u32` for `i < n`, one element per unit: indices, positions or counts of
/// the runtime's index dtype (i32 or i64), non-negative and below 2^32, as u32.
#[cube(launch_unchecked)]
pub fn index_to_u32<T: Numeric>(src: &Array<T>, out: &mut Array<u32>, n: u32) {
    let i = CUBE_POS as u32 * CUBE_DIM + UNIT_POS;
    if i < n {
        out[i as usize] = u32::cast_from(src[i as usize]);
    }
}
