//! Stream compaction: select (with or without a value buffer), partition, masked_select,
//! nonzero / argwhere and the count of set flags.
//!
//! One single-pass kernel ([`cubeprim_kernels::device::select::compact()`]): each tile counts its
//! set flags, learns the count before it by decoupled look-back (with the fallback rule: a cube
//! that waits too long counts the silent tile itself, so no forward-progress guarantee is
//! needed) and scatters its selected elements in the same launch. A flag is set when it is
//! non-zero (any dtype; NaN counts as set, `-0.0` does not).
//!
//! Lengths are [`Len`]: a host value, or a `u32` count on the device (the count of an earlier
//! select, say) with a host capacity that sizes the launch. Counts are written to a `u32[1]`
//! device tensor; read one with [`read_count`] only when the host needs it.
//! [`masked_select`] and [`nonzero`] return outputs sized by the count: they do that one read.

pub(crate) mod plan;

use crate::alloc::Buf;
use crate::count::Len;
use crate::tuning::Policy;
use crate::{DType, DeviceTensor, Error, Result, Workspace};
use cubecl::prelude::*;
use cubeprim_kernels::device::lookback::TileCarry;
use cubeprim_kernels::device::select::{
    compact, CompactInputsLaunch, CompactMetaLaunch, CompactMode, CompactOutputsLaunch,
};
use cubeprim_kernels::device::single_pass::{PassScalarsLaunch, TileStateArgsLaunch};
use plan::{
    check_count, check_flags, check_input, check_output, len_parts, with_bits, with_flags, Pass,
    THREADS,
};

/// Reads a device count (`u32[1]`) back to the host: one sync.
///
/// # Panics
///
/// Where `count` is not a `u32` tensor of at least one element inside its memory (as
/// [`DeviceTensor::to_vec`]).
pub fn read_count<R: Runtime>(client: &ComputeClient<R>, count: &DeviceTensor<R>) -> usize {
    count.to_vec::<u32>(client)[0] as usize
}

/// A new, uninitialised `u32[1]` device count, for the `*_into` ops to write their count to.
pub fn new_count<R: Runtime>(client: &ComputeClient<R>) -> DeviceTensor<R> {
    DeviceTensor::empty(client, &[1], DType::U32)
}

/// Bytes of [`Workspace`] a compaction of up to `capacity` elements needs (select, partition,
/// nonzero and count alike; `data` is the widest moved dtype): the size to give
/// [`Workspace::with_capacity`] so that compactions of up to `capacity` elements allocate no
/// scratch.
///
/// # Errors
///
/// [`Error::TooLarge`] for a capacity past [`MAX_ELEMENTS`](crate::MAX_ELEMENTS),
/// [`Error::Unsupported`] where no tile fits the device.
pub fn select_workspace_bytes<R: Runtime>(
    client: &ComputeClient<R>,
    capacity: usize,
    flags: DType,
    data: DType,
) -> Result<usize> {
    crate::tensor::check_len("the capacity", capacity)?;
    let pass = Pass::new(
        &Policy::default_of(client),
        capacity,
        &[flags.size(), data.size()],
        false,
        4,
        false,
        2 * data.size(),
        flags == DType::U8,
    )?;
    Ok(crate::workspace_bytes(pass.state_bytes, 0))
}

/// One compaction launch.
struct Job<'a, R: Runtime> {
    mode: CompactMode,
    flags: &'a DeviceTensor<R>,
    data: Option<&'a DeviceTensor<R>>,
    values: Option<&'a DeviceTensor<R>>,
    out: Option<&'a DeviceTensor<R>>,
    out_values: Option<&'a DeviceTensor<R>>,
    out_index: Option<&'a DeviceTensor<R>>,
    count: &'a DeviceTensor<R>,
    total: Option<&'a DeviceTensor<R>>,
    shape: Vec<u32>,
    len: Len<'a, R>,
}

/// The buffers of one launch (one-element dummies where the mode has none).
struct Bufs {
    flags: Buf,
    data: Buf,
    values: Buf,
    out: Buf,
    out_values: Buf,
    out_index: Buf,
    count: Buf,
    len: Buf,
    total: Buf,
    shape: Buf,
    /// The tile state (bound twice: atomics and plain loads).
    state: Buf,
}

