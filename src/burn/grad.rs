//! Backward passes of the differentiable ops (used by `Autodiff<B>`, feature `burn-autodiff`).
//!
//! Each is written with burn's element-wise ops and cubeprim's own ops on the inner backend
//! (scans, reductions, run-length), on the device, with no host read:
//! - scans: cumsum → the scan of the gradient in the other direction; cumprod → PyTorch's
//!   formula, correct with zeros in the input; cummax / cummin → the gradient flows to the
//!   element that held the running extreme (ties and NaN: the one the forward picked). Exclusive
//!   and reverse scans of products and extremes are inclusive forward scans of the shifted /
//!   flipped input; logcumsumexp → PyTorch's `logcumsumexp_backward` (the positive and
//!   negative parts of the gradient each summed in log space by a logcumsumexp in the other
//!   direction);
//! - sorts and top-k → the gradient scattered back through the indices;
//! - masked_select / select → the gradient of kept element `j` goes to the input's `j`-th set
//!   position (a gather by the exclusive count of set flags);
//! - reductions: sum → broadcast; prod → the product of the other elements (PyTorch's
//!   handling of zeros); max / min → shared evenly among the elements equal to the result
//!   (`torch.amax` / `torch.amin`); logsumexp → `grad * exp(x - y)`;
//! - reduce_by_key → the same per run of keys;
//! - linear recurrence → a linear recurrence of the gradient in the other direction over the
//!   multipliers shifted by one (the adjoint), times the previous states for the multipliers.
//!
//! Argsort, searchsorted, nonzero, counts, unique and histograms have integer outputs or
//! outputs that are keys, and no gradient.

use super::backend::{run, AnyPrimitive, PrimBackend, PrimKind};
use super::recurrence::LinearRecurrence;
use super::reduce::Reduce;
use super::runs::{ReduceByKey, Runs};
use super::scan::Scan;
use super::sort::{Sort, SortOutputs, TopK};
use crate::dtype::lowest_finite;
use crate::{ReduceOp, ScanOp, ScanOptions};
use ::burn::tensor::backend::Backend;
use ::burn::tensor::ops::{BoolTensor, FloatTensor, IntTensor};
use ::burn::tensor::{
    get_device_settings, DeviceSettings, Int, Scalar, Shape, Slice, TensorMetadata,
};

/// What the forward pass keeps for the backward pass: the op's inputs and outputs on the inner
/// backend (shared handles, no copy).
pub struct Saved<B: Backend> {
    /// The op's inputs, in order.
    pub inputs: Vec<AnyPrimitive<B>>,
    /// The op's outputs, in order.
    pub outputs: Vec<AnyPrimitive<B>>,
}

impl<B: Backend> Clone for Saved<B> {
    fn clone(&self) -> Self {
        Self {
            inputs: self.inputs.clone(),
            outputs: self.outputs.clone(),
        }
    }
}

impl<B: Backend> std::fmt::Debug for Saved<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Saved({} inputs, {} outputs)",
            self.inputs.len(),
            self.outputs.len()
        )
    }
}

/// The float primitive of `p` (panics on another kind: an op's own input or output).
fn float<B: Backend>(p: &AnyPrimitive<B>) -> FloatTensor<B> {
    match p {
        AnyPrimitive::Float(t) => t.clone(),
        other => panic!("expected a float tensor, got {:?}", other.kind()),
    }
}

fn int<B: Backend>(p: AnyPrimitive<B>) -> IntTensor<B> {
    <Int as PrimKind<B>>::from_any(p)
}

fn settings<B: Backend>(x: &FloatTensor<B>) -> DeviceSettings {
    get_device_settings::<B>(&B::float_device(x))
}

fn dims<B: Backend>(x: &FloatTensor<B>) -> Vec<usize> {
    x.shape().to_vec()
}

fn zeros_like<B: Backend>(x: &FloatTensor<B>) -> FloatTensor<B> {
    B::float_zeros(x.shape(), &B::float_device(x), x.dtype().into())
}

fn full<B: Backend>(like: &FloatTensor<B>, shape: Vec<usize>, value: f64) -> FloatTensor<B> {
    B::float_full(
        Shape::from(shape),
        Scalar::Float(value),
        &B::float_device(like),
        like.dtype().into(),
    )
}

