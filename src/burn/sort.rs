//! The sort family on burn tensors: [`SortExt`] and its ops (sort, argsort, sort with
//! indices, top-k along the last axis; searchsorted).
//!
//! The device sorts along the last axis; the extension methods move `dim` there and back
//! with `swap_dims` (a view, no copy). Indices are computed as `u32` and cast to the
//! backend's int dtype.

use super::backend::{run, NumericKind, PrimBackend, PrimKind};
use super::grad::Saved;
use super::host::{with_host_data, HostTensor, IntoHostData};
use super::op::{check_inputs, device_dtype, OutputSpec, PrimOp, TensorMeta};
use super::scan::take;
use crate::cpu::{self, SortElement};
use crate::{DeviceTensor, Error, IndexType, Payload, Result, Side, SortOptions, Workspace};
use ::burn::tensor::ops::FloatTensor;
use ::burn::tensor::{AsIndex, Int, Tensor};
use cubecl::prelude::*;
use rayon::prelude::*;

/// Which outputs a [`Sort`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortOutputs {
    /// The sorted values only (`sort`).
    Values,
    /// The sorting permutation only (`argsort`).
    Indices,
    /// Values, then indices (`sort_with_indices`).
    Both,
}

/// A stable sort along the last axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sort {
    /// Largest first (equal keys still keep their order).
    pub descending: bool,
    /// What the op returns.
    pub outputs: SortOutputs,
}

/// The `k` largest (or smallest) along the last axis with their positions, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TopK {
    /// How many to keep per row (at most the row length).
    pub k: usize,
    /// The largest (`true`) or the smallest.
    pub largest: bool,
}

/// Insertion positions of queries in rows sorted ascending (`torch.searchsorted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SearchSorted {
    /// Which insertion point among equal keys.
    pub side: Side,
}

/// One float or int input of rank ≥ 1 (the keys of the sort family).
fn keys(inputs: &[TensorMeta], count: usize) -> Result<()> {
    check_inputs(inputs, count, false, "sorts")?;
    match inputs.iter().find(|x| x.rank() == 0) {
        Some(_) => Err(Error::AxisOutOfRange { axis: -1, rank: 0 }),
        None => Ok(()),
    }
}

/// Rows of `n` of `data`, handed to rayon in chunks of whole rows.
fn row_chunks(n: usize) -> usize {
    ((1 << 14) / n.max(1)).max(1) * n.max(1)
}

/// Stable row-wise argsort on the host, parallel over rows.
fn argsort_host<E: SortElement>(data: &[E], n: usize, descending: bool) -> Vec<u32> {
    if data.is_empty() {
        return Vec::new();
    }
    let mut order = vec![0u32; data.len()];
    order
        .par_chunks_mut(row_chunks(n))
        .zip(data.par_chunks(row_chunks(n)))
        .for_each(|(o, x)| o.copy_from_slice(&cpu::argsort_rows(x, n, descending)));
    order
}

impl PrimOp for Sort {
    const NAME: &'static str = "cubeprim::sort";

    fn outputs(&self, inputs: &[TensorMeta]) -> Result<Vec<OutputSpec>> {
        keys(inputs, 1)?;
        let idx = OutputSpec::index(inputs[0].shape.clone());
        Ok(match self.outputs {
            SortOutputs::Values => vec![OutputSpec::like(inputs, 0)],
            SortOutputs::Indices => vec![idx],
            SortOutputs::Both => vec![OutputSpec::like(inputs, 0), idx],
        })
    }

