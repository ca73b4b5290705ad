use super::{par_pieces, parallel};
use crate::{Element, Result};
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Elements per block of the parallel compaction (count per block, offsets, then each block
/// writes its part).
const BLOCK: usize = 1 << 14;

/// Whether a flag is set: non-zero (NaN is set, -0.0 is not).
pub fn is_set<F: Element>(f: F) -> bool {
    f.to_f64() != 0.0
}

/// The number of set flags of each block of [`BLOCK`].
fn block_counts<F: Element>(flags: &[F]) -> Vec<usize> {
    flags
        .par_chunks(BLOCK)
        .map(|c| c.iter().filter(|f| is_set(**f)).count())
        .collect()
}

/// `data[i]` for every set `flags[i]`, in order.
pub fn select<T: Copy + Send + Sync, F: Element>(data: &[T], flags: &[F]) -> Vec<T> {
    let len = data.len().min(flags.len());
    if !parallel(len) {
        return select_seq(data, flags);
    }
    let (data, flags) = (&data[..len], &flags[..len]);
    let counts = block_counts(flags);
    par_pieces(&counts, |b, out: &mut [MaybeUninit<T>]| {
        let at = b * BLOCK;
        let (d, f) = (
            &data[at..len.min(at + BLOCK)],
            &flags[at..len.min(at + BLOCK)],
        );
        compact_into(d, f, true, out);
    })
}

/// The elements whose flag is `set` written in order to `out` (exactly as many as there are):
/// each element written to the next place and the place kept only when its flag matches, with
/// no branch on the flag.
#[inline(always)]
fn compact_into<T: Copy, F: Element>(d: &[T], f: &[F], set: bool, out: &mut [MaybeUninit<T>]) {
    let mut j = 0;
    for (&x, &fl) in d.iter().zip(f) {
        if let Some(o) = out.get_mut(j) {
            o.write(x);
        }
        j += usize::from(is_set(fl) == set);
    }
    debug_assert_eq!(j, out.len());
}

fn select_seq<T: Copy, F: Element>(data: &[T], flags: &[F]) -> Vec<T> {
    data.iter()
        .zip(flags)
        .filter(|(_, f)| is_set(**f))
        .map(|(d, _)| *d)
        .collect()
}

/// Selected elements first, then the others (both in order), and the number selected.
pub fn partition<T: Copy + Send + Sync, F: Element>(data: &[T], flags: &[F]) -> (Vec<T>, usize) {
    let len = data.len().min(flags.len());
    if !parallel(len) {
        return partition_seq(data, flags);
    }
    let (data, flags) = (&data[..len], &flags[..len]);
    let counts = block_counts(flags);
    let k: usize = counts.iter().sum();
    // The selected parts of the blocks, then their other parts.
    let nb = counts.len();
    let pieces: Vec<usize> = counts
        .iter()
        .copied()
        .chain(
            counts
                .iter()
                .enumerate()
                .map(|(b, c)| len.min((b + 1) * BLOCK) - b * BLOCK - c),
        )
        .collect();
    let out = par_pieces(&pieces, |p, out: &mut [MaybeUninit<T>]| {
        let (b, set) = if p < nb { (p, true) } else { (p - nb, false) };
        let at = b * BLOCK;
        let (d, f) = (
            &data[at..len.min(at + BLOCK)],
            &flags[at..len.min(at + BLOCK)],
        );
        compact_into(d, f, set, out);
    });
    (out, k)
}

fn partition_seq<T: Copy, F: Element>(data: &[T], flags: &[F]) -> (Vec<T>, usize) {
    let mut out = select_seq(data, flags);
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
    if !parallel(x.len()) {
        return Ok(nonzero_seq(x, shape));
    }
    let rank = shape.len();
    let counts: Vec<usize> = block_counts(x).into_iter().map(|c| c * rank).collect();
    Ok(par_pieces(&counts, |b, out: &mut [MaybeUninit<i64>]| {
        let at = b * BLOCK;
        let mut j = 0;
        for (i, f) in x[at..x.len().min(at + BLOCK)].iter().enumerate() {
            if is_set(*f) {
                let mut rem = at + i;
                for d in (0..rank).rev() {
                    out[j + d].write((rem % shape[d]) as i64);
                    rem /= shape[d];
                }
                j += rank;
            }
        }
    }))
}

fn nonzero_seq<F: Element>(x: &[F], shape: &[usize]) -> Vec<i64> {
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
    out
}

#[cfg(test)]
mod tests {
    use super::super::test_data::{floats, sizes, with_threads};
    use super::*;

    /// Select, partition and nonzero on 4 threads: as the sequential code, with flags that are
    /// NaN (set), -0.0 (not set), all set or none, flags longer than the data, and N-d shapes.
    #[test]
    fn parallel_compaction_matches_the_sequential_code() {
        for (s, len) in sizes().into_iter().enumerate() {
            let f = floats(len + 5, 20 + s as u64, 3);
            let data: Vec<u32> = (0..len as u32).collect();
            let zeros = vec![0.0f32; len];
            let ones = vec![f32::NAN; len];
            for flags in [&f[..], &f[..len], &zeros[..], &ones[..]] {
                let got = with_threads(4, || select(&data, flags));
                assert_eq!(got, select_seq(&data, flags), "select {len}");
                let got = with_threads(4, || partition(&data, flags));
                assert_eq!(got, partition_seq(&data, flags), "partition {len}");
                let flags = &flags[..len];
                let got = with_threads(4, || nonzero(flags, &[len]).unwrap());
                assert_eq!(got, nonzero_seq(flags, &[len]), "nonzero {len}");
            }
        }
        let p = super::super::scan::PARALLEL_MIN;
        for shape in [vec![3, p / 2 + 1], vec![5, 7, p / 16 + 3, 2]] {
            let len: usize = shape.iter().product();
            let h: Vec<f16> = floats(len, 9, 2)
                .iter()
                .map(|x| f16::from_f32(*x))
                .collect();
            let got = with_threads(4, || nonzero(&h, &shape).unwrap());
            assert_eq!(got, nonzero_seq(&h, &shape), "nonzero {shape:?}");
        }
    }
    use half::f16;
}
