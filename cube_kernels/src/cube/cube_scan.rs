// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use crate::ops::{combine_items, identity_item, Item, ScanOp};
use crate::plane::plane_inclusive_scan;
use cubecl::prelude::*;

/// The result of a cube-wide scan, as seen by one unit.
#[derive(CubeType, Clone, Copy)]
pub struct CubeScan<A: Numeric> {
    /// Combination of the items of all units before this one (identity for unit 0).
    pub exclusive: Item<A>,
    /// Combination of all items of the cube.
    pub total: Item<A>,
}

/// Exclusive scan of one item per unit over the whole cube. Every unit must call it.
/// `sv` / `si` are shared scratch of at least `2 * threads` entries (`si` only when `indexed`).
/// The scan order is fixed, so floating-point results are the same on every run. The caller
/// syncs before reusing the scratch.
#[cube]
pub fn cube_exclusive_scan<A: Numeric, O: ScanOp>(
    item: Item<A>,
    sv: &mut SharedMemory<A>,
    si: &mut SharedMemory<u32>,
    #[comptime] threads: u32,
    #[comptime] indexed: bool,
    #[comptime] plane_ops: bool,
) -> CubeScan<A> {
    cube_exclusive_scan_at::<A, O>(item, sv, si, 0usize, threads, indexed, plane_ops)
}

/// [`cube_exclusive_scan()`] with its value scratch at word `sv_at` of `sv` (a kernel that
/// carves its shared arrays from one, see
/// [`RankLayout`](super::RankLayout)); `si` from word 0.
#[cube]
pub fn cube_exclusive_scan_at<A: Numeric, O: ScanOp>(
    item: Item<A>,
    sv: &mut SharedMemory<A>,
    si: &mut SharedMemory<u32>,
    #[comptime] sv_at: usize,
    #[comptime] threads: u32,
    #[comptime] indexed: bool,
    #[comptime] plane_ops: bool,
) -> CubeScan<A> {
    if comptime![plane_ops] {
        cube_scan_planes::<A, O>(item, sv, si, sv_at, indexed)
    } else {
        cube_scan_shared::<A, O>(item, sv, si, sv_at, threads, indexed)
    }
}

/// Planes scan their units, the first plane scans the plane totals, units add their plane's
/// prefix.
#[cube]
fn cube_scan_planes<A: Numeric, O: ScanOp>(
    item: Item<A>,
    sv: &mut SharedMemory<A>,
    si: &mut SharedMemory<u32>,
    #[comptime] sv_at: usize,
    #[comptime] indexed: bool,
) -> CubeScan<A> {
    let lane = UNIT_POS_PLANE;
    let plane = UNIT_POS / PLANE_DIM;
    let num_planes = CUBE_DIM / PLANE_DIM;
    let incl = plane_inclusive_scan::<A, O>(item, indexed);
    if lane == PLANE_DIM - 1 {
        sv[shifted(plane as usize, sv_at)] = incl.value;
        if comptime![indexed] {
            si[plane as usize] = incl.index;
        }
    }
    sync_cube();
    if plane == 0 {
        let mut carry = identity_item::<A, O>();
        let mut base = 0u32;
        while base < num_planes {
            let i = base + lane;
            let mut v = identity_item::<A, O>();
            if i < num_planes {
                v = read_item::<A>(sv, si, i as usize, sv_at, indexed);
            }
            let s = combine_items::<A, O>(carry, plane_inclusive_scan::<A, O>(v, indexed), indexed);
            if i < num_planes {
                write_item::<A>(sv, si, i as usize, s, sv_at, indexed);
            }
            let mut carry_index = 0u32;
            if comptime![indexed] {
                carry_index = plane_shuffle(s.index, PLANE_DIM - 1);
            }
            carry = Item::<A> {
                value: plane_shuffle(s.value, PLANE_DIM - 1),
                index: carry_index,
            };
            base += PLANE_DIM;
        }
    }
    sync_cube();
    let mut up_index = 0u32;
    if comptime![indexed] {
        up_index = plane_shuffle_up(incl.index, 1);
    }
    let up = Item::<A> {
        value: plane_shuffle_up(incl.value, 1),
        index: up_index,
    };
    let mut exclusive = identity_item::<A, O>();
    if plane > 0 {
        exclusive = read_item::<A>(sv, si, (plane - 1) as usize, sv_at, indexed);
    }
    if lane > 0 {
        exclusive = combine_items::<A, O>(exclusive, up, indexed);
    }
    let total = read_item::<A>(sv, si, (num_planes - 1) as usize, sv_at, indexed);
    CubeScan::<A> { exclusive, total }
}

/// Hillis-Steele scan in shared memory (ping-pong halves), for runtimes without plane ops.
#[cube]
fn cube_scan_shared<A: Numeric, O: ScanOp>(
    item: Item<A>,
    sv: &mut SharedMemory<A>,
    si: &mut SharedMemory<u32>,
    #[comptime] sv_at: usize,
    #[comptime] threads: u32,
    #[comptime] indexed: bool,
) -> CubeScan<A> {
    let t = UNIT_POS as usize;
    let half = comptime![threads as usize];
    write_item::<A>(sv, si, t, item, sv_at, indexed);
    sync_cube();
    let mut src = 0usize;
    let mut offset = 1usize;
    while offset < half {
        let mut r = read_item::<A>(sv, si, src + t, sv_at, indexed);
        if t >= offset {
            r = combine_items::<A, O>(
                read_item::<A>(sv, si, src + t - offset, sv_at, indexed),
                r,
                indexed,
            );
        }
        let dst = half - src;
        write_item::<A>(sv, si, dst + t, r, sv_at, indexed);
        sync_cube();
        src = dst;
        offset *= 2;
    }
    let mut exclusive = identity_item::<A, O>();
    if t > 0 {
        exclusive = read_item::<A>(sv, si, src + t - 1, sv_at, indexed);
    }
    let total = read_item::<A>(sv, si, src + half - 1, sv_at, indexed);
    CubeScan::<A> { exclusive, total }
}

/// Word `i` of an array whose scratch starts at word `at` (no addition where `at` is 0).
#[cube]
fn shifted(i: usize, #[comptime] at: usize) -> usize {
    if comptime![at == 0] {
        i
    } else {
        i + at
    }
}

/// Item `i`: its value at word `sv_at + i` of `sv`, its index at word `i` of `si`.
#[cube]
pub(crate) fn read_item<A: Numeric>(
    sv: &SharedMemory<A>,
    si: &SharedMemory<u32>,
    i: usize,
    #[comptime] sv_at: usize,
    #[comptime] indexed: bool,
) -> Item<A> {
    let mut index = 0u32;
    if comptime![indexed] {
        index = si[i];
    }
    Item::<A> {
        value: sv[shifted(i, sv_at)],
        index,
    }
}

#[cube]
pub(crate) fn write_item<A: Numeric>(
    sv: &mut SharedMemory<A>,
    si: &mut SharedMemory<u32>,
    i: usize,
    item: Item<A>,
    #[comptime] sv_at: usize,
    #[comptime] indexed: bool,
) {
    sv[shifted(i, sv_at)] = item.value;
    if comptime![indexed] {
        si[i] = item.index;
    }
}
