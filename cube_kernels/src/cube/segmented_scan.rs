// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::CubeScan;
use crate::ops::{Item, ScanOp};
use cubecl::prelude::*;

/// The run-length (segmented) combine of `a` then `b`: `index` counts run heads and adds up;
/// `value` is the fold since the last head, so it restarts when `b` holds a head. Associative
/// for any operator.
#[cube]
pub fn combine_runs<A: Numeric, O: ScanOp>(a: Item<A>, b: Item<A>) -> Item<A> {
    Item::<A> {
        value: select(b.index > 0, b.value, O::combine::<A>(a.value, b.value)),
        index: a.index + b.index,
    }
}

/// Exclusive scan of one `(fold since last head, heads)` item per unit over the whole cube with
/// [`combine_runs()`] (Hillis-Steele in shared memory, ping-pong halves: works on every runtime).
/// `sv` / `si` hold at least `2 * threads` entries. The caller syncs before reusing them.
#[cube]
pub fn cube_exclusive_segmented_scan<A: Numeric, O: ScanOp>(
    item: Item<A>,
    sv: &mut SharedMemory<A>,
    si: &mut SharedMemory<u32>,
    #[comptime] threads: u32,
) -> CubeScan<A> {
    let t = UNIT_POS as usize;
    let half = comptime![threads as usize];
    sv[t] = item.value;
    si[t] = item.index;
    sync_cube();
    let mut src = 0usize;
    let mut offset = 1usize;
    while offset < half {
        let mut r = Item::<A> {
            value: sv[src + t],
            index: si[src + t],
        };
        if t >= offset {
            let a = Item::<A> {
                value: sv[src + t - offset],
                index: si[src + t - offset],
            };
            r = combine_runs::<A, O>(a, r);
        }
        let dst = half - src;
        sv[dst + t] = r.value;
        si[dst + t] = r.index;
        sync_cube();
        src = dst;
        offset *= 2;
    }
    let mut exclusive = Item::<A> {
        value: O::identity::<A>(),
        index: 0u32,
    };
    if t > 0 {
        exclusive = Item::<A> {
            value: sv[src + t - 1],
            index: si[src + t - 1],
        };
    }
    let total = Item::<A> {
        value: sv[src + half - 1],
        index: si[src + half - 1],
    };
    CubeScan::<A> { exclusive, total }
}

/// [`cube_exclusive_segmented_scan()`], with plane operations when `plane_ops` (a
/// Kogge-Stone scan over `plane_shuffle_up` in each plane, the plane totals scanned by the
/// first plane: two cube barriers instead of one per doubling). Same contract.
#[cube]
pub fn cube_exclusive_segmented_scan_with<A: Numeric, O: ScanOp>(
    item: Item<A>,
    sv: &mut SharedMemory<A>,
    si: &mut SharedMemory<u32>,
    #[comptime] threads: u32,
    #[comptime] plane_ops: bool,
) -> CubeScan<A> {
    if comptime![plane_ops] {
        segmented_scan_planes::<A, O>(item, sv, si)
    } else {
        cube_exclusive_segmented_scan::<A, O>(item, sv, si, threads)
    }
}

/// Inclusive segmented scan of one item per unit across the plane.
#[cube]
fn plane_inclusive_segmented_scan<A: Numeric, O: ScanOp>(item: Item<A>) -> Item<A> {
    let lane = UNIT_POS_PLANE;
    let mut acc = item;
    let mut delta = 1u32;
    while delta < PLANE_DIM {
        let other = Item::<A> {
            value: plane_shuffle_up(acc.value, delta),
            index: plane_shuffle_up(acc.index, delta),
        };
        if lane >= delta {
            acc = combine_runs::<A, O>(other, acc);
        }
        delta *= 2;
    }
    acc
}

#[cube]
fn segmented_scan_planes<A: Numeric, O: ScanOp>(
    item: Item<A>,
    sv: &mut SharedMemory<A>,
    si: &mut SharedMemory<u32>,
) -> CubeScan<A> {
    let lane = UNIT_POS_PLANE;
    let plane = UNIT_POS / PLANE_DIM;
    let num_planes = CUBE_DIM / PLANE_DIM;
    let incl = plane_inclusive_segmented_scan::<A, O>(item);
    if lane == PLANE_DIM - 1 {
        sv[plane as usize] = incl.value;
        si[plane as usize] = incl.index;
    }
    sync_cube();
    if plane == 0 {
        let mut carry = Item::<A> {
            value: O::identity::<A>(),
            index: 0u32,
        };
        let mut base = 0u32;
        while base < num_planes {
            let i = base + lane;
            let mut v = Item::<A> {
                value: O::identity::<A>(),
                index: 0u32,
            };
            if i < num_planes {
                v = Item::<A> {
                    value: sv[i as usize],
                    index: si[i as usize],
                };
            }
            let s = combine_runs::<A, O>(carry, plane_inclusive_segmented_scan::<A, O>(v));
            if i < num_planes {
                sv[i as usize] = s.value;
                si[i as usize] = s.index;
            }
            carry = Item::<A> {
                value: plane_shuffle(s.value, PLANE_DIM - 1),
                index: plane_shuffle(s.index, PLANE_DIM - 1),
            };
            base += PLANE_DIM;
        }
    }
    sync_cube();
    let up = Item::<A> {
        value: plane_shuffle_up(incl.value, 1),
        index: plane_shuffle_up(incl.index, 1),
    };
    let mut exclusive = Item::<A> {
        value: O::identity::<A>(),
        index: 0u32,
    };
    if plane > 0 {
        exclusive = Item::<A> {
            value: sv[(plane - 1) as usize],
            index: si[(plane - 1) as usize],
        };
    }
    if lane > 0 {
        exclusive = combine_runs::<A, O>(exclusive, up);
    }
    let total = Item::<A> {
        value: sv[(num_planes - 1) as usize],
        index: si[(num_planes - 1) as usize],
    };
    CubeScan::<A> { exclusive, total }
}
