//! Scan operators. An operator is an identity and an associative `combine`; the selection
//! operators (max, min) also say which side wins, which is what the index-tracking scans use.
//! Users define their own by implementing [`ScanOp`] (re-exported as `cubeprim::ops::ScanOp`).

mod add;
mod affine;
mod item;
mod logsumexp;
mod max;
mod min;
mod mul;
mod nan;
mod radix_key;

pub use add::Add;
pub use affine::{affine_bits, affine_mul, Affine};
pub use item::{combine_items, highest, identity_item, item_at, lowest, Item};
pub use logsumexp::{log_add_exp, LogAddExp};
pub use max::Max;
pub use min::Min;
pub use mul::Mul;
pub use nan::is_nan;
pub use radix_key::{key_less, ordered_key32, ordered_key64, radix_digit};

use cubecl::prelude::*;

/// An associative operator with an identity. `a` is always the earlier operand.
///
/// The kernels combine elements in an order fixed by the shape and the device (tiles, planes,
/// look-back), so `combine` must be associative (it need not be commutative) and
/// `identity` must be neutral on both sides: the kernels pad partial tiles and start
/// exclusive scans with it. `A` is the accumulator type of the data: the dtype itself, f32
/// for f16 / bf16. An operator is implemented in a `#[cube]` impl block, as the built-ins
/// ([`Add`], [`Mul`], [`Max`], [`Min`], [`LogAddExp`]) are; `take_second` returns `false`
/// for every operator but a selection (max-like) one.
// `#[cube]` adds undocumented `__expand_*` functions to the trait, and an expand trait.
#[allow(missing_docs)]
#[cube]
pub trait ScanOp: 'static + Send + Sync {
    /// The identity element: `combine(identity(), x) == x` for every `x`.
    fn identity<A: Numeric>() -> A;
    /// `a ⊕ b`, where `a` comes before `b` in scan order.
    fn combine<A: Numeric>(a: A, b: A) -> A;
    /// Selection operators: whether the later operand `b` replaces `a` (ties and NaN pick the
    /// later one, as PyTorch's cummax / cummin do). Arithmetic operators return `false`.
    fn take_second<A: Numeric>(a: A, b: A) -> bool;
    /// The linear-recurrence operator ([`Affine`]) only: the scan's items are pairs `(a, b)`,
    /// `b` in the value and `a` (as f32 bits) in the index word, combined as
    /// `(a1, b1) ∘ (a2, b2) = (a1 a2, a2 b1 + b2)`. Every other operator leaves it `false`.
    #[doc(hidden)]
    const AFFINE: bool = false;
}