fn eq_elem<B: Backend>(x: FloatTensor<B>, v: f64) -> BoolTensor<B> {
    let s = settings::<B>(&x);
    B::float_equal_elem(x, Scalar::Float(v), s.bool_dtype)
}

fn to_float<B: Backend>(m: BoolTensor<B>, like: &FloatTensor<B>) -> FloatTensor<B> {
    B::bool_into_float(m, like.dtype().into())
}

/// Elements `start..end` of `axis`.
fn slice_axis<B: Backend>(
    x: FloatTensor<B>,
    axis: usize,
    start: usize,
    end: usize,
) -> FloatTensor<B> {
    let slices: Vec<Slice> = (0..dims::<B>(&x).len())
        .map(|d| {
            if d == axis {
                Slice::new(start as isize, Some(end as isize), 1)
            } else {
                Slice::full()
            }
        })
        .collect();
    B::float_slice(x, &slices)
}

/// `x` with `value` put first along `axis` and its last element dropped (what an exclusive
/// scan combines: its identity, then every element but the last).
fn shift_in<B: Backend>(x: FloatTensor<B>, axis: usize, value: f64) -> FloatTensor<B> {
    let n = dims::<B>(&x)[axis];
    let mut one = dims::<B>(&x);
    one[axis] = 1;
    let first = full::<B>(&x, one, value);
    if n <= 1 {
        return first;
    }
    B::float_cat(vec![first, slice_axis::<B>(x, axis, 0, n - 1)], axis)
}

/// The gradient of [`shift_in`]'s input from that of its output: each element's gradient is
/// that of the slot it moved to; the last element's is zero.
fn shift_out<B: Backend>(g: FloatTensor<B>, axis: usize) -> FloatTensor<B> {
    let n = dims::<B>(&g)[axis];
    let mut one = dims::<B>(&g);
    one[axis] = 1;
    let last = full::<B>(&g, one, 0.0);
    if n <= 1 {
        return last;
    }
    B::float_cat(vec![slice_axis::<B>(g, axis, 1, n), last], axis)
}

/// A scan of a float tensor with cubeprim's own op.
fn scan<B: PrimBackend>(
    x: FloatTensor<B>,
    axis: usize,
    op: ScanOp,
    opts: ScanOptions,
) -> FloatTensor<B> {
    let s = Scan {
        axis,
        op,
        opts,
        indexed: false,
    };
    float(&run::<B, _>(&s, vec![AnyPrimitive::Float(x)])[0])
}

fn reverse_sum<B: PrimBackend>(x: FloatTensor<B>, axis: usize) -> FloatTensor<B> {
    scan::<B>(x, axis, ScanOp::Sum, ScanOptions::default().reverse())
}

/// The indices of an inclusive forward running max / min.
fn extreme_indices<B: PrimBackend>(x: FloatTensor<B>, axis: usize, op: ScanOp) -> IntTensor<B> {
    let s = Scan {
        axis,
        op,
        opts: ScanOptions::default(),
        indexed: true,
    };
    let mut outs = run::<B, _>(&s, vec![AnyPrimitive::Float(x)]);
    int(outs.pop().expect("indices"))
}

/// The gradient of an inclusive forward cumprod `y` of `x` along `axis` (PyTorch's
/// `cumprod_backward`): before the first zero of a row, `sum_{j>=i} g_j y_j / x_i`; at the first
/// zero `k`, `sum_{j>=k} g_j prod_{m<=j, m!=k} x_m`; after it, zero.
fn cumprod_grad<B: PrimBackend>(
    x: FloatTensor<B>,
    y: FloatTensor<B>,
    g: FloatTensor<B>,
    axis: usize,
) -> FloatTensor<B> {
    let incl = ScanOptions::default();
    let zero = eq_elem::<B>(x.clone(), 0.0);
    let zeros_so_far = scan::<B>(to_float::<B>(zero.clone(), &x), axis, ScanOp::Sum, incl);
    let before = eq_elem::<B>(zeros_so_far.clone(), 0.0);
    let first = B::bool_and(zero, eq_elem::<B>(zeros_so_far, 1.0));
    let a = B::float_div(
        reverse_sum::<B>(B::float_mul(g.clone(), y), axis),
        x.clone(),
    );
    let x1 = B::float_mask_fill(x.clone(), first.clone(), Scalar::Float(1.0));
    let y1 = scan::<B>(x1, axis, ScanOp::Prod, incl);
    let b = reverse_sum::<B>(B::float_mul(g, y1), axis);
    let out = B::float_mask_where(zeros_like::<B>(&x), before, a);
    B::float_mask_where(out, first, b)
}

