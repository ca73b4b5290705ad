//! The sort family on candle tensors: [`SortExt`].

use super::cpu::{
    par_rows, par_rows2, with_any_cpu_storage, with_cpu_storage, with_cpu_storage2, IntoCpuStorage,
    Rows,
};
use super::grad::{differentiable, Backward};
use super::ops::{
    apply, apply_tracked, bad_dtype, contiguous, outputs, same_shape, u32_len, widen,
    widen_for_device, OnDevice, PrimOp,
};
use crate::cpu::{argsort_rows, SortElement};
use crate::{DeviceTensor, IndexType, Side, SortOptions};
use candle_core::backend::BackendStorage;
use candle_core::shape::Dim;
use candle_core::{CpuStorage, DType, Layout, Result, Shape, Tensor};
use cubecl::prelude::*;

/// Sorts along one dimension of [`Tensor`]s (any device the adapter supports, any layout),
/// with `dim` in PyTorch's place (`torch.sort(t, dim)`, `torch.topk(t, k, dim)`) and any
/// [`Dim`] candle takes (`1`, `D::Minus1`, …). Sorts are stable (equal keys keep their order,
/// also descending) with a total order: NaN last ascending (first descending), `-0.0` equal to
/// `+0.0`. Indices are u32 positions along `dim`, as candle's `arg_sort_last_dim`. Outputs are
/// contiguous; a `dim` other than the last is moved last as a view (a transpose), sorted there,
/// and each output copied back to the input's dimension order. The values of `sort_stable*`,
/// `top_k` and `bottom_k` have a gradient (scattered back through the indices); indices,
/// positions and `sort_pairs`' outputs are untracked.
pub trait SortExt {
    /// Sorted values and their original positions along `dim` (candle's `sort_last_dim`, for
    /// any dimension, stable and for rows of any length; `torch.sort(t, dim, stable=True)`).
    ///
    /// # Errors
    ///
    /// candle's `DimOutOfRange` for a `dim` that is not one of the tensor's (a 0-d tensor has
    /// none), a wrapped cubeprim [`Error::TooLarge`](crate::Error::TooLarge) for a `dim` longer
    /// than `u32::MAX` (the indices are u32); otherwise candle's `DeviceMismatchBinaryOp` for
    /// tensors on different devices, `UnsupportedDTypeForOp` for a dtype the op does not take,
    /// an error of candle's for a device without the adapter's path (`Msg`). On a GPU device, a
    /// cubeprim [`Error`](crate::Error) the device path returns, wrapped in candle's
    /// `Error::Wrapped`.
    ///
    /// # Example
    ///
    /// ```
    /// use candle_core::{Device, Tensor, D};
    /// use cubeprim::candle::prelude::*;
    ///
    /// let x = Tensor::new(&[[3f32, 1., 2.], [0., 5., 1.]], &Device::Cpu)?;
    /// let (v, i) = x.sort_stable(D::Minus1, true)?; // each row
    /// assert_eq!(v.to_vec2::<f32>()?, [[1., 2., 3.], [0., 1., 5.]]);
    /// assert_eq!(i.to_vec2::<u32>()?, [[1, 2, 0], [0, 2, 1]]);
    /// let (v, i) = x.sort_stable(0, false)?; // each column, descending
    /// assert_eq!(v.to_vec2::<f32>()?, [[3., 5., 2.], [0., 1., 1.]]);
    /// assert_eq!(i.to_vec2::<u32>()?, [[0, 1, 0], [1, 0, 1]]);
    /// // The indices are contiguous u32, as candle's `gather` takes them.
    /// assert_eq!(x.gather(&i, 0)?.to_vec2::<f32>()?, v.to_vec2::<f32>()?);
    /// # Ok::<(), candle_core::Error>(())
    /// ```
    fn sort_stable<D: Dim>(&self, dim: D, asc: bool) -> Result<(Tensor, Tensor)>;
    /// Sorted values only.
    ///
    /// # Errors
    ///
    /// As [`sort_stable`](Self::sort_stable).
    fn sort_stable_values<D: Dim>(&self, dim: D, asc: bool) -> Result<Tensor>;
    /// The positions that sort `self` along `dim` (candle's `arg_sort_last_dim`, for any
    /// dimension, stable and for rows of any length; `torch.argsort(t, dim, stable=True)`).
    ///
    /// # Errors
    ///
    /// As [`sort_stable`](Self::sort_stable).
    fn arg_sort_stable<D: Dim>(&self, dim: D, asc: bool) -> Result<Tensor>;
    /// The `k` largest along `dim`, largest first, and their positions; ties keep the earlier
    /// position first (`torch.topk(t, k, dim)`). Both outputs have `self`'s shape with `dim`
    /// of length `k`.
    ///
    /// # Errors
    ///
    /// candle's `Msg` for `k` past the length of `dim`; otherwise as
    /// [`sort_stable`](Self::sort_stable).
    ///
    /// # Example
    ///
    /// ```
    /// use candle_core::{Device, Tensor, D};
    /// use cubeprim::candle::prelude::*;
    ///
    /// let x = Tensor::new(&[[3f32, 1., 2.], [0., 5., 1.]], &Device::Cpu)?;
    /// let (v, i) = x.top_k(2, D::Minus1)?;
    /// assert_eq!(v.to_vec2::<f32>()?, [[3., 2.], [5., 1.]]);
    /// assert_eq!(i.to_vec2::<u32>()?, [[0, 2], [1, 2]]);
    /// let (v, i) = x.bottom_k(1, 0)?; // the smallest of each column: shape [1, 3]
    /// assert_eq!(v.to_vec2::<f32>()?, [[0., 1., 1.]]);
    /// assert_eq!(i.to_vec2::<u32>()?, [[1, 0, 1]]);
    /// # Ok::<(), candle_core::Error>(())
    /// ```
    fn top_k<D: Dim>(&self, k: usize, dim: D) -> Result<(Tensor, Tensor)>;
    /// The `k` smallest along `dim`, smallest first (`torch.topk(t, k, dim, largest=False)`).
    ///
    /// # Errors
    ///
    /// As [`top_k`](Self::top_k).
    fn bottom_k<D: Dim>(&self, k: usize, dim: D) -> Result<(Tensor, Tensor)>;
    /// For each of `values`, where inserting it keeps its line of `self` (sorted ascending
    /// along `dim`) sorted (`torch.searchsorted(self, values, side=..)`, there along the last
    /// dimension): `self` is 1-D (shared by every value, `values` of any shape) or of
    /// `values`' rank with the same dimensions but `dim`, along which the two lengths may
    /// differ. u32 positions along `dim`, `values`' shape.
    ///
    /// # Errors
    ///
    /// candle's `DimOutOfRange` for a `dim` that is not one of `self`'s,
    /// `ShapeMismatchBinaryOp` for shapes that do not pair up as above,
    /// `DTypeMismatchBinaryOp` for `values` of another dtype; otherwise as
    /// [`sort_stable`](Self::sort_stable).
    ///
    /// # Example
    ///
    /// ```
    /// use candle_core::{Device, Tensor, D};
    /// use cubeprim::candle::prelude::*;
    ///
    /// let edges = Tensor::new(&[1f32, 2., 2., 5.], &Device::Cpu)?;
    /// let q = Tensor::new(&[0f32, 2., 3., 9.], &Device::Cpu)?;
    /// assert_eq!(edges.search_sorted(&q, D::Minus1, Side::Left)?.to_vec1::<u32>()?, [0, 1, 3, 4]);
    /// assert_eq!(edges.search_sorted(&q, 0, Side::Right)?.to_vec1::<u32>()?, [0, 3, 3, 4]);
    /// // Columns sorted along dim 0, one query per column.
    /// let cols = Tensor::new(&[[1f32, 10.], [2., 20.], [3., 30.]], &Device::Cpu)?;
    /// let q = Tensor::new(&[[2.5f32, 5.]], &Device::Cpu)?;
    /// assert_eq!(cols.search_sorted(&q, 0, Side::Left)?.to_vec2::<u32>()?, [[2, 0]]);
    /// # Ok::<(), candle_core::Error>(())
    /// ```
    fn search_sorted<D: Dim>(&self, values: &Tensor, dim: D, side: Side) -> Result<Tensor>;
    /// The keys (`self`) sorted along `dim`, stably, and `values` (the keys' shape, any dtype)
    /// moved with them: (sorted keys, permuted values) (`torch.sort(keys, dim, stable=True)`
    /// then `gather` of the values by the indices; CUB's `SortPairs`).
    ///
    /// # Errors
    ///
    /// candle's `ShapeMismatchBinaryOp` for `values` of another shape; otherwise as
    /// [`sort_stable`](Self::sort_stable).
    fn sort_pairs<D: Dim>(&self, values: &Tensor, dim: D, asc: bool) -> Result<(Tensor, Tensor)>;
    /// For each element of `self` (any shape), the index of its bucket among the sorted 1-D
    /// `boundaries` (`torch.bucketize(self, boundaries, right=..)`): with `right == false`,
    /// `i` such that `boundaries[i-1] < x <= boundaries[i]` (searchsorted side left), with
    /// `right == true`, `boundaries[i-1] <= x < boundaries[i]`. u32, `self`'s shape.
    ///
    /// # Errors
    ///
    /// candle's `UnexpectedNumberOfDims` for `boundaries` that are not 1-D,
    /// `DTypeMismatchBinaryOp` for `boundaries` of another dtype, a wrapped cubeprim
    /// [`Error::TooLarge`](crate::Error::TooLarge) for more than `u32::MAX` boundaries;
    /// otherwise as [`sort_stable`](Self::sort_stable).
    fn bucketize(&self, boundaries: &Tensor, right: bool) -> Result<Tensor>;
}

