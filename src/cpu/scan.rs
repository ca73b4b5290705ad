use crate::{Element, Result, ScanOp, ScanOptions};
use half::{bf16, f16};

/// An element the CPU scan handles, with the type it accumulates in.
pub trait ScanElement: Element {
    /// The accumulator type (f32 for f16 / bf16, the type itself otherwise).
    type Acc: Copy + PartialOrd;
    /// Widens an element to the accumulator.
    fn to_acc(x: Self) -> Self::Acc;
    /// Rounds an accumulator back to the element type.
    fn from_acc(a: Self::Acc) -> Self;
    /// `a ⊕ b` for `op`, `a` the earlier operand (integer sums and products wrap; max / min
    /// as [`take_second`] picks).
    fn combine(op: ScanOp, a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The identity of `op`: 0, 1, the lowest value (max) or the highest (min).
    fn identity(op: ScanOp) -> Self::Acc;
    /// Whether `a` is a float NaN (always false for integers).
    fn is_nan(a: Self::Acc) -> bool;
}

/// Whether `b` (later) replaces `a` in a running max / min: NaN wins, ties go to the later.
pub fn take_second<E: ScanElement>(op: ScanOp, a: E::Acc, b: E::Acc) -> bool {
    E::is_nan(b)
        || (!E::is_nan(a)
            && match op {
                ScanOp::Max => b >= a,
                ScanOp::Min => b <= a,
                _ => false,
            })
}

macro_rules! float_elem {
    ($t:ty, $acc:ty, |$x:ident| $to:expr, |$a:ident| $from:expr) => {
        impl ScanElement for $t {
            type Acc = $acc;
            fn to_acc($x: Self) -> $acc {
                $to
            }
            fn from_acc($a: $acc) -> Self {
                $from
            }
            fn combine(op: ScanOp, a: $acc, b: $acc) -> $acc {
                match op {
                    ScanOp::Sum => a + b,
                    ScanOp::Prod => a * b,
                    ScanOp::Max | ScanOp::Min => {
                        if take_second::<Self>(op, a, b) {
                            b
                        } else {
                            a
                        }
                    }
                }
            }
            fn identity(op: ScanOp) -> $acc {
                match op {
                    ScanOp::Sum => 0.0,
                    ScanOp::Prod => 1.0,
                    ScanOp::Max => <$acc>::NEG_INFINITY,
                    ScanOp::Min => <$acc>::INFINITY,
                }
            }
            fn is_nan(a: $acc) -> bool {
                a.is_nan()
            }
        }
    };
}
float_elem!(f32, f32, |x| x, |a| a);
float_elem!(f64, f64, |x| x, |a| a);
float_elem!(f16, f32, |x| x.to_f32(), |a| f16::from_f32(a));
float_elem!(bf16, f32, |x| x.to_f32(), |a| bf16::from_f32(a));

macro_rules! int_elem {
    ($t:ty) => {
        impl ScanElement for $t {
            type Acc = $t;
            fn to_acc(x: Self) -> $t {
                x
            }
            fn from_acc(a: $t) -> Self {
                a
            }
            fn combine(op: ScanOp, a: $t, b: $t) -> $t {
                match op {
                    ScanOp::Sum => a.wrapping_add(b),
                    ScanOp::Prod => a.wrapping_mul(b),
                    ScanOp::Max | ScanOp::Min => {
                        if take_second::<Self>(op, a, b) {
                            b
                        } else {
                            a
                        }
                    }
                }
            }
            fn identity(op: ScanOp) -> $t {
                match op {
                    ScanOp::Sum => 0,
                    ScanOp::Prod => 1,
                    ScanOp::Max => <$t>::MIN,
                    ScanOp::Min => <$t>::MAX,
                }
            }
            fn is_nan(_a: $t) -> bool {
                false
            }
        }
    };
}
int_elem!(i32);
int_elem!(u32);
int_elem!(i64);
int_elem!(u64);

/// Scan of a contiguous row-major tensor along `axis`. [`crate::Error::LengthMismatch`]
/// unless `data` fills `shape`, [`crate::Error::AxisOutOfRange`] for an axis past it.
pub fn scan<E: ScanElement>(
    data: &[E],
    shape: &[usize],
    axis: usize,
    op: ScanOp,
    opts: ScanOptions,
) -> Result<Vec<E>> {
    Ok(scan_impl(data, shape, axis, op, opts, false)?.0)
}

/// Scan with the index (along `axis`) of the element holding each running max / min; `-1`
/// where none does (first position of an exclusive scan).
pub fn scan_with_indices<E: ScanElement>(
    data: &[E],
    shape: &[usize],
    axis: usize,
    op: ScanOp,
    opts: ScanOptions,
) -> Result<(Vec<E>, Vec<i64>)> {
    scan_impl(data, shape, axis, op, opts, true)
}

fn scan_impl<E: ScanElement>(
    data: &[E],
    shape: &[usize],
    axis: usize,
    op: ScanOp,
    opts: ScanOptions,
    with_indices: bool,
) -> Result<(Vec<E>, Vec<i64>)> {
    super::check_shape(data.len(), shape, Some(axis))?;
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut out = data.to_vec();
    let mut idx = if with_indices {
        vec![0i64; data.len()]
    } else {
        Vec::new()
    };
    for o in 0..outer {
        for i in 0..inner {
            let mut acc = E::identity(op);
            let mut acc_idx = -1i64;
            for s in 0..n {
                let j = if opts.reverse { n - 1 - s } else { s };
                let at = (o * n + j) * inner + i;
                let x = E::to_acc(data[at]);
                let next = E::combine(op, acc, x);
                let next_idx = if take_second::<E>(op, acc, x) {
                    j as i64
                } else {
                    acc_idx
                };
                let (v, vi) = if opts.exclusive {
                    (acc, acc_idx)
                } else {
                    (next, next_idx)
                };
                out[at] = E::from_acc(v);
                if with_indices {
                    idx[at] = vi;
                }
                acc = next;
                acc_idx = next_idx;
            }
        }
    }
    Ok((out, idx))
}