/// The gradient of a logcumsumexp `y` of `x` (PyTorch's `logcumsumexp_backward`):
/// `dx_j = sum_i g_i exp(x_j - y_i)` over the `i` whose `y_i` includes `x_j`, that is
/// `exp(x_j + back(log g - y)_j)` with `back` the logcumsumexp in the other direction (`back`:
/// its options), for the positive and the negative parts of `g` apart so that every log is of
/// a positive number. A zero part is the lowest finite value, not -inf (as PyTorch), so that
/// `log g - y` has no `-inf - -inf`.
fn logcumsumexp_grad<B: PrimBackend>(
    x: FloatTensor<B>,
    y: FloatTensor<B>,
    g: FloatTensor<B>,
    axis: usize,
    back: ScanOptions,
) -> FloatTensor<B> {
    let bools = settings::<B>(&g).bool_dtype;
    let lowest = super::op::prim_dtype(x.dtype()).map_or(f64::from(f32::MIN), lowest_finite);
    let floor = full::<B>(&x, dims::<B>(&x), lowest);
    let log_abs = B::float_log(B::float_abs(g.clone()));
    let part = |mask: BoolTensor<B>| {
        let lg = B::float_mask_where(floor.clone(), mask, log_abs.clone());
        let t = scan::<B>(B::float_sub(lg, y.clone()), axis, ScanOp::LogSumExp, back);
        B::float_exp(B::float_add(t, x.clone()))
    };
    let pos = part(B::float_greater_elem(g.clone(), Scalar::Float(0.0), bools));
    let neg = part(B::float_lower_elem(g, Scalar::Float(0.0), bools));
    B::float_sub(pos, neg)
}

/// The scan's backward pass.
pub(crate) fn scan_backward<B: PrimBackend>(
    s: &Scan,
    saved: &Saved<B>,
    g: FloatTensor<B>,
) -> Vec<Option<FloatTensor<B>>> {
    let x = float(&saved.inputs[0]);
    let axis = s.axis;
    if x.shape().num_elements() == 0 {
        return vec![Some(zeros_like::<B>(&x))];
    }
    if s.op == ScanOp::Sum {
        // y_i = sum over j at or before i (in scan order): the gradient of x_j is the sum of
        // g_i over i at or after j, the same kind of scan in the other direction.
        let opts = ScanOptions {
            reverse: !s.opts.reverse,
            ..ScanOptions::default()
        };
        let opts = if s.opts.exclusive {
            opts.exclusive()
        } else {
            opts
        };
        return vec![Some(scan::<B>(g, axis, ScanOp::Sum, opts))];
    }
    if s.op == ScanOp::LogSumExp {
        let back = ScanOptions {
            exclusive: s.opts.exclusive,
            reverse: !s.opts.reverse,
            ..ScanOptions::default()
        };
        let y = float(&saved.outputs[0]);
        return vec![Some(logcumsumexp_grad::<B>(x, y, g, axis, back))];
    }
    // An exclusive and / or reverse scan is an inclusive forward scan of the flipped input with
    // the identity shifted in: take the gradient there, then undo the shift and the flip.
    let flip = |t: FloatTensor<B>| {
        if s.opts.reverse {
            B::float_flip(t, &[axis])
        } else {
            t
        }
    };
    let identity = match s.op {
        ScanOp::Prod => 1.0,
        ScanOp::Max => f64::NEG_INFINITY,
        _ => f64::INFINITY,
    };
    let xs = flip(x);
    let xs = if s.opts.exclusive {
        shift_in::<B>(xs, axis, identity)
    } else {
        xs
    };
    let gs = flip(g);
    let gx = match s.op {
        ScanOp::Prod => {
            // The forward's output is the inclusive cumprod of `xs` (flipped back).
            let y = flip(float(&saved.outputs[0]));
            cumprod_grad::<B>(xs, y, gs, axis)
        }
        op => {
            let idx = extreme_indices::<B>(xs.clone(), axis, op);
            B::float_scatter_add(axis, zeros_like::<B>(&xs), idx, gs)
        }
    };
    let gx = if s.opts.exclusive {
        shift_out::<B>(gx, axis)
    } else {
        gx
    };
    vec![Some(flip(gx))]
}