fn run<R: Runtime>(
    client: &ComputeClient<R>,
    job: Job<'_, R>,
    ws: &mut Workspace<R>,
) -> Result<()> {
    // `job.total` is this call's own count (partition), not an argument.
    crate::validate::args(
        client,
        &[
            ("the flags", Some(job.flags)),
            ("the data", job.data),
            ("the values", job.values),
            ("the length", job.len.device_count()),
        ],
        &[
            ("the output", job.out),
            ("the value output", job.out_values),
            ("the index output", job.out_index),
            ("the count", Some(job.count)),
        ],
    )?;
    let available = [Some(job.flags), job.data, job.values]
        .into_iter()
        .flatten()
        .map(|t| t.num_elements())
        .min()
        .unwrap_or(0);
    job.len.validate(available)?;
    let capacity = job.len.capacity();
    check_flags(client, job.flags, capacity)?;
    for t in [job.data, job.values].into_iter().flatten() {
        check_input(client, t, capacity)?;
    }
    check_count(job.count)?;
    if let Some(t) = job.total {
        check_count(t)?;
    }
    let sizes: Vec<usize> = [Some(job.flags), job.data, job.values]
        .into_iter()
        .flatten()
        .map(|t| t.dtype.size())
        .collect();
    if capacity == 0 {
        if !matches!(job.mode, CompactMode::Partition { .. }) {
            plan::zero_count(client, job.count);
        }
        return Ok(());
    }
    let device_len = job.len.device_count().is_some();
    let stage = match job.mode {
        CompactMode::Select { .. } => [job.data, job.values]
            .into_iter()
            .flatten()
            .map(|t| t.dtype.size())
            .sum(),
        CompactMode::NonZero => 4,
        _ => 0,
    };
    let packed = job.flags.dtype == DType::U8;
    let pass = Pass::new(
        &Policy::of(client, ws.tuning()),
        capacity,
        &sizes,
        device_len,
        4,
        false,
        stage,
        packed,
    )?;
    let (cubes, ncubes) = pass.cube_count();
    let (lease, _) = ws.lease_with_temp(client, pass.state_bytes, 0, ncubes)?;
    let dummy = ws.dummy(client);
    let d = || Buf::new(&dummy, 1);
    let vecs = |t: Option<&DeviceTensor<R>>| {
        t.map(|t| Buf::new(&t.handle, capacity.max(pass.vec) / pass.vec))
            .unwrap_or_else(d)
    };
    let elems = |t: Option<&DeviceTensor<R>>| {
        t.map(|t| Buf::new(&t.handle, t.num_elements().max(1)))
            .unwrap_or_else(d)
    };
    let shape = if job.shape.is_empty() {
        d()
    } else {
        Buf::new(
            &client.create_from_slice(bytemuck::cast_slice(&job.shape)),
            job.shape.len(),
        )
    };
    let (len_h, n_host) = len_parts(job.len, &dummy);
    let bufs = Bufs {
        // Byte flags: vectors of `pass.vec` words, four flags to a word.
        flags: if packed {
            Buf::new(&job.flags.handle, capacity.div_ceil(4 * pass.vec).max(1))
        } else {
            vecs(Some(job.flags))
        },
        data: vecs(job.data),
        values: vecs(job.values),
        out: elems(job.out),
        out_values: elems(job.out_values),
        out_index: elems(job.out_index),
        count: Buf::new(&job.count.handle, 1),
        len: Buf::new(&len_h, 1),
        total: job.total.map(|t| Buf::new(&t.handle, 1)).unwrap_or_else(d),
        shape,
        state: Buf::new(&lease.handle, lease.words),
    };
    let args = (cubes, n_host, lease.epoch, lease.counter_base);
    let x64 = job
        .out_index
        .map(|t| t.dtype == DType::I64)
        .unwrap_or(false);
    match job.mode {
        CompactMode::Select { .. } | CompactMode::Partition { .. } => {
            let data = job.data.expect("data").dtype;
            let values = job.values.map(|v| v.dtype).unwrap_or(data);
            with_flags!(job.flags.dtype, |F, G| with_bits!(data, |T| with_bits!(
                values,
                |V| launch::<R, F, T, V, i32, G>(client, &pass, &bufs, args, job.mode)
            )))
        }
        CompactMode::NonZero | CompactMode::Count => {
            with_flags!(job.flags.dtype, |F, G| if x64 {
                launch::<R, F, u32, u32, i64, G>(client, &pass, &bufs, args, job.mode)
            } else {
                launch::<R, F, u32, u32, i32, G>(client, &pass, &bufs, args, job.mode)
            })
        }
    }
    Ok(())
}

