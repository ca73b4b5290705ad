//! Sorted unique values (`torch.unique(sorted=True)`): a stable sort, then runs of equal keys.

use super::{argsort_rows, unique_consecutive, SortElement};

/// `(sorted unique values, count of each, index into the values of every input element)`.
/// Every NaN is its own entry (NaN != NaN), and `-0.0 == 0.0` (one entry: the first zero of
/// `keys`).
pub fn unique<E: SortElement + PartialEq>(keys: &[E]) -> (Vec<E>, Vec<i64>, Vec<i64>) {
    if keys.is_empty() {
        return (vec![], vec![], vec![]);
    }
    let order = argsort_rows(keys, keys.len(), false);
    let sorted: Vec<E> = order.iter().map(|&i| keys[i as usize]).collect();
    let (values, counts, inv_sorted) = unique_consecutive(&sorted);
    let mut inverse = vec![0i64; keys.len()];
    for (j, &i) in order.iter().enumerate() {
        inverse[i as usize] = inv_sorted[j];
    }
    (values, counts, inverse)
}