    fn check_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[TensorMeta],
    ) -> Result<()> {
        let dtype = device_dtype(client, &inputs[0])?;
        let payload = match self.outputs {
            SortOutputs::Values => Payload::None,
            _ => Payload::Indices(IndexType::U32),
        };
        crate::sort_workspace_bytes(client, &inputs[0].shape, dtype, payload, false, self.opts())
            .map(drop)
    }

    fn run_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[DeviceTensor<R>],
        ws: &mut Workspace<R>,
    ) -> Result<Vec<DeviceTensor<R>>> {
        let (x, opts, u32) = (&inputs[0], self.opts(), IndexType::U32);
        Ok(match self.outputs {
            SortOutputs::Values => vec![crate::sort(client, x, opts, ws)?],
            SortOutputs::Indices => vec![crate::argsort(client, x, u32, opts, ws)?],
            SortOutputs::Both => {
                let (v, i) = crate::sort_with_indices(client, x, u32, opts, ws)?;
                vec![v, i]
            }
        })
    }

    fn run_host(&self, inputs: &[HostTensor<'_>]) -> Result<Vec<HostTensor<'static>>> {
        let x = &inputs[0];
        let shape = x.shape.clone();
        let n = *shape.last().expect("rank >= 1");
        with_host_data!(&x.data, |v: E| {
            let order = argsort_host::<E>(v, n, self.descending);
            let values = || -> Result<HostTensor<'static>> {
                Ok(HostTensor {
                    shape: shape.clone(),
                    data: E::into_host(cpu::permute_rows(v, n, &order)?),
                })
            };
            let indices = || HostTensor {
                shape: shape.clone(),
                data: u32::into_host(order.clone()),
            };
            Ok(match self.outputs {
                SortOutputs::Values => vec![values()?],
                SortOutputs::Indices => vec![indices()],
                SortOutputs::Both => vec![values()?, indices()],
            })
        })
    }

    fn grad_output(&self) -> Option<usize> {
        (self.outputs != SortOutputs::Indices).then_some(0)
    }

    fn backward<B: PrimBackend>(
        &self,
        saved: &Saved<B>,
        grad: FloatTensor<B>,
    ) -> Vec<Option<FloatTensor<B>>> {
        super::grad::sort_backward(self, saved, grad)
    }
}

impl Sort {
    fn opts(&self) -> SortOptions {
        SortOptions {
            descending: self.descending,
            ..Default::default()
        }
    }
}

impl PrimOp for TopK {
    const NAME: &'static str = "cubeprim::top_k";

    fn outputs(&self, inputs: &[TensorMeta]) -> Result<Vec<OutputSpec>> {
        keys(inputs, 1)?;
        let mut shape = inputs[0].shape.clone();
        let n = shape.last_mut().expect("rank >= 1");
        if self.k > *n {
            return Err(Error::LengthMismatch {
                expected: *n,
                got: self.k,
            });
        }
        *n = self.k;
        let mut values = OutputSpec::like(inputs, 0);
        values.shape = shape.clone();
        Ok(vec![values, OutputSpec::index(shape)])
    }

