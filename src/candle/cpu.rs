//! The CPU path of the candle ops: strided views read in place, work split over rows (rayon).
//!
//! The scan has the semantics of [`crate::cpu::scan`] (f16 / bf16 accumulate in f32, integers
//! wrap, NaN propagates, ties pick the later element); the difference is that this one reads
//! candle's storage through its layout (any strides and offset, no copy first) and splits the
//! rows over threads. [`Rows`] gives the other ops the same access: the start of every line
//! along an axis of a view. Outputs are contiguous.

use crate::cpu::{take_second, ScanElement};
use crate::{ScanOp, ScanOptions};
use candle_core::{CpuStorage, Layout};
use rayon::prelude::*;

/// Elements of one parallel task; smaller jobs run on the calling thread.
const TASK_ELEMS: usize = 1 << 14;

/// Offsets (in elements) of every index of `dims` under `strides`, row-major.
pub(crate) fn offsets(dims: &[usize], strides: &[usize]) -> Vec<usize> {
    let mut out = vec![0usize];
    for (&d, &s) in dims.iter().zip(strides) {
        out = out
            .iter()
            .flat_map(|&o| (0..d).map(move |i| o + i * s))
            .collect();
    }
    out
}

/// A raw output pointer shared by tasks that write disjoint elements.
struct Out<T>(*mut T);
impl<T> Clone for Out<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Out<T> {}
// SAFETY: every task writes only its own (outer, column block) elements.
unsafe impl<T: Send> Send for Out<T> {}
unsafe impl<T: Send> Sync for Out<T> {}
impl<T> Out<T> {
    /// The pointer (a method, so that closures capture the whole `Sync` wrapper).
    fn at(self, i: usize) -> *mut T {
        self.0.wrapping_add(i)
    }
}

/// Scan of the view `layout` of `data` along `axis`: the contiguous values, and the indices
/// (along `axis`) of the selected elements when `indexed` (`-1` where none is).
pub fn scan_view<E: ScanElement>(
    data: &[E],
    layout: &Layout,
    axis: usize,
    op: ScanOp,
    opts: ScanOptions,
    indexed: bool,
) -> (Vec<E>, Vec<i64>) {
    let dims = layout.dims();
    let strides = layout.stride();
    let total: usize = dims.iter().product();
    let n = dims[axis];
    let inner: usize = dims[axis + 1..].iter().product();
    let outer: usize = dims[..axis].iter().product();
    let mut out: Vec<E> = vec![bytemuck::Zeroable::zeroed(); total];
    let mut idx: Vec<i64> = if indexed { vec![0; total] } else { Vec::new() };
    if total == 0 {
        return (out, idx);
    }
    let outer_off = offsets(&dims[..axis], &strides[..axis]);
    let inner_off = offsets(&dims[axis + 1..], &strides[axis + 1..]);
    let (start, step) = (layout.start_offset(), strides[axis]);

    // Tasks: (outer index, block of inner columns), each about TASK_ELEMS elements.
    let block = (TASK_ELEMS / n.max(1)).clamp(1, inner);
    let blocks = inner.div_ceil(block);
    let (out_ptr, idx_ptr) = (Out(out.as_mut_ptr()), Out(idx.as_mut_ptr()));
    let task = |t: usize| {
        let (o, b) = (t / blocks, t % blocks);
        let cols = b * block..((b + 1) * block).min(inner);
        let width = cols.len();
        if width == 1 && !indexed {
            // One line at a time, the operator fixed at compile time: the hot loop.
            let line = Line {
                data,
                out: out_ptr,
                base_in: start + outer_off[o] + inner_off[cols.start],
                step,
                base_out: o * n * inner + cols.start,
                inner,
                n,
                opts,
            };
            return match op {
                ScanOp::Sum => line.scan(E::identity(op), |a, b| E::combine(ScanOp::Sum, a, b)),
                ScanOp::Prod => line.scan(E::identity(op), |a, b| E::combine(ScanOp::Prod, a, b)),
                ScanOp::Max => line.scan(E::identity(op), |a, b| E::combine(ScanOp::Max, a, b)),
                ScanOp::Min => line.scan(E::identity(op), |a, b| E::combine(ScanOp::Min, a, b)),
                ScanOp::LogSumExp => {
                    line.scan(E::identity(op), |a, b| E::combine(ScanOp::LogSumExp, a, b))
                }
            };
        }
        let mut acc = vec![E::identity(op); width];
        let mut acc_idx = vec![-1i64; width];
        let base_in = start + outer_off[o];
        let base_out = o * n * inner;
        for s in 0..n {
            let j = if opts.reverse { n - 1 - s } else { s };
            let row_in = base_in + j * step;
            let row_out = base_out + j * inner;
            for (c, col) in cols.clone().enumerate() {
                let x = E::to_acc(data[row_in + inner_off[col]]);
                let next = E::combine(op, acc[c], x);
                let next_idx = if indexed && take_second::<E>(op, acc[c], x) {
                    j as i64
                } else {
                    acc_idx[c]
                };
                let (v, vi) = if opts.exclusive {
                    (acc[c], acc_idx[c])
                } else {
                    (next, next_idx)
                };
                // SAFETY: (o, j, col) is inside `out` and written by this task only.
                unsafe {
                    *out_ptr.at(row_out + col) = E::from_acc(v);
                    if indexed {
                        *idx_ptr.at(row_out + col) = vi;
                    }
                }
                acc[c] = next;
                acc_idx[c] = next_idx;
            }
        }
    };
    let tasks = outer * blocks;
    if total <= TASK_ELEMS {
        (0..tasks).for_each(task);
    } else {
        (0..tasks).into_par_iter().for_each(task);
    }
    (out, idx)
}

