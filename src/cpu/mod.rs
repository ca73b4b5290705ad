//! CPU implementation of every op: the reference the tests compare against, and the path used
//! where no device is found. O(n), same semantics as the kernels (f16 / bf16 accumulate in f32,
//! integer sums and products wrap, NaN propagates through max / min, ties pick the later element).
//!
//! Arguments that do not fit each other (data that does not fill its shape, an axis past the
//! rank, a bit range past the key) are an [`Error`], never a panic.

use crate::{Error, Result};

mod alloc;
mod histogram;
mod recurrence;
mod reduce;
mod runs;
mod scan;
mod select;
mod sort;
mod unique;

pub use histogram::histogram;
pub use recurrence::linear_recurrence;
pub use reduce::reduce;
pub use runs::{reduce_by_key, unique_consecutive};
#[cfg(feature = "burn")]
pub(crate) use scan::scan_block_into;
pub use scan::{scan, scan_into, scan_with_indices, take_second, ScanElement};
pub use select::{is_set, nonzero, partition, select};
pub use sort::{
    argsort_rows, argsort_rows_bits, key_bits, permute_rows, searchsorted, sort_rows, top_k_rows,
    SortElement,
};
pub use unique::unique;

/// Whether an op over `n` elements spreads over rayon's threads: from [`scan`]'s threshold
/// (below it the threads' start costs more than the work), with more than one thread.
fn parallel(n: usize) -> bool {
    n >= scan::PARALLEL_MIN && rayon::current_num_threads() > 1
}

/// A new vector of `pieces.iter().sum()` elements, its consecutive pieces of `pieces[b]`
/// elements written in parallel by `fill(b, piece)`, which must write every element of its
/// piece (the compaction passes: each block writes what it counted).
fn par_pieces<T: Send>(
    pieces: &[usize],
    fill: impl Fn(usize, &mut [std::mem::MaybeUninit<T>]) + Sync + Send,
) -> Vec<T> {
    use rayon::prelude::*;
    let len: usize = pieces.iter().sum();
    let mut out = alloc::with_capacity(len);
    let mut rest = &mut out.spare_capacity_mut()[..len];
    let mut slices = Vec::with_capacity(pieces.len());
    for &p in pieces {
        let (a, b) = std::mem::take(&mut rest).split_at_mut(p);
        slices.push(a);
        rest = b;
    }
    slices
        .into_par_iter()
        .enumerate()
        .for_each(|(b, s)| fill(b, s));
    // SAFETY: `fill` wrote every element of every piece, and the pieces cover `..len`.
    unsafe { out.set_len(len) };
    out
}

/// A pointer that rayon's threads share to write disjoint elements (a scatter by a
/// permutation).
#[derive(Clone, Copy)]
struct SharedMut<T>(*mut T);
// SAFETY: the threads write disjoint elements through it, and nothing reads them meanwhile.
unsafe impl<T: Send> Send for SharedMut<T> {}
unsafe impl<T: Send> Sync for SharedMut<T> {}
impl<T> SharedMut<T> {
    /// `*self.0.add(i) = x`.
    ///
    /// # Safety
    /// `i` in bounds of the allocation, and no other thread touches element `i` meanwhile.
    #[inline(always)]
    unsafe fn write(self, i: usize, x: T) {
        unsafe { self.0.add(i).write(x) }
    }
}

/// Row-major copy of a strided view of `all`. [`Error::ShapeMismatch`] for strides of
/// another rank, [`Error::OutOfBounds`] for a view that reaches past `all`.
pub fn gather<E: Copy>(
    all: &[E],
    shape: &[usize],
    strides: &[usize],
    offset: usize,
) -> Result<Vec<E>> {
    if strides.len() != shape.len() {
        return Err(Error::ShapeMismatch {
            expected: shape.to_vec(),
            got: strides.to_vec(),
        });
    }
    let n = crate::tensor::checked_len(shape).unwrap_or(usize::MAX);
    // One past the furthest element the view reaches (0 when it has none).
    let reach = if n == 0 {
        Some(0)
    } else {
        shape
            .iter()
            .zip(strides)
            .try_fold(offset, |a, (&d, &s)| a.checked_add((d - 1).checked_mul(s)?))
            .and_then(|last| last.checked_add(1))
    };
    let size = std::mem::size_of::<E>();
    match reach {
        Some(r) if r <= all.len() => {}
        r => {
            return Err(Error::OutOfBounds {
                what: "a view",
                needed: r.map_or(usize::MAX, |r| r.saturating_mul(size)),
                available: std::mem::size_of_val(all),
            })
        }
    }
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        let off: usize = offset + idx.iter().zip(strides).map(|(i, s)| i * s).sum::<usize>();
        out.push(all[off]);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(out)
}

/// Checks that `len` elements fill `shape` ([`Error::LengthMismatch`]) and, with `axis`, that
/// it is one of the shape's ([`Error::AxisOutOfRange`]).
pub(crate) fn check_shape(len: usize, shape: &[usize], axis: Option<usize>) -> Result<()> {
    let n = crate::tensor::checked_len(shape).unwrap_or(usize::MAX);
    if len != n {
        return Err(Error::LengthMismatch {
            expected: n,
            got: len,
        });
    }
    if let Some(a) = axis {
        if a >= shape.len() {
            return Err(Error::AxisOutOfRange {
                axis: isize::try_from(a).unwrap_or(isize::MAX),
                rank: shape.len(),
            });
        }
    }
    Ok(())
}

/// Data for the tests of the parallel paths, which compare them with one thread.
#[cfg(test)]
mod test_data {
    /// `f` in a pool of `threads` threads (1: the sequential paths).
    pub fn with_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(f)
    }

    /// Values with ties, ±0, ±inf and NaN of both signs, from a fixed generator; `distinct`
    /// values but for those.
    pub fn floats(n: usize, seed: u64, distinct: u64) -> Vec<f32> {
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
                    5 => -f32::NAN,
                    _ => ((s >> 20) % distinct.max(1)) as f32 * 0.37 - 7.0,
                }
            })
            .collect()
    }

    /// Sizes about the thresholds and blocks.
    pub fn sizes() -> Vec<usize> {
        let p = super::scan::PARALLEL_MIN;
        vec![
            0,
            1,
            2,
            255,
            257,
            (1 << 14) + 1,
            p - 1,
            p,
            p + 1,
            2 * p + (1 << 14) + 3,
        ]
    }
}