impl SortExt for Tensor {
    fn sort_stable<D: Dim>(&self, dim: D, asc: bool) -> Result<(Tensor, Tensor)> {
        let [v, i] = sort(self, dim, asc, true, true)?;
        Ok((v, i))
    }
    fn sort_stable_values<D: Dim>(&self, dim: D, asc: bool) -> Result<Tensor> {
        let [v] = sort(self, dim, asc, true, false)?;
        Ok(v)
    }
    fn arg_sort_stable<D: Dim>(&self, dim: D, asc: bool) -> Result<Tensor> {
        let [i] = sort(self, dim, asc, false, true)?;
        Ok(i)
    }
    fn top_k<D: Dim>(&self, k: usize, dim: D) -> Result<(Tensor, Tensor)> {
        top_k(self, k, dim, true)
    }
    fn bottom_k<D: Dim>(&self, k: usize, dim: D) -> Result<(Tensor, Tensor)> {
        top_k(self, k, dim, false)
    }
    fn search_sorted<D: Dim>(&self, values: &Tensor, dim: D, side: Side) -> Result<Tensor> {
        let dim = sort_dim(self, dim, "search_sorted")?;
        let (sr, vr) = (self.rank(), values.rank());
        let same_but_dim = |a: &[usize], b: &[usize]| {
            a.iter()
                .zip(b)
                .enumerate()
                .all(|(d, (a, b))| d == dim || a == b)
        };
        if !(sr == 1 || (vr == sr && same_but_dim(self.dims(), values.dims()))) {
            return Err(candle_core::Error::ShapeMismatchBinaryOp {
                lhs: self.shape().clone(),
                rhs: values.shape().clone(),
                op: "search_sorted",
            }
            .bt());
        }
        if self.dtype() != values.dtype() {
            return Err(candle_core::Error::DTypeMismatchBinaryOp {
                lhs: self.dtype(),
                rhs: values.dtype(),
                op: "search_sorted",
            }
            .bt());
        }
        // A shared 1-D row: `values` of any shape, read as they are.
        let (sorted, values, moved) = match sr {
            1 => (self.clone(), values.clone(), None),
            _ => (to_last(self, dim)?, to_last(values, dim)?, Some(dim)),
        };
        let ((sorted, _), (values, _)) = (widen(&sorted)?, widen(&values)?);
        let [i] = outputs(apply(&SearchSorted { side }, &[&sorted, &values])?);
        match moved {
            Some(dim) => from_last(i, dim, DType::U32),
            None => Ok(i),
        }
    }
    fn sort_pairs<D: Dim>(&self, values: &Tensor, dim: D, asc: bool) -> Result<(Tensor, Tensor)> {
        let dim = sort_dim(self, dim, "sort_pairs")?;
        same_shape(self, values, "sort_pairs")?;
        let (keys, dtype) = widen(&to_last(self, dim)?)?;
        let vals = widen_for_device(&to_last(values, dim)?)?;
        let [k, v] = outputs(apply(&SortPairs { asc }, &[&keys, &vals])?);
        Ok((
            from_last(k, dim, dtype)?,
            from_last(v, dim, values.dtype())?,
        ))
    }
    fn bucketize(&self, boundaries: &Tensor, right: bool) -> Result<Tensor> {
        if boundaries.rank() != 1 {
            return Err(candle_core::Error::UnexpectedNumberOfDims {
                expected: 1,
                got: boundaries.rank(),
                shape: boundaries.shape().clone(),
            }
            .bt());
        }
        if self.dtype() != boundaries.dtype() {
            return Err(candle_core::Error::DTypeMismatchBinaryOp {
                lhs: self.dtype(),
                rhs: boundaries.dtype(),
                op: "bucketize",
            }
            .bt());
        }
        u32_len(boundaries.elem_count(), "bucketize's boundaries")?;
        let ((input, _), (boundaries, _)) = (widen(self)?, widen(boundaries)?);
        let [i] = outputs(apply(&Bucketize { right }, &[&input, &boundaries])?);
        Ok(i)
    }
}

