//! Reduction of rows: one tile per cube, the result of each tile written (cast to `U`); the
//! host repeats the pass over the tile results until one value per row is left.
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::row_offsets;
use super::select::scan_shared;
use crate::cube::{tile_reduce, TileConfig};
use crate::ops::ScanOp;
use cubecl::prelude::*;

/// `output[g]` = combination of the elements of group `g`: `group` consecutive tiles of a row
/// (rows and tiles as in `scan_rows`; `tiles_per_row` and `num_tiles` count groups). With
/// `device_len` the row holds `min(len[0], n_vec * width)` elements (one row): groups past it
/// read nothing and write the identity.
#[cube(launch_unchecked)]
// A comptime condition and a run-time one stay separate `if`s in cube code.
#[allow(clippy::too_many_arguments, clippy::collapsible_if)]
pub fn reduce_rows<T: Numeric, A: Numeric, U: Numeric, O: ScanOp, N: Size>(
    input: &Array<Vector<T, N>>,
    output: &mut Array<U>,
    layout: &Array<u32>,
    len: &Array<u32>,
    n_vec: u32,
    tiles_per_row: u32,
    num_tiles: u32,
    in_stride: u32,
    group: u32,
    #[comptime] cfg: TileConfig,
    #[comptime] device_len: bool,
) {
    let tile_id = CUBE_POS as u32;
    if tile_id < num_tiles {
        let mut sh = scan_shared::<A>(cfg.threads);
        let row = tile_id / tiles_per_row;
        let g = tile_id % tiles_per_row;
        let (base_in, _base_out) = row_offsets(row, layout);
        let nl = N::value() as u32;
        let mut n = n_vec;
        let mut rem = 0u32;
        if comptime![device_len] {
            let m = min(len[0], n_vec * nl);
            n = m / nl;
            rem = m % nl;
        }
        let total = tile_reduce::<T, A, O, N>(
            input,
            base_in,
            in_stride as usize,
            n,
            g * group,
            group,
            &mut sh,
            cfg,
        );
        if UNIT_POS == 0 {
            let mut r = total;
            // A device length may end inside a vector: its lanes go last, in the group that
            // holds that vector.
            if comptime![device_len] {
                if rem > 0 && g == n / comptime![cfg.tile_vectors()] / group {
                    let v = input[base_in + n as usize * in_stride as usize];
                    #[unroll]
                    for l in 0..N::value() {
                        if (l as u32) < rem {
                            r = O::combine::<A>(r, A::cast_from(v[l]));
                        }
                    }
                }
            }
            output[tile_id as usize] = U::cast_from(r);
        }
    }
}
