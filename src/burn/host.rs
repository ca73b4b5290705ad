//! Host tensors and the row-parallel host path (NdArray): the CPU reference run over rows
//! with rayon, O(n) in total.

use crate::cpu::{self, ScanElement};
use crate::{DType, Error, Result, ScanOp, ScanOptions};
use half::{bf16, f16};
use rayon::prelude::*;
use std::borrow::Cow;

/// Row-major host data of one of cubeprim's dtypes, borrowed or owned.
#[derive(Debug, Clone)]
pub enum HostData<'a> {
    /// [`DType::F32`] elements.
    F32(Cow<'a, [f32]>),
    /// [`DType::F16`] elements.
    F16(Cow<'a, [f16]>),
    /// [`DType::BF16`] elements.
    BF16(Cow<'a, [bf16]>),
    /// [`DType::F64`] elements.
    F64(Cow<'a, [f64]>),
    /// [`DType::I32`] elements.
    I32(Cow<'a, [i32]>),
    /// [`DType::U32`] elements (also bool flags, as 0 / 1).
    U32(Cow<'a, [u32]>),
    /// [`DType::I64`] elements.
    I64(Cow<'a, [i64]>),
    /// [`DType::U64`] elements.
    U64(Cow<'a, [u64]>),
}

/// A row-major host tensor.
#[derive(Debug, Clone)]
pub struct HostTensor<'a> {
    /// Size of each axis.
    pub shape: Vec<usize>,
    /// The elements, row-major (as many as the shape holds).
    pub data: HostData<'a>,
}

/// Runs `$body` with `$v` bound to the slice of `$data` and `$E` to its element type.
macro_rules! with_host_data {
    ($data:expr, |$v:ident: $E:ident| $body:expr) => {
        match $data {
            $crate::burn::host::HostData::F32($v) => {
                type $E = f32;
                $body
            }
            $crate::burn::host::HostData::F16($v) => {
                type $E = half::f16;
                $body
            }
            $crate::burn::host::HostData::BF16($v) => {
                type $E = half::bf16;
                $body
            }
            $crate::burn::host::HostData::F64($v) => {
                type $E = f64;
                $body
            }
            $crate::burn::host::HostData::I32($v) => {
                type $E = i32;
                $body
            }
            $crate::burn::host::HostData::U32($v) => {
                type $E = u32;
                $body
            }
            $crate::burn::host::HostData::I64($v) => {
                type $E = i64;
                $body
            }
            $crate::burn::host::HostData::U64($v) => {
                type $E = u64;
                $body
            }
        }
    };
}
pub(crate) use with_host_data;

/// An element type of [`HostData`].
pub trait IntoHostData: Sized {
    /// Host data owning `v`.
    fn into_host(v: Vec<Self>) -> HostData<'static>;
    /// The elements of `d`, if it holds this type.
    fn slice_of<'b>(d: &'b HostData<'_>) -> Option<&'b [Self]>;
}
macro_rules! into_host {
    ($($t:ty => $d:ident),*) => {$(
        impl IntoHostData for $t {
            fn into_host(v: Vec<Self>) -> HostData<'static> {
                HostData::$d(Cow::Owned(v))
            }
            fn slice_of<'b>(d: &'b HostData<'_>) -> Option<&'b [Self]> {
                match d {
                    HostData::$d(v) => Some(v),
                    _ => None,
                }
            }
        }
    )*};
}
into_host!(f32 => F32, f16 => F16, bf16 => BF16, f64 => F64, i32 => I32, u32 => U32,
    i64 => I64, u64 => U64);

impl HostData<'_> {
    /// The dtype of the elements.
    pub fn dtype(&self) -> DType {
        match self {
            HostData::F32(_) => DType::F32,
            HostData::F16(_) => DType::F16,
            HostData::BF16(_) => DType::BF16,
            HostData::F64(_) => DType::F64,
            HostData::I32(_) => DType::I32,
            HostData::U32(_) => DType::U32,
            HostData::I64(_) => DType::I64,
            HostData::U64(_) => DType::U64,
        }
    }

    /// Integer data converted to another integer dtype (indices into the backend's int type).
    pub fn cast_int(self, to: DType) -> Result<HostData<'static>> {
        fn conv<A: Copy + Send + Sync, B: Send>(v: &[A], f: impl Fn(A) -> B + Sync) -> Vec<B> {
            v.par_iter().map(|&x| f(x)).collect()
        }
        let from = self.dtype();
        let wide: Vec<i64> = match self {
            HostData::I64(v) if to == DType::I64 => {
                return Ok(HostData::I64(Cow::Owned(v.into_owned())))
            }
            HostData::I64(v) => v.into_owned(),
            HostData::I32(v) => conv(&v, i64::from),
            HostData::U32(v) => conv(&v, i64::from),
            _ => {
                return Err(Error::UnsupportedDType {
                    dtype: from,
                    reason: "only integer indices are cast".into(),
                })
            }
        };
        Ok(match to {
            DType::I64 => HostData::I64(Cow::Owned(wide)),
            DType::I32 => HostData::I32(Cow::Owned(conv(&wide, |x| x as i32))),
            DType::U32 => HostData::U32(Cow::Owned(conv(&wide, |x| x as u32))),
            DType::U64 => HostData::U64(Cow::Owned(conv(&wide, |x| x as u64))),
            d => {
                return Err(Error::UnsupportedDType {
                    dtype: d,
                    reason: "indices are integers".into(),
                })
            }
        })
    }
}

/// Rows handed to one rayon task: enough work to amortise the task, at least one row.
fn rows_per_task(rows: usize, n: usize) -> usize {
    let per_task = 1 << 14;
    (per_task / n.max(1)).clamp(1, rows.max(1))
}

/// `data` (`[outer, n, inner]`, row-major, not empty) with the `n` axis moved last:
/// `[outer, inner, n]`.
fn axis_last<E: Copy + Send + Sync>(data: &[E], n: usize, inner: usize) -> Vec<E> {
    let mut t = vec![data[0]; data.len()];
    t.par_chunks_mut(n).enumerate().for_each(|(r, row)| {
        let (o, i) = (r / inner, r % inner);
        for (j, x) in row.iter_mut().enumerate() {
            *x = data[(o * n + j) * inner + i];
        }
    });
    t
}

/// The inverse of [`axis_last`].
fn axis_back<E: Copy + Send + Sync>(t: &[E], n: usize, inner: usize) -> Vec<E> {
    let mut out = vec![t[0]; t.len()];
    out.par_chunks_mut(inner).enumerate().for_each(|(r, row)| {
        let (o, j) = (r / n, r % n);
        for (i, x) in row.iter_mut().enumerate() {
            *x = t[(o * inner + i) * n + j];
        }
    });
    out
}

/// Scan of row-major `data` along `axis`, in parallel over rows: the same results as
/// [`cpu::scan`] / [`cpu::scan_with_indices`] (indices: empty unless `indexed`).
pub fn scan<E: ScanElement>(
    data: &[E],
    shape: &[usize],
    axis: usize,
    op: ScanOp,
    opts: ScanOptions,
    indexed: bool,
) -> crate::Result<(Vec<E>, Vec<i64>)> {
    crate::cpu::check_shape(data.len(), shape, Some(axis))?;
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    if data.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let rows_data;
    let rows: &[E] = if inner == 1 {
        data
    } else {
        rows_data = axis_last(data, n, inner);
        &rows_data
    };
    let task = rows_per_task(outer * inner, n) * n;
    let mut out = if indexed {
        rows.to_vec()
    } else {
        vec![bytemuck::Zeroable::zeroed(); rows.len()]
    };
    let mut idx = if indexed {
        vec![0i64; rows.len()]
    } else {
        Vec::new()
    };
    if indexed {
        out.par_chunks_mut(task)
            .zip(idx.par_chunks_mut(task))
            .zip(rows.par_chunks(task))
            .try_for_each(|((o, ix), x)| {
                let (v, i) = cpu::scan_with_indices(x, &[x.len() / n, n], 1, op, opts)?;
                o.copy_from_slice(&v);
                ix.copy_from_slice(&i);
                Ok::<_, crate::Error>(())
            })?;
    } else {
        // Each row scanned straight into the output (the same operations as `cpu::scan`).
        out.par_chunks_mut(task)
            .zip(rows.par_chunks(task))
            .for_each(|(o, x)| {
                for (o, x) in o.chunks_mut(n).zip(x.chunks(n)) {
                    cpu::scan_block_into(x, o, n, 1, op, opts);
                }
            });
    }
    if inner == 1 {
        Ok((out, idx))
    } else {
        let idx = if indexed {
            axis_back(&idx, n, inner)
        } else {
            idx
        };
        Ok((axis_back(&out, n, inner), idx))
    }
}