/// One line along the axis, without indices.
struct Line<'a, E> {
    data: &'a [E],
    out: Out<E>,
    base_in: usize,
    step: usize,
    base_out: usize,
    /// Output stride along the axis.
    inner: usize,
    n: usize,
    opts: ScanOptions,
}

impl<E: ScanElement> Line<'_, E> {
    #[inline(always)]
    fn scan(&self, identity: E::Acc, combine: impl Fn(E::Acc, E::Acc) -> E::Acc) {
        let mut acc = identity;
        for s in 0..self.n {
            let j = if self.opts.reverse { self.n - 1 - s } else { s };
            let x = E::to_acc(self.data[self.base_in + j * self.step]);
            let next = combine(acc, x);
            let v = if self.opts.exclusive { acc } else { next };
            // SAFETY: the line's elements are inside `out` and written by this task only.
            unsafe { *self.out.at(self.base_out + j * self.inner) = E::from_acc(v) };
            acc = next;
        }
    }
}

/// Runs `$body` with `$v: &[E]` bound to the elements of a [`CpuStorage`] cubeprim scans, or
/// evaluates `$other` for the dtypes it does not (u8, i16, the 8-bit and smaller floats).
macro_rules! with_cpu_storage {
    ($s:expr, |$v:ident| $body:expr, $other:expr) => {
        match $s {
            CpuStorage::F32($v) => $body,
            CpuStorage::F64($v) => $body,
            CpuStorage::F16($v) => $body,
            CpuStorage::BF16($v) => $body,
            CpuStorage::U32($v) => $body,
            CpuStorage::I32($v) => $body,
            CpuStorage::I64($v) => $body,
            _ => $other,
        }
    };
}
pub(crate) use with_cpu_storage;

/// [`with_cpu_storage`] over two storages of the same dtype: `$body` with `$a`, `$b` bound to
/// their elements, `$other` for other pairs.
macro_rules! with_cpu_storage2 {
    ($s:expr, $t:expr, |$a:ident, $b:ident| $body:expr, $other:expr) => {
        match ($s, $t) {
            (CpuStorage::F32($a), CpuStorage::F32($b)) => $body,
            (CpuStorage::F64($a), CpuStorage::F64($b)) => $body,
            (CpuStorage::F16($a), CpuStorage::F16($b)) => $body,
            (CpuStorage::BF16($a), CpuStorage::BF16($b)) => $body,
            (CpuStorage::U32($a), CpuStorage::U32($b)) => $body,
            (CpuStorage::I32($a), CpuStorage::I32($b)) => $body,
            (CpuStorage::I64($a), CpuStorage::I64($b)) => $body,
            _ => $other,
        }
    };
}
pub(crate) use with_cpu_storage2;

/// Runs `$body` with `$v: &[E]` bound to the elements of any [`CpuStorage`] of a numeric
/// dtype candle computes with (the scanned ones, u8 and i16), or evaluates `$other` (the 8-bit
/// and smaller floats).
macro_rules! with_any_cpu_storage {
    ($s:expr, |$v:ident| $body:expr, $other:expr) => {
        match $s {
            CpuStorage::U8($v) => $body,
            CpuStorage::I16($v) => $body,
            s => $crate::candle::cpu::with_cpu_storage!(s, |$v| $body, $other),
        }
    };
}
pub(crate) use with_any_cpu_storage;