/// `dim` of `t` as an index: one of its dimensions (candle's `DimOutOfRange` otherwise, also
/// for a 0-d tensor) whose positions fit the u32 indices.
fn sort_dim<D: Dim>(t: &Tensor, dim: D, op: &'static str) -> Result<usize> {
    let dim = dim.to_index(t.shape(), op)?;
    u32_len(t.dims()[dim], "a sorted dimension")?;
    Ok(dim)
}

/// `t` with `dim` last, as the row ops take it: a view (`dim` and the last dimension swapped).
fn to_last(t: &Tensor, dim: usize) -> Result<Tensor> {
    let last = t.rank() - 1;
    if dim == last {
        Ok(t.clone())
    } else {
        t.transpose(dim, last)
    }
}

/// An output of a row op on [`to_last`]`(t, dim)` in `t`'s dimension order, of `dtype` (the
/// value dtype a widened input is cast back to, or u32) and contiguous, as candle's own outputs
/// are (its `gather` and `index_select` take contiguous indices only).
fn from_last(t: Tensor, dim: usize, dtype: DType) -> Result<Tensor> {
    let last = t.rank() - 1;
    let t = if dim == last {
        t
    } else {
        t.transpose(dim, last)?
    };
    contiguous(t.to_dtype(dtype)?)
}

