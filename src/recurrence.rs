//! The first-order linear recurrence `h[t] = a[t] * h[t-1] + b[t]` along an axis: the core of
//! state-space and linear-attention models (Mamba, S4 / S5, RWKV, gated linear attention).
//!
//! It is a scan with the associative operator `(a1, b1) ∘ (a2, b2) = (a1 a2, a2 b1 + b2)`
//! ([`cubeprim::ops::Affine`](crate::ops::Affine)), run by the scans' own kernels: one pass
//! over `a` and `b`, the decoupled look-back carrying each tile's pair. `h[-1]` is 0, or the
//! initial state `h0` of the row.

use crate::dispatch::with_dtype;
use crate::ops::Affine;
use crate::scan::launch::{scan_rows_into, AffineArgs};
use crate::scan::{resolve_axis, PlaneOps, ScanOptions, ScanTuning};
use crate::sort::to_u32;
use crate::{DType, DeviceTensor, Error, Result, Workspace};
use cubecl::prelude::*;

/// Variants of a [`linear_recurrence`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RecurrenceOptions {
    /// Run from the end of the axis towards its start: `h[t] = a[t] * h[t+1] + b[t]` (the
    /// backward pass of a forward recurrence is one).
    pub reverse: bool,
    /// Whether the cube-wide scan uses plane (subgroup) operations.
    pub plane_ops: PlaneOps,
    /// Overrides of the tile shape and look-back constants, for benchmarks and tests.
    #[doc(hidden)]
    pub tuning: Option<ScanTuning>,
}

impl RecurrenceOptions {
    /// Runs from the end of the axis ([`RecurrenceOptions::reverse`]).
    pub fn reverse(mut self) -> Self {
        self.reverse = true;
        self
    }
}

/// The shape of `h0` for inputs of `shape` along `axis`: `shape` without the axis.
pub fn initial_state_shape(shape: &[usize], axis: usize) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != axis)
        .map(|(_, &s)| s)
        .collect()
}

/// `h[t] = a[t] * h[t-1] + b[t]` along `axis` (negative counts from the end) of `a` and `b`,
/// two float tensors of one shape and dtype (any strides); `h[-1]` is 0, or with `h0` the
/// row's entry of `h0` (the shape without the axis, the same dtype). f16 and bf16 compute in
/// f32. Returns `h`, contiguous, of the inputs' shape and dtype.
///
/// f32, f16 and bf16 run in one pass (the scans' look-back, the running product of the
/// multipliers carried in f32); f64, where the runtime has it, keeps f64 throughout, in chunks
/// solved in three steps (not a single pass; see `run_chunked` in the source).
///
/// # Errors
///
/// [`Error::ShapeMismatch`] for `a`, `b` (or `h0`) of other shapes, [`Error::UnsupportedDType`]
/// for another dtype than `b`'s, an integer dtype, or f64 on a runtime without it,
/// [`Error::AxisOutOfRange`], and the
/// errors of [`scan`](crate::scan()) for views and sizes.
///
/// # Example
///
/// ```
/// use cubecl::prelude::*;
/// use cubecl::wgpu::{WgpuDevice, WgpuRuntime};
/// use cubeprim::{DeviceTensor, RecurrenceOptions, Workspace};
///
/// # fn main() -> Result<(), cubeprim::Error> {
/// let client = WgpuRuntime::client(&WgpuDevice::default());
/// // Two rows: an exponential moving average (decay 0.5), and a plain running sum.
/// let a = DeviceTensor::<WgpuRuntime>::from_slice(&client, &[0.5f32, 0.5, 0.5, 1., 1., 1.], &[2, 3])?;
/// let b = DeviceTensor::<WgpuRuntime>::from_slice(&client, &[4f32, 2., 1., 1., 2., 3.], &[2, 3])?;
/// let mut ws = Workspace::new();
///
/// let h = cubeprim::linear_recurrence(&client, &a, &b, None, -1, RecurrenceOptions::default(), &mut ws)?;
/// assert_eq!(h.to_vec::<f32>(&client), [4., 4., 3., 1., 3., 6.]);
///
/// // From an initial state per row.
/// let h0 = DeviceTensor::<WgpuRuntime>::from_slice(&client, &[8f32, 10.], &[2])?;
/// let h = cubeprim::linear_recurrence(&client, &a, &b, Some(&h0), -1, RecurrenceOptions::default(), &mut ws)?;
/// assert_eq!(h.to_vec::<f32>(&client), [8., 6., 4., 11., 13., 16.]);
/// # Ok(())
/// # }
/// ```
pub fn linear_recurrence<R: Runtime>(
    client: &ComputeClient<R>,
    a: &DeviceTensor<R>,
    b: &DeviceTensor<R>,
    h0: Option<&DeviceTensor<R>>,
    axis: isize,
    opts: RecurrenceOptions,
    workspace: &mut Workspace<R>,
) -> Result<DeviceTensor<R>> {
    check_args(client, a, b, h0, axis)?;
    crate::validate::input(client, "b", b)?;
    let out = DeviceTensor::try_empty(client, &b.shape, b.dtype)?;
    run(client, a, b, h0, &out, axis, opts, workspace)?;
    Ok(out)
}

