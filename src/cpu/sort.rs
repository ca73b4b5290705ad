//! CPU reference of the sort family: stable sorts with a total order (NaN last in ascending
//! order, `-0.0` equal to `+0.0`, as PyTorch), arg-sorts, top-k and searchsorted, row by row.

use crate::{Element, Error, Result};
use half::{bf16, f16};
use rayon::prelude::*;
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
    let field = move |x: &E| {
        if width == 0 {
            0
        } else {
            (x.ordered_bits() >> begin_bit) & mask(width)
        }
    };
    Ok(argsort_by_bits(data, n, descending, width, field))
}

/// The stable order of each row of `n` keys (positions within the row).
pub fn argsort_rows<E: SortElement>(data: &[E], n: usize, descending: bool) -> Vec<u32> {
    let width = key_bits(E::DTYPE);
    argsort_by_bits(data, n, descending, width, |x: &E| x.ordered_bits())
}

/// Rows of at least this many keys are sorted by radix (8-bit digits), shorter ones by
/// comparisons of their packed words.
const RADIX_MIN: usize = 256;

/// The low `width` bits set.
fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// `row(keys, out, par)` for each row of `n` keys (`n > 0`) and its row of `out`: the rows
/// spread over rayon's threads (each sorted on one thread) when there are enough of them, else
/// one row at a time, a long row sorted by all the threads (`par`).
fn for_each_row<E: Sync, O: Send>(
    data: &[E],
    out: &mut [O],
    n: usize,
    row: impl Fn(&[E], &mut [O], bool) + Sync,
) {
    if super::parallel(data.len()) && data.len() / n >= rayon::current_num_threads() {
        data.par_chunks(n)
            .zip(out.par_chunks_mut(n))
            .for_each(|(x, o)| row(x, o, false));
    } else {
        for (x, o) in data.chunks(n).zip(out.chunks_mut(n)) {
            row(x, o, super::parallel(x.len()));
        }
    }
}

/// The stable order of each row of `n` keys by `key` (of `width` bits): a key and its position
/// packed in one word (the key's complement for a descending order), whose order is the stable
/// order, since no two positions are equal.
fn argsort_by_bits<E: Sync>(
    data: &[E],
    n: usize,
    descending: bool,
    width: u32,
    key: impl Fn(&E) -> u64 + Sync,
) -> Vec<u32> {
    let flip = if descending { mask(width) } else { 0 };
    let key = |x: &E| key(x) ^ flip;
    let mut out = super::alloc::zeroed::<u32>(if n == 0 { 0 } else { data.len() });
    if n == 0 {
        return out;
    }
    let row = |x: &[E], o: &mut [u32], par: bool| {
        if width <= 32 {
            let pack = |(i, x): (usize, &E)| (key(x) << 32) | i as u64;
            let mut words: Vec<u64> = super::alloc::with_capacity(x.len());
            if par {
                words.par_extend(x.par_iter().enumerate().map(pack));
            } else {
                words.extend(x.iter().enumerate().map(pack));
            }
            let words = if words.len() < RADIX_MIN {
                let mut w = words;
                w.sort_unstable();
                w
            } else {
                radix_sort(words, width, par)
            };
            if par {
                o.par_iter_mut()
                    .zip(&words)
                    .for_each(|(o, &w)| *o = w as u32);
            } else {
                o.iter_mut().zip(&words).for_each(|(o, &w)| *o = w as u32);
            }
        } else {
            let pack = |(i, x): (usize, &E)| (u128::from(key(x)) << 32) | i as u128;
            let mut words: Vec<u128> = x.iter().enumerate().map(pack).collect();
            if par {
                words.par_sort_unstable();
            } else {
                words.sort_unstable();
            }
            o.iter_mut().zip(&words).for_each(|(o, &w)| *o = w as u32);
        }
    };
    for_each_row(data, &mut out, n, row);
    out
}

