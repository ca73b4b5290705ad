use crate::{Element, Result};

/// Whether a flag is set: non-zero (NaN is set, -0.0 is not).
pub fn is_set<F: Element>(f: F) -> bool {
    f.to_f64() != 0.0
}

/// `data[i]` for every set `flags[i]`, in order.
pub fn select<T: Copy, F: Element>(data: &[T], flags: &[F]) -> Vec<T> {
    data.iter()
        .zip(flags)
        .filter(|(_, f)| is_set(**f))
        .map(|(d, _)| *d)
        .collect()
}

/// Selected elements first, then the others (both in order), and the number selected.
pub fn partition<T: Copy, F: Element>(data: &[T], flags: &[F]) -> (Vec<T>, usize) {
    let mut out = select(data, flags);
    let k = out.len();
    out.extend(
        data.iter()
            .zip(flags)
            .filter(|(_, f)| !is_set(**f))
            .map(|(d, _)| *d),
    );
    (out, k)
}

/// Row-major N-d indices of the non-zero elements (`[count, rank]`, flattened).
/// [`crate::Error::LengthMismatch`] unless `x` fills `shape`.
pub fn nonzero<F: Element>(x: &[F], shape: &[usize]) -> Result<Vec<i64>> {
    super::check_shape(x.len(), shape, None)?;
    let mut out = vec![];
    for (i, f) in x.iter().enumerate() {
        if is_set(*f) {
            let mut rem = i;
            let mut idx = vec![0i64; shape.len()];
            for d in (0..shape.len()).rev() {
                idx[d] = (rem % shape[d]) as i64;
                rem /= shape[d];
            }
            out.extend(idx);
        }
    }
    Ok(out)
}
