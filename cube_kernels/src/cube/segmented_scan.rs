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
/// [`combine_runs`] (Hillis-Steele in shared memory, ping-pong halves: works on every runtime).
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
