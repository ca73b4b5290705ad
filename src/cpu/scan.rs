use crate::{Element, Result, ScanOp, ScanOptions};
use half::{bf16, f16};
use rayon::prelude::*;

/// An element the CPU scan handles, with the type it accumulates in.
pub trait ScanElement: Element {
    /// The accumulator type (f32 for f16 / bf16, the type itself otherwise).
    type Acc: Copy + PartialOrd;
    /// Widens an element to the accumulator.
    fn to_acc(x: Self) -> Self::Acc;
    /// Rounds an accumulator back to the element type.
    fn from_acc(a: Self::Acc) -> Self;
    /// `a ⊕ b` for `op`, `a` the earlier operand (integer sums and products wrap; max / min
    /// as [`take_second`] picks; logsumexp as `max + log1p(exp(min - max))`, NaN propagating.
    /// Logsumexp is defined for floats only: the entry points refuse integers, and here an
    /// integer logsumexp is the larger operand).
    fn combine(op: ScanOp, a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The identity of `op`: 0, 1, the lowest value (max, logsumexp) or the highest (min).
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
            #[inline(always)]
            fn to_acc($x: Self) -> $acc {
                $to
            }
            #[inline(always)]
            fn from_acc($a: $acc) -> Self {
                $from
            }
            #[inline(always)]
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
                    ScanOp::LogSumExp => {
                        if a.is_nan() || b.is_nan() {
                            return a + b;
                        }
                        let (hi, lo) = if a > b { (a, b) } else { (b, a) };
                        // Equal operands (-inf / +inf pairs included): `hi + ln 2`, no `inf - inf`.
                        let d = if hi == lo { 0.0 } else { lo - hi };
                        hi + d.exp().ln_1p()
                    }
                }
            }
            fn identity(op: ScanOp) -> $acc {
                match op {
                    ScanOp::Sum => 0.0,
                    ScanOp::Prod => 1.0,
                    ScanOp::Max | ScanOp::LogSumExp => <$acc>::NEG_INFINITY,
                    ScanOp::Min => <$acc>::INFINITY,
                }
            }
            #[inline(always)]
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
            #[inline(always)]
            fn to_acc(x: Self) -> $t {
                x
            }
            #[inline(always)]
            fn from_acc(a: $t) -> Self {
                a
            }
            #[inline(always)]
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
                    ScanOp::LogSumExp => a.max(b),
                }
            }
            fn identity(op: ScanOp) -> $t {
                match op {
                    ScanOp::Sum => 0,
                    ScanOp::Prod => 1,
                    ScanOp::Max | ScanOp::LogSumExp => <$t>::MIN,
                    ScanOp::Min => <$t>::MAX,
                }
            }
            #[inline(always)]
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
/// unless `data` fills `shape`, [`crate::Error::AxisOutOfRange`] for an axis past it,
/// [`crate::Error::UnsupportedDType`] for an integer logsumexp.
pub fn scan<E: ScanElement>(
    data: &[E],
    shape: &[usize],
    axis: usize,
    op: ScanOp,
    opts: ScanOptions,
) -> Result<Vec<E>> {
    op.check_dtype(E::DTYPE)?;
    super::check_shape(data.len(), shape, Some(axis))?;
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let mut out = super::alloc::zeroed(data.len());
    if n == 0 || inner == 0 {
        return Ok(out);
    }
    let block = n * inner;
    if data.len() >= PARALLEL_MIN && data.len() / block >= 2 && rayon::current_num_threads() > 1 {
        // Blocks (the dims before the axis) spread over rayon's threads, each scanned as on
        // one thread: the same values.
        data.par_chunks(block)
            .zip(out.par_chunks_mut(block))
            .for_each(|(x, o)| scan_block_into(x, o, n, inner, op, opts));
    } else {
        for (x, o) in data.chunks(block).zip(out.chunks_mut(block)) {
            scan_block_into(x, o, n, inner, op, opts);
        }
    }
    Ok(out)
}

