//! Dtype / operator dispatch and the kernel launches.

use super::plan::{Route, ScanPlan};
use super::{resolve_axis, ScanOp, ScanOptions};
use crate::dispatch::{with_dtype, with_op};
use crate::dtype::accumulator_dtype;
use crate::workspace::StateLease;
use crate::{DType, DeviceTensor, Error, Result, Workspace};
use cubecl::prelude::*;
use cubecl::server::Handle;
use cubeprim_kernels::device::reduce_tiles::reduce_tiles;
use cubeprim_kernels::device::scan_rows::{
    scan_rows, ScanInputsLaunch, ScanMetaLaunch, ScanOutputsLaunch, ScanScalarsLaunch,
};
use cubeprim_kernels::device::single_pass::TileStateArgsLaunch;
use cubeprim_kernels::ops::ScanOp as KernelOp;
use half::{bf16, f16};

/// Whether the runtime can store, load and do arithmetic on `dtype` (and, for f16 / bf16, on
/// their f32 accumulator). `U8`: false — bytes are only flags (the compaction ops read them
/// as words, on every runtime), not data. `F64` on CUDA: true — cubecl-cuda 0.10 leaves f64
/// out of its supported types (for its matmul's sake), but every GPU it runs on has doubles and
/// cubeprim's kernels compile and run with them there (candle's f64 tensors on the H200).
pub fn supports_dtype<R: Runtime>(client: &ComputeClient<R>, dtype: DType) -> bool {
    if dtype == DType::F64 && R::name(client) == "cuda" {
        return true;
    }
    let ty = match dtype {
        DType::U8 => return false,
        DType::F32 => f32::as_type_native_unchecked(),
        DType::F16 => f16::as_type_native_unchecked(),
        DType::BF16 => bf16::as_type_native_unchecked(),
        DType::F64 => f64::as_type_native_unchecked(),
        DType::I32 => i32::as_type_native_unchecked(),
        DType::U32 => u32::as_type_native_unchecked(),
        DType::I64 => i64::as_type_native_unchecked(),
        DType::U64 => u64::as_type_native_unchecked(),
    };
    let p = client.properties();
    p.supports_type(ty)
        && (!matches!(dtype, DType::F16 | DType::BF16)
            || p.supports_type(f32::as_type_native_unchecked()))
}

/// [`supports_dtype`] as a typed error.
pub(crate) fn check_dtype<R: Runtime>(client: &ComputeClient<R>, dtype: DType) -> Result<()> {
    if supports_dtype(client, dtype) {
        Ok(())
    } else {
        Err(Error::UnsupportedDType {
            dtype,
            reason: format!("the {} runtime does not support it", R::name(client)),
        })
    }
}

/// Indices are defined for max and min only.
fn check_indices(op: ScanOp, indexed: bool) -> Result<()> {
    if indexed && !matches!(op, ScanOp::Max | ScanOp::Min) {
        return Err(Error::Unsupported(format!(
            "indices are defined for max and min, not {op:?}"
        )));
    }
    Ok(())
}

/// The index dtype of indexed scans on this runtime.
pub(crate) fn index_dtype<R: Runtime>(client: &ComputeClient<R>) -> DType {
    if client
        .properties()
        .supports_type(i64::as_type_native_unchecked())
    {
        DType::I64
    } else {
        DType::I32
    }
}

/// Buffers of one scan launch.
struct Buffers {
    input: Handle,
    input_len: usize,
    /// The multipliers of a linear recurrence (the input's layout), else a dummy.
    mul: Handle,
    mul_len: usize,
    /// A linear recurrence's initial states (one per row, contiguous), else a dummy.
    init: Option<Handle>,
    output: Handle,
    indices: Handle,
    indices_len: usize,
    state: Handle,
    state_len: usize,
    prefixes: Handle,
    prefixes_len: usize,
    layout: Handle,
    layout_len: usize,
    /// The device-resident length (a dummy unless `plan.device_len`).
    len: Handle,
}

