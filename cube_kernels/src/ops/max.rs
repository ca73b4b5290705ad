use super::{is_nan, lowest, ScanOp};
use cubecl::prelude::*;

/// Maximum; NaN propagates (NaN is above every number), ties pick the later element.
pub struct Max;

#[cube]
impl ScanOp for Max {
    fn identity<A: Numeric>() -> A {
        lowest::<A>()
    }
    fn combine<A: Numeric>(a: A, b: A) -> A {
        select(Self::take_second::<A>(a, b), b, a)
    }
    fn take_second<A: Numeric>(a: A, b: A) -> bool {
        is_nan::<A>(b) || (!is_nan::<A>(a) && b >= a)
    }
}
