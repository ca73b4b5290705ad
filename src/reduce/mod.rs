//! Reductions (sum, prod, max, min, logsumexp, or a user's operator) of a whole buffer or along any axis of a strided tensor.
//! The result stays on the device.
//!
//! Each pass reduces groups of tiles of every row
//! ([`cubeprim_kernels::device::reduce::reduce_rows()`]: coalesced loads, one fold per unit over
//! the group's tiles, one cube-wide scan) and writes one value per group; the passes repeat over
//! those values (in the accumulator type: f32 for f16 / bf16) until one value per row is left,
//! cast back to the input dtype. The order is fixed, so float results are the same on every
//! run. Max / min propagate NaN.

use crate::count::Len;
use crate::dispatch::{with_dtype, with_op};
use crate::dtype::accumulator_dtype;
use crate::scan::{resolve_axis, ScanPlan};
use crate::select::plan::check_output;
use crate::tuning::{Policy, Tuning};
use crate::{DType, DeviceTensor, Error, Result, ScanOp, ScanOptions, Workspace};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeprim_kernels::device::reduce::reduce_rows;
use cubeprim_kernels::ops::ScanOp as KernelOp;

/// The reduce operators (the scan's: sum, prod, max, min, logsumexp).
pub type ReduceOp = ScanOp;

/// A strided source of one pass.
struct Src<'a, R: Runtime> {
    handle: Handle,
    dtype: DType,
    shape: &'a [usize],
    strides: &'a [usize],
    offset: usize,
    axis: usize,
    _r: std::marker::PhantomData<R>,
}

/// A pass's tiles in groups of `group` per cube: `plan.tiles_per_row` and `plan.num_tiles`
/// count the groups (one result each).
fn grouped(policy: &Policy, mut plan: ScanPlan) -> (ScanPlan, u32) {
    let group = policy.reduce_tiles_per_cube(plan.num_tiles);
    plan.tiles_per_row = plan.tiles_per_row.div_ceil(group);
    plan.num_tiles = plan.rows as u32 * plan.tiles_per_row;
    (plan, group)
}

/// The plans of every pass (with its tiles per cube): the first over the input, then
/// `[rows, groups]` of accumulators.
fn plans<R: Runtime>(
    client: &ComputeClient<R>,
    tuning: &Tuning,
    src: &Src<'_, R>,
) -> Result<Vec<(ScanPlan, u32)>> {
    let opts = ScanOptions::default();
    let policy = Policy::of(client, tuning);
    let first = ScanPlan::with_len(
        client,
        tuning,
        src.shape,
        src.strides,
        src.offset,
        src.axis,
        src.dtype,
        false,
        opts,
        false,
    )?;
    let acc = accumulator_dtype(src.dtype);
    let rows = first.rows;
    let mut out = vec![grouped(&policy, first)];
    while out.last().expect("a plan").0.tiles_per_row > 1 {
        let t = out.last().expect("a plan").0.tiles_per_row as usize;
        let shape = [rows, t];
        let strides = crate::tensor::contiguous_strides(&shape);
        out.push(grouped(
            &policy,
            ScanPlan::with_len(
                client, tuning, &shape, &strides, 0, 1, acc, false, opts, false,
            )?,
        ));
    }
    Ok(out)
}

/// Temp bytes of the passes between the first and the last (two ping-pong regions).
fn temp_layout(plans: &[(ScanPlan, u32)], acc: DType) -> (usize, usize) {
    let bytes = |p: &(ScanPlan, u32)| (p.0.num_tiles as usize * acc.size()).div_ceil(256) * 256;
    let a = plans
        .first()
        .filter(|_| plans.len() > 1)
        .map(bytes)
        .unwrap_or(0);
    let b = plans
        .get(1)
        .filter(|_| plans.len() > 2)
        .map(bytes)
        .unwrap_or(0);
    (a, b)
}