    fn check_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[TensorMeta],
    ) -> Result<()> {
        let dtype = device_dtype(client, &inputs[0])?;
        crate::top_k_workspace_bytes(client, &inputs[0].shape, dtype, IndexType::U32).map(drop)
    }

    fn run_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[DeviceTensor<R>],
        ws: &mut Workspace<R>,
    ) -> Result<Vec<DeviceTensor<R>>> {
        let (v, i) = crate::top_k(client, &inputs[0], self.k, self.largest, IndexType::U32, ws)?;
        Ok(vec![v, i])
    }

    fn run_host(&self, inputs: &[HostTensor<'_>]) -> Result<Vec<HostTensor<'static>>> {
        let x = &inputs[0];
        let n = *x.shape.last().expect("rank >= 1");
        let mut shape = x.shape.clone();
        *shape.last_mut().expect("rank >= 1") = self.k;
        let k = self.k;
        with_host_data!(&x.data, |v: E| {
            let order = argsort_host::<E>(v, n, self.largest);
            let idx: Vec<u32> = order
                .chunks(n.max(1))
                .flat_map(|row| row[..k].iter().copied())
                .collect();
            let k_rows = k.max(1);
            let values: Vec<E> = idx
                .iter()
                .enumerate()
                .map(|(i, &j)| v[i / k_rows * n + j as usize])
                .collect();
            Ok(vec![
                HostTensor {
                    shape: shape.clone(),
                    data: E::into_host(values),
                },
                HostTensor {
                    shape,
                    data: u32::into_host(idx),
                },
            ])
        })
    }

    fn grad_output(&self) -> Option<usize> {
        Some(0)
    }

    fn backward<B: PrimBackend>(
        &self,
        saved: &Saved<B>,
        grad: FloatTensor<B>,
    ) -> Vec<Option<FloatTensor<B>>> {
        super::grad::top_k_backward(self, saved, grad)
    }
}

impl PrimOp for SearchSorted {
    const NAME: &'static str = "cubeprim::searchsorted";

    fn needs_contiguous(&self) -> bool {
        true
    }

    fn outputs(&self, inputs: &[TensorMeta]) -> Result<Vec<OutputSpec>> {
        keys(inputs, 2)?;
        let (sorted, queries) = (&inputs[0], &inputs[1]);
        if sorted.dtype != queries.dtype {
            return Err(Error::UnsupportedDType {
                dtype: queries.prim_dtype()?,
                reason: format!(
                    "queries must have the sorted tensor's dtype {:?}",
                    sorted.dtype
                ),
            });
        }
        let lead = &sorted.shape[..sorted.rank() - 1];
        if sorted.rank() > 1
            && (queries.rank() != sorted.rank() || &queries.shape[..queries.rank() - 1] != lead)
        {
            return Err(Error::ShapeMismatch {
                expected: sorted.shape.clone(),
                got: queries.shape.clone(),
            });
        }
        Ok(vec![OutputSpec::index(queries.shape.clone())])
    }

    fn check_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[TensorMeta],
    ) -> Result<()> {
        device_dtype(client, &inputs[0]).map(drop)
    }

    fn run_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[DeviceTensor<R>],
        _ws: &mut Workspace<R>,
    ) -> Result<Vec<DeviceTensor<R>>> {
        let out = crate::searchsorted(client, &inputs[0], &inputs[1], self.side, IndexType::U32)?;
        Ok(vec![out])
    }

    fn run_host(&self, inputs: &[HostTensor<'_>]) -> Result<Vec<HostTensor<'static>>> {
        let (sorted, queries) = (&inputs[0], &inputs[1]);
        let n = *sorted.shape.last().expect("rank >= 1");
        let m = *queries.shape.last().unwrap_or(&1);
        let right = self.side == Side::Right;
        let pos = with_host_data!(&sorted.data, |s: E| {
            let q = E::slice_of(&queries.data).ok_or(Error::UnsupportedDType {
                dtype: queries.data.dtype(),
                reason: "queries must have the sorted tensor's dtype".into(),
            })?;
            cpu::searchsorted::<E>(s, n, q, m, right)
        })?;
        Ok(vec![HostTensor {
            shape: queries.shape.clone(),
            data: u32::into_host(pos),
        }])
    }
}

/// Sorts, arg-sorts and top-k on burn float and int tensors, on any [`PrimBackend`].
///
/// Sorts are stable (equal keys keep their order), NaN sorts last ascending and first
/// descending, `-0.0` equal to `+0.0`. `dim` may be negative. Indices have the backend's int
/// dtype. Invalid arguments panic, as burn's methods do.
pub trait SortExt<B: PrimBackend, const D: usize, K: NumericKind<B>>: Sized {
    /// Sorted along `dim`, ascending (burn's `sort`).
    ///
    /// # Panics
    ///
    /// Before anything is queued (burn's convention for invalid arguments), with the message of a
    /// cubeprim [`Error`](crate::Error): [`Error::AxisOutOfRange`](crate::Error::AxisOutOfRange)
    /// for a `dim` out of range, [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for a
    /// dtype cubeprim does not take, and, on a device, where the op cannot run there (for example
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for bf16 on Vulkan).
    fn prim_sort(self, dim: impl AsIndex) -> Self;
    /// Sorted along `dim`, descending (burn's `sort_descending`).
    ///
    /// # Panics
    ///
    /// As [`prim_sort`](Self::prim_sort).
    fn prim_sort_descending(self, dim: impl AsIndex) -> Self;
    /// Sorted values and where each came from (burn's `sort_with_indices`).
    ///
    /// # Panics
    ///
    /// As [`prim_sort`](Self::prim_sort).
    fn prim_sort_with_indices(self, dim: impl AsIndex) -> (Self, Tensor<B, D, Int>);
    /// Descending, with indices (burn's `sort_descending_with_indices`).
    ///
    /// # Panics
    ///
    /// As [`prim_sort`](Self::prim_sort).
    fn prim_sort_descending_with_indices(self, dim: impl AsIndex) -> (Self, Tensor<B, D, Int>);
    /// The stable sorting permutation along `dim` (burn's `argsort`).
    ///
    /// # Panics
    ///
    /// As [`prim_sort`](Self::prim_sort).
    fn prim_argsort(self, dim: impl AsIndex) -> Tensor<B, D, Int>;
    /// The stable descending permutation (burn's `argsort_descending`).
    ///
    /// # Panics
    ///
    /// As [`prim_sort`](Self::prim_sort).
    fn prim_argsort_descending(self, dim: impl AsIndex) -> Tensor<B, D, Int>;
    /// The `k` largest along `dim`, largest first (burn's `topk`).
    ///
    /// # Panics
    ///
    /// As [`prim_sort`](Self::prim_sort), and with
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) for `k` past the length of `dim`.
    fn prim_topk(self, k: usize, dim: impl AsIndex) -> Self;
    /// The `k` largest with their indices (burn's `topk_with_indices`); ties: earlier first.
    ///
    /// # Panics
    ///
    /// As [`prim_topk`](Self::prim_topk).
    fn prim_topk_with_indices(self, k: usize, dim: impl AsIndex) -> (Self, Tensor<B, D, Int>);
    /// The `k` smallest with their indices, smallest first (`torch.topk(largest=False)`).
    ///
    /// # Panics
    ///
    /// As [`prim_topk`](Self::prim_topk).
    fn prim_bottomk_with_indices(self, k: usize, dim: impl AsIndex) -> (Self, Tensor<B, D, Int>);
    /// For each of `values`, its insertion position in `self`, sorted ascending along its
    /// last axis (`torch.searchsorted(self, values, side=..)`). `self` is 1-D (shared by all
    /// values) or has `values`' leading shape.
    ///
    /// # Panics
    ///
    /// Before anything is queued (burn's convention for invalid arguments), with the message of a
    /// cubeprim [`Error`](crate::Error): [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) for
    /// `values` whose leading shape is not `self`'s,
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for `values` of another dtype or
    /// a dtype cubeprim does not take, and, on a device, where the op cannot run there (for example
    /// [`Error::UnsupportedDType`](crate::Error::UnsupportedDType) for bf16 on Vulkan).
    fn prim_searchsorted<const D2: usize>(
        self,
        values: Tensor<B, D2, K>,
        side: Side,
    ) -> Tensor<B, D2, Int>;
}

