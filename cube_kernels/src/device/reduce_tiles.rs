//! First pass of reduce-then-scan: the aggregate of every tile.
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::{row_length, row_offsets};
use crate::cube::{tile_aggregate, TileConfig, TileShared};
use crate::ops::ScanOp;
use cubecl::prelude::*;

/// `aggregates[tile_id]` = combination of the tile's elements (same tiling as `scan_rows`;
/// tiles past a device-resident length reduce to the identity).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn reduce_tiles<T: Numeric, A: Numeric, O: ScanOp, N: Size>(
    input: &Array<Vector<T, N>>,
    aggregates: &mut Array<A>,
    layout: &Array<u32>,
    len: &Array<u32>,
    n_vec: u32,
    tiles_per_row: u32,
    num_tiles: u32,
    in_stride: u32,
    #[comptime] cfg: TileConfig,
    #[comptime] device_len: bool,
) {
    let tile_id = CUBE_POS as u32;
    let n_vec = row_length(len, n_vec, device_len);
    if tile_id < num_tiles {
        let mut sh = TileShared::<A>::new(cfg);
        let row = tile_id / tiles_per_row;
        let tile = tile_id % tiles_per_row;
        let (base_in, _base_out) = row_offsets(row, layout);
        let total = tile_aggregate::<T, T, A, O, N>(
            input,
            input,
            base_in,
            in_stride as usize,
            n_vec,
            tile,
            &mut sh,
            cfg,
        );
        if UNIT_POS == 0 {
            aggregates[tile_id as usize] = total.value;
        }
    }
}
