// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use cubecl::prelude::*;

/// `buf[i] = value` for every `i` (used to reset the look-back state).
#[cube(launch)]
pub fn fill_u32(buf: &mut Array<u32>, value: u32) {
    let i = ABSOLUTE_POS;
    if i < buf.len() {
        buf[i] = value;
    }
}