/// `x` with `dim` moved last (a view), and whether it moved.
fn to_last<B: PrimBackend, const D: usize, K: NumericKind<B>>(
    x: Tensor<B, D, K>,
    dim: impl AsIndex,
) -> (Tensor<B, D, K>, usize) {
    let dim = dim.expect_dim_index(D);
    if dim + 1 == D {
        (x, dim)
    } else {
        (x.swap_dims(dim, D - 1), dim)
    }
}

fn from_last<B: PrimBackend, const D: usize, K: NumericKind<B>>(
    x: Tensor<B, D, K>,
    dim: usize,
) -> Tensor<B, D, K> {
    if dim + 1 == D {
        x
    } else {
        x.swap_dims(dim, D - 1)
    }
}

/// Values and / or indices of a sort.
type SortResult<B, const D: usize, K> = (Option<Tensor<B, D, K>>, Option<Tensor<B, D, Int>>);

fn sort_impl<B: PrimBackend, const D: usize, K: NumericKind<B>>(
    x: Tensor<B, D, K>,
    dim: impl AsIndex,
    descending: bool,
    outputs: SortOutputs,
) -> SortResult<B, D, K> {
    let (x, dim) = to_last(x, dim);
    let op = Sort {
        descending,
        outputs,
    };
    let mut outs = run::<B, _>(&op, vec![K::into_any(x.into_primitive())]).into_iter();
    let values = (outputs != SortOutputs::Indices).then(|| {
        from_last(
            Tensor::from_primitive(K::from_any(outs.next().unwrap())),
            dim,
        )
    });
    let indices = (outputs != SortOutputs::Values).then(|| {
        from_last(
            Tensor::from_primitive(<Int as PrimKind<B>>::from_any(outs.next().unwrap())),
            dim,
        )
    });
    (values, indices)
}

