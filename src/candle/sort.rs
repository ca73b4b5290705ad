//! The sort family on candle tensors: [`SortExt`].

use super::cpu::{
    par_rows, par_rows2, with_any_cpu_storage, with_cpu_storage, with_cpu_storage2, IntoCpuStorage,
    Rows,
};
use super::ops::{apply, bad_dtype, outputs, widen, widen_for_device, OnDevice, PrimOp};
use crate::cpu::{argsort_rows, SortElement};
use crate::{DeviceTensor, IndexType, Side, SortOptions};
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, Layout, Result, Shape, Tensor};
use cubecl::prelude::*;

/// Sorts along the **last** dimension of [`Tensor`]s (any device the adapter supports, any
/// layout). Sorts are stable (equal keys keep their order, also descending) with a total
/// order: NaN last ascending (first descending), `-0.0` equal to `+0.0`. Indices are u32
/// positions along the last dimension, as candle's `arg_sort_last_dim`. No gradient.
pub trait SortExt {
    /// Sorted values and their original positions (candle's `sort_last_dim`, stable and for
    /// rows of any length; `torch.sort(stable=True)`).
    ///
    /// # Errors
    ///
    /// candle's `UnexpectedNumberOfDims` for a 0-d tensor; otherwise candle's
    /// `DeviceMismatchBinaryOp` for tensors on different devices, `UnsupportedDTypeForOp` for a
    /// dtype the op does not take, an error of candle's for a device without the adapter's path
    /// (`Msg`). On a GPU device, a cubeprim [`Error`](crate::Error) the device path returns,
    /// wrapped in candle's `Error::Wrapped`.
    fn sort_stable(&self, asc: bool) -> Result<(Tensor, Tensor)>;
    /// Sorted values only.
    ///
    /// # Errors
    ///
    /// As [`sort_stable`](Self::sort_stable).
    fn sort_stable_values(&self, asc: bool) -> Result<Tensor>;
    /// The positions that sort each row (candle's `arg_sort_last_dim`, stable and for rows of
    /// any length; `torch.argsort(stable=True)`).
    ///
    /// # Errors
    ///
    /// As [`sort_stable`](Self::sort_stable).
    fn arg_sort_stable(&self, asc: bool) -> Result<Tensor>;
    /// The `k` largest of each row, largest first, and their positions; ties keep the earlier
    /// position first (`torch.topk(k)`).
    ///
    /// # Errors
    ///
    /// candle's `Msg` for `k` past the last dimension; otherwise as
    /// [`sort_stable`](Self::sort_stable).
    fn top_k(&self, k: usize) -> Result<(Tensor, Tensor)>;
    /// The `k` smallest of each row, smallest first (`torch.topk(k, largest=False)`).
    ///
    /// # Errors
    ///
    /// As [`top_k`](Self::top_k).
    fn bottom_k(&self, k: usize) -> Result<(Tensor, Tensor)>;
    /// For each of `values`, where inserting it keeps its row of `self` (sorted ascending
    /// along the last dimension) sorted (`torch.searchsorted(self, values, side=..)`): `self`
    /// is 1-D (shared by every value, `values` of any shape) or `[.., n]` with `values`
    /// `[.., m]` of the same leading dimensions. u32, `values`' shape.
    ///
    /// # Errors
    ///
    /// candle's `ShapeMismatchBinaryOp` for shapes that do not pair up as above,
    /// `DTypeMismatchBinaryOp` for `values` of another dtype; otherwise as
    /// [`sort_stable`](Self::sort_stable).
    fn search_sorted(&self, values: &Tensor, side: Side) -> Result<Tensor>;
    /// The keys (`self`) sorted, stably, and `values` (the keys' shape, any dtype) moved with
    /// them: (sorted keys, permuted values) (`torch.sort(stable=True)` then `gather` of the
    /// values by the indices; CUB's `SortPairs`).
    ///
    /// # Errors
    ///
    /// candle's `ShapeMismatchBinaryOp` for `values` of another shape; otherwise as
    /// [`sort_stable`](Self::sort_stable).
    fn sort_pairs(&self, values: &Tensor, asc: bool) -> Result<(Tensor, Tensor)>;
    /// For each element of `self` (any shape), the index of its bucket among the sorted 1-D
    /// `boundaries` (`torch.bucketize(self, boundaries, right=..)`): with `right == false`,
    /// `i` such that `boundaries[i-1] < x <= boundaries[i]` (searchsorted side left), with
    /// `right == true`, `boundaries[i-1] <= x < boundaries[i]`. u32, `self`'s shape.
    ///
    /// # Errors
    ///
    /// candle's `UnexpectedNumberOfDims` for `boundaries` that are not 1-D,
    /// `DTypeMismatchBinaryOp` for `boundaries` of another dtype; otherwise as
    /// [`sort_stable`](Self::sort_stable).
    fn bucketize(&self, boundaries: &Tensor, right: bool) -> Result<Tensor>;
}