/// `(key << 32) | payload` words sorted stably by their keys (the bits `[32, 32 + width)`,
/// `width <= 32`): a least-significant-digit radix sort of 8-bit digits, skipping the digits
/// that every key shares; with `par`, each pass spread over rayon's threads (the blocks'
/// counts, then each block scattered in order, so still stable).
fn radix_sort(mut a: Vec<u64>, width: u32, par: bool) -> Vec<u64> {
    let n = a.len();
    let passes = width.div_ceil(8) as usize;
    if n < 2 || passes == 0 {
        return a;
    }
    let digit = |w: u64, p: usize| ((w >> (32 + 8 * p)) & 0xff) as usize;
    let mut b = super::alloc::zeroed::<u64>(n);
    if !par {
        let mut hist = vec![[0usize; 256]; passes];
        for &w in &a {
            for (p, h) in hist.iter_mut().enumerate() {
                h[digit(w, p)] += 1;
            }
        }
        for (p, h) in hist.iter().enumerate() {
            if h.contains(&n) {
                continue;
            }
            let mut off = [0usize; 256];
            let mut s = 0;
            for (o, &c) in off.iter_mut().zip(h) {
                *o = s;
                s += c;
            }
            for &w in &a {
                let d = digit(w, p);
                b[off[d]] = w;
                off[d] += 1;
            }
            std::mem::swap(&mut a, &mut b);
        }
        return a;
    }
    let block = n.div_ceil(4 * rayon::current_num_threads()).max(1 << 12);
    for p in 0..passes {
        let hists: Vec<[usize; 256]> = a
            .par_chunks(block)
            .map(|c| {
                let mut h = [0usize; 256];
                for &w in c {
                    h[digit(w, p)] += 1;
                }
                h
            })
            .collect();
        // Each block's first position for each digit: the digits before, then the blocks
        // before with the same digit.
        let mut offs = hists.clone();
        let mut s = 0;
        for d in 0..256 {
            for (o, h) in offs.iter_mut().zip(&hists) {
                o[d] = s;
                s += h[d];
            }
        }
        if (0..256).any(|d| hists.iter().map(|h| h[d]).sum::<usize>() == n) {
            continue;
        }
        let dst = super::SharedMut(b.as_mut_ptr());
        a.par_chunks(block).zip(offs).for_each(|(c, mut off)| {
            for &w in c {
                let d = digit(w, p);
                // SAFETY: the offsets give each (block, digit) its own range of `b`,
                // within its `n` elements.
                unsafe { dst.write(off[d], w) };
                off[d] += 1;
            }
        });
        std::mem::swap(&mut a, &mut b);
    }
    a
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
    let size = std::mem::size_of::<E>();
    if n < RADIX_MIN || size > 4 {
        let order = argsort_rows(data, n, descending);
        // Each position is inside its row (a short last row included): no error.
        return order
            .iter()
            .enumerate()
            .map(|(i, &j)| data[i / n.max(1) * n + j as usize])
            .collect();
    }
    // The keys with the elements' own bits as the payload, radix-sorted (stable): no gather.
    let width = key_bits(E::DTYPE);
    let flip = if descending { mask(width) } else { 0 };
    let pack = move |x: &E| {
        let mut bits = 0u32;
        bytemuck::bytes_of_mut(&mut bits)[..size].copy_from_slice(bytemuck::bytes_of(x));
        ((x.ordered_bits() ^ flip) << 32) | u64::from(bits)
    };
    let unpack = move |w: u64| -> E {
        let bits = w as u32;
        bytemuck::pod_read_unaligned(&bytemuck::bytes_of(&bits)[..size])
    };
    let mut out = super::alloc::zeroed(data.len());
    let row = |x: &[E], o: &mut [E], par: bool| {
        if x.len() < RADIX_MIN {
            let order = argsort_rows(x, x.len(), descending);
            for (o, &j) in o.iter_mut().zip(&order) {
                *o = x[j as usize];
            }
            return;
        }
        let mut words: Vec<u64> = super::alloc::with_capacity(x.len());
        if par {
            words.par_extend(x.par_iter().map(pack));
        } else {
            words.extend(x.iter().map(pack));
        }
        let words = radix_sort(words, width, par);
        if par {
            o.par_iter_mut()
                .zip(&words)
                .for_each(|(o, &w)| *o = unpack(w));
        } else {
            o.iter_mut().zip(&words).for_each(|(o, &w)| *o = unpack(w));
        }
    };
    for_each_row(data, &mut out, n, row);
    out
}

