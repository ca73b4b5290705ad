//! Histogram (bincount) of integer keys.

/// `out[b]` = number of keys equal to `b`, for `b < bins`; keys outside `[0, bins)` are
/// ignored (`torch.bincount(keys, minlength=bins)[:bins]` of the keys in range).
pub fn histogram<K: Copy + Into<i64>>(keys: &[K], bins: usize) -> Vec<u32> {
    let mut out = vec![0u32; bins];
    for &k in keys {
        let k: i64 = k.into();
        if k >= 0 && (k as u64) < bins as u64 {
            out[k as usize] += 1;
        }
    }
    out
}