fn launch<R: Runtime, F: Numeric, T: Numeric, V: Numeric, X: Int, G: TileCarry>(
    client: &ComputeClient<R>,
    pass: &Pass,
    b: &Bufs,
    (cubes, n_host, epoch, base): (CubeCount, u32, u32, u32),
    mode: CompactMode,
) {
    // SAFETY: every buffer holds the capacity the launch is sized for (checked by `run`);
    // tiles past the length read and write nothing.
    unsafe {
        compact::launch_unchecked::<F, T, V, X, G, R>(
            client,
            cubes,
            CubeDim::new_1d(THREADS),
            pass.vec,
            CompactInputsLaunch::new(b.flags.arg(), b.data.arg(), b.values.arg()),
            CompactOutputsLaunch::new(
                b.out.arg(),
                b.out_values.arg(),
                b.out_index.arg(),
                b.count.arg(),
            ),
            CompactMetaLaunch::new(b.len.arg(), b.total.arg(), b.shape.arg()),
            TileStateArgsLaunch::new(b.state.arg(), b.state.arg()),
            PassScalarsLaunch::new(n_host, epoch, base),
            pass.cfg,
            mode,
        )
    }
}

fn check_data_output<R: Runtime>(
    out: &DeviceTensor<R>,
    data: &DeviceTensor<R>,
    needed: usize,
) -> Result<()> {
    check_output(out, needed, data.dtype)
}

/// Writes `data[i]` for every set `flags[i]` (`i < len`), in order, to the front of `out`;
/// `count[0]` receives how many. `out` needs room for the capacity of `len`. A flag is set when
/// it is non-zero (NaN is set, `-0.0` is not); flags may be bytes ([`DType::U8`]). One
/// single-pass kernel; no host sync, and with a reused [`Workspace`] no allocation.
///
/// # Errors
///
/// [`Error::UnsupportedDType`] for data the runtime lacks (flags may also be [`DType::U8`]), for an
/// output of another dtype than its input, or for a count that is not `u32`; [`Error::Unsupported`]
/// for a tensor that is not contiguous (or a device count not at the start of its buffer);
/// [`Error::LengthMismatch`] for a capacity of `len` past the elements of an input, or a device
/// count of more than one element; [`Error::OutputTooSmall`] for an output with room for fewer than
/// the capacity (a count needs one element); [`Error::Aliased`] for an output that shares memory
/// with an input or another output; the argument checks of every call ([`Error::ShapeMismatch`],
/// [`Error::TooLarge`], [`Error::OutOfBounds`], [`Error::InvalidArgument`]; see [`Error`]);
/// [`Error::BufferTooLarge`], [`Error::ScratchTooSmall`] or [`Error::WorkspaceMismatch`] from
/// `workspace`.
#[allow(clippy::too_many_arguments)]
pub fn select_into<'a, R: Runtime>(
    client: &ComputeClient<R>,
    data: &'a DeviceTensor<R>,
    flags: &'a DeviceTensor<R>,
    len: impl Into<Len<'a, R>>,
    out: &DeviceTensor<R>,
    count: &DeviceTensor<R>,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    let len = len.into();
    check_data_output(out, data, len.capacity())?;
    run(
        client,
        Job {
            mode: CompactMode::Select { values: false },
            flags,
            data: Some(data),
            values: None,
            out: Some(out),
            out_values: None,
            out_index: None,
            count,
            total: None,
            shape: vec![],
            len,
        },
        workspace,
    )
}

