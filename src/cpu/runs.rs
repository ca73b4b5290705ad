use super::{par_pieces, parallel, ScanElement};
use crate::ScanOp;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Keys per block of the parallel passes (run heads counted per block, offsets, then each
/// block writes the runs that start in it).
const BLOCK: usize = 1 << 14;

/// Whether `b` starts a new run after `a` (unequal; NaN equals nothing).
fn new_run<K: PartialEq>(a: &K, b: &K) -> bool {
    a != b
}

/// Whether position `i` of `keys` starts a run.
#[inline(always)]
fn is_head<K: PartialEq>(keys: &[K], i: usize) -> bool {
    i == 0 || new_run(&keys[i - 1], &keys[i])
}

/// The blocks' runs: for each block of [`BLOCK`] keys the number of runs starting in it, and
/// the position of the first run starting after it (`keys.len()` past the last).
fn block_heads<K: PartialEq + Sync>(keys: &[K]) -> (Vec<usize>, Vec<usize>) {
    let n = keys.len();
    let (counts, firsts): (Vec<usize>, Vec<Option<usize>>) = (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let mut heads = heads_in(keys, b);
            let first = heads.next();
            (usize::from(first.is_some()) + heads.count(), first)
        })
        .unzip();
    let mut next = vec![n; counts.len()];
    for b in (0..counts.len().saturating_sub(1)).rev() {
        next[b] = firsts[b + 1].unwrap_or(next[b + 1]);
    }
    (counts, next)
}

/// The positions of the runs starting in block `b` of `keys`, in order.
fn heads_in<K: PartialEq>(keys: &[K], b: usize) -> impl Iterator<Item = usize> + '_ {
    (b * BLOCK..keys.len().min((b + 1) * BLOCK)).filter(move |&i| is_head(keys, i))
}

/// The first key of each run, the blocks (`counts` runs each, from [`block_heads`]) in
/// parallel.
fn run_keys<K: Copy + PartialEq + Send + Sync>(keys: &[K], counts: &[usize]) -> Vec<K> {
    par_pieces(counts, |b, out: &mut [MaybeUninit<K>]| {
        for (o, i) in out.iter_mut().zip(heads_in(keys, b)) {
            o.write(keys[i]);
        }
    })
}

/// `(first key of each run, run lengths, run index of every element)`.
pub fn unique_consecutive<K: Copy + PartialEq + Send + Sync>(
    keys: &[K],
) -> (Vec<K>, Vec<i64>, Vec<i64>) {
    if !parallel(keys.len()) {
        return unique_consecutive_seq(keys);
    }
    let n = keys.len();
    let (counts, next) = block_heads(keys);
    // The run index of each block's first key: the runs started before it, less one when the
    // block continues a run.
    let mut base = Vec::with_capacity(counts.len());
    let mut s = 0usize;
    for &c in &counts {
        base.push(s);
        s += c;
    }
    let heads = |b: usize| heads_in(keys, b);
    let u = run_keys(keys, &counts);
    let c = par_pieces(&counts, |b, out: &mut [MaybeUninit<i64>]| {
        let mut hs = heads(b).peekable();
        let mut j = 0;
        while let Some(h) = hs.next() {
            let end = hs.peek().copied().unwrap_or(next[b]);
            out[j].write((end - h) as i64);
            j += 1;
        }
    });
    let mut inv = super::alloc::zeroed::<i64>(n);
    inv.par_chunks_mut(BLOCK).enumerate().for_each(|(b, o)| {
        let mut r = base[b] as i64 - 1;
        for (k, o) in o.iter_mut().enumerate() {
            r += i64::from(is_head(keys, b * BLOCK + k));
            *o = r;
        }
    });
    (u, c, inv)
}

fn unique_consecutive_seq<K: Copy + PartialEq>(keys: &[K]) -> (Vec<K>, Vec<i64>, Vec<i64>) {
    let (mut u, mut c, mut inv) = (vec![], vec![], vec![]);
    for (i, k) in keys.iter().enumerate() {
        if i == 0 || new_run(&keys[i - 1], k) {
            u.push(*k);
            c.push(0);
        }
        *c.last_mut().expect("a run") += 1;
        inv.push(u.len() as i64 - 1);
    }
    (u, c, inv)
}