/// Elements from which [`scan`] spreads its blocks over rayon's threads (below it the threads'
/// start costs more than the scan).
///
/// A single long row stays on one thread: cut into chunks scanned in two passes (the chunks'
/// totals, then each chunk from the totals before it), it ran no faster on two cores, since
/// both passes wait on one addition per element (`cumsum_f32/cpu/4194304`: 8.82 ms against 7.72
/// on one thread, before the operator was inlined; BENCHMARKS.md at 52581a0, 2026-12-06
/// (evening), "the CPU path's scan again").
pub(super) const PARALLEL_MIN: usize = 1 << 16;

/// The scan without indices of one `[n, inner]` block (row-major) of `x` into `out`, the
/// operator fixed at compile time and the block read and written in order, a row of `inner`
/// accumulators at a time. The same operations in the same order as [`scan_with_indices`], so
/// the same values (a NaN's sign and payload aside: the compiler may swap two NaN operands).
pub(crate) fn scan_block_into<E: ScanElement>(
    x: &[E],
    out: &mut [E],
    n: usize,
    inner: usize,
    op: ScanOp,
    opts: ScanOptions,
) {
    match op {
        ScanOp::Sum => block_with(x, out, n, inner, op, opts, |a, b| {
            E::combine(ScanOp::Sum, a, b)
        }),
        ScanOp::Prod => block_with(x, out, n, inner, op, opts, |a, b| {
            E::combine(ScanOp::Prod, a, b)
        }),
        ScanOp::Max => block_with(x, out, n, inner, op, opts, |a, b| {
            E::combine(ScanOp::Max, a, b)
        }),
        ScanOp::Min => block_with(x, out, n, inner, op, opts, |a, b| {
            E::combine(ScanOp::Min, a, b)
        }),
        ScanOp::LogSumExp => block_with(x, out, n, inner, op, opts, |a, b| {
            E::combine(ScanOp::LogSumExp, a, b)
        }),
    }
}