/// [`select_into`] of a key-value pair: both buffers selected by the same flags, in one pass.
///
/// # Errors
///
/// As [`select_into`], for both pairs of buffers.
#[allow(clippy::too_many_arguments)]
pub fn select_pairs_into<'a, R: Runtime>(
    client: &ComputeClient<R>,
    keys: &'a DeviceTensor<R>,
    values: &'a DeviceTensor<R>,
    flags: &'a DeviceTensor<R>,
    len: impl Into<Len<'a, R>>,
    out_keys: &DeviceTensor<R>,
    out_values: &DeviceTensor<R>,
    count: &DeviceTensor<R>,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    let len = len.into();
    check_data_output(out_keys, keys, len.capacity())?;
    check_data_output(out_values, values, len.capacity())?;
    run(
        client,
        Job {
            mode: CompactMode::Select { values: true },
            flags,
            data: Some(keys),
            values: Some(values),
            out: Some(out_keys),
            out_values: Some(out_values),
            out_index: None,
            count,
            total: None,
            shape: vec![],
            len,
        },
        workspace,
    )
}

/// [`select_into`] with fresh outputs: `(out, count)`, `out` sized for the capacity (its first
/// `count[0]` elements are the selection). No host sync: the count stays on the device, where a
/// following op can take it as its length ([`Len::Device`]); [`read_count`] reads it.
///
/// # Errors
///
/// As [`select_into`].
///
/// # Example
///
/// ```
/// use cubecl::wgpu::{WgpuDevice, WgpuRuntime};
/// use cubecl::Runtime;
/// use cubeprim::{DType, DeviceTensor, Len, ScanOp, ScanOptions, Workspace};
///
/// let client = WgpuRuntime::client(&WgpuDevice::default());
/// let data = [5.0f32, -1., 0., 7., -3., 2.];
/// let x = DeviceTensor::<WgpuRuntime>::from_slice(&client, &data, &[2, 3])?;
/// let mask = DeviceTensor::<WgpuRuntime>::from_slice(&client, &[1u8, 0, 0, 1, 0, 1], &[2, 3])?;
/// let mut ws = Workspace::new();
///
/// // Selected elements to the front, their count left on the device: no host sync ...
/// let (kept, count) = cubeprim::select(&client, &x, &mask, 6, &mut ws)?;
/// // ... so the next op takes the count as its length (here a running sum of the selection).
/// let sums = DeviceTensor::try_empty(&client, &[6], DType::F32)?;
/// let len = Len::Device { count: &count, capacity: 6 };
/// let opts = ScanOptions::default();
/// cubeprim::scan_len_into(&client, &kept, &sums, None, len, ScanOp::Sum, opts, &mut ws)?;
/// let n = cubeprim::read_count(&client, &count); // the one host read
/// assert_eq!(n, 3);
/// assert_eq!(&sums.to_vec::<f32>(&client)[..n], [5., 12., 14.]);
///
/// // torch.masked_select and torch.nonzero read the count themselves to size their result.
/// let sel = cubeprim::masked_select(&client, &x, &mask, &mut ws)?;
/// assert_eq!(sel.to_vec::<f32>(&client), [5., 7., 2.]);
/// let idx = cubeprim::nonzero(&client, &x, &mut ws)?; // [count, rank]
/// assert_eq!(idx.shape, [5, 2]);
/// # Ok::<(), cubeprim::Error>(())
/// ```
pub fn select<'a, R: Runtime>(
    client: &ComputeClient<R>,
    data: &'a DeviceTensor<R>,
    flags: &'a DeviceTensor<R>,
    len: impl Into<Len<'a, R>>,
    workspace: &mut Workspace<R>,
) -> Result<(DeviceTensor<R>, DeviceTensor<R>)> {
    let len = len.into();
    before_alloc(client, &[data, flags], len)?;
    let out = DeviceTensor::try_empty(client, &[len.capacity()], data.dtype)?;
    let count = new_count(client);
    select_into(client, data, flags, len, &out, &count, workspace)?;
    Ok((out, count))
}

