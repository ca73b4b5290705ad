//! A strided view copied into a contiguous buffer.
// `#[cube]` generates an undocumented module (and its items) beside each function.
#![allow(missing_docs)]

use cubecl::prelude::*;

/// `output[i]` = the `i`-th element (row-major) of the view `layout` describes:
/// `[rank, shape.., strides.., offset]` (in elements). `n` elements; one per unit.
#[cube(launch_unchecked)]
pub fn copy_strided<T: Numeric>(
    input: &Array<T>,
    output: &mut Array<T>,
    layout: &Array<u32>,
    n: u32,
) {
    let i = CUBE_POS * CUBE_DIM as usize + UNIT_POS as usize;
    if i < n as usize {
        let rank = layout[0] as usize;
        let mut rem = i;
        let mut at = layout[1 + 2 * rank] as usize;
        for k in 0..rank {
            let d = rank - 1 - k;
            let size = layout[1 + d] as usize;
            at += (rem % size) * layout[1 + rank + d] as usize;
            rem /= size;
        }
        output[i] = input[at];
    }
}