pub(crate) fn scan<R: Runtime>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    axis: isize,
    op: ScanOp,
    opts: ScanOptions,
    workspace: &mut Workspace<R>,
    indexed: bool,
) -> Result<(DeviceTensor<R>, Option<DeviceTensor<R>>)> {
    check_indices(op, indexed)?;
    op.check_device(client, input.dtype)?;
    with_op!(op, |O| scan_op::<R, O>(
        client, input, axis, opts, workspace, indexed
    ))
}

/// [`scan`] with the operator's kernel type (built in or the user's).
pub(crate) fn scan_op<R: Runtime, O: KernelOp>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    axis: isize,
    opts: ScanOptions,
    workspace: &mut Workspace<R>,
    indexed: bool,
) -> Result<(DeviceTensor<R>, Option<DeviceTensor<R>>)> {
    check_dtype(client, input.dtype)?;
    // Before the outputs are allocated: a view past the size limit is refused, not allocated.
    crate::validate::input(client, "the input", input)?;
    let out = DeviceTensor::try_empty(client, &input.shape, input.dtype)?;
    let idx = indexed
        .then(|| DeviceTensor::try_empty(client, &input.shape, index_dtype(client)))
        .transpose()?;
    scan_rows_into::<R, O>(
        client,
        input,
        &out,
        idx.as_ref(),
        axis,
        opts,
        workspace,
        None,
        None,
    )?;
    Ok((out, idx))
}

/// Checks that `t` is a contiguous tensor of `shape` and `dtype` (an output buffer).
pub(crate) fn check_output<R: Runtime>(
    t: &DeviceTensor<R>,
    shape: &[usize],
    dtype: DType,
) -> Result<()> {
    if t.shape != shape {
        return Err(Error::ShapeMismatch {
            expected: shape.to_vec(),
            got: t.shape.clone(),
        });
    }
    if t.dtype != dtype {
        return Err(Error::UnsupportedDType {
            dtype: t.dtype,
            reason: format!("the output must be {dtype}"),
        });
    }
    if !t.is_contiguous() {
        return Err(Error::Unsupported("outputs must be contiguous".into()));
    }
    // Its memory is checked with every other argument (`crate::validate::args`).
    Ok(())
}

/// The scan written into caller-provided (contiguous) outputs.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    out: &DeviceTensor<R>,
    idx: Option<&DeviceTensor<R>>,
    axis: isize,
    op: ScanOp,
    opts: ScanOptions,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    scan_into_len(client, input, out, idx, axis, op, opts, workspace, None)
}

/// [`scan_into`] whose length along `axis` is, with `len`, the smaller of `len[0]` (a `u32`
/// on the device) and `input.shape[axis]` (the capacity). Elements past the length are left
/// as they are in the outputs.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_into_len<R: Runtime>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    out: &DeviceTensor<R>,
    idx: Option<&DeviceTensor<R>>,
    axis: isize,
    op: ScanOp,
    opts: ScanOptions,
    workspace: &mut Workspace<R>,
    len: Option<&DeviceTensor<R>>,
) -> Result<()> {
    check_indices(op, idx.is_some())?;
    op.check_device(client, input.dtype)?;
    with_op!(op, |O| scan_rows_into::<R, O>(
        client, input, out, idx, axis, opts, workspace, len, None
    ))
}

/// The error for [`Affine`](cubeprim_kernels::ops::Affine) passed as an operator
/// (`scan_with`, `reduce_with`): its items need the multipliers `linear_recurrence` gives.
pub(crate) fn affine_misuse() -> Error {
    Error::InvalidArgument(
        "ops::Affine is the linear recurrence's operator: run it through linear_recurrence".into(),
    )
}

/// The extra inputs of a linear recurrence ([`Affine`](cubeprim_kernels::ops::Affine)): the
/// multipliers, with the layout (shape, strides, offset) of the input, and the initial states,
/// contiguous, one per row (the input's shape without the axis).
pub(crate) struct AffineArgs<'a, R: Runtime> {
    pub mul: &'a DeviceTensor<R>,
    pub init: Option<&'a DeviceTensor<R>>,
}

