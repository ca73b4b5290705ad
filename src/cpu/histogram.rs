//! Histogram (bincount) of integer keys.

use rayon::prelude::*;

/// `out[b]` = number of keys equal to `b`, for `b < bins`; keys outside `[0, bins)` are
/// ignored (`torch.bincount(keys, minlength=bins)[:bins]` of the keys in range).
pub fn histogram<K: Copy + Into<i64> + Sync>(keys: &[K], bins: usize) -> Vec<u32> {
    let count = |keys: &[K]| {
        let mut out = vec![0u32; bins];
        for &k in keys {
            let k: i64 = k.into();
            if k >= 0 && (k as u64) < bins as u64 {
                out[k as usize] += 1;
            }
        }
        out
    };
    // Blocks counted on rayon's threads, their counts added: the same integers. Only where the
    // blocks' own histograms are small beside the keys.
    let blocks = 4 * rayon::current_num_threads();
    if super::parallel(keys.len()) && bins.saturating_mul(blocks) <= keys.len() {
        keys.par_chunks(keys.len().div_ceil(blocks))
            .map(count)
            .reduce_with(|mut a, b| {
                a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
                a
            })
            .unwrap_or_else(|| vec![0; bins])
    } else {
        count(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_data::{sizes, with_threads};
    use super::*;

    /// Counts on 4 threads (keys below 0 and past the bins ignored): as on one.
    #[test]
    fn parallel_histogram_matches_one_thread() {
        for len in sizes() {
            for bins in [0, 1, 100, 5000, 1 << 17] {
                let keys: Vec<i64> = (0..len as i64)
                    .map(|i| (i * 2_654_435_761 % 1_000_003) % (bins as i64 + 10) - 5)
                    .collect();
                let got = with_threads(4, || histogram(&keys, bins));
                assert_eq!(
                    got,
                    with_threads(1, || histogram(&keys, bins)),
                    "{len} {bins}"
                );
            }
        }
    }
}
