//! `log(exp(a) + exp(b))`, the operator of `logcumsumexp` / `logsumexp`.
// `#[cube]` generates an undocumented module (and its items) beside each function.
#![allow(missing_docs)]

use super::{is_nan, lowest, ScanOp};
use cubecl::ir::{ElemType, FloatKind};
use cubecl::prelude::*;

/// `log(exp(a) + exp(b))`, computed as `max + log1p(exp(min - max))` so that it neither
/// overflows nor underflows; identity -inf. Floats only: f64 computes in f64, every other
/// float in f32 (f16 / bf16 accumulate in f32). Equal operands (both -inf, both +inf) give
/// `a + ln 2` (-inf, +inf) with no `inf - inf`; NaN propagates.
pub struct LogAddExp;

#[cube]
impl ScanOp for LogAddExp {
    fn identity<A: Numeric>() -> A {
        lowest::<A>()
    }
    fn combine<A: Numeric>(a: A, b: A) -> A {
        let ty = type_of::<A>();
        // f64 only where the data is f64, so that WGSL never sees a double.
        if comptime![ty.elem_type() == ElemType::Float(FloatKind::F64)] {
            A::cast_from(log_add_exp::<f64>(f64::cast_from(a), f64::cast_from(b)))
        } else {
            A::cast_from(log_add_exp::<f32>(f32::cast_from(a), f32::cast_from(b)))
        }
    }
    // `.into()`: the expanded body returns an expression, not a Rust bool.
    #[allow(clippy::useless_conversion)]
    fn take_second<A: Numeric>(_a: A, _b: A) -> bool {
        false.into()
    }
}

/// `log(exp(a) + exp(b))` in `F`. NaN is tested on the bits and selected explicitly: `max`
/// and comparisons may drop a NaN operand on some targets.
#[cube]
pub fn log_add_exp<F: Float>(a: F, b: F) -> F {
    let a_first = a > b;
    let hi = select(a_first, a, b);
    let lo = select(a_first, b, a);
    // Equal operands: `log1p(exp(0)) = ln 2`, which also keeps -inf / +inf pairs away from
    // `inf - inf`.
    let d = select(hi == lo, F::new(0.0), lo - hi);
    let r = hi + F::log1p(F::exp(d));
    select(is_nan::<F>(a), a, select(is_nan::<F>(b), b, r))
}
