//! The run lengths that cross tiles, after [`run_length_heads`](super::run_length_heads)
//! with lengths.
//!
//! The single-pass tile carries only its head count through the look-back, so it can write
//! the length of every run that ends inside it except the run before its first head (which
//! started in an earlier tile) and the last run of all. It leaves a record per tile instead
//! ([`RECORD_WORDS`] words): its first head + 1, its last head + 1 (0: no head), and the runs
//! before it. This kernel, one unit per tile, finds for each tile the last head before it
//! (the largest `last + 1` of the earlier tiles: a cube-wide max scan, carried from the
//! cubes before by walking back their records a cube-width at a time until one has a head)
//! and writes the two missing kinds of length.
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::select::{pass_len, plain_item, scan_shared};
use crate::cube::cube_exclusive_scan;
use crate::ops::Max;
use cubecl::prelude::*;

/// Words of a tile's record: `[first head + 1, last head + 1, runs before the tile]`.
pub const RECORD_WORDS: u32 = 3;

/// Writes `lengths[runs before t - 1]` for every tile `t > 0` with a head and
/// `lengths[count - 1]` (the last run), from the tiles' `records` (see the module
/// documentation). `n`: the element count (`min(len[0], n_host)` with `device_len`);
/// `tile_elems`: elements per tile; `count[0]`: the number of runs.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn run_length_fixup<W: Numeric>(
    records: &Array<u32>,
    lengths: &mut Array<W>,
    count: &Array<u32>,
    len: &Array<u32>,
    n_host: u32,
    tile_elems: u32,
    #[comptime] threads: u32,
    #[comptime] plane_ops: bool,
    #[comptime] device_len: bool,
) {
    let n = pass_len(len, n_host, device_len);
    let tiles = n.div_ceil(tile_elems);
    let first_tile = CUBE_POS as u32 * threads;
    let t = first_tile + UNIT_POS;
    let w = RECORD_WORDS as usize;
    let mut sh = scan_shared::<u32>(threads);
    if first_tile < tiles {
        // The last head before the cube: walk back a cube-width of records at a time (tile 0
        // has a head, so the walk ends; a cube-uniform loop, bounded by the tile count).
        let mut before = 0u32;
        let mut j = first_tile;
        while j > 0 && before == 0 {
            j -= threads;
            let item = plain_item::<u32>(records[(j + UNIT_POS) as usize * w + 1]);
            before = cube_exclusive_scan::<u32, Max>(
                item,
                &mut sh.scan_v,
                &mut sh.scan_i,
                threads,
                false,
                plane_ops,
            )
            .total
            .value;
            sync_cube();
        }
        let mut last = 0u32;
        if t < tiles {
            last = records[t as usize * w + 1];
        }
        let scan = cube_exclusive_scan::<u32, Max>(
            plain_item::<u32>(last),
            &mut sh.scan_v,
            &mut sh.scan_i,
            threads,
            false,
            plane_ops,
        );
        let prev = max(before, scan.exclusive.value);
        if t < tiles {
            let first = records[t as usize * w];
            if t > 0 && first != 0 {
                let runs = records[t as usize * w + 2];
                lengths[(runs - 1) as usize] = W::cast_from(first - prev);
            }
            if t == tiles - 1 {
                let end = max(prev, last);
                let runs = count[0];
                lengths[(runs - 1) as usize] = W::cast_from(n + 1 - end);
            }
        }
    }
}