/// [`linear_recurrence`] into a caller-provided contiguous output of the inputs' shape and
/// dtype. With a reused [`Workspace`] and `a`, `b` (and `h0`) of one layout, it allocates
/// nothing; inputs of different layouts are first copied to contiguous buffers.
///
/// # Errors
///
/// As [`linear_recurrence`], and those of [`scan_into`](crate::scan_into()) for the output
/// ([`Error::Aliased`] for an output that shares memory with an input).
#[allow(clippy::too_many_arguments)]
pub fn linear_recurrence_into<R: Runtime>(
    client: &ComputeClient<R>,
    a: &DeviceTensor<R>,
    b: &DeviceTensor<R>,
    h0: Option<&DeviceTensor<R>>,
    output: &DeviceTensor<R>,
    axis: isize,
    opts: RecurrenceOptions,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    check_args(client, a, b, h0, axis)?;
    run(client, a, b, h0, output, axis, opts, workspace)
}

/// Both entry points once their arguments are checked ([`check_args`]).
#[allow(clippy::too_many_arguments)]
fn run<R: Runtime>(
    client: &ComputeClient<R>,
    a: &DeviceTensor<R>,
    b: &DeviceTensor<R>,
    h0: Option<&DeviceTensor<R>>,
    output: &DeviceTensor<R>,
    axis: isize,
    opts: RecurrenceOptions,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    for (what, t) in [("a", Some(a)), ("b", Some(b)), ("h0", h0)] {
        if let Some(t) = t {
            crate::validate::input(client, what, t)?;
        }
    }
    if b.dtype == DType::F64 {
        let axis = resolve_axis(axis, b.rank())?;
        return run_chunked(client, a, b, h0, output, axis, opts.reverse);
    }
    // The kernel reads `a` with `b`'s layout, and `h0` row by row from its start.
    let same_layout = (a.is_contiguous() && b.is_contiguous())
        || (a.strides == b.strides && a.offset == b.offset);
    let (a_c, b_c) = if same_layout {
        (None, None)
    } else {
        (contiguous_copy(client, a)?, contiguous_copy(client, b)?)
    };
    let h0_c = h0
        .map(|h| contiguous_copy(client, h))
        .transpose()?
        .flatten();
    let a = a_c.as_ref().unwrap_or(a);
    let b = b_c.as_ref().unwrap_or(b);
    let h0 = h0_c.as_ref().or(h0);
    let scan_opts = ScanOptions {
        reverse: opts.reverse,
        plane_ops: opts.plane_ops,
        tuning: opts.tuning,
        ..ScanOptions::default()
    };
    scan_rows_into::<R, Affine>(
        client,
        b,
        output,
        None,
        axis,
        scan_opts,
        workspace,
        None,
        Some(AffineArgs { mul: a, init: h0 }),
    )
}

/// The checks of both entry points: shapes, dtypes, axis.
fn check_args<R: Runtime>(
    client: &ComputeClient<R>,
    a: &DeviceTensor<R>,
    b: &DeviceTensor<R>,
    h0: Option<&DeviceTensor<R>>,
    axis: isize,
) -> Result<()> {
    check_dtype(client, b.dtype)?;
    if a.shape != b.shape {
        return Err(Error::ShapeMismatch {
            expected: b.shape.clone(),
            got: a.shape.clone(),
        });
    }
    let axis = resolve_axis(axis, b.rank())?;
    for (what, t) in [("a", Some(a)), ("h0", h0)] {
        if let Some(t) = t {
            if t.dtype != b.dtype {
                return Err(Error::UnsupportedDType {
                    dtype: t.dtype,
                    reason: format!("{what} must have b's dtype, {}", b.dtype),
                });
            }
        }
    }
    if let Some(h) = h0 {
        let want = initial_state_shape(&b.shape, axis);
        if h.shape != want {
            return Err(Error::ShapeMismatch {
                expected: want,
                got: h.shape.clone(),
            });
        }
    }
    Ok(())
}