/// Wraps a vector of a scanned dtype as candle CPU storage.
pub trait IntoCpuStorage: Sized {
    fn into_storage(v: Vec<Self>) -> CpuStorage;
}
macro_rules! into_storage {
    ($($t:ty => $v:ident),*) => {$(
        impl IntoCpuStorage for $t {
            fn into_storage(v: Vec<Self>) -> CpuStorage {
                CpuStorage::$v(v)
            }
        }
    )*};
}
into_storage!(f32 => F32, f64 => F64, half::f16 => F16, half::bf16 => BF16, u32 => U32,
    i32 => I32, i64 => I64, u8 => U8, i16 => I16);

/// The lines of a view along one axis: where each starts in the storage (row-major over the
/// other axes, so line `r` is output row `r` of an op that removes or rewrites the axis), the
/// step between its elements and their number.
pub struct Rows {
    pub starts: Vec<usize>,
    pub step: usize,
    pub n: usize,
}

impl Rows {
    /// The lines of `layout` along `axis`. A rank-0 view is one line of one element.
    pub fn new(layout: &Layout, axis: usize) -> Self {
        let (dims, strides) = (layout.dims(), layout.stride());
        if dims.is_empty() {
            return Self {
                starts: vec![layout.start_offset()],
                step: 1,
                n: 1,
            };
        }
        let outer = offsets(&dims[..axis], &strides[..axis]);
        let inner = offsets(&dims[axis + 1..], &strides[axis + 1..]);
        let start = layout.start_offset();
        Self {
            starts: outer
                .iter()
                .flat_map(|&o| inner.iter().map(move |&i| start + o + i))
                .collect(),
            step: strides[axis],
            n: dims[axis],
        }
    }

    /// The lines along the last axis (the whole view as one line when rank 0).
    pub fn last(layout: &Layout) -> Self {
        Self::new(layout, layout.dims().len().max(1) - 1)
    }

    /// Line `r` copied out.
    pub fn line<E: Copy>(&self, data: &[E], r: usize) -> Vec<E> {
        let s = self.starts[r];
        (0..self.n).map(|j| data[s + j * self.step]).collect()
    }

    /// The view's elements, row-major: borrowed where the view is contiguous.
    pub fn flat<'a, E: Copy + Send + Sync>(
        data: &'a [E],
        layout: &Layout,
    ) -> std::borrow::Cow<'a, [E]> {
        match layout.contiguous_offsets() {
            // (an empty view's offset may lie past the end of its storage)
            _ if layout.shape().elem_count() == 0 => std::borrow::Cow::Owned(Vec::new()),
            Some((a, b)) => std::borrow::Cow::Borrowed(&data[a..b]),
            None => {
                let rows = Self::last(layout);
                let mut out = vec![data[rows.starts[0]]; rows.starts.len() * rows.n];
                par_rows(&mut out, rows.n, |r, o| {
                    let s = rows.starts[r];
                    for (j, x) in o.iter_mut().enumerate() {
                        *x = data[s + j * rows.step];
                    }
                });
                std::borrow::Cow::Owned(out)
            }
        }
    }
}

/// Fills `out`, rows of `width`, by `f(row, row's slice)`: in parallel when there is enough
/// work, on the calling thread otherwise.
pub fn par_rows<T: Send>(out: &mut [T], width: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    if width == 0 || out.is_empty() {
        return;
    }
    if out.len() <= TASK_ELEMS {
        out.chunks_mut(width).enumerate().for_each(|(r, o)| f(r, o));
    } else {
        let rows_per_task = (TASK_ELEMS / width).max(1);
        out.par_chunks_mut(width * rows_per_task)
            .enumerate()
            .for_each(|(t, block)| {
                for (i, o) in block.chunks_mut(width).enumerate() {
                    f(t * rows_per_task + i, o)
                }
            });
    }
}

/// [`par_rows`] over two outputs with rows of the same width (values and indices).
pub fn par_rows2<A: Send, B: Send>(
    a: &mut [A],
    b: &mut [B],
    width: usize,
    f: impl Fn(usize, &mut [A], &mut [B]) + Sync,
) {
    if width == 0 || a.is_empty() {
        return;
    }
    let rows_per_task = (TASK_ELEMS / width).max(1);
    let chunk = width * rows_per_task;
    let task = |(t, (ba, bb)): (usize, (&mut [A], &mut [B]))| {
        for (i, (oa, ob)) in ba.chunks_mut(width).zip(bb.chunks_mut(width)).enumerate() {
            f(t * rows_per_task + i, oa, ob)
        }
    };
    if a.len() <= TASK_ELEMS {
        a.chunks_mut(chunk)
            .zip(b.chunks_mut(chunk))
            .enumerate()
            .for_each(task);
    } else {
        a.par_chunks_mut(chunk)
            .zip(b.par_chunks_mut(chunk))
            .enumerate()
            .for_each(task);
    }
}