/// Bytes of [`Workspace`] [`reduce`] needs for this shape (`axis: None`: the whole tensor): the
/// size to give [`Workspace::with_capacity`] so that reductions of this shape allocate no
/// scratch.
///
/// # Errors
///
/// [`Error::AxisOutOfRange`] for an axis past the rank, [`Error::TooLarge`] for a shape of more
/// than [`MAX_ELEMENTS`](crate::MAX_ELEMENTS) elements, [`Error::Unsupported`] where no tile
/// fits the device.
pub fn reduce_workspace_bytes<R: Runtime>(
    client: &ComputeClient<R>,
    shape: &[usize],
    axis: Option<isize>,
    dtype: DType,
) -> Result<usize> {
    let n = crate::tensor::check_shape(shape)?;
    let (shape, axis) = match axis {
        Some(a) => (shape.to_vec(), resolve_axis(a, shape.len())?),
        None => (vec![n], 0),
    };
    let strides = crate::tensor::contiguous_strides(&shape);
    let src = Src::<R> {
        handle: client.empty(4),
        dtype,
        shape: &shape,
        strides: &strides,
        offset: 0,
        axis,
        _r: Default::default(),
    };
    let p = plans(client, &Tuning::default(), &src)?;
    let (a, b) = temp_layout(&p, accumulator_dtype(dtype));
    Ok(crate::workspace_bytes(0, a + b))
}

/// Runs every pass of `src` into `out` (one value per row, `out_dtype`).
fn run<R: Runtime, O: KernelOp>(
    client: &ComputeClient<R>,
    src: Src<'_, R>,
    out: &Handle,
    out_dtype: DType,
    len: Option<&DeviceTensor<R>>,
    ws: &mut Workspace<R>,
) -> Result<()> {
    crate::select::plan::check_supported(client, src.dtype)?;
    let plans = plans(client, ws.tuning(), &src)?;
    let acc = accumulator_dtype(src.dtype);
    let (a, b) = temp_layout(&plans, acc);
    let (_, temp) = ws.lease_with_temp(client, 0, a + b, 0)?;
    let dummy = ws.dummy(client);
    let region = |off: usize, bytes: usize| {
        let t: Handle = temp.clone().expect("temp region");
        let size = t.size_in_used() as usize;
        t.offset_start(off as u64)
            .offset_end((size - off - bytes) as u64)
    };
    let mut input = (src.handle.clone(), src.dtype);
    for (k, (plan, group)) in plans.iter().enumerate() {
        let last = k + 1 == plans.len();
        let (target, target_dtype) = if last {
            (out.clone(), out_dtype)
        } else if k % 2 == 0 {
            (region(0, a), acc)
        } else {
            (region(a, b), acc)
        };
        let layout = client.create_from_slice(bytemuck::cast_slice(&plan.layout));
        let pass = PassArgs {
            plan,
            group: *group,
            input: input.0.clone(),
            output: target.clone(),
            layout: (layout, plan.layout.len()),
            len: match (k, len) {
                (0, Some(c)) => Some(c.handle.clone()),
                _ => None,
            },
            dummy: dummy.clone(),
        };
        dispatch::<R, O>(client, input.1, acc, target_dtype, &pass);
        input = (target, acc);
    }
    Ok(())
}

struct PassArgs<'a> {
    plan: &'a ScanPlan,
    /// Tiles per cube.
    group: u32,
    input: Handle,
    output: Handle,
    layout: (Handle, usize),
    len: Option<Handle>,
    dummy: Handle,
}

fn dispatch<R: Runtime, O: KernelOp>(
    client: &ComputeClient<R>,
    input: DType,
    acc: DType,
    out: DType,
    p: &PassArgs<'_>,
) {
    // Passes read the input dtype (first) or the accumulator, and write the accumulator or
    // (last) the input dtype.
    if input == acc && out == acc {
        with_dtype!(acc, |A, _B| launch::<R, A, A, A, O>(client, p))
    } else if input == acc {
        with_dtype!(out, |T, A| launch::<R, A, A, T, O>(client, p))
    } else if out == acc {
        with_dtype!(input, |T, A| launch::<R, T, A, A, O>(client, p))
    } else {
        with_dtype!(input, |T, A| launch::<R, T, A, T, O>(client, p))
    }
}

