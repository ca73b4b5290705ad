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
/// Units per cube of the chunked recurrence.
const CHUNK_UNITS: u32 = 256;

/// The recurrence in f64, whose multipliers' running product the scans' look-back cannot carry
/// (it travels in a 32-bit word, see [`Affine`]): in chunks of [`CHUNK`] steps, each composed
/// into one affine pair by one unit, the chunks' pairs solved the same way (recursively, until a
/// row fits one chunk), then each chunk run again from the state entering it
/// ([`recurrence_chunks`](cubeprim_kernels::device::recurrence_chunks)). `a` and `b` are read
/// twice and the temporaries are 2 / [`CHUNK`] of the data, so it is not a single pass; f64 is
/// the precision path, not the fast one.
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
    use cubeprim_kernels::device::recurrence_chunks::{affine_apply, affine_chunks};
    let n = dims.outer * dims.len * dims.inner;
    let chunks = dims.len.div_ceil(CHUNK as usize);
    let units = dims.outer * chunks * dims.inner;
    let units32 = to_u32(units, "the chunked recurrence's units")?;
    let len = to_u32(dims.len, "the recurrence's length")?;
    let inner = to_u32(dims.inner, "the recurrence's inner size")?;
    let chunks32 = to_u32(chunks, "the recurrence's chunks")?;
    let count = crate::device::cube_count_2d(units32.div_ceil(CHUNK_UNITS));
    let dim = CubeDim::new_1d(CHUNK_UNITS);
    let arr = |h: &cubecl::server::Handle, len: usize| {
        // SAFETY: every handle holds `len` f64 (the caller's tensors were checked against theirs).
        unsafe { ArrayArg::from_raw_parts(h.clone(), len) }
    };
    let states = if chunks > 1 {
        let agg_a = crate::alloc::empty(client, units * 8)?;
        let agg_b = crate::alloc::empty(client, units * 8)?;
        // SAFETY: units below `units` read steps of their own chunk, inside `n`, and write their
        // own entry of the `units` pairs.
        unsafe {
            affine_chunks::launch_unchecked::<f64, R>(
                client,
                count.clone(),
                dim,
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
            )
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
    // SAFETY: as above; `states` holds `units` f64 where there is more than one chunk (else it
    // is never read), `h0` `rows` where given (else never read).
    unsafe {
        affine_apply::launch_unchecked::<f64, R>(
            client,
            count,
            dim,
            arr(a, n),
            arr(b, n),
            states.as_ref().map_or_else(|| arr(a, 1), |s| arr(s, units)),
            h0.map_or_else(|| arr(a, 1), |h| arr(h, rows)),
            arr(out, n),
            len,
            inner,
            chunks32,
            units32,
            CHUNK,
            reverse,
            h0.is_some(),
        )
    };
    Ok(())
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
