//! The first-order linear recurrence `h[t] = a[t] h[t-1] + b[t]` as a scan over pairs.
// `#[cube]` generates an undocumented module (and its items) beside each function.
#![allow(missing_docs)]

use super::ScanOp;
use cubecl::prelude::*;

/// The operator of `linear_recurrence`: items are pairs `(a, b)` of the affine maps
/// `h -> a h + b`, composed in scan order, `(a1, b1) ∘ (a2, b2) = (a1 a2, a2 b1 + b2)`, with
/// identity `(1, 0)`. `b` (and the running `h`) is the item's value, in the accumulator type;
/// `a` (the running product of the multipliers) travels as the bits of an f32 in the item's
/// index word, which the tile scan, the tile state and the look-back already carry for the
/// indexed scans. Only [`combine_items`](super::combine_items) composes pairs
/// ([`ScanOp::AFFINE`]); `combine` of values alone is the sum, which no kernel uses.
pub struct Affine;

#[cube]
impl ScanOp for Affine {
    const AFFINE: bool = true;
    fn identity<A: Numeric>() -> A {
        A::from_int(0)
    }
    fn combine<A: Numeric>(a: A, b: A) -> A {
        a + b
    }
    // `.into()`: the expanded body returns an expression, not a Rust bool.
    #[allow(clippy::useless_conversion)]
    fn take_second<A: Numeric>(_a: A, _b: A) -> bool {
        false.into()
    }
}

/// The index word of a multiplier `a`: its f32 bits.
#[cube]
pub fn affine_bits<M: Numeric>(a: M) -> u32 {
    u32::reinterpret(f32::cast_from(a))
}

/// The multiplier held in an index word, in the accumulator type.
#[cube]
pub fn affine_mul<A: Numeric>(bits: u32) -> A {
    A::cast_from(f32::reinterpret(bits))
}