/// The `k` largest (or smallest) of each row with their positions, best first; ties keep the
/// earlier position first (a stable descending / ascending sort cut at `k`).
pub fn top_k_rows<E: SortElement>(
    data: &[E],
    n: usize,
    k: usize,
    largest: bool,
) -> (Vec<E>, Vec<u32>) {
    if n == 0 {
        return (vec![], vec![]);
    }
    let width = key_bits(E::DTYPE);
    let flip = if largest { mask(width) } else { 0 };
    let row = |x: &[E]| -> Vec<u32> {
        let k = k.min(x.len());
        if k == 0 {
            return vec![];
        }
        if 8 * k >= x.len() {
            let mut order = argsort_rows(x, x.len(), largest);
            order.truncate(k);
            return order;
        }
        // The k smallest packed words (key, then position: the stable order), without sorting
        // the row: candidates below the k-th smallest so far, cut back to k when full.
        if width <= 32 {
            let words = x
                .iter()
                .enumerate()
                .map(|(i, e)| ((e.ordered_bits() ^ flip) << 32) | i as u64);
            smallest(words, k).into_iter().map(|w| w as u32).collect()
        } else {
            let words = x
                .iter()
                .enumerate()
                .map(|(i, e)| (u128::from(e.ordered_bits() ^ flip) << 32) | i as u128);
            smallest(words, k).into_iter().map(|w| w as u32).collect()
        }
    };
    let rows: Vec<Vec<u32>> = if super::parallel(data.len()) && data.len() / n >= 2 {
        data.par_chunks(n).map(row).collect()
    } else {
        data.chunks(n).map(row).collect()
    };
    let mut vals = Vec::new();
    let mut idx = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        for &j in row {
            vals.push(data[r * n + j as usize]);
            idx.push(j);
        }
    }
    (vals, idx)
}

/// The `k` (`>= 1`) smallest of distinct `words`, ascending.
fn smallest<W: Ord + Copy>(words: impl Iterator<Item = W>, k: usize) -> Vec<W> {
    let cap = (4 * k).max(64);
    let mut buf = Vec::with_capacity(cap);
    let mut bound: Option<W> = None;
    for w in words {
        if bound.is_some_and(|b| w >= b) {
            continue;
        }
        buf.push(w);
        if buf.len() == cap {
            buf.select_nth_unstable(k - 1);
            buf.truncate(k);
            bound = Some(buf[k - 1]);
        }
    }
    if buf.len() > k {
        buf.select_nth_unstable(k - 1);
        buf.truncate(k);
    }
    buf.sort_unstable();
    buf
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
    let find = |(i, q): (usize, &E)| {
        let row = if sorted.len() == n { 0 } else { i / m.max(1) };
        let s = &sorted[row * n..row * n + n];
        let p = if right {
            s.partition_point(|a| a.sort_cmp(q) != Ordering::Greater)
        } else {
            s.partition_point(|a| a.sort_cmp(q) == Ordering::Less)
        };
        p as u32
    };
    // A binary search per query: worth the threads from fewer queries than the scan's
    // threshold.
    Ok(
        if queries.len() >= SEARCH_PARALLEL_MIN && rayon::current_num_threads() > 1 {
            queries.par_iter().enumerate().map(find).collect()
        } else {
            queries.iter().enumerate().map(find).collect()
        },
    )
}

/// Queries from which [`searchsorted`] spreads them over rayon's threads.
const SEARCH_PARALLEL_MIN: usize = 1 << 12;

#[cfg(test)]
mod tests {
    use super::super::test_data::{floats, sizes, with_threads};
    use super::*;

    /// The former implementation: a stable comparison sort of each row's positions.
    fn reference<E: SortElement>(
        data: &[E],
        n: usize,
        desc: bool,
        field: impl Fn(&E) -> u64,
    ) -> Vec<u32> {
        data.chunks(n.max(1))
            .filter(|_| n > 0)
            .flat_map(|row| {
                let mut idx: Vec<u32> = (0..row.len() as u32).collect();
                idx.sort_by(|&a, &b| {
                    let o = field(&row[a as usize]).cmp(&field(&row[b as usize]));
                    if desc {
                        o.reverse()
                    } else {
                        o
                    }
                });
                idx
            })
            .collect()
    }

    fn gather<E: Copy>(data: &[E], n: usize, order: &[u32]) -> Vec<E> {
        permute_rows(data, n, order).unwrap()
    }

    /// Argsort, sort (the elements' own bits: NaN payloads, -0.0) and top-k of `data` in rows
    /// of `n`, in a pool of 4 threads and of 1, against the comparison sort.
    fn check<E: SortElement>(data: &[E], n: usize, bits: impl Fn(&E) -> u64, what: &str) {
        for desc in [false, true] {
            let want = reference(data, n, desc, |x| x.ordered_bits());
            let want_v: Vec<u64> = gather(data, n, &want).iter().map(&bits).collect();
            for t in [4, 1] {
                let (got, got_v) = with_threads(t, || {
                    (argsort_rows(data, n, desc), sort_rows(data, n, desc))
                });
                assert!(got == want, "argsort {what} n {n} desc {desc} threads {t}");
                let got_v: Vec<u64> = got_v.iter().map(&bits).collect();
                assert!(got_v == want_v, "sort {what} n {n} desc {desc} threads {t}");
            }
            for k in [0, 1, 5, 64, n / 3, n, n + 1] {
                let (v, i) = with_threads(4, || top_k_rows(data, n, k, desc));
                let (mut want_i, mut want_v) = (vec![], vec![]);
                for (r, row) in want.chunks(n.max(1)).enumerate() {
                    for &p in row.iter().take(k) {
                        want_i.push(p);
                        want_v.push(bits(&data[r * n + p as usize]));
                    }
                }
                assert!(i == want_i, "top-{k} {what} n {n} largest {desc}");
                let v: Vec<u64> = v.iter().map(&bits).collect();
                assert!(v == want_v, "top-{k} values {what} n {n} largest {desc}");
            }
        }
    }