fn launch<R: Runtime, T: Numeric, A: Numeric, U: Numeric, O: KernelOp>(
    client: &ComputeClient<R>,
    p: &PassArgs<'_>,
) {
    let plan = p.plan;
    let (x, y) = crate::device::grid_2d(plan.num_tiles);
    let in_len = p.input.size_in_used() as usize / size_of::<T>() / plan.vec;
    let device_len = p.len.is_some();
    let len = p.len.clone().unwrap_or_else(|| p.dummy.clone());
    // No element: nothing is read, but the binding must hold one whole vector.
    let input = if plan.n_vec == 0 {
        client.empty(64)
    } else {
        p.input.clone()
    };
    // SAFETY: the plan keeps reads inside the input (row offsets from its shape and strides,
    // tiles masked at the row end); one output per tile.
    unsafe {
        reduce_rows::launch_unchecked::<T, A, U, O, R>(
            client,
            CubeCount::Static(x, y, 1),
            CubeDim::new_1d(plan.cfg.threads),
            plan.vec,
            ArrayArg::from_raw_parts(input, in_len.max(1)),
            ArrayArg::from_raw_parts(p.output.clone(), plan.num_tiles as usize),
            ArrayArg::from_raw_parts(p.layout.0.clone(), p.layout.1),
            ArrayArg::from_raw_parts(len, 1),
            plan.n_vec,
            plan.tiles_per_row,
            plan.num_tiles,
            plan.in_stride,
            p.group,
            plan.cfg,
            device_len,
        )
    }
}

/// A max / min of no elements has no value (`op`: the built-in operator, `None` for a user's,
/// whose empty reduction is its identity).
fn check_empty_selection(op: Option<ScanOp>, n: usize) -> Result<()> {
    if let Some(op @ (ScanOp::Max | ScanOp::Min)) = op.filter(|_| n == 0) {
        return Err(Error::Unsupported(format!(
            "{op:?} of no elements has no value"
        )));
    }
    Ok(())
}

/// Reduces `input` along `axis` (the axis is removed from the shape), or the whole tensor with
/// `axis: None` (a 0-d result), into `out` (contiguous, the input's dtype). Any layout of
/// `input` is read in place. With a reused [`Workspace`], this call allocates nothing (but a
/// whole-tensor reduction of a non-contiguous N-d view allocates one partial result).
///
/// # Errors
///
/// As [`reduce`], and: [`Error::ShapeMismatch`] for an output whose shape is not the input's
/// without `axis`, [`Error::OutputTooSmall`] for a whole-tensor reduction into an output of no
/// element, [`Error::UnsupportedDType`] for an output of another dtype, [`Error::Unsupported`]
/// for a non-contiguous output, [`Error::Aliased`] for an output that shares memory with the
/// input.
pub fn reduce_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    axis: Option<isize>,
    op: ReduceOp,
    out: &DeviceTensor<R>,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    op.check_device(client, input.dtype)?;
    with_op!(op, |O| reduce_into_op::<R, O>(
        client,
        input,
        axis,
        out,
        workspace,
        Some(op)
    ))
}

/// [`reduce_into`] with the operator's kernel type; `builtin`: the [`ScanOp`] it stands for
/// (`None`: a user's operator).
fn reduce_into_op<R: Runtime, O: KernelOp>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    axis: Option<isize>,
    out: &DeviceTensor<R>,
    workspace: &mut Workspace<R>,
    builtin: Option<ScanOp>,
) -> Result<()> {
    if O::AFFINE {
        return Err(crate::scan::launch::affine_misuse());
    }
    crate::select::plan::check_supported(client, input.dtype)?;
    crate::validate::args(
        client,
        &[("the input", Some(input))],
        &[("the output", Some(out))],
    )?;
    match axis {
        Some(a) => {
            let ax = resolve_axis(a, input.rank())?;
            check_empty_selection(builtin, input.shape[ax])?;
            let mut shape = input.shape.clone();
            shape.remove(ax);
            if out.shape != shape {
                return Err(Error::ShapeMismatch {
                    expected: shape,
                    got: out.shape.clone(),
                });
            }
            check_output(out, shape.iter().product(), input.dtype)?;
            if input.num_elements() == 0 && shape.iter().product::<usize>() == 0 {
                return Ok(());
            }
            let src = Src {
                handle: input.handle.clone(),
                dtype: input.dtype,
                shape: &input.shape,
                strides: &input.strides,
                offset: input.offset,
                axis: ax,
                _r: Default::default(),
            };
            run::<R, O>(client, src, &out.handle, input.dtype, None, workspace)
        }
        None => {
            let n = input.num_elements();
            check_empty_selection(builtin, n)?;
            check_output(out, 1, input.dtype)?;
            if input.is_contiguous() || input.rank() <= 1 {
                let shape = [n];
                let strides = [if input.rank() == 1 {
                    input.strides[0]
                } else {
                    1
                }];
                let src = Src {
                    handle: input.handle.clone(),
                    dtype: input.dtype,
                    shape: &shape,
                    strides: &strides,
                    offset: input.offset,
                    axis: 0,
                    _r: Default::default(),
                };
                return run::<R, O>(client, src, &out.handle, input.dtype, None, workspace);
            }
            // Strided N-d: the last axis first (into the accumulator), then the rest.
            let acc = accumulator_dtype(input.dtype);
            let mut shape = input.shape.clone();
            shape.pop();
            let partial = DeviceTensor::<R>::try_empty(client, &shape, acc)?;
            let src = Src {
                handle: input.handle.clone(),
                dtype: input.dtype,
                shape: &input.shape,
                strides: &input.strides,
                offset: input.offset,
                axis: input.rank() - 1,
                _r: Default::default(),
            };
            run::<R, O>(client, src, &partial.handle, acc, None, workspace)?;
            let flat = [partial.num_elements()];
            let src = Src {
                handle: partial.handle.clone(),
                dtype: acc,
                shape: &flat,
                strides: &[1],
                offset: 0,
                axis: 0,
                _r: Default::default(),
            };
            run::<R, O>(client, src, &out.handle, input.dtype, None, workspace)
        }
    }
}

