//! Backward passes of the differentiable candle ops (PyTorch's semantics, as the burn
//! adapter's `Autodiff` ones).
//!
//! candle records a graph node only through a custom op (`Tensor::apply_op1_arc`), whose
//! `bwd` its backprop calls. The scans are such an op already ([`super::scan`]); the other
//! differentiable ops run as [`PrimOp`](super::ops::PrimOp)s, and when their input tracks a
//! gradient [`apply_tracked`](super::ops::apply_tracked) hands the differentiable output to a
//! [`Node`], a custom op of that input whose forward returns the output's storage (moved, no
//! copy) and whose backward is a [`Backward`].
//!
//! Every backward pass is made of cubeprim's own candle ops (scans, reductions,
//! reduce_by_key, unique_consecutive's inverse) and candle's device ops (gather,
//! scatter_add, where_cond, narrow / cat, broadcast, arithmetic), with no host read:
//! - scans: sum → the sum scan of the gradient in the other direction; prod → PyTorch's
//!   `cumprod_backward` (correct with zeros); max / min → the gradient scattered to the element
//!   the forward's indices pick (ties: the latest, NaN: the NaN). An exclusive prod scan is the
//!   inclusive one of the input shifted by one with 1 shifted in; logsumexp → PyTorch's
//!   `logcumsumexp_backward` (the positive and negative parts of the gradient each summed in
//!   log space by a logsumexp scan in the other direction); reverse scans swap the
//!   directions of the scans in the formulas (no flip);
//! - sorts and top-k / bottom-k → the gradient scattered back through the indices;
//! - masked_select (and `_padded`'s values) → the gradient of kept element `j` to the input's
//!   `j`-th set position (a gather at the exclusive count of set flags);
//! - reductions: sum → broadcast; prod → the product of the other elements (PyTorch's handling
//!   of zeros); max / min → shared evenly among the elements equal to the result
//!   (`torch.amax` / `torch.amin`); logsumexp → `grad * exp(x - y)`;
//! - reduce_by_key's folds → the same per run of keys.

use super::ops::{dtype_of, u32_len};
use super::{ReduceExt, RunsExt, ScanExt};
use crate::dtype::lowest_finite;
use crate::{ReduceOp, ScanOp, ScanOptions};
use candle_core::{CpuStorage, CustomOp1, Layout, Result, Shape, Storage, Tensor, D};
use std::sync::Mutex;

/// The backward pass of a [`Node`]: what it needs beyond the op's input and output.
pub(crate) enum Backward {
    /// A sort or top-k along the last dimension: the gradient of output `j` goes to the input
    /// element at `indices[j]` (u32, the output's shape).
    Scatter { indices: Tensor },
    /// masked_select (padded or not) of the input by `mask` (the input's shape, any dtype).
    Select { mask: Tensor },
    /// A reduction along `axis` (removed from the shape).
    Reduce { axis: usize, op: ReduceOp },
    /// reduce_by_key's folds over the runs of `keys` (the input's shape).
    ByKey { keys: Tensor, op: ReduceOp },
}

/// One differentiable output of a [`PrimOp`](super::ops::PrimOp) as a candle graph node of its
/// input: the forward returns the output computed beforehand (its storage moved out, once).
pub(crate) struct Node {
    out: Mutex<Option<(Storage, Shape)>>,
    bwd: Backward,
}

impl Node {
    pub(crate) fn new(out: (Storage, Shape), bwd: Backward) -> Self {
        Self {
            out: Mutex::new(Some(out)),
            bwd,
        }
    }

    fn take(&self) -> Result<(Storage, Shape)> {
        self.out
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| candle_core::Error::Msg("cubeprim: a graph node applied twice".into()))
    }
}

fn other_device() -> candle_core::Error {
    candle_core::Error::Msg("cubeprim: a graph node's output on another device".into())
}