    /// One long row (the parallel radix sort), many rows (rows spread over the threads, a short
    /// last row included), for f32 with NaN of both signs, ±0 and ties, u32 with few distinct
    /// keys (digits skipped), i32, f16 and the 64-bit keys (packed in u128).
    #[test]
    fn parallel_sorts_match_the_comparison_sort() {
        for (s, len) in sizes().into_iter().enumerate() {
            let f = floats(len, s as u64, 1000);
            let fb = |x: &f32| u64::from(x.to_bits());
            check(&f, len, fb, "f32 one row");
            let u: Vec<u32> = f.iter().map(|x| x.to_bits() & 0x0300_00ff).collect();
            check(&u, len, |x| u64::from(*x), "u32 one row");
            if len > 300 {
                check(&f, 1000, fb, "f32 rows of 1000");
                check(&f, 200, fb, "f32 rows of 200");
            }
        }
        let p = super::super::scan::PARALLEL_MIN;
        let f = floats(p + 1, 7, 50);
        let i: Vec<i32> = f
            .iter()
            .map(|x| *x as i32 ^ (x.to_bits() as i32 >> 20))
            .collect();
        check(&i, p + 1, |x| *x as u32 as u64, "i32");
        check(&i, 300, |x| *x as u32 as u64, "i32 rows");
        let h: Vec<f16> = f.iter().map(|x| f16::from_f32(*x)).collect();
        check(&h, p + 1, |x| u64::from(x.to_bits()), "f16");
        let d: Vec<f64> = f.iter().map(|x| f64::from(*x)).collect();
        check(&d, p + 1, |x| x.to_bits(), "f64");
        check(&d, 700, |x| x.to_bits(), "f64 rows");
        let l: Vec<i64> = i.iter().map(|x| i64::from(*x) << 20).collect();
        check(&l, p + 1, |x| *x as u64, "i64");
    }

    /// A bit range of the keys: as the comparison sort of the field.
    #[test]
    fn parallel_bit_range_sorts_match() {
        let p = super::super::scan::PARALLEL_MIN;
        let f = floats(p + 3, 11, 5000);
        let d: Vec<f64> = f.iter().map(|x| f64::from(*x) * 1e10).collect();
        for (b, e) in [(0, 0), (4, 20), (0, 32), (16, 31)] {
            for desc in [false, true] {
                let w = e - b;
                let field = |x: &f32| (x.ordered_bits() >> b) & mask(w);
                let got = with_threads(4, || argsort_rows_bits(&f, p + 3, desc, b, e).unwrap());
                assert_eq!(got, reference(&f, p + 3, desc, field), "f32 [{b}, {e})");
                let got = with_threads(4, || argsort_rows_bits(&f, 999, desc, b, e).unwrap());
                assert_eq!(got, reference(&f, 999, desc, field), "f32 rows [{b}, {e})");
            }
        }
        for (b, e) in [(8, 64), (30, 50)] {
            let field = |x: &f64| (x.ordered_bits() >> b) & mask(e - b);
            let got = with_threads(4, || argsort_rows_bits(&d, p + 3, true, b, e).unwrap());
            assert_eq!(got, reference(&d, p + 3, true, field), "f64 [{b}, {e})");
        }
    }

    /// Searchsorted of many queries on 4 threads: as on one.
    #[test]
    fn parallel_searchsorted_matches_one_thread() {
        let f = floats(10_000, 3, 300);
        let sorted = sort_rows(&f[..2000], 1000, false);
        for (m, q) in [
            (SEARCH_PARALLEL_MIN + 1, &f[..SEARCH_PARALLEL_MIN + 1]),
            (5000, &f[..]),
        ] {
            for right in [false, true] {
                let one = |t| with_threads(t, || searchsorted(&sorted[..1000], 1000, q, m, right));
                assert_eq!(one(4).unwrap(), one(1).unwrap());
                let rows = |t| with_threads(t, || searchsorted(&sorted, 1000, q, m, right));
                assert_eq!(rows(4).unwrap(), rows(1).unwrap());
            }
        }
    }
}
