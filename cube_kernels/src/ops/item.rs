//! The value a scan carries: the running value and, for cummax / cummin with indices, the
//! position (in scan order) of the element that holds it.
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::ScanOp;
use cubecl::prelude::*;

/// A scan value with the index of the element that selected it (`u32::MAX`: none).
#[derive(CubeType, Clone, Copy)]
pub struct Item<A: Numeric> {
    /// The running value.
    pub value: A,
    /// Position (in scan order) of the element holding it; `u32::MAX` for none.
    pub index: u32,
}

// Mutable `Item` variables (`let mut acc = ...; acc = ...;`) need `Assign` on the expand type.
impl<A: Numeric> cubecl::Assign for ItemExpand<A> {
    fn expand_assign(&mut self, scope: &mut cubecl::ir::Scope, value: Self) {
        self.value.expand_assign(scope, value.value);
        self.index.expand_assign(scope, value.index);
    }
    fn init_mut(&self, scope: &mut cubecl::ir::Scope) -> Self {
        ItemExpand {
            value: self.value.init_mut(scope),
            index: self.index.init_mut(scope),
        }
    }
}

/// An item built from a value and, when `indexed`, `ix[i]` (else index 0).
#[cube]
pub fn item_at<A: Numeric>(
    value: A,
    ix: &Array<u32>,
    i: usize,
    #[comptime] indexed: bool,
) -> Item<A> {
    let mut index = 0u32;
    if comptime![indexed] {
        index = ix[i];
    }
    Item::<A> { value, index }
}

/// The operator's identity, with no index (for [`Affine`](super::Affine): the pair `(1, 0)`,
/// 1 as f32 bits).
#[cube]
pub fn identity_item<A: Numeric, O: ScanOp>() -> Item<A> {
    let index = u32::new(comptime![if O::AFFINE {
        0x3f80_0000i64
    } else {
        u32::MAX as i64
    }]);
    Item::<A> {
        value: O::identity::<A>(),
        index,
    }
}

/// `a ⊕ b` (`a` earlier). With `indexed`, the index follows the selected operand; for
/// [`Affine`](super::Affine) (always `indexed`) the pairs compose:
/// `(a1, b1) ∘ (a2, b2) = (a1 a2, a2 b1 + b2)`.
#[cube]
pub fn combine_items<A: Numeric, O: ScanOp>(
    a: Item<A>,
    b: Item<A>,
    #[comptime] indexed: bool,
) -> Item<A> {
    if comptime![O::AFFINE] {
        let a1 = f32::reinterpret(a.index);
        let a2 = f32::reinterpret(b.index);
        Item::<A> {
            value: A::cast_from(a2) * a.value + b.value,
            index: u32::reinterpret(a1 * a2),
        }
    } else if comptime![indexed] {
        let take = O::take_second::<A>(a.value, b.value);
        Item::<A> {
            value: select(take, b.value, a.value),
            index: select(take, b.index, a.index),
        }
    } else {
        Item::<A> {
            value: O::combine::<A>(a.value, b.value),
            index: 0u32,
        }
    }
}

/// Bits that the optimiser cannot fold into a constant: CUDA cannot reinterpret a literal and
/// WGSL has no inf literal, so float infinities are built from these at run time.
#[cube]
fn runtime_bits(bits: u32) -> u32 {
    select(UNIT_POS == u32::MAX, 0u32, bits)
}

/// The lowest value of `A`: -inf for floats, the minimum for integers.
#[cube]
pub fn lowest<A: Numeric>() -> A {
    let ty = type_of::<A>();
    if comptime![ty.elem_type().is_float()] {
        A::cast_from(f32::reinterpret(runtime_bits(0xff80_0000u32)))
    } else {
        A::min_value()
    }
}

/// The highest value of `A`: +inf for floats, the maximum for integers.
#[cube]
pub fn highest<A: Numeric>() -> A {
    let ty = type_of::<A>();
    if comptime![ty.elem_type().is_float()] {
        A::cast_from(f32::reinterpret(runtime_bits(0x7f80_0000u32)))
    } else {
        A::max_value()
    }
}
