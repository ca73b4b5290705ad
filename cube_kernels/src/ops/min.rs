use super::{highest, is_nan, ScanOp};
use cubecl::prelude::*;

/// Minimum; NaN propagates (NaN is below every number), ties pick the later element.
pub struct Min;

#[cube]
impl ScanOp for Min {
    fn identity<A: Numeric>() -> A {
        highest::<A>()
    }
    fn combine<A: Numeric>(a: A, b: A) -> A {
        select(Self::take_second::<A>(a, b), b, a)
    }
    fn take_second<A: Numeric>(a: A, b: A) -> bool {
        is_nan::<A>(b) || (!is_nan::<A>(a) && b <= a)
    }
}