/// The sum, product, maximum, minimum or log-sum-exp (`op`) of `input` along `axis` (the axis
/// is removed from the shape: `torch.sum(x, dim)` / `prod` / `amax` / `amin` / `logsumexp`;
/// logsumexp: floats only, stable for large inputs, -inf for no element), or of every element with
/// `axis: None` (a 0-d result). The result is a new contiguous tensor of the input's dtype;
/// f16 / bf16 accumulate in f32, integer sums and products wrap, max / min propagate NaN. The
/// result stays on the device.
///
/// # Errors
///
/// [`Error::AxisOutOfRange`] for an axis past the rank; [`Error::UnsupportedDType`] for a dtype the
/// runtime lacks ([`supports_dtype`](crate::supports_dtype)) or an integer dtype with
/// [`ScanOp::LogSumExp`]; [`Error::Unsupported`] for a max /
/// min of no elements (it has no value); the argument checks of every call
/// ([`Error::ShapeMismatch`], [`Error::TooLarge`], [`Error::OutOfBounds`],
/// [`Error::InvalidArgument`]; see [`Error`]); [`Error::BufferTooLarge`],
/// [`Error::ScratchTooSmall`] or [`Error::WorkspaceMismatch`] from `workspace`.
///
/// # Example
///
/// ```
/// use cubecl::wgpu::{WgpuDevice, WgpuRuntime};
/// use cubecl::Runtime;
/// use cubeprim::{DeviceTensor, ReduceOp, Workspace};
///
/// let client = WgpuRuntime::client(&WgpuDevice::default());
/// let data = [1.0f32, 5., 2., 4., 3., 6.];
/// let x = DeviceTensor::<WgpuRuntime>::from_slice(&client, &data, &[2, 3])?;
/// let mut ws = Workspace::new();
///
/// let rows = cubeprim::reduce(&client, &x, Some(1), ReduceOp::Max, &mut ws)?; // amax(x, 1)
/// assert_eq!(rows.shape, [2]);
/// assert_eq!(rows.to_vec::<f32>(&client), [5., 6.]);
///
/// let total = cubeprim::reduce(&client, &x, None, ReduceOp::Sum, &mut ws)?; // 0-d
/// assert_eq!(total.to_vec::<f32>(&client), [21.]);
///
/// // Any view is read in place: the sum of each column of the transpose's rows.
/// let cols = cubeprim::reduce(&client, &x.transpose(0, 1)?, Some(1), ReduceOp::Sum, &mut ws)?;
/// assert_eq!(cols.to_vec::<f32>(&client), [5., 8., 8.]);
/// # Ok::<(), cubeprim::Error>(())
/// ```
pub fn reduce<R: Runtime>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    axis: Option<isize>,
    op: ReduceOp,
    workspace: &mut Workspace<R>,
) -> Result<DeviceTensor<R>> {
    op.check_device(client, input.dtype)?;
    with_op!(op, |O| reduce_op::<R, O>(
        client,
        input,
        axis,
        workspace,
        Some(op)
    ))
}

