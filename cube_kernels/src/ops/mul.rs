use super::ScanOp;
use cubecl::prelude::*;

/// Product (integer products wrap).
pub struct Mul;

#[cube]
impl ScanOp for Mul {
    fn identity<A: Numeric>() -> A {
        A::from_int(1)
    }
    fn combine<A: Numeric>(a: A, b: A) -> A {
        a * b
    }
    // `.into()`: the expanded body returns an expression, not a Rust bool.
    #[allow(clippy::useless_conversion)]
    fn take_second<A: Numeric>(_a: A, _b: A) -> bool {
        false.into()
    }
}
