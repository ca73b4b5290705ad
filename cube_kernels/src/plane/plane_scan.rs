// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use crate::ops::{combine_items, Item, ScanOp};
use cubecl::prelude::*;

/// Inclusive scan of one item per unit across the plane (Kogge-Stone over `plane_shuffle_up`),
/// for any operator. Every unit of the plane must call it.
#[cube]
pub fn plane_inclusive_scan<A: Numeric, O: ScanOp>(
    item: Item<A>,
    #[comptime] indexed: bool,
) -> Item<A> {
    let lane = UNIT_POS_PLANE;
    let mut acc = item;
    let mut delta = 1u32;
    while delta < PLANE_DIM {
        let mut other_index = 0u32;
        if comptime![indexed] {
            other_index = plane_shuffle_up(acc.index, delta);
        }
        let other = Item::<A> {
            value: plane_shuffle_up(acc.value, delta),
            index: other_index,
        };
        if lane >= delta {
            acc = combine_items::<A, O>(other, acc, indexed);
        }
        delta *= 2;
    }
    acc
}