/// The scan launch of every operator, built in or the user's: [`scan_into_len`] with the
/// operator's kernel type. `idx` only with a selection operator (checked by the callers),
/// `affine` with [`Affine`](cubeprim_kernels::ops::Affine) only.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_rows_into<R: Runtime, O: KernelOp>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    out: &DeviceTensor<R>,
    idx: Option<&DeviceTensor<R>>,
    axis: isize,
    opts: ScanOptions,
    workspace: &mut Workspace<R>,
    len: Option<&DeviceTensor<R>>,
    affine: Option<AffineArgs<'_, R>>,
) -> Result<()> {
    if O::AFFINE != affine.is_some() {
        return Err(affine_misuse());
    }
    // A linear recurrence carries its multipliers where the indexed scans carry indices.
    let indexed = idx.is_some() || O::AFFINE;
    let axis = resolve_axis(axis, input.rank())?;
    check_dtype(client, input.dtype)?;
    let (mul, init) = match &affine {
        Some(a) => (Some(a.mul), a.init),
        None => (None, None),
    };
    crate::validate::args(
        client,
        &[
            ("the input", Some(input)),
            ("the length", len),
            ("the multipliers", mul),
            ("the initial state", init),
        ],
        &[("the output", Some(out)), ("the indices", idx)],
    )?;
    check_output(out, &input.shape, input.dtype)?;
    let idx_dtype = index_dtype(client);
    if let Some(i) = idx {
        check_output(i, &input.shape, idx_dtype)?;
    }
    if input.num_elements() == 0 {
        return Ok(());
    }
    let plan = ScanPlan::with_len(
        client,
        workspace.tuning(),
        &input.shape,
        &input.strides,
        input.offset,
        axis,
        input.dtype,
        indexed,
        opts,
        len.is_some(),
    )?;
    let dummy_handle = workspace.dummy(client);
    let dummy = || dummy_handle.clone();
    let layout = workspace.layout(client, &plan.layout)?;
    let mut bufs = Buffers {
        input: input.handle.clone(),
        input_len: input.handle.size() as usize / input.dtype.size() / plan.vec,
        mul: mul.map(|m| m.handle.clone()).unwrap_or_else(dummy),
        mul_len: mul.map_or(1, |m| m.handle.size() as usize / m.dtype.size() / plan.vec),
        init: init.map(|t| t.handle.clone()),
        output: out.handle.clone(),
        indices: idx.map(|t| t.handle.clone()).unwrap_or_else(dummy),
        indices_len: if idx.is_some() {
            input.num_elements() / plan.vec
        } else {
            1
        },
        state: dummy(),
        state_len: 1,
        prefixes: dummy(),
        prefixes_len: 1,
        layout,
        layout_len: plan.layout.len(),
        len: len.map(|l| l.handle.clone()).unwrap_or_else(dummy),
    };
    let (count, cubes) = plan.cube_count();
    let mut lease = None;
    match plan.route {
        Route::SingleTile => {}
        Route::Lookback => {
            let l: StateLease = workspace.lease(client, plan.state_bytes, cubes)?;
            bufs.state = l.handle.clone();
            bufs.state_len = l.words;
            lease = Some(l);
        }
        Route::ReduceThenScan => {
            let acc = accumulator_dtype(input.dtype);
            let aggregates = DeviceTensor::<R>::try_empty(
                client,
                &[plan.rows, plan.tiles_per_row as usize],
                acc,
            )?;
            dispatch_reduce::<R, O>(
                client,
                input.dtype,
                &plan,
                &bufs,
                &aggregates.handle,
                count.clone(),
            );
            let (prefixes, _) = scan_op::<R, O>(
                client,
                &aggregates,
                1,
                ScanOptions {
                    exclusive: true,
                    reverse: false,
                    ..opts
                },
                workspace,
                false,
            )?;
            bufs.prefixes = prefixes.handle.clone();
            bufs.prefixes_len = plan.num_tiles as usize;
        }
    }
    let (epoch, base) = lease
        .as_ref()
        .map(|l| (l.epoch, l.counter_base))
        .unwrap_or((1, 0));
    dispatch_scan::<R, O>(
        client,
        input.dtype,
        idx_dtype,
        &plan,
        &bufs,
        count,
        epoch,
        base,
    );
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn dispatch_scan<R: Runtime, O: KernelOp>(
    client: &ComputeClient<R>,
    dtype: DType,
    idx_dtype: DType,
    plan: &ScanPlan,
    bufs: &Buffers,
    count: CubeCount,
    epoch: u32,
    base: u32,
) {
    with_dtype!(dtype, |T, A| {
        if plan.cfg.indexed && idx_dtype == DType::I64 {
            launch_scan::<R, T, A, i64, O>(client, plan, bufs, count, epoch, base)
        } else {
            launch_scan::<R, T, A, i32, O>(client, plan, bufs, count, epoch, base)
        }
    })
}

fn launch_scan<R: Runtime, T: Numeric, A: Numeric, X: Int, O: KernelOp>(
    client: &ComputeClient<R>,
    plan: &ScanPlan,
    b: &Buffers,
    count: CubeCount,
    epoch: u32,
    base: u32,
) {
    let mode = plan.mode();
    let out_len = plan.rows * plan.n / plan.vec;
    // SAFETY: the plan keeps every access inside the buffers (row offsets from the tensor's
    // own shape and strides; tiles masked at the row end).
    unsafe {
        scan_rows::launch_unchecked::<T, A, X, O, R>(
            client,
            count,
            CubeDim::new_1d(plan.cfg.threads),
            plan.vec,
            ScanInputsLaunch::new(
                ArrayArg::from_raw_parts(b.input.clone(), b.input_len),
                ArrayArg::from_raw_parts(b.mul.clone(), b.mul_len),
                match &b.init {
                    Some(h) => ArrayArg::from_raw_parts(h.clone(), plan.rows),
                    None => ArrayArg::from_raw_parts(b.prefixes.clone(), 1),
                },
            ),
            ScanOutputsLaunch::new(
                ArrayArg::from_raw_parts(b.output.clone(), out_len),
                ArrayArg::from_raw_parts(b.indices.clone(), b.indices_len),
            ),
            TileStateArgsLaunch::new(
                ArrayArg::from_raw_parts(b.state.clone(), b.state_len),
                // The state again, for plain polling loads where the plan allows them (CUDA);
                // a wgpu dispatch may not bind one buffer both atomic and plain.
                if plan.lookback.plain_reads {
                    ArrayArg::from_raw_parts(b.state.clone(), b.state_len)
                } else {
                    ArrayArg::from_raw_parts(b.prefixes.clone(), 1)
                },
            ),
            ScanMetaLaunch::new(
                ArrayArg::from_raw_parts(b.prefixes.clone(), b.prefixes_len),
                ArrayArg::from_raw_parts(b.layout.clone(), b.layout_len),
                ArrayArg::from_raw_parts(b.len.clone(), 1),
            ),
            ScanScalarsLaunch::new(
                plan.n_vec,
                plan.tiles_per_row,
                plan.num_tiles,
                plan.in_stride,
                plan.out_stride,
                epoch,
                base,
            ),
            plan.cfg,
            mode,
            plan.device_len,
            b.init.is_some(),
        )
    }
}

fn dispatch_reduce<R: Runtime, O: KernelOp>(
    client: &ComputeClient<R>,
    dtype: DType,
    plan: &ScanPlan,
    bufs: &Buffers,
    aggregates: &Handle,
    count: CubeCount,
) {
    with_dtype!(dtype, |T, A| {
        // SAFETY: as for the scan; one aggregate per tile.
        unsafe {
            reduce_tiles::launch_unchecked::<T, A, O, R>(
                client,
                count,
                CubeDim::new_1d(plan.cfg.threads),
                plan.vec,
                ArrayArg::from_raw_parts(bufs.input.clone(), bufs.input_len),
                ArrayArg::from_raw_parts(aggregates.clone(), plan.num_tiles as usize),
                ArrayArg::from_raw_parts(bufs.layout.clone(), bufs.layout_len),
                ArrayArg::from_raw_parts(bufs.len.clone(), 1),
                plan.n_vec,
                plan.tiles_per_row,
                plan.num_tiles,
                plan.in_stride,
                plan.cfg,
                plan.device_len,
            )
        }
    })
}