/// [`select_pairs_into`] with fresh outputs: `(keys, values, count)`, the outputs sized for the
/// capacity of `len` (their first `count[0]` elements are the selection). No host sync.
///
/// # Errors
///
/// As [`select_into`].
pub fn select_pairs<'a, R: Runtime>(
    client: &ComputeClient<R>,
    keys: &'a DeviceTensor<R>,
    values: &'a DeviceTensor<R>,
    flags: &'a DeviceTensor<R>,
    len: impl Into<Len<'a, R>>,
    workspace: &mut Workspace<R>,
) -> Result<(DeviceTensor<R>, DeviceTensor<R>, DeviceTensor<R>)> {
    let len = len.into();
    before_alloc(client, &[keys, values, flags], len)?;
    let ok = DeviceTensor::try_empty(client, &[len.capacity()], keys.dtype)?;
    let ov = DeviceTensor::try_empty(client, &[len.capacity()], values.dtype)?;
    let count = new_count(client);
    select_pairs_into(
        client, keys, values, flags, len, &ok, &ov, &count, workspace,
    )?;
    Ok((ok, ov, count))
}

/// Writes into `count[0]` how many of the first `len` flags are set (non-zero;
/// `torch.count_nonzero`). The count stays on the device: no host sync.
///
/// # Errors
///
/// As [`select_into`].
pub fn count_nonzero_into<'a, R: Runtime>(
    client: &ComputeClient<R>,
    flags: &'a DeviceTensor<R>,
    len: impl Into<Len<'a, R>>,
    count: &DeviceTensor<R>,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    run(
        client,
        Job {
            mode: CompactMode::Count,
            flags,
            data: None,
            values: None,
            out: None,
            out_values: None,
            out_index: None,
            count,
            total: None,
            shape: vec![],
            len: len.into(),
        },
        workspace,
    )
}

/// Stable partition: the selected elements first (in order), then the others (in order);
/// `count[0]` = number selected. Two launches: the count, then the single-pass scatter. `out`
/// needs room for the capacity of `len`, all of which it receives.
///
/// # Errors
///
/// As [`select_into`].
#[allow(clippy::too_many_arguments)]
pub fn partition_into<'a, R: Runtime>(
    client: &ComputeClient<R>,
    data: &'a DeviceTensor<R>,
    flags: &'a DeviceTensor<R>,
    len: impl Into<Len<'a, R>>,
    out: &DeviceTensor<R>,
    count: &DeviceTensor<R>,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    let len = len.into();
    crate::validate::args(
        client,
        &[
            ("the data", Some(data)),
            ("the flags", Some(flags)),
            ("the length", len.device_count()),
        ],
        &[("the output", Some(out)), ("the count", Some(count))],
    )?;
    check_data_output(out, data, len.capacity())?;
    check_input(client, data, len.capacity())?;
    count_nonzero_into(client, flags, len, count, workspace)?;
    run(
        client,
        Job {
            mode: CompactMode::Partition { values: false },
            flags,
            data: Some(data),
            values: None,
            out: Some(out),
            out_values: None,
            out_index: None,
            count,
            total: Some(count),
            shape: vec![],
            len,
        },
        workspace,
    )
}

/// [`partition_into`] with fresh outputs: `(out, count)`: every one of the first `len`
/// elements, the selected ones first (`torch.cat([x[m], x[~m]])`, stable), and the number
/// selected, left on the device. No host sync.
///
/// # Errors
///
/// As [`select_into`].
pub fn partition<'a, R: Runtime>(
    client: &ComputeClient<R>,
    data: &'a DeviceTensor<R>,
    flags: &'a DeviceTensor<R>,
    len: impl Into<Len<'a, R>>,
    workspace: &mut Workspace<R>,
) -> Result<(DeviceTensor<R>, DeviceTensor<R>)> {
    let len = len.into();
    before_alloc(client, &[data, flags], len)?;
    let out = DeviceTensor::try_empty(client, &[len.capacity()], data.dtype)?;
    let count = new_count(client);
    partition_into(client, data, flags, len, &out, &count, workspace)?;
    Ok((out, count))
}

/// The tensors of a call that returns fresh outputs, checked before they are allocated, and
/// the capacity of its length (the outputs' size).
fn before_alloc<R: Runtime>(
    client: &ComputeClient<R>,
    inputs: &[&DeviceTensor<R>],
    len: Len<'_, R>,
) -> Result<()> {
    for t in inputs {
        crate::validate::input(client, "an input", t)?;
    }
    crate::tensor::check_len("the length", len.capacity())
}