/// Floats only, f64 where the runtime has it.
pub(crate) fn check_dtype<R: Runtime>(client: &ComputeClient<R>, dtype: DType) -> Result<()> {
    match dtype {
        DType::F32 | DType::F16 | DType::BF16 => Ok(()),
        DType::F64 => crate::scan::launch::check_dtype(client, dtype),
        _ => Err(Error::UnsupportedDType {
            dtype,
            reason: "a linear recurrence is defined for floats".into(),
        }),
    }
}

/// Steps a unit of the chunked recurrence composes ([`run_chunked`]).
const CHUNK: u32 = 32;
/// Units per cube of the chunked recurrence where `inner` is large (unstaged kernels).
const CHUNK_UNITS: u32 = 256;
/// Units per cube of the staged kernels where the device has 32 KiB of shared memory: the
/// cube stages `STAGED_UNITS * CHUNK` elements of `a` and of `b` (f64: 32 KiB).
const STAGED_UNITS: u32 = 64;
/// The largest `inner` the staged kernels take: from there on, the unstaged kernels' adjacent
/// units read adjacent memory, at least `STAGED_MAX_INNER` f64 (128 bytes) at a time.
const STAGED_MAX_INNER: usize = 16;

/// The recurrence in f64, whose multipliers' running product the scans' look-back cannot carry
/// (it travels in a 32-bit word, see [`Affine`]): in chunks of [`CHUNK`] steps, each composed
/// into one affine pair by one unit, the chunks' pairs solved the same way (recursively, until a
/// row fits one chunk), then each chunk run again from the state entering it
/// ([`recurrence_chunks`](cubeprim_kernels::device::recurrence_chunks)). `a` and `b` are read
/// twice and the temporaries are 2 / [`CHUNK`] of the data, so it is not a single pass; f64 is
/// the precision path, not the fast one.
///
/// A unit's chunk is `CHUNK` consecutive steps, so where `inner` is small, adjacent units read
/// memory `CHUNK * inner` elements apart. There (`inner <= STAGED_MAX_INNER`) the staged kernels
/// run instead: a cube loads a contiguous block of whole chunks of `a` and `b` into shared
/// memory with coalesced loads (consecutive units, consecutive elements), its units compose or
/// run their chunks from there, and `affine_apply_staged` stores the block's states back from
/// shared memory, coalesced too. The block is `units / inner` consecutive chunks of the
/// `[outer, chunks]` enumeration, so it crosses rows where rows are short and no cube waits on
/// another. `units` is [`STAGED_UNITS`] where the device has the 32 KiB of shared memory it
/// takes, else half of it (16 KiB).
fn run_chunked<R: Runtime>(
    client: &ComputeClient<R>,
    a: &DeviceTensor<R>,
    b: &DeviceTensor<R>,
    h0: Option<&DeviceTensor<R>>,
    output: &DeviceTensor<R>,
    axis: usize,
    reverse: bool,
) -> Result<()> {
    crate::validate::args(
        client,
        &[("b", Some(b)), ("a", Some(a)), ("h0", h0)],
        &[("the output", Some(output))],
    )?;
    crate::scan::launch::check_output(output, &b.shape, b.dtype)?;
    if b.num_elements() == 0 {
        return Ok(());
    }
    let (a_c, b_c) = (contiguous_copy(client, a)?, contiguous_copy(client, b)?);
    let h0_c = h0
        .map(|h| contiguous_copy(client, h))
        .transpose()?
        .flatten();
    let a = a_c.as_ref().unwrap_or(a);
    let b = b_c.as_ref().unwrap_or(b);
    let h0 = h0_c.as_ref().or(h0);
    let dims = Dims {
        outer: b.shape[..axis].iter().product(),
        len: b.shape[axis],
        inner: b.shape[axis + 1..].iter().product(),
    };
    chunked(
        client,
        &a.handle,
        &b.handle,
        h0.map(|h| &h.handle),
        &output.handle,
        dims,
        reverse,
    )
}

