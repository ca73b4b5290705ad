//! Scan operators. An operator is an identity and an associative `combine`; the selection
//! operators (max, min) also say which side wins, which is what the index-tracking scans use.

mod add;
mod item;
mod max;
mod min;
mod mul;
mod radix_key;

pub use add::Add;
pub use item::{combine_items, highest, identity_item, item_at, lowest, Item};
pub use max::Max;
pub use min::Min;
pub use mul::Mul;
pub use radix_key::{key_less, ordered_key32, ordered_key64, radix_digit};

use cubecl::prelude::*;

/// An associative operator with an identity. `a` is always the earlier operand.
#[cube]
pub trait ScanOp: 'static + Send + Sync {
    /// The identity element: `combine(identity(), x) == x` for every `x`.
    fn identity<A: Numeric>() -> A;
    /// `a ⊕ b`, where `a` comes before `b` in scan order.
    fn combine<A: Numeric>(a: A, b: A) -> A;
    /// Selection operators: whether the later operand `b` replaces `a` (ties and NaN pick the
    /// later one, as PyTorch's cummax / cummin do). Arithmetic operators return `false`.
    fn take_second<A: Numeric>(a: A, b: A) -> bool;
}

/// True only for a float NaN (always false for integers). Tested on the bits: `x != x` is
/// folded away by some shader compilers (llvmpipe returned false for NaN).
#[cube]
#[allow(clippy::useless_conversion)] // `.into()`: the expanded branch returns an expression
pub fn is_nan<A: Numeric>(x: A) -> bool {
    let ty = type_of::<A>();
    if comptime![ty.elem_type().is_float()] {
        // f64 and f16 NaN stay NaN through the cast to f32.
        let bits = u32::reinterpret(f32::cast_from(x));
        (bits & 0x7fff_ffffu32) > 0x7f80_0000u32
    } else {
        false.into()
    }
}
