use crate::{Element, Result, ScanOp, ScanOptions};
use half::{bf16, f16};
use rayon::prelude::*;

/// An element the CPU scan handles, with the type it accumulates in.
pub trait ScanElement: Element {
    /// The accumulator type (f32 for f16 / bf16, the type itself otherwise).
    type Acc: Copy + PartialOrd + Send + Sync;
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
    let mut out = super::alloc::zeroed(data.len());
    scan_into(data, shape, axis, op, opts, &mut out)?;
    Ok(out)
}

/// [`scan`] into `out`, a slice of `data`'s length. A fresh output costs its pages' first
/// touch (on the 2-core CI machine a new 64 MiB vector took 30-40 ms to fill, one already
/// written 5-7 ms); an output reused from call to call does not.
///
/// # Errors
///
/// As [`scan`], and [`crate::Error::LengthMismatch`] for an `out` of another length.
///
/// # Example
///
/// ```
/// use cubeprim::{cpu, ScanOp, ScanOptions};
///
/// let x = [1f32, 2., 3., 4., 5., 6.];
/// let mut out = vec![0f32; 6];
/// cpu::scan_into(&x, &[2, 3], 1, ScanOp::Sum, ScanOptions::default(), &mut out)?;
/// assert_eq!(out, [1., 3., 6., 4., 9., 15.]);
/// # Ok::<(), cubeprim::Error>(())
/// ```
pub fn scan_into<E: ScanElement>(
    data: &[E],
    shape: &[usize],
    axis: usize,
    op: ScanOp,
    opts: ScanOptions,
    out: &mut [E],
) -> Result<()> {
    op.check_dtype(E::DTYPE)?;
    super::check_shape(data.len(), shape, Some(axis))?;
    if out.len() != data.len() {
        return Err(crate::Error::LengthMismatch {
            expected: data.len(),
            got: out.len(),
        });
    }
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    if n == 0 || inner == 0 {
        return Ok(());
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
    Ok(())
}

/// Elements from which [`scan`] spreads its blocks over rayon's threads (below it the threads'
/// start costs more than the scan). A single long row is spread by [`long_row`].
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
    if inner == 1 && n >= 2 * long_block::<E>() && op != ScanOp::LogSumExp {
        return long_row(&x[..n], &mut out[..n], op, opts);
    }
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

/// Bytes of input in a block of [`long_row`]: the block and its output stay in a core's L2
/// while it is reduced and then scanned.
const LONG_BLOCK_BYTES: usize = 128 << 10;

/// Elements in a block of [`long_row`] (fixed by the element size, so that a row's result does
/// not depend on the number of threads).
fn long_block<E>() -> usize {
    LONG_BLOCK_BYTES / std::mem::size_of::<E>()
}

/// One row of at least two blocks, scanned block by block: each block from its carry-in, the
/// combination of the totals of the blocks before it (in scan order, from the identity). With
/// one thread a block is reduced and then scanned while it is in cache; with more, every
/// block's total is taken in parallel first, then the blocks are scanned in parallel. The
/// values are the same either way. Within a block an f32 sum runs as a vectorised in-register
/// scan (see [`sum_f32_from`]); the other scans fold one element at a time from the carry-in.
///
/// Max, min and the integer ops give exactly the sequential result (the combination is
/// associative, ties and NaN included); a float sum or product is rounded in another order.
/// Logsumexp is not taken here: it is bound by its `exp` / `ln_1p`, not by memory, and the totals
/// would double them.
fn long_row<E: ScanElement>(x: &[E], out: &mut [E], op: ScanOp, opts: ScanOptions) {
    let b = long_block::<E>();
    let nb = x.len().div_ceil(b);
    // Block `k` in scan order (from the end in a reverse scan).
    let block = |k: usize| {
        if opts.reverse {
            x.len().saturating_sub((k + 1) * b)..x.len() - k * b
        } else {
            k * b..((k + 1) * b).min(x.len())
        }
    };
    if rayon::current_num_threads() > 1 {
        let totals: Vec<E::Acc> = (0..nb)
            .into_par_iter()
            .map(|k| block_total(&x[block(k)], op, opts.reverse))
            .collect();
        let mut carries = Vec::with_capacity(nb);
        let mut acc = E::identity(op);
        for t in totals {
            carries.push(acc);
            acc = E::combine(op, acc, t);
        }
        // The output cut at the blocks' bounds, in memory order (block `k` in scan order is
        // `nb - 1 - k` in memory in a reverse scan).
        let mut pieces = Vec::with_capacity(nb);
        let mut rest = out;
        for m in 0..nb {
            let k = if opts.reverse { nb - 1 - m } else { m };
            let (o, r) = std::mem::take(&mut rest).split_at_mut(block(k).len());
            pieces.push((k, o));
            rest = r;
        }
        pieces
            .into_par_iter()
            .for_each(|(k, o)| scan_from(&x[block(k)], o, carries[k], op, opts));
    } else {
        let mut acc = E::identity(op);
        for k in 0..nb {
            let r = block(k);
            let t = block_total(&x[r.clone()], op, opts.reverse);
            scan_from(&x[r.clone()], &mut out[r], acc, op, opts);
            acc = E::combine(op, acc, t);
        }
    }
}

/// The combination of a block's elements: a sum or product in 16 lanes (vectorised; another
/// rounding order than one after the other), a max or min in 16 lanes too. A max / min so found
/// has the right value but may be another element of it: where it is a zero (±0 compare equal)
/// or a NaN, the block is folded again in scan order to take the sequential scan's one.
fn block_total<E: ScanElement>(x: &[E], op: ScanOp, reverse: bool) -> E::Acc {
    let t = match op {
        ScanOp::Sum => lanes(x, op, |a, b| E::combine(ScanOp::Sum, a, b)),
        ScanOp::Prod => lanes(x, op, |a, b| E::combine(ScanOp::Prod, a, b)),
        ScanOp::Max => lanes(x, op, |a, b| E::combine(ScanOp::Max, a, b)),
        ScanOp::Min => lanes(x, op, |a, b| E::combine(ScanOp::Min, a, b)),
        ScanOp::LogSumExp => unreachable!("logsumexp rows are scanned in one pass"),
    };
    let exact = matches!(op, ScanOp::Sum | ScanOp::Prod)
        || !(E::is_nan(t) || t == E::identity(ScanOp::Sum));
    if exact {
        return t;
    }
    let f = |a, &v| E::combine(op, a, E::to_acc(v));
    if reverse {
        x.iter().rev().fold(E::identity(op), f)
    } else {
        x.iter().fold(E::identity(op), f)
    }
}

/// `x` combined in 16 independent accumulators (element `i` into `i % 16`), then those in
/// order: no accumulator waits on the previous element, and the loop vectorises.
#[inline(always)]
fn lanes<E: ScanElement>(x: &[E], op: ScanOp, f: impl Fn(E::Acc, E::Acc) -> E::Acc) -> E::Acc {
    const W: usize = 16;
    let mut acc = [E::identity(op); W];
    let mut groups = x.chunks_exact(W);
    for g in &mut groups {
        for (a, &v) in acc.iter_mut().zip(g) {
            *a = f(*a, E::to_acc(v));
        }
    }
    let t = acc.into_iter().fold(E::identity(op), &f);
    groups
        .remainder()
        .iter()
        .fold(t, |a, &v| f(a, E::to_acc(v)))
}

/// A block of a long row scanned from `carry` (the combination of everything before it in scan
/// order).
fn scan_from<E: ScanElement>(x: &[E], out: &mut [E], carry: E::Acc, op: ScanOp, opts: ScanOptions) {
    #[cfg(target_arch = "x86_64")]
    if E::DTYPE == crate::DType::F32 && op == ScanOp::Sum {
        let c: f32 = bytemuck::cast(E::from_acc(carry));
        return sum_f32_from(
            bytemuck::cast_slice(x),
            bytemuck::cast_slice_mut(out),
            c,
            opts,
        );
    }
    match op {
        ScanOp::Sum => fold_from(x, out, carry, opts, |a, b| E::combine(ScanOp::Sum, a, b)),
        ScanOp::Prod => fold_from(x, out, carry, opts, |a, b| E::combine(ScanOp::Prod, a, b)),
        ScanOp::Max => fold_from(x, out, carry, opts, |a, b| E::combine(ScanOp::Max, a, b)),
        ScanOp::Min => fold_from(x, out, carry, opts, |a, b| E::combine(ScanOp::Min, a, b)),
        ScanOp::LogSumExp => unreachable!("logsumexp rows are scanned in one pass"),
    }
}

/// The sequential scan of `x` from `acc`, one element after the other.
#[inline(always)]
fn fold_from<E: ScanElement>(
    x: &[E],
    out: &mut [E],
    mut acc: E::Acc,
    opts: ScanOptions,
    combine: impl Fn(E::Acc, E::Acc) -> E::Acc,
) {
    let mut step = |(o, &v): (&mut E, &E)| {
        let next = combine(acc, E::to_acc(v));
        *o = E::from_acc(if opts.exclusive { acc } else { next });
        acc = next;
    };
    if opts.reverse {
        out.iter_mut().zip(x).rev().for_each(&mut step);
    } else {
        out.iter_mut().zip(x).for_each(&mut step);
    }
}

/// An f32 running sum from `carry`, 16 elements at a time in four SSE2 registers: each
/// register's four scanned in place (two shifted adds), the earlier registers' totals added to
/// the later ones, then the carry-in added to all. Only that last add and a broadcast wait on
/// the previous 16 elements, where a plain loop waits on one add per element, so this runs at
/// memory speed. (The carry is never -0.0, being a sum that starts from +0.0, so adding the
/// +0.0 shifted in gives the sequential scan's zeros.)
#[cfg(target_arch = "x86_64")]
fn sum_f32_from(x: &[f32], out: &mut [f32], carry: f32, opts: ScanOptions) {
    use std::arch::x86_64::*;
    let len = x.len();
    assert_eq!(out.len(), len);
    let groups = len / 16;
    // SAFETY: SSE2 is part of x86-64. Quarter `q < 4 * groups` (elements `4q..4q + 4` in scan
    // order) lies at `at(q)..at(q) + 4`, inside `x` and `out`.
    let carry = unsafe {
        let at = |q: usize| if opts.reverse { len - 4 * q - 4 } else { 4 * q };
        let load = |q: usize| {
            let v = _mm_loadu_ps(x.as_ptr().add(at(q)));
            if opts.reverse {
                _mm_shuffle_ps::<0x1b>(v, v)
            } else {
                v
            }
        };
        let o = out.as_mut_ptr();
        let store = |q: usize, v: __m128| {
            let v = if opts.reverse {
                _mm_shuffle_ps::<0x1b>(v, v)
            } else {
                v
            };
            _mm_storeu_ps(o.add(at(q)), v);
        };
        let shift = |v: __m128, lanes: i32| {
            let v = _mm_castps_si128(v);
            _mm_castsi128_ps(if lanes == 1 {
                _mm_slli_si128::<4>(v)
            } else {
                _mm_slli_si128::<8>(v)
            })
        };
        // A register's four elements scanned in place.
        let local = |q: usize| {
            let v = load(q);
            let v = _mm_add_ps(v, shift(v, 1));
            _mm_add_ps(v, shift(v, 2))
        };
        let last = |v: __m128| _mm_shuffle_ps::<0xff>(v, v);
        let mut c = _mm_set1_ps(carry);
        for g in 0..groups {
            let q = 4 * g;
            let (a, b0, c0, d0) = (local(q), local(q + 1), local(q + 2), local(q + 3));
            let (ta, b) = (last(a), _mm_add_ps(b0, last(a)));
            let (tb, c1) = (last(b), _mm_add_ps(c0, last(b)));
            let (tc, d) = (last(c1), _mm_add_ps(d0, last(c1)));
            if opts.exclusive {
                store(q, _mm_add_ps(c, shift(a, 1)));
                store(q + 1, _mm_add_ps(c, _mm_add_ps(shift(b0, 1), ta)));
                store(q + 2, _mm_add_ps(c, _mm_add_ps(shift(c0, 1), tb)));
                store(q + 3, _mm_add_ps(c, _mm_add_ps(shift(d0, 1), tc)));
                c = last(_mm_add_ps(c, d));
            } else {
                store(q, _mm_add_ps(c, a));
                store(q + 1, _mm_add_ps(c, b));
                store(q + 2, _mm_add_ps(c, c1));
                let cd = _mm_add_ps(c, d);
                store(q + 3, cd);
                c = last(cd);
            }
        }
        _mm_cvtss_f32(c)
    };
    // The last `len % 16` elements in scan order, one at a time.
    let rest = len - 16 * groups;
    if opts.reverse {
        fold_from(&x[..rest], &mut out[..rest], carry, opts, |a, b| a + b);
    } else {
        let (x, out) = (&x[16 * groups..], &mut out[16 * groups..]);
        fold_from(x, out, carry, opts, |a, b| a + b);
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
    use crate::cpu::test_data;

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
    /// `scan_into` writes what `scan` returns, over whatever the output held, for every
    /// operator and direction (long rows too), and refuses an output of another length.
    #[test]
    fn scan_into_writes_what_scan_returns() {
        let b = long_block::<f32>();
        for (shape, axis) in [
            (vec![0], 0),
            (vec![7], 0),
            (vec![3, 5], 1),
            (vec![2 * b + 3], 0),
        ] {
            let n: usize = shape.iter().product();
            let x = floats(n, 7);
            every_variant(|op, opts| {
                let want = scan(&x, &shape, axis, op, opts).unwrap();
                let mut out = vec![f32::NAN; n];
                scan_into(&x, &shape, axis, op, opts, &mut out).unwrap();
                assert_eq!(f32_bits(&out), f32_bits(&want), "{shape:?} {op:?} {opts:?}");
            });
        }
        let mut short = vec![0f32; 2];
        let err = scan_into(
            &[1f32, 2., 3.],
            &[3],
            0,
            ScanOp::Sum,
            ScanOptions::default(),
            &mut short,
        );
        assert!(matches!(
            err,
            Err(crate::Error::LengthMismatch {
                expected: 3,
                got: 2
            })
        ));
    }

    #[test]
    fn parallel_scan_matches_one_thread() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        for (k, (shape, axis)) in [
            (vec![8, PARALLEL_MIN / 4 + 3], 1),
            (vec![3, PARALLEL_MIN - 1], 1),
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

    /// Sizes about the long rows' blocks (of f32; those of other types are in proportion).
    fn long_sizes<E>() -> Vec<usize> {
        let b = long_block::<E>();
        vec![
            0,
            1,
            b - 1,
            b + 1,
            2 * b - 1,
            2 * b,
            2 * b + 1,
            3 * b - 1,
            5 * b + 13,
        ]
    }

    /// Directions (inclusive / exclusive, forward / reverse).
    fn directions() -> [ScanOptions; 4] {
        [(false, false), (true, false), (false, true), (true, true)].map(|(exclusive, reverse)| {
            ScanOptions {
                exclusive,
                reverse,
                ..ScanOptions::default()
            }
        })
    }

    /// A long row's max / min (floats with NaN, ±0, ±inf and ties; f16), every integer operator
    /// and float sums of small integers are exactly the sequential scan's, on one thread and on
    /// four, as one row and as two.
    #[test]
    fn long_rows_are_the_sequential_scan_exactly() {
        for threads in [1, 4] {
            for n in long_sizes::<f32>() {
                for shape in [vec![n], vec![2, n / 2]] {
                    let len: usize = shape.iter().product();
                    let f = floats(len, n as u64 + 7);
                    let h: Vec<f16> = f.iter().map(|&x| f16::from_f32(x)).collect();
                    let u: Vec<u32> = f.iter().map(|x| x.to_bits().rotate_left(3) % 7).collect();
                    let l: Vec<i64> = f.iter().map(|x| x.to_bits() as i64 * 0x1234_5678).collect();
                    let axis = shape.len() - 1;
                    for opts in directions() {
                        for op in [ScanOp::Max, ScanOp::Min] {
                            let what = format!("{threads} threads {shape:?} {op:?} {opts:?}");
                            let got = test_data::with_threads(threads, || {
                                scan(&f, &shape, axis, op, opts).unwrap()
                            });
                            let want = scan_with_indices(&f, &shape, axis, op, opts).unwrap().0;
                            assert_eq!(f32_bits(&got), f32_bits(&want), "f32 {what}");
                            let got = test_data::with_threads(threads, || {
                                scan(&h, &shape, axis, op, opts).unwrap()
                            });
                            let want = scan_with_indices(&h, &shape, axis, op, opts).unwrap().0;
                            let hb = |v: &[f16]| {
                                v.iter()
                                    .map(|x| if x.is_nan() { 0x7e00 } else { x.to_bits() })
                                    .collect::<Vec<_>>()
                            };
                            assert_eq!(hb(&got), hb(&want), "f16 {what}");
                        }
                        // Sums of small integers, exact in any order: the f32 sum's vectorised
                        // scan and the f64 one's carries, bit for bit.
                        let what = format!("{threads} threads {shape:?} Sum {opts:?}");
                        let small: Vec<f32> = u.iter().map(|&v| v as f32).collect();
                        let got = test_data::with_threads(threads, || {
                            scan(&small, &shape, axis, ScanOp::Sum, opts).unwrap()
                        });
                        let want = scan_with_indices(&small, &shape, axis, ScanOp::Sum, opts);
                        assert_eq!(f32_bits(&got), f32_bits(&want.unwrap().0), "f32 {what}");
                        let small: Vec<f64> = u.iter().map(|&v| v as f64 - 3.0).collect();
                        let got = test_data::with_threads(threads, || {
                            scan(&small, &shape, axis, ScanOp::Sum, opts).unwrap()
                        });
                        let want = scan_with_indices(&small, &shape, axis, ScanOp::Sum, opts);
                        assert_eq!(got, want.unwrap().0, "f64 {what}");
                        for op in [ScanOp::Sum, ScanOp::Prod, ScanOp::Max, ScanOp::Min] {
                            let what = format!("{threads} threads {shape:?} {op:?} {opts:?}");
                            let got = test_data::with_threads(threads, || {
                                scan(&u, &shape, axis, op, opts).unwrap()
                            });
                            let want = scan_with_indices(&u, &shape, axis, op, opts).unwrap().0;
                            assert_eq!(got, want, "u32 {what}");
                            let got = test_data::with_threads(threads, || {
                                scan(&l, &shape, axis, op, opts).unwrap()
                            });
                            let want = scan_with_indices(&l, &shape, axis, op, opts).unwrap().0;
                            assert_eq!(got, want, "i64 {what}");
                        }
                    }
                }
            }
        }
    }

    /// The scan of `x` in f64, one element after the other, and the sum of the magnitudes so far.
    fn reference(x: &[f64], op: ScanOp, opts: ScanOptions) -> (Vec<f64>, Vec<f64>) {
        let (mut acc, mut mag) = (if op == ScanOp::Sum { 0.0 } else { 1.0 }, 0.0);
        let mut out = vec![(0.0, 0.0); x.len()];
        let order: Vec<usize> = if opts.reverse {
            (0..x.len()).rev().collect()
        } else {
            (0..x.len()).collect()
        };
        for i in order {
            let before = (acc, mag);
            acc = if op == ScanOp::Sum {
                acc + x[i]
            } else {
                acc * x[i]
            };
            mag += x[i].abs();
            out[i] = if opts.exclusive { before } else { (acc, mag) };
        }
        out.into_iter().unzip()
    }

    /// A long row's float sums and products (f32, f64, f16, bf16; the f32 sum vectorised) are
    /// within rounding of the f64 scan, as the sequential scan is: a sum to 2^-16 of the
    /// magnitudes summed, a product (of values within 2^-9 of 1) to a relative 2^-14; f16 / bf16
    /// also to one unit of their last place (f16's subnormal spacing included). (Sums of small integers,
    /// exact in any order, are compared bit for bit in the test above.)
    #[test]
    fn long_float_sums_and_products_are_within_rounding_of_f64() {
        fn check<E: ScanElement>(x: &[f64], op: ScanOp, opts: ScanOptions, rel: f64, abs: f64) {
            if x.len() < 2 * long_block::<E>() {
                // The sequential scan, compared bit for bit above; its rounding errors (one per
                // element, against one per 16 elements in the vectorised f32 sum) grow faster.
                return;
            }
            let data: Vec<E> = x.iter().map(|&v| E::from_f64(v)).collect();
            let exact: Vec<f64> = data.iter().map(|v| v.to_f64()).collect();
            let (want, mag) = reference(&exact, op, opts);
            for threads in [1, 4] {
                let got = test_data::with_threads(threads, || {
                    scan(&data, &[data.len()], 0, op, opts).unwrap()
                });
                for (i, ((g, w), m)) in got.iter().zip(&want).zip(&mag).enumerate() {
                    let tol = abs
                        + if op == ScanOp::Sum {
                            (m + 1.0) * 2f64.powi(-16) + w.abs() * rel
                        } else {
                            w.abs() * (2f64.powi(-14) + rel)
                        };
                    let g = g.to_f64();
                    assert!(
                        (g - w).abs() <= tol,
                        "{:?} {threads} threads n {} {op:?} {opts:?} at {i}: {g} against {w}",
                        E::DTYPE,
                        x.len(),
                    );
                }
            }
        }
        for n in long_sizes::<f32>().into_iter().chain(long_sizes::<f16>()) {
            // Uniform in [0, 1) (rounded to each type by `check`, which scans what it rounded).
            let unit = |i: usize| {
                let h = (i as u64 ^ n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                (h >> 40) as f64 / (1u64 << 24) as f64
            };
            let sums: Vec<f64> = (0..n).map(|i| 0.5 + unit(i)).collect();
            let prods: Vec<f64> = (0..n).map(|i| 1.0 + (unit(i) - 0.5) / 256.0).collect();
            for opts in directions() {
                check::<f32>(&sums, ScanOp::Sum, opts, 0.0, 0.0);
                check::<f32>(&prods, ScanOp::Prod, opts, 0.0, 0.0);
                check::<f64>(&sums, ScanOp::Sum, opts, 0.0, 0.0);
                check::<f64>(&prods, ScanOp::Prod, opts, 0.0, 0.0);
                let small: Vec<f64> = sums.iter().map(|v| v / 16.0).collect();
                check::<f16>(&small, ScanOp::Sum, opts, 2f64.powi(-10), 2f64.powi(-24));
                check::<f16>(&prods, ScanOp::Prod, opts, 2f64.powi(-10), 2f64.powi(-24));
                check::<bf16>(&sums, ScanOp::Sum, opts, 2f64.powi(-7), 0.0);
                check::<bf16>(&prods, ScanOp::Prod, opts, 2f64.powi(-7), 0.0);
            }
        }
    }

    /// A long row's float sum / product on four threads is the one-thread result bit for bit:
    /// the blocks are cut by size, not by the number of threads.
    #[test]
    fn long_float_rows_do_not_depend_on_the_thread_count() {
        for n in long_sizes::<f32>() {
            let f = floats(n, n as u64 + 11);
            let d: Vec<f64> = f.iter().map(|&x| x as f64).collect();
            for opts in directions() {
                for op in [ScanOp::Sum, ScanOp::Prod] {
                    let one = test_data::with_threads(1, || scan(&f, &[n], 0, op, opts).unwrap());
                    let four = test_data::with_threads(4, || scan(&f, &[n], 0, op, opts).unwrap());
                    assert_eq!(f32_bits(&one), f32_bits(&four), "f32 {n} {op:?} {opts:?}");
                    let one = test_data::with_threads(1, || scan(&d, &[n], 0, op, opts).unwrap());
                    let four = test_data::with_threads(4, || scan(&d, &[n], 0, op, opts).unwrap());
                    let bits = |v: &[f64]| {
                        v.iter()
                            .map(|x| x.is_nan() || x.to_bits() == 0)
                            .collect::<Vec<_>>()
                    };
                    let eq = one
                        .iter()
                        .zip(&four)
                        .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
                    assert!(eq && bits(&one) == bits(&four), "f64 {n} {op:?} {opts:?}");
                }
            }
        }
    }
}