/// Runs a sort op on `t` along `dim` (widened; the values, first output when `values`, cast
/// back).
fn sort<const N: usize, D: Dim>(
    t: &Tensor,
    dim: D,
    asc: bool,
    values: bool,
    indices: bool,
) -> Result<[Tensor; N]> {
    let dim = sort_dim(t, dim, "sort")?;
    let (wide, dtype) = widen(&to_last(t, dim)?)?;
    let out = if values && differentiable(&wide) {
        // The values as a graph node of `wide`, their gradient scattered back through the
        // indices (sorted also when not asked for: the backward pass needs them).
        let op = Sort {
            asc,
            values: true,
            indices: true,
        };
        let mut out = apply_tracked(&op, &[&wide], &wide, 0, |rest| {
            Ok(Backward::Scatter {
                indices: rest[0].clone(),
            })
        })?;
        out.truncate(if indices { 2 } else { 1 });
        out
    } else {
        let op = Sort {
            asc,
            values,
            indices,
        };
        apply(&op, &[&wide])?
    };
    let out = out
        .into_iter()
        .enumerate()
        .map(|(k, o)| from_last(o, dim, if values && k == 0 { dtype } else { DType::U32 }))
        .collect::<Result<Vec<_>>>()?;
    Ok(outputs(out))
}

fn top_k<D: Dim>(t: &Tensor, k: usize, dim: D, largest: bool) -> Result<(Tensor, Tensor)> {
    let dim = sort_dim(t, dim, "top_k")?;
    let n = t.dims()[dim];
    if k > n {
        return Err(candle_core::Error::Msg(format!(
            "top_k: k = {k} is larger than dimension {dim} ({n})"
        )));
    }
    let (wide, dtype) = widen(&to_last(t, dim)?)?;
    let op = TopK { k, largest };
    let [v, i] = if differentiable(&wide) {
        outputs(apply_tracked(&op, &[&wide], &wide, 0, |rest| {
            Ok(Backward::Scatter {
                indices: rest[0].clone(),
            })
        })?)
    } else {
        outputs(apply(&op, &[&wide])?)
    };
    Ok((from_last(v, dim, dtype)?, from_last(i, dim, DType::U32)?))
}

