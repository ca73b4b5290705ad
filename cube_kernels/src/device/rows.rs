//! Where a row starts and how long it is, for the kernels that work row by row.
// `#[cube]` generates an undocumented module (and its items) beside each function.
#![allow(missing_docs)]

use cubecl::prelude::*;

/// The row length in vectors: `n_vec`, or with `device_len` the smaller of `n_vec` (the
/// capacity) and the count `len[0]` that an earlier kernel left on the device.
#[cube]
pub fn row_length(len: &Array<u32>, n_vec: u32, #[comptime] device_len: bool) -> u32 {
    let mut n = n_vec;
    if comptime![device_len] {
        let c = len[0];
        if c < n_vec {
            n = c;
        }
    }
    n
}

/// Offsets (in vectors) of the start of `row` in the input and the output. `layout` holds
/// `[rank, shape.., in_strides.., out_strides.., in_offset]` of the dimensions other than the
/// scanned one.
#[cube]
pub fn row_offsets(row: u32, layout: &Array<u32>) -> (usize, usize) {
    let rank = layout[0] as usize;
    let mut rem = row as usize;
    let mut bin = layout[1 + 3 * rank] as usize;
    let mut bout = 0usize;
    for k in 0..rank {
        let d = rank - 1 - k;
        let size = layout[1 + d] as usize;
        let c = rem % size;
        rem /= size;
        bin += c * layout[1 + rank + d] as usize;
        bout += c * layout[1 + 2 * rank + d] as usize;
    }
    (bin, bout)
}