impl CustomOp1 for Node {
    fn name(&self) -> &'static str {
        match self.bwd {
            Backward::Scatter { .. } => "cubeprim-sort",
            Backward::Select { .. } => "cubeprim-masked-select",
            Backward::Reduce { .. } => "cubeprim-reduce",
            Backward::ByKey { .. } => "cubeprim-reduce-by-key",
        }
    }

    fn cpu_fwd(&self, _: &CpuStorage, _: &Layout) -> Result<(CpuStorage, Shape)> {
        match self.take()? {
            (Storage::Cpu(s), shape) => Ok((s, shape)),
            _ => Err(other_device()),
        }
    }

    #[cfg(feature = "candle-cuda")]
    fn cuda_fwd(
        &self,
        _: &candle_core::CudaStorage,
        _: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        match self.take()? {
            (Storage::Cuda(s), shape) => Ok((s, shape)),
            _ => Err(other_device()),
        }
    }

    #[cfg(all(feature = "candle-metal", target_os = "macos"))]
    fn metal_fwd(
        &self,
        _: &candle_core::MetalStorage,
        _: &Layout,
    ) -> Result<(candle_core::MetalStorage, Shape)> {
        match self.take()? {
            (Storage::Metal(s), shape) => Ok((s, shape)),
            _ => Err(other_device()),
        }
    }

    fn bwd(&self, arg: &Tensor, res: &Tensor, grad: &Tensor) -> Result<Option<Tensor>> {
        let (x, y) = (arg.detach(), res.detach());
        if x.elem_count() == 0 {
            return x.zeros_like().map(Some);
        }
        let gx = match &self.bwd {
            Backward::Scatter { indices } => {
                x.zeros_like()?
                    .scatter_add(indices, &grad.contiguous()?, D::Minus1)?
            }
            Backward::Select { mask } => select_grad(&x, mask, grad)?,
            Backward::Reduce { axis, op } => reduce_grad(&x, &y, grad, *axis, *op)?,
            Backward::ByKey { keys, op } => by_key_grad(keys, &x, &y, grad, *op)?,
        };
        Ok(Some(gx))
    }
}

/// Options of an inclusive scan in the direction `reverse`.
fn dir(reverse: bool) -> ScanOptions {
    ScanOptions {
        reverse,
        ..ScanOptions::default()
    }
}

/// The gradient of a scan of `x` (output `y`) along `axis`, from the output's gradient `g`;
/// `indices`: the forward's indices of a max / min scan, where it made them.
pub(crate) fn scan_grad(
    x: &Tensor,
    y: &Tensor,
    g: &Tensor,
    axis: usize,
    op: ScanOp,
    opts: ScanOptions,
    indices: Option<Tensor>,
) -> Result<Tensor> {
    if x.elem_count() == 0 {
        return x.zeros_like();
    }
    match op {
        // y_i is the sum over j at or before i (in scan order): the gradient of x_j is the sum
        // of g_i over i at or after j, the same kind of scan in the other direction.
        ScanOp::Sum => g.scan(
            axis,
            ScanOp::Sum,
            ScanOptions {
                reverse: !opts.reverse,
                ..opts
            },
        ),
        ScanOp::Prod if opts.exclusive => {
            let xs = shift_in(x, axis, opts.reverse)?;
            let gs = cumprod_grad(&xs, y, g, axis, opts.reverse)?;
            shift_out(&gs, axis, opts.reverse)
        }
        ScanOp::Prod => cumprod_grad(x, y, g, axis, opts.reverse),
        ScanOp::Max | ScanOp::Min => {
            let idx = match indices {
                Some(i) => i,
                None => x.scan_with_indices(axis, op, opts)?.1,
            };
            let g = g.contiguous()?;
            let (idx, g) = if opts.exclusive {
                // The first slot (in scan order) picks no element: `u32::MAX`.
                let none = idx.eq(u32::MAX)?;
                (
                    none.where_cond(&idx.zeros_like()?, &idx)?,
                    none.where_cond(&g.zeros_like()?, &g)?,
                )
            } else {
                (idx, g)
            };
            x.zeros_like()?.scatter_add(&idx, &g, axis)
        }
        ScanOp::LogSumExp => logcumsumexp_grad(
            x,
            y,
            g,
            axis,
            ScanOptions {
                reverse: !opts.reverse,
                ..opts
            },
        ),
    }
}

