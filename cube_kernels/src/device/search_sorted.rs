//! searchsorted / bucketize: a bounded binary search per query.
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use crate::ops::key_less;
use cubecl::prelude::*;

/// For each of `total` queries (contiguous rows of `m`), the insertion position in its row of
/// `sorted` (contiguous rows of `n`, `sorted_row_stride` apart: 0 shares one sorted row among
/// all queries) that keeps the row sorted: the first position whose key is not less than the
/// query (`right == false`) or greater than it (`right == true`), in the sort order of
/// [`radix_digit`](crate::ops::radix_digit()) (NaN last, `-0.0 == +0.0`). `steps` >= ceil(log2(n + 1)) bounds the
/// search.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn search_sorted<T: Numeric, X: Numeric>(
    sorted: &Array<T>,
    queries: &Array<T>,
    out: &mut Array<X>,
    n: u32,
    m: u32,
    total: u32,
    sorted_row_stride: u32,
    steps: u32,
    #[comptime] right: bool,
) {
    let q = CUBE_POS as u32 * CUBE_DIM + UNIT_POS;
    if q < total {
        let row = q / m;
        let base = row as usize * sorted_row_stride as usize;
        let v = queries[q as usize];
        let mut lo = 0u32;
        let mut hi = n;
        for _ in 0..steps {
            if lo < hi {
                let mid = lo + (hi - lo) / 2u32;
                let a = sorted[base + mid as usize];
                let mut go_right = key_less::<T>(a, v);
                if comptime![right] {
                    go_right = !key_less::<T>(v, a);
                }
                if go_right {
                    lo = mid + 1u32;
                } else {
                    hi = mid;
                }
            }
        }
        out[q as usize] = X::cast_from(lo);
    }
}
