//! Stable ranking of a tile by a radix digit, inside one cube (CUB's `BlockRadixRank`).
//!
//! Each unit holds `items` entries of the tile in blocked order (unit `t` holds positions
//! `t * items ..`), packed as `digit | position << 8`. One 1-bit split per digit bit (least
//! significant first) moves every entry whose bit is 0 before every entry whose bit is 1,
//! keeping the order inside each group: a cube-wide exclusive scan of the units' zero counts
//! gives each entry its new position. After `bits` splits the entries are in stable digit order.
//! Only cube-wide scans and barriers are used: no plane intrinsics are needed (they speed up the
//! scan where the runtime has them), no atomics, and a fixed amount of work per unit.
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

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
    /// Use plane (subgroup) operations: tiles are ranked by plane ballots
    /// ([`tile_rank_match`](super::tile_rank_match())) where a kernel has that path, and cube
    /// scans use planes. Without, tiles are ranked by splits ([`tile_sort_by_digit()`]) over
    /// shared-memory scans.
    pub plane_ops: bool,
    /// Split two bits per cube scan, with four 16-bit counters packed in a `u64` (runtimes
    /// with 64-bit integers); else one bit per scan with `u32` counters.
    pub wide_counts: bool,
    /// Smallest and largest plane width the runtime may launch (powers of two, `plane_max`
    /// at most 128): the ballot ranking sizes its counters for `threads / plane_min` planes
    /// and reads `plane_max / 32` words of each ballot.
    pub plane_min: u32,
    /// The largest plane width (see `plane_min`).
    pub plane_max: u32,
    /// The runtime has plane barriers (`sync_plane`; not WGSL): the ballot ranking orders its
    /// counter updates with one per chunk of keys. Without, it relies on the plane running its
    /// lanes in step, as every subgroup of a WGSL runtime does in uniform control flow.
    pub plane_sync: bool,
    /// CUDA with 32-lane planes: each ballot of the ranking is CUB's inline PTX, which keeps
    /// the lanes whose digit bit equals this unit's in one `vote` and a predicated `not`
    /// ([`tile_rank_match`](super::tile_rank_match())). Never set for another runtime.
    pub ptx_ballot: bool,
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

/// Slots a tile of `tile` entries occupies with [`radix_slot()`] padding.
pub fn radix_slots(tile: u32) -> usize {
    (tile + tile / 32 + 1) as usize
}

/// A count as a scan item (no index).
#[cube]
pub(crate) fn count_item<A: Numeric>(value: A) -> Item<A> {
    Item::<A> { value, index: 0u32 }
}

/// Sorts the packed entries of a tile stably by their low `bits` bits (`bits <= 8`).
///
/// `packed`: the unit's `items` entries, blocked; on return, the unit's blocked share of the
/// sorted tile, which is also in `xch` (at [`radix_slot()`] positions). `scan_v` / `scan_i`:
/// scratch of [`cube_exclusive_scan()`] (`2 * threads` / 1 entries). Every unit must call it.
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
    #[comptime] wide: bool,
) {
    if comptime![wide] {
        tile_sort_2bit(packed, xch, bits, threads, items, plane_ops);
    } else {
        tile_sort_1bit(packed, xch, scan_v, scan_i, bits, threads, items, plane_ops);
    }
}

/// Counter `k` (16 bits) of a packed `u64`.
#[cube]
fn count_field(x: u64, k: u32) -> u32 {
    u32::cast_from((x >> u64::cast_from(16u32 * k)) & 0xffffu64)
}

/// Two digit bits per round: four counters of 16 bits in one `u64` scan.
#[cube]
fn tile_sort_2bit(
    packed: &mut Array<u32>,
    xch: &mut SharedMemory<u32>,
    bits: u32,
    #[comptime] threads: u32,
    #[comptime] items: u32,
    #[comptime] plane_ops: bool,
) {
    let t = UNIT_POS;
    let first = t * items;
    let mut scan_v = SharedMemory::<u64>::new(comptime![2 * threads as usize]);
    let mut scan_i = SharedMemory::<u32>::new(1usize);
    if bits == 0u32 {
        #[unroll]
        for i in 0..items {
            xch[radix_slot(first + i)] = packed[i as usize];
        }
        sync_cube();
    }
    let rounds = bits.div_ceil(2u32);
    for r in 0..rounds {
        let b = 2u32 * r;
        let m = select(b + 1u32 < bits, 3u32, 1u32);
        let mut c0 = 0u32;
        let mut c1 = 0u32;
        let mut c2 = 0u32;
        let mut c3 = 0u32;
        #[unroll]
        for i in 0..items {
            let v = (packed[i as usize] >> b) & m;
            c0 += u32::cast_from(v == 0u32);
            c1 += u32::cast_from(v == 1u32);
            c2 += u32::cast_from(v == 2u32);
            c3 += u32::cast_from(v == 3u32);
        }
        let mine = u64::cast_from(c0)
            | (u64::cast_from(c1) << 16u64)
            | (u64::cast_from(c2) << 32u64)
            | (u64::cast_from(c3) << 48u64);
        let cs = cube_exclusive_scan::<u64, Add>(
            count_item::<u64>(mine),
            &mut scan_v,
            &mut scan_i,
            threads,
            false,
            plane_ops,
        );
        let e = cs.exclusive.value;
        let tot = cs.total.value;
        let t0 = count_field(tot, 0u32);
        let t1 = count_field(tot, 1u32);
        let t2 = count_field(tot, 2u32);
        let mut o0 = count_field(e, 0u32);
        let mut o1 = t0 + count_field(e, 1u32);
        let mut o2 = t0 + t1 + count_field(e, 2u32);
        let mut o3 = t0 + t1 + t2 + count_field(e, 3u32);
        #[unroll]
        for i in 0..items {
            let p = packed[i as usize];
            let v = (p >> b) & m;
            let dst = select(
                v == 0u32,
                o0,
                select(v == 1u32, o1, select(v == 2u32, o2, o3)),
            );
            xch[radix_slot(dst)] = p;
            o0 += u32::cast_from(v == 0u32);
            o1 += u32::cast_from(v == 1u32);
            o2 += u32::cast_from(v == 2u32);
            o3 += u32::cast_from(v == 3u32);
        }
        sync_cube();
        #[unroll]
        for i in 0..items {
            packed[i as usize] = xch[radix_slot(first + i)];
        }
        sync_cube();
    }
}

/// One digit bit per round, `u32` counters.
#[cube]
#[allow(clippy::too_many_arguments)]
fn tile_sort_1bit(
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
