//! Scatter through a permutation: `out[index[i]] = src[i]` (inverting a sort permutation).
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use cubecl::prelude::*;

/// `out[index[i]] = src[i]` for `i < n`, one element per unit.
#[cube(launch_unchecked)]
pub fn scatter_by_index<T: Numeric>(
    src: &Array<T>,
    index: &Array<u32>,
    out: &mut Array<T>,
    n: u32,
) {
    let i = CUBE_POS as u32 * CUBE_DIM + UNIT_POS;
    if i < n {
        let j = index[i as usize];
        out[j as usize] = src[i as usize];
    }
}