impl SortExt for Tensor {
    fn sort_stable(&self, asc: bool) -> Result<(Tensor, Tensor)> {
        let [v, i] = sort(self, asc, true, true)?;
        Ok((v, i))
    }
    fn sort_stable_values(&self, asc: bool) -> Result<Tensor> {
        let [v] = sort(self, asc, true, false)?;
        Ok(v)
    }
    fn arg_sort_stable(&self, asc: bool) -> Result<Tensor> {
        let [i] = sort(self, asc, false, true)?;
        Ok(i)
    }
    fn top_k(&self, k: usize) -> Result<(Tensor, Tensor)> {
        top_k(self, k, true)
    }
    fn bottom_k(&self, k: usize) -> Result<(Tensor, Tensor)> {
        top_k(self, k, false)
    }
    fn search_sorted(&self, values: &Tensor, side: Side) -> Result<Tensor> {
        let (sr, vr) = (self.rank(), values.rank());
        let rows_match =
            sr >= 1 && (sr == 1 || (vr == sr && self.dims()[..sr - 1] == values.dims()[..vr - 1]));
        if !rows_match {
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
        let ((sorted, _), (values, _)) = (widen(self)?, widen(values)?);
        let [i] = outputs(apply(&SearchSorted { side }, &[&sorted, &values])?);
        Ok(i)
    }
    fn sort_pairs(&self, values: &Tensor, asc: bool) -> Result<(Tensor, Tensor)> {
        last_dim(self)?;
        if self.shape() != values.shape() {
            return Err(candle_core::Error::ShapeMismatchBinaryOp {
                lhs: self.shape().clone(),
                rhs: values.shape().clone(),
                op: "sort_pairs",
            }
            .bt());
        }
        let (keys, dtype) = widen(self)?;
        let vals = widen_for_device(values)?;
        let [k, v] = outputs(apply(&SortPairs { asc }, &[&keys, &vals])?);
        Ok((k.to_dtype(dtype)?, v.to_dtype(values.dtype())?))
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
        let ((input, _), (boundaries, _)) = (widen(self)?, widen(boundaries)?);
        let [i] = outputs(apply(&Bucketize { right }, &[&input, &boundaries])?);
        Ok(i)
    }
}

/// Sorts need a last dimension.
fn last_dim(t: &Tensor) -> Result<()> {
    if t.rank() == 0 {
        return Err(candle_core::Error::UnexpectedNumberOfDims {
            expected: 1,
            got: 0,
            shape: t.shape().clone(),
        }
        .bt());
    }
    Ok(())
}

/// Runs a sort op on `t` widened, the values (first output, when `values`) cast back.
fn sort<const N: usize>(t: &Tensor, asc: bool, values: bool, indices: bool) -> Result<[Tensor; N]> {
    last_dim(t)?;
    let (wide, dtype) = widen(t)?;
    let op = Sort {
        asc,
        values,
        indices,
    };
    let mut out = apply(&op, &[&wide])?;
    if values {
        out[0] = out[0].to_dtype(dtype)?;
    }
    Ok(outputs(out))
}

fn top_k(t: &Tensor, k: usize, largest: bool) -> Result<(Tensor, Tensor)> {
    last_dim(t)?;
    let n = t.dims()[t.rank() - 1];
    if k > n {
        return Err(candle_core::Error::Msg(format!(
            "top_k: k = {k} is larger than the last dimension ({n})"
        )));
    }
    let (wide, dtype) = widen(t)?;
    let [v, i] = outputs(apply(&TopK { k, largest }, &[&wide])?);
    Ok((v.to_dtype(dtype)?, i))
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