/// The gradient of a logcumsumexp `y` of `x` (PyTorch's `logcumsumexp_backward`):
/// `dx_j = sum_i g_i exp(x_j - y_i)` over the `i` whose `y_i` includes `x_j`, that is
/// `exp(x_j + back(log g - y)_j)` with `back` the logsumexp scan in the other direction
/// (`back`: those options), for the positive and the negative parts of `g` apart so that
/// every log is of a positive number. A zero part is the lowest finite value, not -inf (as
/// PyTorch), so that `log g - y` has no `-inf - -inf`.
fn logcumsumexp_grad(
    x: &Tensor,
    y: &Tensor,
    g: &Tensor,
    axis: usize,
    back: ScanOptions,
) -> Result<Tensor> {
    let floor = dtype_of(x.dtype()).map_or(f64::from(f32::MIN), lowest_finite);
    let lowest = x.ones_like()?.affine(floor, 0.0)?;
    let log_abs = g.abs()?.log()?;
    let part = |mask: Tensor| -> Result<Tensor> {
        let lg = mask.where_cond(&log_abs, &lowest)?;
        lg.sub(y)?
            .scan(axis, ScanOp::LogSumExp, back)?
            .add(x)?
            .exp()
    };
    part(g.gt(0.0)?)?.sub(&part(g.lt(0.0)?)?)
}

/// `x` shifted one place along `axis` in scan order (`reverse`: towards the start), 1 shifted
/// in and the element shifted out dropped: what an exclusive product scan multiplies.
fn shift_in(x: &Tensor, axis: usize, reverse: bool) -> Result<Tensor> {
    let n = x.dims()[axis];
    let one = x.narrow(axis, 0, 1)?.ones_like()?;
    if n == 1 {
        return Ok(one);
    }
    if reverse {
        Tensor::cat(&[&x.narrow(axis, 1, n - 1)?, &one], axis)
    } else {
        Tensor::cat(&[&one, &x.narrow(axis, 0, n - 1)?], axis)
    }
}

/// The gradient of [`shift_in`]'s input from that of its output: each element's is that of
/// the slot it moved to, the dropped element's zero.
fn shift_out(g: &Tensor, axis: usize, reverse: bool) -> Result<Tensor> {
    let n = g.dims()[axis];
    let zero = g.narrow(axis, 0, 1)?.zeros_like()?;
    if n == 1 {
        return Ok(zero);
    }
    if reverse {
        Tensor::cat(&[&zero, &g.narrow(axis, 0, n - 1)?], axis)
    } else {
        Tensor::cat(&[&g.narrow(axis, 1, n - 1)?, &zero], axis)
    }
}

/// The gradient of an inclusive cumprod `y` of `x` along `axis` in the direction `reverse`
/// (PyTorch's `cumprod_backward`): in scan order, before the first zero of a line
/// `sum_{j>=i} g_j y_j / x_i`; at the first zero `k`, `sum_{j>=k} g_j prod_{m<=j, m!=k} x_m`;
/// after it, zero.
fn cumprod_grad(x: &Tensor, y: &Tensor, g: &Tensor, axis: usize, reverse: bool) -> Result<Tensor> {
    let zero = x.eq(0.0)?;
    let zeros_so_far = zero
        .to_dtype(x.dtype())?
        .scan(axis, ScanOp::Sum, dir(reverse))?;
    let before = zeros_so_far.eq(0.0)?;
    let first = zero.mul(&zeros_so_far.eq(1.0)?)?;
    let back = |t: Tensor| t.scan(axis, ScanOp::Sum, dir(!reverse));
    let a = back(g.mul(y)?)?.div(x)?;
    let x1 = first.where_cond(&x.ones_like()?, x)?;
    let y1 = x1.scan(axis, ScanOp::Prod, dir(reverse))?;
    let b = back(g.mul(&y1)?)?;
    let out = before.where_cond(&a, &x.zeros_like()?)?;
    first.where_cond(&b, &out)
}

/// masked_select's gradient: the gradient of kept element `j` goes to the `j`-th set
/// position, a gather at the exclusive count of set flags before each position.
fn select_grad(x: &Tensor, mask: &Tensor, g: &Tensor) -> Result<Tensor> {
    u32_len(x.elem_count(), "masked_select's input")?;
    let set = mask.ne(0.0)?.flatten_all()?;
    let pos = set
        .to_dtype(candle_core::DType::U32)?
        .exclusive_scan_sum(0)?;
    // An unset position after the last set one counts every kept element: one slot more.
    let one = Tensor::zeros(1, g.dtype(), g.device())?;
    let g = Tensor::cat(&[&g.flatten_all()?, &one], 0)?;
    let picked = g.gather(&pos, 0)?;
    set.where_cond(&picked, &picked.zeros_like()?)?
        .reshape(x.shape())
}