/// Runs of equal keys → `(key, fold of the run's values with op)`, accumulating in `V::Acc`.
/// Each run is folded left to right on one thread (runs spread over rayon's threads): the same
/// values as one thread.
pub fn reduce_by_key<K: Copy + PartialEq + Send + Sync, V: ScanElement>(
    keys: &[K],
    values: &[V],
    op: ScanOp,
) -> (Vec<K>, Vec<V>) {
    let n = keys.len().min(values.len());
    if !parallel(n) {
        return reduce_by_key_seq(keys, values, op);
    }
    let (keys, values) = (&keys[..n], &values[..n]);
    let (counts, next) = block_heads(keys);
    let heads = |b: usize| heads_in(keys, b);
    let u = run_keys(keys, &counts);
    let folds = par_pieces(&counts, |b, out: &mut [MaybeUninit<V>]| {
        let mut hs = heads(b).peekable();
        let mut j = 0;
        while let Some(h) = hs.next() {
            let end = hs.peek().copied().unwrap_or(next[b]);
            let mut a = V::to_acc(values[h]);
            for &v in &values[h + 1..end] {
                a = V::combine(op, a, V::to_acc(v));
            }
            out[j].write(V::from_acc(a));
            j += 1;
        }
    });
    (u, folds)
}

fn reduce_by_key_seq<K: Copy + PartialEq, V: ScanElement>(
    keys: &[K],
    values: &[V],
    op: ScanOp,
) -> (Vec<K>, Vec<V>) {
    let (mut u, mut acc): (Vec<K>, Vec<V::Acc>) = (vec![], vec![]);
    for (i, (k, v)) in keys.iter().zip(values).enumerate() {
        let x = V::to_acc(*v);
        if i == 0 || new_run(&keys[i - 1], k) {
            u.push(*k);
            acc.push(x);
        } else {
            let a = acc.last_mut().expect("a run");
            *a = V::combine(op, *a, x);
        }
    }
    (u, acc.into_iter().map(V::from_acc).collect())
}

#[cfg(test)]
mod tests {
    use super::super::test_data::{floats, sizes, with_threads};
    use super::*;
    use half::f16;

    /// Keys in runs of random lengths (some longer than a block), from `floats` (NaN: runs of
    /// one; -0.0 beside 0.0: one run).
    fn runs(n: usize, seed: u64, longest: u64) -> Vec<f32> {
        let f = floats(n, seed, 1 << 20);
        let mut s = seed | 1;
        let mut out = Vec::with_capacity(n);
        let mut i = 0;
        while out.len() < n {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = 1 + (s >> 33) % longest;
            for _ in 0..len.min((n - out.len()) as u64) {
                out.push(f[i]);
            }
            i += 1;
        }
        out
    }

    fn nan_free_bits<T: Copy>(v: &[T], bits: impl Fn(T) -> (bool, u64)) -> Vec<u64> {
        v.iter()
            .map(|&x| match bits(x) {
                (true, _) => u64::MAX,
                (false, b) => b,
            })
            .collect()
    }

    /// unique_consecutive and reduce_by_key on 4 threads: as the sequential code, with runs
    /// crossing blocks, every operator, f32 (bit for bit but for a NaN's payload), f16 (summed
    /// in f32) and wrapping i32.
    #[test]
    fn parallel_runs_match_the_sequential_code() {
        let fb = |x: f32| (x.is_nan(), u64::from(x.to_bits()));
        let hb = |x: f16| (x.is_nan(), u64::from(x.to_bits()));
        for (s, len) in sizes().into_iter().enumerate() {
            for longest in [1, 40, 3 * BLOCK as u64] {
                let keys = runs(len, 40 + s as u64, longest);
                let got = with_threads(4, || unique_consecutive(&keys));
                let want = unique_consecutive_seq(&keys);
                assert_eq!(nan_free_bits(&got.0, fb), nan_free_bits(&want.0, fb));
                assert_eq!((got.1, got.2), (want.1, want.2), "{len} {longest}");
                let v = floats(len + 3, s as u64, 1 << 20);
                let vh: Vec<f16> = v.iter().map(|x| f16::from_f32(*x)).collect();
                let vi: Vec<i32> = v.iter().map(|x| x.to_bits() as i32).collect();
                for op in [
                    ScanOp::Sum,
                    ScanOp::Prod,
                    ScanOp::Max,
                    ScanOp::Min,
                    ScanOp::LogSumExp,
                ] {
                    let what = format!("{len} {longest} {op:?}");
                    let (gk, gv) = with_threads(4, || reduce_by_key(&keys, &v, op));
                    let (wk, wv) = reduce_by_key_seq(&keys, &v, op);
                    assert_eq!(nan_free_bits(&gk, fb), nan_free_bits(&wk, fb), "{what}");
                    assert_eq!(nan_free_bits(&gv, fb), nan_free_bits(&wv, fb), "f32 {what}");
                    let (_, gv) = with_threads(4, || reduce_by_key(&keys, &vh[..len], op));
                    let (_, wv) = reduce_by_key_seq(&keys, &vh[..len], op);
                    assert_eq!(nan_free_bits(&gv, hb), nan_free_bits(&wv, hb), "f16 {what}");
                    if op != ScanOp::LogSumExp {
                        let (_, gv) = with_threads(4, || reduce_by_key(&keys, &vi, op));
                        assert_eq!(gv, reduce_by_key_seq(&keys, &vi, op).1, "i32 {what}");
                    }
                }
            }
        }
    }
}