/// A contiguous `[outer, len, inner]` tensor along its middle axis.
#[derive(Clone, Copy)]
struct Dims {
    outer: usize,
    len: usize,
    inner: usize,
}

/// [`run_chunked`]'s recursion: `out` = the recurrence of `a`, `b` (f64, `dims`) from `h0`.
fn chunked<R: Runtime>(
    client: &ComputeClient<R>,
    a: &cubecl::server::Handle,
    b: &cubecl::server::Handle,
    h0: Option<&cubecl::server::Handle>,
    out: &cubecl::server::Handle,
    dims: Dims,
    reverse: bool,
) -> Result<()> {
    use cubeprim_kernels::device::recurrence_chunks::{
        affine_apply, affine_apply_staged, affine_chunks, affine_chunks_staged,
    };
    let n = dims.outer * dims.len * dims.inner;
    let chunks = dims.len.div_ceil(CHUNK as usize);
    let units = dims.outer * chunks * dims.inner;
    let units32 = to_u32(units, "the chunked recurrence's units")?;
    let len = to_u32(dims.len, "the recurrence's length")?;
    let inner = to_u32(dims.inner, "the recurrence's inner size")?;
    let chunks32 = to_u32(chunks, "the recurrence's chunks")?;
    let arr = |h: &cubecl::server::Handle, len: usize| {
        // SAFETY: every handle holds `len` f64 (the caller's tensors were checked against theirs).
        unsafe { ArrayArg::from_raw_parts(h.clone(), len) }
    };
    // The staged kernels' units per cube and grid, shared by both launches.
    let staged = staged_units(client, dims.inner)
        .map(|su| staged_launch(su, dims.outer * chunks, dims.inner).map(|l| (su, l)))
        .transpose()?;
    let states = if chunks > 1 {
        let agg_a = crate::alloc::empty(client, units * 8)?;
        let agg_b = crate::alloc::empty(client, units * 8)?;
        // SAFETY: units below `units` (unstaged), or the chunks of their cube's block (staged,
        // whose loads stay inside `[start, stop)`, within `n`), read steps of their own chunks,
        // inside `n`, and write their own entry of the `units` pairs.
        unsafe {
            match staged.clone() {
                Some((su, (count, dim, tiles, per_cube))) => {
                    affine_chunks_staged::launch_unchecked::<f64, R>(
                        client,
                        count,
                        dim,
                        arr(a, n),
                        arr(b, n),
                        arr(&agg_a, units),
                        arr(&agg_b, units),
                        len,
                        inner,
                        chunks32,
                        tiles,
                        per_cube,
                        CHUNK,
                        su,
                        reverse,
                        dims.inner == 1,
                    )
                }
                None => affine_chunks::launch_unchecked::<f64, R>(
                    client,
                    crate::device::cube_count_2d(units32.div_ceil(CHUNK_UNITS)),
                    CubeDim::new_1d(CHUNK_UNITS),
                    arr(a, n),
                    arr(b, n),
                    arr(&agg_a, units),
                    arr(&agg_b, units),
                    len,
                    inner,
                    chunks32,
                    units32,
                    CHUNK,
                    reverse,
                ),
            }
        };
        let states = crate::alloc::empty(client, units * 8)?;
        let over_chunks = Dims {
            len: chunks,
            ..dims
        };
        chunked(client, &agg_a, &agg_b, h0, &states, over_chunks, reverse)?;
        Some(states)
    } else {
        None
    };
    let rows = dims.outer * dims.inner;
    let states_arg = || states.as_ref().map_or_else(|| arr(a, 1), |s| arr(s, units));
    let h0_arg = || h0.map_or_else(|| arr(a, 1), |h| arr(h, rows));
    // SAFETY: as above; `states` holds `units` f64 where there is more than one chunk (else it
    // is never read), `h0` `rows` where given (else never read).
    unsafe {
        match staged {
            Some((su, (count, dim, tiles, per_cube))) => {
                affine_apply_staged::launch_unchecked::<f64, R>(
                    client,
                    count,
                    dim,
                    arr(a, n),
                    arr(b, n),
                    states_arg(),
                    h0_arg(),
                    arr(out, n),
                    len,
                    inner,
                    chunks32,
                    tiles,
                    per_cube,
                    CHUNK,
                    su,
                    reverse,
                    h0.is_some(),
                    dims.inner == 1,
                )
            }
            None => affine_apply::launch_unchecked::<f64, R>(
                client,
                crate::device::cube_count_2d(units32.div_ceil(CHUNK_UNITS)),
                CubeDim::new_1d(CHUNK_UNITS),
                arr(a, n),
                arr(b, n),
                states_arg(),
                h0_arg(),
                arr(out, n),
                len,
                inner,
                chunks32,
                units32,
                CHUNK,
                reverse,
                h0.is_some(),
            ),
        }
    };
    Ok(())
}

