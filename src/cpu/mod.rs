//! CPU implementation of every op: the reference the tests compare against, and the path used
//! where no device is found. O(n), same semantics as the kernels (f16 / bf16 accumulate in f32,
//! integer sums and products wrap, NaN propagates through max / min, ties pick the later element).
//!
//! Arguments that do not fit each other (data that does not fill its shape, an axis past the
//! rank, a bit range past the key) are an [`Error`], never a panic.

use crate::{Error, Result};

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
pub use scan::{scan, scan_with_indices, take_second, ScanElement};
pub use select::{is_set, nonzero, partition, select};
pub use sort::{
    argsort_rows, argsort_rows_bits, key_bits, permute_rows, searchsorted, sort_rows, top_k_rows,
    SortElement,
};
pub use unique::unique;

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
