use super::ScanOp;
use cubecl::prelude::*;

/// Sum (integer sums wrap).
pub struct Add;

#[cube]
impl ScanOp for Add {
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