/// A sort's or top-k's backward pass along the last axis: the gradient of output `j` goes to
/// the input element it came from.
fn scatter_last<B: Backend>(
    x: &FloatTensor<B>,
    idx: IntTensor<B>,
    g: FloatTensor<B>,
) -> FloatTensor<B> {
    let last = dims::<B>(x).len() - 1;
    B::float_scatter_add(last, zeros_like::<B>(x), idx, g)
}

/// The sort's backward pass (values, with or without indices).
pub(crate) fn sort_backward<B: PrimBackend>(
    s: &Sort,
    saved: &Saved<B>,
    g: FloatTensor<B>,
) -> Vec<Option<FloatTensor<B>>> {
    let x = float(&saved.inputs[0]);
    if x.shape().num_elements() == 0 {
        return vec![Some(zeros_like::<B>(&x))];
    }
    let idx = match s.outputs {
        SortOutputs::Both => int(saved.outputs[1].clone()),
        // The forward kept no indices: the stable argsort gives the same permutation.
        _ => {
            let argsort = Sort {
                descending: s.descending,
                outputs: SortOutputs::Indices,
            };
            let mut outs = run::<B, _>(&argsort, vec![AnyPrimitive::Float(x.clone())]);
            int(outs.pop().expect("indices"))
        }
    };
    vec![Some(scatter_last::<B>(&x, idx, g))]
}

/// Top-k's backward pass.
pub(crate) fn top_k_backward<B: PrimBackend>(
    _t: &TopK,
    saved: &Saved<B>,
    g: FloatTensor<B>,
) -> Vec<Option<FloatTensor<B>>> {
    let x = float(&saved.inputs[0]);
    if g.shape().num_elements() == 0 {
        return vec![Some(zeros_like::<B>(&x))];
    }
    let idx = int(saved.outputs[1].clone());
    vec![Some(scatter_last::<B>(&x, idx, g))]
}

/// Flags of any kind as a bool tensor (set: non-zero, NaN included; `-0.0` is not set).
fn flags_bool<B: Backend>(f: &AnyPrimitive<B>, s: &DeviceSettings) -> BoolTensor<B> {
    match f {
        AnyPrimitive::Bool(b) => b.clone(),
        AnyPrimitive::Int(i) => B::int_not_equal_elem(i.clone(), Scalar::Int(0), s.bool_dtype),
        AnyPrimitive::Float(x) => B::bool_not(B::float_equal_elem(
            x.clone(),
            Scalar::Float(0.0),
            s.bool_dtype,
        )),
    }
}

/// masked_select's / select's backward pass: the gradient of kept element `j` (of the
/// capacity-sized output) goes to the `j`-th set position, a gather by the exclusive count of
/// set flags before each position.
pub(crate) fn select_backward<B: PrimBackend>(
    saved: &Saved<B>,
    g: FloatTensor<B>,
) -> Vec<Option<FloatTensor<B>>> {
    let x = float(&saved.inputs[0]);
    let shape = x.shape();
    let n = shape.num_elements();
    if n == 0 {
        return vec![Some(zeros_like::<B>(&x)), None];
    }
    let s = settings::<B>(&x);
    let set = B::bool_reshape(flags_bool::<B>(&saved.inputs[1], &s), Shape::from(vec![n]));
    let counts = B::bool_into_int(set.clone(), s.int_dtype);
    let scan = Scan {
        axis: 0,
        op: ScanOp::Sum,
        opts: ScanOptions::default().exclusive(),
        indexed: false,
    };
    let pos = int(run::<B, _>(&scan, vec![AnyPrimitive::Int(counts)]).remove(0));
    let picked = B::float_gather(0, g, pos);
    let gx = B::float_mask_fill(picked, B::bool_not(set), Scalar::Float(0.0));
    vec![Some(B::float_reshape(gx, shape)), None]
}

/// A reduction of `x` with cubeprim's own op, keeping the reduced axis (or every axis, of
/// size 1, for `axis == None`).
fn reduce_keep<B: PrimBackend>(
    x: FloatTensor<B>,
    axis: Option<usize>,
    op: ReduceOp,
) -> FloatTensor<B> {
    let mut keep = dims::<B>(&x);
    match axis {
        Some(a) => keep[a] = 1,
        None => keep.iter_mut().for_each(|d| *d = 1),
    }
    let r = Reduce { axis, op };
    let out = float(&run::<B, _>(&r, vec![AnyPrimitive::Float(x)])[0]);
    B::float_reshape(out, Shape::from(keep))
}

