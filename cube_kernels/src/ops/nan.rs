//! The NaN test the selection operators and the kernels share.
// `#[cube]` generates an undocumented module (and its items) beside each function.
#![allow(missing_docs)]

use cubecl::prelude::*;

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
