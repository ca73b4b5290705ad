//! Sorted unique values (`torch.unique(sorted=True)`): a stable sort, then runs of equal keys.

use super::{argsort_rows, parallel, unique_consecutive, SharedMut, SortElement};
use rayon::prelude::*;

/// `(sorted unique values, count of each, index into the values of every input element)`.
/// Every NaN is its own entry (NaN != NaN), and `-0.0 == 0.0` (one entry: the first zero of
/// `keys`).
pub fn unique<E: SortElement + PartialEq>(keys: &[E]) -> (Vec<E>, Vec<i64>, Vec<i64>) {
    if keys.is_empty() {
        return (vec![], vec![], vec![]);
    }
    let order = argsort_rows(keys, keys.len(), false);
    if !parallel(keys.len()) {
        let sorted: Vec<E> = order.iter().map(|&i| keys[i as usize]).collect();
        let (values, counts, inv_sorted) = unique_consecutive(&sorted);
        let mut inverse = super::alloc::zeroed::<i64>(keys.len());
        for (j, &i) in order.iter().enumerate() {
            inverse[i as usize] = inv_sorted[j];
        }
        return (values, counts, inverse);
    }
    let sorted: Vec<E> = order.par_iter().map(|&i| keys[i as usize]).collect();
    let (values, counts, inv_sorted) = unique_consecutive(&sorted);
    let mut inverse = super::alloc::zeroed::<i64>(keys.len());
    let dst = SharedMut(inverse.as_mut_ptr());
    order
        .par_iter()
        .zip(&inv_sorted)
        .with_min_len(1 << 12)
        .for_each(|(&i, &r)| {
            assert!((i as usize) < keys.len());
            // SAFETY: `order` is a permutation of the positions: each written once, in bounds.
            unsafe { dst.write(i as usize, r) };
        });
    (values, counts, inverse)
}

#[cfg(test)]
mod tests {
    use super::super::test_data::{floats, sizes, with_threads};
    use super::*;

    /// unique on 4 threads: as on one (NaN each its own entry, ±0 one entry), few distinct
    /// values and many.
    #[test]
    fn parallel_unique_matches_one_thread() {
        for (s, len) in sizes().into_iter().enumerate() {
            for distinct in [3, 1 << 20] {
                let keys = floats(len, 60 + s as u64, distinct);
                let (gv, gc, gi) = with_threads(4, || unique(&keys));
                let (wv, wc, wi) = with_threads(1, || unique(&keys));
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&gv), bits(&wv), "{len} {distinct}");
                assert_eq!((gc, gi), (wc, wi), "{len} {distinct}");
            }
        }
    }
}