fn top_k_impl<B: PrimBackend, const D: usize, K: NumericKind<B>>(
    x: Tensor<B, D, K>,
    k: usize,
    dim: impl AsIndex,
    largest: bool,
) -> (Tensor<B, D, K>, Tensor<B, D, Int>) {
    let (x, dim) = to_last(x, dim);
    let op = TopK { k, largest };
    let [v, i] = take(run::<B, _>(&op, vec![K::into_any(x.into_primitive())]));
    (
        from_last(Tensor::from_primitive(K::from_any(v)), dim),
        from_last(
            Tensor::from_primitive(<Int as PrimKind<B>>::from_any(i)),
            dim,
        ),
    )
}

impl<B: PrimBackend, const D: usize, K: NumericKind<B>> SortExt<B, D, K> for Tensor<B, D, K> {
    fn prim_sort(self, dim: impl AsIndex) -> Self {
        sort_impl(self, dim, false, SortOutputs::Values).0.unwrap()
    }
    fn prim_sort_descending(self, dim: impl AsIndex) -> Self {
        sort_impl(self, dim, true, SortOutputs::Values).0.unwrap()
    }
    fn prim_sort_with_indices(self, dim: impl AsIndex) -> (Self, Tensor<B, D, Int>) {
        let (v, i) = sort_impl(self, dim, false, SortOutputs::Both);
        (v.unwrap(), i.unwrap())
    }
    fn prim_sort_descending_with_indices(self, dim: impl AsIndex) -> (Self, Tensor<B, D, Int>) {
        let (v, i) = sort_impl(self, dim, true, SortOutputs::Both);
        (v.unwrap(), i.unwrap())
    }
    fn prim_argsort(self, dim: impl AsIndex) -> Tensor<B, D, Int> {
        sort_impl(self, dim, false, SortOutputs::Indices).1.unwrap()
    }
    fn prim_argsort_descending(self, dim: impl AsIndex) -> Tensor<B, D, Int> {
        sort_impl(self, dim, true, SortOutputs::Indices).1.unwrap()
    }
    fn prim_topk(self, k: usize, dim: impl AsIndex) -> Self {
        top_k_impl(self, k, dim, true).0
    }
    fn prim_topk_with_indices(self, k: usize, dim: impl AsIndex) -> (Self, Tensor<B, D, Int>) {
        top_k_impl(self, k, dim, true)
    }
    fn prim_bottomk_with_indices(self, k: usize, dim: impl AsIndex) -> (Self, Tensor<B, D, Int>) {
        top_k_impl(self, k, dim, false)
    }
    fn prim_searchsorted<const D2: usize>(
        self,
        values: Tensor<B, D2, K>,
        side: Side,
    ) -> Tensor<B, D2, Int> {
        let op = SearchSorted { side };
        let inputs = vec![
            K::into_any(self.into_primitive()),
            K::into_any(values.into_primitive()),
        ];
        let [pos] = take(run::<B, _>(&op, inputs));
        Tensor::from_primitive(<Int as PrimKind<B>>::from_any(pos))
    }
}