#[inline(always)]
fn block_with<E: ScanElement>(
    x: &[E],
    out: &mut [E],
    n: usize,
    inner: usize,
    op: ScanOp,
    opts: ScanOptions,
    combine: impl Fn(E::Acc, E::Acc) -> E::Acc,
) {
    let (x, out) = (&x[..n * inner], &mut out[..n * inner]);
    // One element into its accumulator: the output takes the value before (exclusive) or after.
    let fold = |a: &mut E::Acc, o: &mut E, v: E| {
        let next = combine(*a, E::to_acc(v));
        *o = E::from_acc(if opts.exclusive { *a } else { next });
        *a = next;
    };
    if inner == 1 {
        let mut acc = E::identity(op);
        let mut step = |(o, &v): (&mut E, &E)| fold(&mut acc, o, v);
        if opts.reverse {
            out.iter_mut().zip(x).rev().for_each(&mut step);
        } else {
            out.iter_mut().zip(x).for_each(&mut step);
        }
        return;
    }
    let mut acc = vec![E::identity(op); inner];
    let mut row = |j: usize| {
        let (xr, or) = (&x[j * inner..][..inner], &mut out[j * inner..][..inner]);
        for ((a, o), &v) in acc.iter_mut().zip(or).zip(xr) {
            fold(a, o, v);
        }
    };
    if opts.reverse {
        (0..n).rev().for_each(&mut row);
    } else {
        (0..n).for_each(&mut row);
    }
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
    op.check_dtype(E::DTYPE)?;
    super::check_shape(data.len(), shape, Some(axis))?;
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut out = super::alloc::copied(data);
    let mut idx = super::alloc::zeroed::<i64>(data.len());
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
                idx[at] = vi;
                acc = next;
                acc_idx = next_idx;
            }
        }
    }
    Ok((out, idx))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values with ties, ±0, ±inf and NaN, from a fixed generator.
    fn floats(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                match s % 16 {
                    0 => f32::NAN,
                    1 => -0.0,
                    2 => 0.0,
                    3 => f32::INFINITY,
                    4 => f32::NEG_INFINITY,
                    k => (k as f32 - 9.0) * 0.37 + (s >> 40) as f32 * 1e-7,
                }
            })
            .collect()
    }

    /// Every operator in every direction (inclusive / exclusive, forward / reverse).
    fn every_variant(mut f: impl FnMut(ScanOp, ScanOptions)) {
        for op in [ScanOp::Sum, ScanOp::Prod, ScanOp::Max, ScanOp::Min] {
            for (exclusive, reverse) in [(false, false), (true, false), (false, true), (true, true)]
            {
                let opts = ScanOptions {
                    exclusive,
                    reverse,
                    ..ScanOptions::default()
                };
                f(op, opts);
            }
        }
    }

    /// f32 bits with every NaN as one value: a NaN's sign and payload follow the order in which
    /// the compiler puts two NaN operands (the vectorised loop may swap them).
    fn f32_bits(v: &[f32]) -> Vec<u32> {
        v.iter()
            .map(|x| if x.is_nan() { 0x7fc0_0000 } else { x.to_bits() })
            .collect()
    }

    /// `scan`'s fast path does what the indexed scan does, bit for bit but for NaN's payload,
    /// on every axis, operator and direction, for floats (NaN, ±0, ties) and wrapping integers.
    #[test]
    fn scan_matches_the_indexed_scan_bit_for_bit() {
        let shapes: [&[usize]; 7] = [&[0], &[1], &[7], &[5, 3], &[2, 3, 4], &[3, 0, 2], &[1000]];
        for (k, shape) in shapes.iter().enumerate() {
            let n: usize = shape.iter().product();
            let f = floats(n, k as u64);
            let u: Vec<u32> = f.iter().map(|x| x.to_bits().rotate_left(7)).collect();
            let h: Vec<f16> = f.iter().map(|&x| f16::from_f32(x)).collect();
            for axis in 0..shape.len() {
                every_variant(|op, opts| {
                    let what = format!("{shape:?} axis {axis} {op:?} {opts:?}");
                    let got = scan(&f, shape, axis, op, opts).unwrap();
                    let want = scan_with_indices(&f, shape, axis, op, opts).unwrap().0;
                    assert_eq!(f32_bits(&got), f32_bits(&want), "f32 {what}");
                    let got = scan(&u, shape, axis, op, opts).unwrap();
                    let want = scan_with_indices(&u, shape, axis, op, opts).unwrap().0;
                    assert_eq!(got, want, "u32 {what}");
                    let got = scan(&h, shape, axis, op, opts).unwrap();
                    let want = scan_with_indices(&h, shape, axis, op, opts).unwrap().0;
                    let hb = |v: &[f16]| {
                        v.iter()
                            .map(|x| if x.is_nan() { 0x7e00 } else { x.to_bits() })
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(hb(&got), hb(&want), "f16 {what}");
                });
            }
        }
    }

    /// The parallel path (blocks spread over threads) gives what one thread gives, on every
    /// operator and direction, with NaN, ±0, ±inf and ties (and, for the one shape that has a
    /// single block, the sequential path); in a pool of 4 threads.
    #[test]
    fn parallel_scan_matches_one_thread() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        for (k, (shape, axis)) in [
            (vec![8, PARALLEL_MIN / 4 + 3], 1),
            (vec![3, PARALLEL_MIN], 1),
            (vec![8, PARALLEL_MIN / 8 + 1, 3], 1),
            (vec![2, 5, PARALLEL_MIN / 8], 2),
            (vec![PARALLEL_MIN / 2, 3], 0),
        ]
        .into_iter()
        .enumerate()
        {
            let len: usize = shape.iter().product();
            let f = floats(len, 100 + k as u64);
            let ints: Vec<u32> = f.iter().map(|x| x.to_bits().rotate_left(11)).collect();
            every_variant(|op, opts| {
                let what = format!("{shape:?} {op:?} {opts:?}");
                let got = pool.install(|| scan(&f, &shape, axis, op, opts).unwrap());
                let want = scan_with_indices(&f, &shape, axis, op, opts).unwrap().0;
                assert_eq!(f32_bits(&got), f32_bits(&want), "f32 {what}");
                let got = pool.install(|| scan(&ints, &shape, axis, op, opts).unwrap());
                let want = scan_with_indices(&ints, &shape, axis, op, opts).unwrap().0;
                assert_eq!(got, want, "u32 {what}");
            });
        }
    }
}