/// `t` (the reduction's output shape, `axis` removed) back to `shape`, broadcast.
fn expand(t: &Tensor, axis: usize, shape: &Shape) -> Result<Tensor> {
    t.unsqueeze(axis)?.broadcast_as(shape)
}

/// Where `x` equals `y`, as 0 / 1 of `x`'s dtype (both NaN counts as equal: the extreme of a
/// line holding a NaN is NaN).
fn hits(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let dt = x.dtype();
    let eq = x.eq(y)?.to_dtype(dt)?;
    let both_nan = x.ne(x)?.mul(&y.ne(y)?)?.to_dtype(dt)?;
    eq.add(&both_nan)
}

/// The product of the other elements of each line, from per-element counts of the line's
/// zeros `zc` and products of its non-zero elements `p`: `p / x` without zeros, `p` at the
/// only zero, 0 elsewhere.
fn others_product(x: &Tensor, zero: &Tensor, zc: &Tensor, p: &Tensor) -> Result<Tensor> {
    let zeros = x.zeros_like()?;
    let only = zero.where_cond(&zc.eq(1.0)?.where_cond(p, &zeros)?, &zeros)?;
    zc.eq(0.0)?.where_cond(&p.div(x)?, &only)
}

fn reduce_grad(x: &Tensor, y: &Tensor, g: &Tensor, axis: usize, op: ReduceOp) -> Result<Tensor> {
    let shape = x.shape();
    let ge = expand(g, axis, shape)?;
    match op {
        ReduceOp::Sum => ge.contiguous(),
        ReduceOp::Prod => {
            let zero = x.eq(0.0)?;
            let zc = zero.to_dtype(x.dtype())?.reduce_sum(axis)?;
            let p = zero.where_cond(&x.ones_like()?, x)?.reduce_prod(axis)?;
            let (zc, p) = (expand(&zc, axis, shape)?, expand(&p, axis, shape)?);
            ge.mul(&others_product(x, &zero, &zc, &p)?)
        }
        ReduceOp::Max | ReduceOp::Min => {
            let hit = hits(x, &expand(y, axis, shape)?)?;
            let count = expand(&hit.reduce_sum(axis)?, axis, shape)?;
            ge.mul(&hit)?.div(&count)
        }
        ReduceOp::LogSumExp => ge.mul(&x.sub(&expand(y, axis, shape)?)?.exp()?),
    }
}

/// reduce_by_key's gradient by the values `v`: each element takes the gradient of its run, as
/// a reduction's element takes that of its line.
fn by_key_grad(keys: &Tensor, v: &Tensor, y: &Tensor, g: &Tensor, op: ReduceOp) -> Result<Tensor> {
    // The run of each element: unique_consecutive's inverse (the padded op: no count read).
    let (_, _, run_of, _) = keys.unique_consecutive_with_inverse_padded()?;
    let run_of = run_of.flatten_all()?;
    let per_element = |t: &Tensor| t.gather(&run_of, 0);
    let fold = |t: &Tensor, op: ReduceOp| {
        let (_, folds, _) = keys.reduce_by_key_padded(&t.reshape(keys.shape())?, op)?;
        per_element(&folds)
    };
    let flat = v.flatten_all()?;
    let ge = per_element(&g.contiguous()?)?;
    let gx = match op {
        ReduceOp::Sum => ge,
        ReduceOp::Prod => {
            let zero = flat.eq(0.0)?;
            let zc = fold(&zero.to_dtype(v.dtype())?, ReduceOp::Sum)?;
            let p = fold(&zero.where_cond(&flat.ones_like()?, &flat)?, ReduceOp::Prod)?;
            ge.mul(&others_product(&flat, &zero, &zc, &p)?)?
        }
        ReduceOp::Max | ReduceOp::Min => {
            let hit = hits(&flat, &per_element(y)?)?;
            let count = fold(&hit, ReduceOp::Sum)?;
            ge.mul(&hit)?.div(&count)?
        }
        ReduceOp::LogSumExp => ge.mul(&flat.sub(&per_element(y)?)?.exp()?)?,
    };
    gx.reshape(v.shape())
}

/// Whether an op's output is recorded in the graph: `x` tracks a gradient and has a float
/// dtype (integer outputs carry none).
pub(crate) fn differentiable(x: &Tensor) -> bool {
    x.track_op() && x.dtype().is_float()
}
