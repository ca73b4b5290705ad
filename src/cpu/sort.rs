//! CPU reference of the sort family: stable sorts with a total order (NaN last in ascending
//! order, `-0.0` equal to `+0.0`, as PyTorch), arg-sorts, top-k and searchsorted, row by row.

use crate::{Element, Error, Result};
use half::{bf16, f16};
use std::cmp::Ordering;

/// A key the sorts order: a total order on the type.
pub trait SortElement: Element {
    /// Ascending order: floats by value (`-0.0 == +0.0`), every NaN equal to every other NaN
    /// and greater than everything else; integers by value.
    fn sort_cmp(&self, other: &Self) -> Ordering;
    /// Bits whose unsigned order is [`sort_cmp`](Self::sort_cmp) (what `begin_bit` /
    /// `end_bit` refer to), in the low `key_bits` bits.
    fn ordered_bits(&self) -> u64;
}

/// Sign-magnitude bits of `width` bits to an unsigned order; NaN (given) to all ones, `-0.0`
/// to `+0.0`'s (as the kernels' key transform).
fn float_bits(bits: u64, width: u32, is_nan: bool) -> u64 {
    let all = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    if is_nan {
        return all;
    }
    let sign = 1u64 << (width - 1);
    if bits & sign != 0 {
        // Two's complement negation: the reversed order, `-0.0` on `+0.0`'s bits.
        bits.wrapping_neg() & all
    } else {
        bits | sign
    }
}

macro_rules! float_sort {
    ($t:ty, $width:expr, $bits:expr) => {
        impl SortElement for $t {
            fn sort_cmp(&self, other: &Self) -> Ordering {
                self.ordered_bits().cmp(&other.ordered_bits())
            }
            fn ordered_bits(&self) -> u64 {
                let b: fn(&$t) -> u64 = $bits;
                float_bits(b(self), $width, self.is_nan())
            }
        }
    };
}
float_sort!(f32, 32, |x| x.to_bits() as u64);
float_sort!(f64, 64, |x| x.to_bits());
float_sort!(f16, 16, |x| x.to_bits() as u64);
float_sort!(bf16, 16, |x| x.to_bits() as u64);

macro_rules! int_sort {
    ($t:ty, |$x:ident| $bits:expr) => {
        impl SortElement for $t {
            fn sort_cmp(&self, other: &Self) -> Ordering {
                self.cmp(other)
            }
            fn ordered_bits(&self) -> u64 {
                let $x = *self;
                $bits
            }
        }
    };
}
int_sort!(u32, |x| x as u64);
int_sort!(u64, |x| x);
int_sort!(i32, |x| (x as u32 ^ 0x8000_0000) as u64);
int_sort!(i64, |x| x as u64 ^ 0x8000_0000_0000_0000);

/// Bits of the ordered key of a dtype's elements.
pub fn key_bits(dtype: crate::DType) -> u32 {
    match dtype.size() {
        2 => 16,
        s => 8 * s as u32,
    }
}

/// The stable order of each row of `n` keys (positions within the row), ascending or
/// descending, comparing only the ordered bits `[begin_bit, end_bit)`
/// ([`Error::InvalidArgument`] unless `begin_bit <= end_bit <= 64`).
pub fn argsort_rows_bits<E: SortElement>(
    data: &[E],
    n: usize,
    descending: bool,
    begin_bit: u32,
    end_bit: u32,
) -> Result<Vec<u32>> {
    if begin_bit > end_bit || end_bit > 64 {
        return Err(Error::InvalidArgument(format!(
            "bit range [{begin_bit}, {end_bit}) of a key of at most 64 bits"
        )));
    }
    let width = end_bit - begin_bit;
    let field = |x: &E| {
        if width == 0 {
            0
        } else {
            (x.ordered_bits() >> begin_bit) & (u64::MAX >> (64 - width))
        }
    };
    Ok(rows(data, n)
        .flat_map(|row| {
            let mut idx: Vec<u32> = (0..row.len() as u32).collect();
            idx.sort_by(|&a, &b| {
                let o = field(&row[a as usize]).cmp(&field(&row[b as usize]));
                if descending {
                    o.reverse()
                } else {
                    o
                }
            });
            idx
        })
        .collect())
}