/// `t` (of the reduction's output shape) broadcast back to `shape`.
fn broadcast<B: Backend>(t: FloatTensor<B>, axis: Option<usize>, shape: &Shape) -> FloatTensor<B> {
    let mut keep = shape.to_vec();
    match axis {
        Some(a) => keep[a] = 1,
        None => keep.iter_mut().for_each(|d| *d = 1),
    }
    B::float_expand(B::float_reshape(t, Shape::from(keep)), shape.clone())
}

/// Where `x` equals `y` (both NaN counts as equal: the extreme of a slice holding a NaN is NaN).
fn same<B: Backend>(x: FloatTensor<B>, y: FloatTensor<B>) -> BoolTensor<B> {
    let s = settings::<B>(&x);
    let eq = B::float_equal(x.clone(), y.clone(), s.bool_dtype);
    let nan = B::bool_and(
        B::float_is_nan(x, s.bool_dtype),
        B::float_is_nan(y, s.bool_dtype),
    );
    B::bool_or(eq, nan)
}

/// The product of the other elements of each slice, given per-slice counts of zeros `zc` and
/// products of the non-zero elements `p` (both broadcast to `x`'s shape): `p / x` without
/// zeros, `p` at the only zero, 0 elsewhere.
fn others_product<B: Backend>(
    x: FloatTensor<B>,
    zero: BoolTensor<B>,
    zc: FloatTensor<B>,
    p: FloatTensor<B>,
) -> FloatTensor<B> {
    let none = eq_elem::<B>(zc.clone(), 0.0);
    let only = B::bool_and(zero, eq_elem::<B>(zc, 1.0));
    let out = B::float_mask_where(zeros_like::<B>(&x), none, B::float_div(p.clone(), x));
    B::float_mask_where(out, only, p)
}

/// The gradient of a fold `op` of groups of `x` (the slices of a reduction, the runs of
/// reduce_by_key), at each element: `ge` is the gradient of its group's result, `y()` that
/// result, and `fold(t, op)` folds `t` by the same groups, each result given back at every
/// element of its group.
fn fold_backward<B: Backend>(
    op: ReduceOp,
    x: FloatTensor<B>,
    ge: FloatTensor<B>,
    y: impl FnOnce() -> FloatTensor<B>,
    fold: impl Fn(FloatTensor<B>, ReduceOp) -> FloatTensor<B>,
) -> FloatTensor<B> {
    match op {
        ReduceOp::Sum => ge,
        ReduceOp::Prod => {
            let zero = eq_elem::<B>(x.clone(), 0.0);
            let zc = fold(to_float::<B>(zero.clone(), &x), ReduceOp::Sum);
            let nz = B::float_mask_fill(x.clone(), zero.clone(), Scalar::Float(1.0));
            let p = fold(nz, ReduceOp::Prod);
            B::float_mul(ge, others_product::<B>(x, zero, zc, p))
        }
        ReduceOp::Max | ReduceOp::Min => {
            let hit = to_float::<B>(same::<B>(x.clone(), y()), &x);
            let count = fold(hit.clone(), ReduceOp::Sum);
            B::float_div(B::float_mul(ge, hit), count)
        }
        ReduceOp::LogSumExp => B::float_mul(ge, B::float_exp(B::float_sub(x, y()))),
    }
}

/// The reduction's backward pass.
pub(crate) fn reduce_backward<B: PrimBackend>(
    r: &Reduce,
    saved: &Saved<B>,
    g: FloatTensor<B>,
) -> Vec<Option<FloatTensor<B>>> {
    let x = float(&saved.inputs[0]);
    let shape = x.shape();
    if shape.num_elements() == 0 {
        return vec![Some(zeros_like::<B>(&x))];
    }
    let ge = broadcast::<B>(g, r.axis, &shape);
    let y = || broadcast::<B>(float(&saved.outputs[0]), r.axis, &shape);
    let fold = |t, op| broadcast::<B>(reduce_keep::<B>(t, r.axis, op), r.axis, &shape);
    vec![Some(fold_backward::<B>(r.op, x, ge, y, fold))]
}