/// [`reduce`] with a user-defined operator: any [`crate::ops::ScanOp`] (see
/// [`scan_with`](crate::scan_with), whose example also reduces). An empty reduction is the
/// operator's identity. User operators run on the cubecl runtimes (wgpu, CUDA, Metal), not on
/// the CPU implementation ([`crate::cpu`]) nor through the burn / candle adapters.
///
/// # Errors
///
/// As [`reduce`] (no error for an empty reduction).
pub fn reduce_with<R: Runtime, O: KernelOp>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    axis: Option<isize>,
    _op: O,
    workspace: &mut Workspace<R>,
) -> Result<DeviceTensor<R>> {
    reduce_op::<R, O>(client, input, axis, workspace, None)
}

/// [`reduce_with`] into a caller-provided output, as [`reduce_into`].
///
/// # Errors
///
/// As [`reduce_into`] (no error for an empty reduction).
pub fn reduce_with_into<R: Runtime, O: KernelOp>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    axis: Option<isize>,
    _op: O,
    out: &DeviceTensor<R>,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    reduce_into_op::<R, O>(client, input, axis, out, workspace, None)
}

/// [`reduce`] with the operator's kernel type (`builtin` as for [`reduce_into_op`]).
fn reduce_op<R: Runtime, O: KernelOp>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    axis: Option<isize>,
    workspace: &mut Workspace<R>,
    builtin: Option<ScanOp>,
) -> Result<DeviceTensor<R>> {
    if O::AFFINE {
        return Err(crate::scan::launch::affine_misuse());
    }
    // Before the output is allocated.
    crate::validate::input(client, "the input", input)?;
    let shape = match axis {
        Some(a) => {
            let ax = resolve_axis(a, input.rank())?;
            let mut s = input.shape.clone();
            s.remove(ax);
            s
        }
        None => vec![],
    };
    let out = DeviceTensor::try_empty(client, &shape, input.dtype)?;
    reduce_into_op::<R, O>(client, input, axis, &out, workspace, builtin)?;
    Ok(out)
}

/// Reduces the first `len` elements of a contiguous tensor (flattened) into `out` (one element
/// of the input's dtype). With a device count (`Len::Device`), tiles past the count read
/// nothing and no host read happens. An empty sum is 0, an empty product 1, an empty max /
/// min the lowest / highest value (-inf / +inf for floats), an empty logsumexp -inf.
///
/// # Errors
///
/// [`Error::UnsupportedDType`] for a dtype the runtime lacks, for an output of another dtype or for
/// a device count that is not `u32`; [`Error::Unsupported`] for a non-contiguous input or output
/// (or a device count not at the start of its buffer); [`Error::LengthMismatch`] for a capacity
/// past the input's elements or a device count of more than one element; [`Error::OutputTooSmall`]
/// for an output of no element; [`Error::Aliased`] for an output that shares memory with the input
/// or the count; the argument checks of every call ([`Error::ShapeMismatch`], [`Error::TooLarge`],
/// [`Error::OutOfBounds`], [`Error::InvalidArgument`]; see [`Error`]); [`Error::BufferTooLarge`],
/// [`Error::ScratchTooSmall`] or [`Error::WorkspaceMismatch`] from `workspace`.
pub fn reduce_len_into<'a, R: Runtime>(
    client: &ComputeClient<R>,
    input: &'a DeviceTensor<R>,
    len: impl Into<Len<'a, R>>,
    op: ReduceOp,
    out: &DeviceTensor<R>,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    let len = len.into();
    op.check_device(client, input.dtype)?;
    crate::validate::args(
        client,
        &[
            ("the input", Some(input)),
            ("the length", len.device_count()),
        ],
        &[("the output", Some(out))],
    )?;
    len.validate(input.num_elements())?;
    crate::select::plan::check_input(client, input, len.capacity())?;
    check_output(out, 1, input.dtype)?;
    let shape = [len.capacity()];
    let src = Src {
        handle: input.handle.clone(),
        dtype: input.dtype,
        shape: &shape,
        strides: &[1],
        offset: 0,
        axis: 0,
        _r: Default::default(),
    };
    with_op!(op, |O| run::<R, O>(
        client,
        src,
        &out.handle,
        input.dtype,
        len.device_count(),
        workspace
    ))
}