/// The elements of `x` (checked), with its `[n, rank]` output inside the size limit.
fn nonzero_len<R: Runtime>(client: &ComputeClient<R>, x: &DeviceTensor<R>) -> Result<usize> {
    crate::validate::input(client, "the input", x)?;
    let n = x.num_elements();
    crate::tensor::check_len("nonzero's output", n.saturating_mul(x.rank()))?;
    Ok(n)
}

/// The dtype of [`nonzero`] indices: i64 where the runtime has it (as PyTorch), else i32.
pub fn nonzero_index_dtype<R: Runtime>(client: &ComputeClient<R>) -> DType {
    crate::scan::index_dtype(client)
}

/// The N-d indices (row-major order) of the non-zero elements of `x`, written as rows of
/// `rank` to `out` (`[x.num_elements(), rank]` or more, [`nonzero_index_dtype`]); `count[0]` =
/// how many rows. No host sync. `x` may be any dtype the runtime has, or bytes.
///
/// # Errors
///
/// As [`select_into`], and [`Error::TooLarge`] where `[x.num_elements(), rank]` exceeds
/// [`MAX_ELEMENTS`](crate::MAX_ELEMENTS).
pub fn nonzero_into<R: Runtime>(
    client: &ComputeClient<R>,
    x: &DeviceTensor<R>,
    out: &DeviceTensor<R>,
    count: &DeviceTensor<R>,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    let n = nonzero_len(client, x)?;
    check_output(out, n * x.rank(), nonzero_index_dtype(client))?;
    let mut shape = vec![x.rank() as u32];
    for &s in &x.shape {
        shape.push(u32::try_from(s).map_err(|_| Error::Unsupported(format!("dimension {s}")))?);
    }
    run(
        client,
        Job {
            mode: CompactMode::NonZero,
            flags: x,
            data: None,
            values: None,
            out: None,
            out_values: None,
            out_index: Some(out),
            count,
            total: None,
            shape,
            len: Len::Host(n),
        },
        workspace,
    )
}

/// `torch.nonzero` / `argwhere`: a `[count, rank]` tensor of the indices of the non-zero
/// elements (row-major order). Reads the count back once (the one sync it does) to size the
/// result, which is a view of a buffer sized for every element. Indices are
/// [`nonzero_index_dtype`]. See [`select()`] for an example.
///
/// # Errors
///
/// As [`nonzero_into`].
pub fn nonzero<R: Runtime>(
    client: &ComputeClient<R>,
    x: &DeviceTensor<R>,
    workspace: &mut Workspace<R>,
) -> Result<DeviceTensor<R>> {
    let n = nonzero_len(client, x)?;
    let rank = x.rank();
    let out = DeviceTensor::try_empty(client, &[n, rank], nonzero_index_dtype(client))?;
    let count = new_count(client);
    nonzero_into(client, x, &out, &count, workspace)?;
    let k = read_count(client, &count);
    out.narrow(0, 0, k)
}

/// `torch.masked_select`: the elements of `data` where `mask` is non-zero (same shape), as a
/// 1-D tensor of the count's length, in row-major order. The mask may be bytes (bool) or any
/// dtype (non-zero is set). Reads the count back once (the one sync it does). See [`select()`]
/// for an example.
///
/// # Errors
///
/// [`Error::ShapeMismatch`] for a mask of another shape; otherwise as [`select_into`].
pub fn masked_select<R: Runtime>(
    client: &ComputeClient<R>,
    data: &DeviceTensor<R>,
    mask: &DeviceTensor<R>,
    workspace: &mut Workspace<R>,
) -> Result<DeviceTensor<R>> {
    if data.shape != mask.shape {
        return Err(Error::ShapeMismatch {
            expected: data.shape.clone(),
            got: mask.shape.clone(),
        });
    }
    let (out, count) = select(client, data, mask, data.num_elements(), workspace)?;
    let k = read_count(client, &count);
    out.narrow(0, 0, k)
}