/// reduce_by_key's backward pass (the gradient of the folded values by the values): each
/// element takes the gradient of its run, as a reduction's element takes that of its slice.
pub(crate) fn reduce_by_key_backward<B: PrimBackend>(
    r: &ReduceByKey,
    saved: &Saved<B>,
    g: FloatTensor<B>,
) -> Vec<Option<FloatTensor<B>>> {
    let v = float(&saved.inputs[1]);
    let shape = v.shape();
    let n = shape.num_elements();
    if n == 0 {
        return vec![None, Some(zeros_like::<B>(&v))];
    }
    let keys = saved.inputs[0].clone();
    // The run of each element: unique_consecutive's inverse of the keys.
    let runs = Runs {
        sorted: false,
        inverse: true,
        counts: false,
    };
    let outs = run::<B, _>(&runs, vec![keys.clone()]);
    let run_of = B::int_reshape(int(outs[1].clone()), Shape::from(vec![n]));
    let per_element = |t: FloatTensor<B>| B::float_gather(0, t, run_of.clone());
    let fold = |t: FloatTensor<B>, op: ScanOp| {
        let outs = run::<B, _>(
            &ReduceByKey { op },
            vec![keys.clone(), AnyPrimitive::Float(t)],
        );
        per_element(float(&outs[1]))
    };
    let v = B::float_reshape(v, Shape::from(vec![n]));
    let ge = per_element(g);
    let y = || per_element(float(&saved.outputs[1]));
    let gx = fold_backward::<B>(r.op, v, ge, y, fold);
    vec![None, Some(B::float_reshape(gx, shape))]
}

/// The backward pass of a linear recurrence `h[t] = a[t] h[t-1] + b[t]` (a reverse one
/// mirrors it): the adjoint `λ[t] = g[t] + a[t+1] λ[t+1]` is a linear recurrence of the
/// gradient in the other direction over the multipliers shifted by one; then `db = λ`,
/// `da[t] = λ[t] h[t-1]` (`h[-1]`: `h0` or 0) and `dh0 = a[0] λ[0]`.
pub(crate) fn recurrence_backward<B: PrimBackend>(
    r: &LinearRecurrence,
    saved: &Saved<B>,
    g: FloatTensor<B>,
) -> Vec<Option<FloatTensor<B>>> {
    let a = float(&saved.inputs[0]);
    let h = float(&saved.outputs[0]);
    let h0 = saved.inputs.get(2).map(float);
    let axis = r.axis;
    let n = dims::<B>(&a)[axis];
    if a.shape().num_elements() == 0 {
        let mut out = vec![Some(zeros_like::<B>(&a)), Some(zeros_like::<B>(&a))];
        out.extend(h0.map(|h0| Some(zeros_like::<B>(&h0))));
        return out;
    }
    // The next multiplier and the previous state of each step, in the forward's order.
    let (a_next, h_prev) = if r.reverse {
        let prev = match &h0 {
            Some(h0) if n > 1 => {
                B::float_cat(vec![slice_axis::<B>(h, axis, 1, n), h0.clone()], axis)
            }
            Some(h0) => h0.clone(),
            None => shift_out::<B>(h, axis),
        };
        (shift_in::<B>(a.clone(), axis, 0.0), prev)
    } else {
        let prev = match &h0 {
            Some(h0) if n > 1 => {
                B::float_cat(vec![h0.clone(), slice_axis::<B>(h, axis, 0, n - 1)], axis)
            }
            Some(h0) => h0.clone(),
            None => shift_in::<B>(h, axis, 0.0),
        };
        (shift_out::<B>(a.clone(), axis), prev)
    };
    let adjoint = LinearRecurrence {
        axis,
        reverse: !r.reverse,
        with_h0: false,
    };
    let lambda = float(
        &run::<B, _>(
            &adjoint,
            vec![AnyPrimitive::Float(a_next), AnyPrimitive::Float(g)],
        )[0],
    );
    let da = B::float_mul(lambda.clone(), h_prev);
    let mut out = vec![Some(da), None];
    if h0.is_some() {
        let first = if r.reverse { n - 1 } else { 0 };
        let ah = B::float_mul(a, lambda.clone());
        out.push(Some(slice_axis::<B>(ah, axis, first, first + 1)));
    }
    out[1] = Some(lambda);
    out
}