/// A stable sort of each row: values and / or indices.
pub(super) struct Sort {
    pub(super) asc: bool,
    pub(super) values: bool,
    pub(super) indices: bool,
}

/// The rows of a view along its last axis, sorted: (values, indices) as asked.
fn sort_rows<E: SortElement + Send + Sync>(
    data: &[E],
    layout: &Layout,
    asc: bool,
    values: bool,
    indices: bool,
) -> (Vec<E>, Vec<u32>) {
    let rows = Rows::last(layout);
    let total = rows.starts.len() * rows.n;
    let mut idx = vec![0u32; total];
    let mut vals: Vec<E> = if values {
        vec![bytemuck::Zeroable::zeroed(); total]
    } else {
        Vec::new()
    };
    let order = |r: usize| {
        let line = rows.line(data, r);
        let o = argsort_rows(&line, rows.n, !asc);
        (line, o)
    };
    if values {
        par_rows2(&mut vals, &mut idx, rows.n, |r, v, i| {
            let (line, o) = order(r);
            for ((v, i), &j) in v.iter_mut().zip(i.iter_mut()).zip(&o) {
                *v = line[j as usize];
                *i = j;
            }
        });
    } else {
        par_rows(&mut idx, rows.n, |r, i| i.copy_from_slice(&order(r).1));
    }
    if !indices {
        idx = Vec::new();
    }
    (vals, idx)
}

impl PrimOp for Sort {
    const NAME: &'static str = "sort";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let (s, l) = inputs[0];
        let (vals, idx) = with_cpu_storage!(
            s,
            |v| {
                let (vals, idx) = sort_rows(v, l, self.asc, self.values, self.indices);
                (IntoCpuStorage::into_storage(vals), idx)
            },
            return Err(bad_dtype(s.dtype(), "cubeprim sort"))
        );
        let mut out = Vec::new();
        if self.values {
            out.push((vals, l.shape().clone()));
        }
        if self.indices {
            out.push((CpuStorage::U32(idx), l.shape().clone()));
        }
        Ok(out)
    }

    #[cfg(feature = "candle-cuda")]
    fn on_candle_stream(
        &self,
        inputs: &[(&candle_core::CudaStorage, &Layout)],
    ) -> Option<Result<Vec<(candle_core::CudaStorage, Shape)>>> {
        let (s, l) = inputs[0];
        super::cuda_sort::sort_rows(s, l, self.asc, self.values, self.indices)
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        let x = &d.inputs[0];
        let opts = SortOptions {
            descending: !self.asc,
            ..Default::default()
        };
        Ok(match (self.values, self.indices) {
            (true, true) => {
                let (v, i) = crate::sort_with_indices(d.client, x, IndexType::U32, opts, d.ws)?;
                vec![v, i]
            }
            (true, false) => vec![crate::sort(d.client, x, opts, d.ws)?],
            _ => vec![crate::argsort(d.client, x, IndexType::U32, opts, d.ws)?],
        })
    }
}

/// Top-k (or bottom-k) of each row.
pub(super) struct TopK {
    pub(super) k: usize,
    pub(super) largest: bool,
}

impl PrimOp for TopK {
    const NAME: &'static str = "top_k";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let (s, l) = inputs[0];
        let mut dims = l.dims().to_vec();
        *dims.last_mut().expect("rank checked") = self.k;
        let k = self.k;
        let (vals, idx) = with_cpu_storage!(
            s,
            |v| {
                let rows = Rows::last(l);
                let total = rows.starts.len() * k;
                let mut vals = vec![bytemuck::Zeroable::zeroed(); total];
                let mut idx = vec![0u32; total];
                par_rows2(&mut vals, &mut idx, k, |r, vo, io| {
                    let line = rows.line(v, r);
                    let order = argsort_rows(&line, rows.n, self.largest);
                    for ((vo, io), &j) in vo.iter_mut().zip(io.iter_mut()).zip(&order) {
                        *vo = line[j as usize];
                        *io = j;
                    }
                });
                (IntoCpuStorage::into_storage(vals), idx)
            },
            return Err(bad_dtype(s.dtype(), "cubeprim top_k"))
        );
        let shape = Shape::from(dims);
        Ok(vec![(vals, shape.clone()), (CpuStorage::U32(idx), shape)])
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        let (v, i) = crate::top_k(
            d.client,
            &d.inputs[0],
            self.k,
            self.largest,
            IndexType::U32,
            d.ws,
        )?;
        Ok(vec![v, i])
    }
}