/// The stable order of each row of `n` keys (positions within the row).
pub fn argsort_rows<E: SortElement>(data: &[E], n: usize, descending: bool) -> Vec<u32> {
    rows(data, n)
        .flat_map(|row| {
            let mut idx: Vec<u32> = (0..row.len() as u32).collect();
            // `sort_by` is stable; the reversed comparison keeps equal keys in input order.
            idx.sort_by(|&a, &b| {
                let o = row[a as usize].sort_cmp(&row[b as usize]);
                if descending {
                    o.reverse()
                } else {
                    o
                }
            });
            idx
        })
        .collect()
}

/// `data` rearranged row by row by `order` (positions within each row of `n`).
/// [`Error::InvalidArgument`] for a position past its row or past `data`.
pub fn permute_rows<E: Copy>(data: &[E], n: usize, order: &[u32]) -> Result<Vec<E>> {
    order
        .iter()
        .enumerate()
        .map(|(i, &j)| {
            let at = (i / n.max(1) * n).checked_add(j as usize);
            match at.and_then(|at| data.get(at)) {
                Some(&x) if (j as usize) < n => Ok(x),
                _ => Err(Error::InvalidArgument(format!(
                    "position {j} of row {} (rows of {n}, {} elements)",
                    i / n.max(1),
                    data.len()
                ))),
            }
        })
        .collect()
}

/// Each row of `n` keys sorted stably.
pub fn sort_rows<E: SortElement>(data: &[E], n: usize, descending: bool) -> Vec<E> {
    let order = argsort_rows(data, n, descending);
    // Each position is inside its row (a short last row included): no error.
    order
        .iter()
        .enumerate()
        .map(|(i, &j)| data[i / n.max(1) * n + j as usize])
        .collect()
}

/// The `k` largest (or smallest) of each row with their positions, best first; ties keep the
/// earlier position first (a stable descending / ascending sort cut at `k`).
pub fn top_k_rows<E: SortElement>(
    data: &[E],
    n: usize,
    k: usize,
    largest: bool,
) -> (Vec<E>, Vec<u32>) {
    let order = argsort_rows(data, n, largest);
    let mut vals = Vec::new();
    let mut idx = Vec::new();
    for (r, row) in order.chunks(n.max(1)).enumerate() {
        for &j in row.iter().take(k) {
            vals.push(data[r * n + j as usize]);
            idx.push(j);
        }
    }
    (vals, idx)
}

/// For each query (rows of `m`), its insertion position in the matching row of `sorted` (rows
/// of `n`; one row shared by all queries when `sorted.len() == n`): the first position whose
/// key is not less than the query (`right == false`) or greater than it (`right == true`).
/// An [`Error`] where `sorted` is not rows of `n` or has fewer rows than the queries.
pub fn searchsorted<E: SortElement>(
    sorted: &[E],
    n: usize,
    queries: &[E],
    m: usize,
    right: bool,
) -> Result<Vec<u32>> {
    if sorted.len() != n {
        // One row of `n` sorted keys per row of `m` queries.
        let rows = sorted.len().checked_div(n).unwrap_or(0);
        if n == 0 || !sorted.len().is_multiple_of(n) {
            return Err(Error::InvalidArgument(format!(
                "{} sorted keys are not rows of {n}",
                sorted.len()
            )));
        }
        if queries.len().div_ceil(m.max(1)) > rows {
            return Err(Error::ShapeMismatch {
                expected: vec![rows, m],
                got: vec![queries.len().div_ceil(m.max(1)), m],
            });
        }
    }
    Ok(queries
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let row = if sorted.len() == n { 0 } else { i / m.max(1) };
            let s = &sorted[row * n..row * n + n];
            let p = if right {
                s.partition_point(|a| a.sort_cmp(q) != Ordering::Greater)
            } else {
                s.partition_point(|a| a.sort_cmp(q) == Ordering::Less)
            };
            p as u32
        })
        .collect())
}

fn rows<E>(data: &[E], n: usize) -> impl Iterator<Item = &[E]> {
    data.chunks(n.max(1)).filter(move |_| n > 0)
}
