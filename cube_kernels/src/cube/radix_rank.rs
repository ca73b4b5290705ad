//! Stable ranking of a tile by a radix digit, inside one cube (CUB's `BlockRadixRank`).
//!
//! Each unit holds `items` entries of the tile in blocked order (unit `t` holds positions
//! `t * items ..`), packed as `digit | position << 8`. One 1-bit split per digit bit (least
//! significant first) moves every entry whose bit is 0 before every entry whose bit is 1,
//! keeping the order inside each group: a cube-wide exclusive scan of the units' zero counts
//! gives each entry its new position. After `bits` splits the entries are in stable digit order.
//! Only cube-wide scans and barriers are used: no plane intrinsics are needed (they speed up the
//! scan where the runtime has them), no atomics, and a fixed amount of work per unit.

use super::cube_exclusive_scan;
use crate::ops::{Add, Item};
use cubecl::prelude::*;

/// Bits of the digit field of a packed entry (the tile position sits above it).
pub const DIGIT_BITS: u32 = 8;

/// The compile-time shape of a radix tile. Each distinct value compiles its own kernel.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub struct RadixConfig {
    /// Units per cube (a multiple of the plane width when `plane_ops`).
    pub threads: u32,
    /// Keys per unit; a tile holds `threads * items` keys.
    pub items: u32,
    /// Use plane (subgroup) operations in the cube-wide scans.
    pub plane_ops: bool,
}

impl RadixConfig {
    /// Keys in one tile.
    pub fn tile_len(&self) -> u32 {
        self.threads * self.items
    }
}

/// Shared-memory slot of tile position `j` (one pad word every 32 dodges bank conflicts on
/// blocked accesses).
#[cube]
pub fn radix_slot(j: u32) -> usize {
    (j + (j >> 5)) as usize
}

/// Slots a tile of `tile` entries occupies with [`radix_slot`] padding.
pub fn radix_slots(tile: u32) -> usize {
    (tile + tile / 32 + 1) as usize
}

/// A count as a scan item (no index).
#[cube]
fn count_item<A: Numeric>(value: A) -> Item<A> {
    Item::<A> { value, index: 0u32 }
}

/// Sorts the packed entries of a tile stably by their low `bits` bits (`bits <= 8`).
///
/// `packed`: the unit's `items` entries, blocked; on return, the unit's blocked share of the
/// sorted tile, which is also in `xch` (at [`radix_slot`] positions). `scan_v` / `scan_i`:
/// scratch of [`cube_exclusive_scan`] (`2 * threads` / 1 entries). Every unit must call it.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn tile_sort_by_digit(
    packed: &mut Array<u32>,
    xch: &mut SharedMemory<u32>,
    scan_v: &mut SharedMemory<u32>,
    scan_i: &mut SharedMemory<u32>,
    bits: u32,
    #[comptime] threads: u32,
    #[comptime] items: u32,
    #[comptime] plane_ops: bool,
) {
    let t = UNIT_POS;
    let first = t * items;
    if bits == 0u32 {
        #[unroll]
        for i in 0..items {
            xch[radix_slot(first + i)] = packed[i as usize];
        }
        sync_cube();
    }
    for b in 0..bits {
        let mut zeros = 0u32;
        #[unroll]
        for i in 0..items {
            zeros += 1u32 - ((packed[i as usize] >> b) & 1u32);
        }
        let cs = cube_exclusive_scan::<u32, Add>(
            count_item::<u32>(zeros),
            scan_v,
            scan_i,
            threads,
            false,
            plane_ops,
        );
        let total_zeros = cs.total.value;
        let mut z = cs.exclusive.value;
        let mut o = total_zeros + first - z;
        #[unroll]
        for i in 0..items {
            let p = packed[i as usize];
            let bit = (p >> b) & 1u32;
            let dst = select(bit == 0u32, z, o);
            xch[radix_slot(dst)] = p;
            z += 1u32 - bit;
            o += bit;
        }
        sync_cube();
        #[unroll]
        for i in 0..items {
            packed[i as usize] = xch[radix_slot(first + i)];
        }
        sync_cube();
    }
}