/// Searchsorted of a second tensor's values in the rows of the first.
pub(super) struct SearchSorted {
    pub(super) side: Side,
}

impl PrimOp for SearchSorted {
    const NAME: &'static str = "search_sorted";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let ((s, sl), (q, ql)) = (inputs[0], inputs[1]);
        let right = self.side == Side::Right;
        let shared = sl.dims().len() == 1;
        let sorted = Rows::last(sl);
        let queries = Rows::last(ql);
        let mut out = vec![0u32; queries.starts.len() * queries.n];
        with_cpu_storage2!(
            s,
            q,
            |a, b| par_rows(&mut out, queries.n, |r, o| {
                let row = sorted.line(a, if shared { 0 } else { r });
                let qs = queries.line(b, r);
                // One row of `row.len()` keys shared by the queries: never an error.
                if let Ok(p) = crate::cpu::searchsorted(&row, row.len(), &qs, qs.len(), right) {
                    o.copy_from_slice(&p);
                }
            }),
            return Err(bad_dtype(s.dtype(), "cubeprim search_sorted"))
        );
        Ok(vec![(CpuStorage::U32(out), ql.shape().clone())])
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        Ok(vec![crate::searchsorted(
            d.client,
            &d.inputs[0],
            &d.inputs[1],
            self.side,
            IndexType::U32,
        )?])
    }
}

/// A stable sort of each row of keys (first input) carrying the values (second input, the
/// keys' shape, any dtype).
pub(super) struct SortPairs {
    pub(super) asc: bool,
}

impl PrimOp for SortPairs {
    const NAME: &'static str = "sort_pairs";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        let ((k, kl), (v, vl)) = (inputs[0], inputs[1]);
        let (keys, idx) = with_cpu_storage!(
            k,
            |k| {
                let (keys, idx) = sort_rows(k, kl, self.asc, true, true);
                (IntoCpuStorage::into_storage(keys), idx)
            },
            return Err(bad_dtype(k.dtype(), "cubeprim sort_pairs"))
        );
        let rows = Rows::last(vl);
        let vals = with_any_cpu_storage!(
            v,
            |v| {
                let mut out = vec![bytemuck::Zeroable::zeroed(); idx.len()];
                par_rows(&mut out, rows.n, |r, o| {
                    let s = rows.starts[r];
                    let order = &idx[r * rows.n..(r + 1) * rows.n];
                    for (o, &j) in o.iter_mut().zip(order) {
                        *o = v[s + j as usize * rows.step];
                    }
                });
                IntoCpuStorage::into_storage(out)
            },
            return Err(bad_dtype(v.dtype(), "cubeprim sort_pairs"))
        );
        Ok(vec![(keys, kl.shape().clone()), (vals, vl.shape().clone())])
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        let opts = SortOptions {
            descending: !self.asc,
            ..Default::default()
        };
        let (k, v) = crate::sort_pairs(d.client, &d.inputs[0], &d.inputs[1], opts, d.ws)?;
        Ok(vec![k, v])
    }
}

/// The buckets of the first tensor's elements among the second's (1-D, sorted).
pub(super) struct Bucketize {
    pub(super) right: bool,
}

impl PrimOp for Bucketize {
    const NAME: &'static str = "bucketize";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        // torch's `right` is searchsorted's side: the shared row `boundaries`, queries `input`.
        let side = if self.right { Side::Right } else { Side::Left };
        SearchSorted { side }.cpu(&[inputs[1], inputs[0]])
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        Ok(vec![crate::bucketize(
            d.client,
            &d.inputs[0],
            &d.inputs[1],
            self.right,
            IndexType::U32,
        )?])
    }
}