/// The units per cube of the staged kernels for `inner` ([`run_chunked`]): [`STAGED_UNITS`],
/// or half of it where the device's shared memory does not hold its two blocks of f64; `None`
/// (the unstaged kernels) where `inner` is over [`STAGED_MAX_INNER`] or not even that fits.
fn staged_units<R: Runtime>(client: &ComputeClient<R>, inner: usize) -> Option<u32> {
    let max = client.properties().hardware.max_shared_memory_size;
    let bytes = |units: u32| 2 * (units * CHUNK) as usize * 8;
    if inner > STAGED_MAX_INNER {
        return None;
    }
    [STAGED_UNITS, STAGED_UNITS / 2]
        .into_iter()
        .find(|&u| bytes(u) <= max && inner <= u as usize)
}

/// The grid of the staged kernels with `units` units per cube over `tiles` chunks of `inner`
/// columns: each cube takes `units / inner` chunks. Returns the cube count, the cube's
/// dimensions, `tiles` and the chunks per cube.
fn staged_launch(units: u32, tiles: usize, inner: usize) -> Result<(CubeCount, CubeDim, u32, u32)> {
    let per_cube = units / inner as u32;
    let tiles32 = to_u32(tiles, "the recurrence's chunks")?;
    Ok((
        crate::device::cube_count_2d(tiles32.div_ceil(per_cube)),
        CubeDim::new_1d(units),
        tiles32,
        per_cube,
    ))
}

/// A contiguous copy of `t` where it is a view that is not contiguous (else `None`: use `t`).
fn contiguous_copy<R: Runtime>(
    client: &ComputeClient<R>,
    t: &DeviceTensor<R>,
) -> Result<Option<DeviceTensor<R>>> {
    (!t.is_contiguous())
        .then(|| contiguous(client, t))
        .transpose()
}

/// A contiguous copy of the view `t` (one kernel, one unit per element).
pub(crate) fn contiguous<R: Runtime>(
    client: &ComputeClient<R>,
    t: &DeviceTensor<R>,
) -> Result<DeviceTensor<R>> {
    use cubeprim_kernels::device::copy::copy_strided;
    let out = DeviceTensor::try_empty(client, &t.shape, t.dtype)?;
    let n = t.num_elements();
    if n == 0 {
        return Ok(out);
    }
    let to_u32 = |v: usize| to_u32(v, "a copied view's layout");
    let mut words = vec![to_u32(t.rank())?];
    for &s in &t.shape {
        words.push(to_u32(s)?);
    }
    for &s in &t.strides {
        words.push(to_u32(s)?);
    }
    words.push(to_u32(t.offset)?);
    let n32 = to_u32(n)?;
    let layout = client.create_from_slice(u32::as_bytes(&words));
    let in_len = t.handle.size() as usize / t.dtype.size();
    let count = crate::device::cube_count_2d(n32.div_ceil(256));
    // SAFETY: `t` was checked against its handle (`validate::input`), so every element of the
    // view is inside it; `out` holds `n` elements; units past `n` do nothing. (The callers copy
    // floats only: no `u8`.)
    with_dtype!(t.dtype, |T, _A| unsafe {
        copy_strided::launch_unchecked::<T, R>(
            client,
            count,
            CubeDim::new_1d(256),
            ArrayArg::from_raw_parts(t.handle.clone(), in_len),
            ArrayArg::from_raw_parts(out.handle.clone(), n),
            ArrayArg::from_raw_parts(layout, words.len()),
            n32,
        )
    });
    Ok(out)
}
