//! Sorting on the device: the host side of the sort family.
//!
//! One LSD radix-sort engine (8-bit digits, stable) serves every key type — u32, i32, f32,
//! f16, bf16, and u64, i64, f64 where the runtime has them — through order-preserving bit
//! transforms (see [`cubeprim_kernels::ops::radix_digit()`]): NaN sorts last in ascending order
//! (first in descending order, as PyTorch and NumPy do), and `-0.0` and `+0.0` are equal keys
//! (their input order kept, their bits written out unchanged), as in PyTorch.
//! Every sort is along the last axis of an N-d (possibly strided) tensor; a 1-D tensor is one
//! row. The plan picks the route from the shape:
//! - rows that fit one tile (up to `threads × items` keys, sized to the device's shared memory)
//!   are sorted inside one cube each, all rows in one launch;
//! - longer rows go through device-wide passes, one per digit: tile digit histograms → an
//!   exclusive scan of the `[row, digit, tile]` counts (the scan engine) → a stable scatter
//!   that ranks each tile in the cube. Every pass is a plain kernel: nothing waits on another
//!   cube, so no runtime can hang, and the work per unit is bounded whatever the length.
//!   An argsort of 4-byte keys (indices only) packs each key and its position into one u64
//!   word in its first pass and unpacks the positions in its last ([`SortPlan::packed`]).
//!
//! Tiles are ranked by plane ballots where the runtime has plane operations (eight ballots per
//! key find the lanes with the same digit; per-plane digit counters and one cube scan give the
//! ranks), else by 1- or 2-bit splits over shared-memory cube scans.
//!
//! Top-k of rows that fit one cube selects: per row, one cube finds the k-th key by radix
//! selection on the ordered key bits (a shared-memory digit histogram per 8-bit digit, most
//! significant first), keeps the keys before it and the first ties in row order, and sorts
//! only those `k`; longer rows (or [`TopKMethod::Sort`]) sort each row descending (ascending
//! for the smallest) and keep the first `k`. Both give the same result. Searchsorted is a
//! bounded binary search per query.
//!
//! # Example
//!
//! The sort family: [`sort()`], [`argsort`], [`top_k`] and [`searchsorted`].
//!
//! ```
//! use cubecl::wgpu::{WgpuDevice, WgpuRuntime};
//! use cubecl::Runtime;
//! use cubeprim::{DeviceTensor, IndexType, Side, SortOptions, Workspace};
//!
//! let client = WgpuRuntime::client(&WgpuDevice::default());
//! let data = [0.5f32, -2., 3., 0.5, 1., -7.];
//! let x = DeviceTensor::<WgpuRuntime>::from_slice(&client, &data, &[2, 3])?;
//! let mut ws = Workspace::new();
//!
//! let s = cubeprim::sort(&client, &x, SortOptions::default().descending(), &mut ws)?; // each row
//! assert_eq!(s.to_vec::<f32>(&client), [3., 0.5, -2., 1., 0.5, -7.]);
//!
//! let i = cubeprim::argsort(&client, &x, IndexType::U32, SortOptions::default(), &mut ws)?;
//! assert_eq!(i.to_vec::<u32>(&client), [1, 0, 2, 2, 0, 1]);
//!
//! let (v, at) = cubeprim::top_k(&client, &x, 1, true, IndexType::U32, &mut ws)?; // torch.topk
//! assert_eq!((v.to_vec::<f32>(&client), at.to_vec::<u32>(&client)), (vec![3., 1.], vec![2, 1]));
//!
//! let edges = DeviceTensor::<WgpuRuntime>::from_slice(&client, &[0.0f32, 1., 2.], &[3])?;
//! let b = cubeprim::searchsorted(&client, &edges, &x, Side::Right, IndexType::U32)?;
//! assert_eq!(b.to_vec::<u32>(&client), [1, 0, 3, 1, 2, 0]);
//! # Ok::<(), cubeprim::Error>(())
//! ```

// The family's example stands here, not on `sort`: CI skips test names with `sort::` in the
// main test run (the suite's sort tests run in their own process), `sort::sort (line ..)` too.

mod launch;
mod plan;

use crate::scan::{supports_dtype, PlaneOps};
use crate::tensor::contiguous_strides;
use crate::tuning::Tuning;
use crate::{DType, DeviceTensor, Error, Len, Result, Workspace};
use cubecl::prelude::*;
use cubeprim_kernels::device::search_sorted::search_sorted;
use launch::{with_key, KeysIn, SortBuffers};
#[doc(hidden)]
pub use plan::ValueKind;
/// The sort's planning internals, public for the tests and benchmarks.
#[doc(hidden)]
pub use plan::{Route, SelectPlan, SortOutputs, SortPlan};

/// How [`top_k_with`] finds the `k` best keys of each row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TopKMethod {
    /// Selection where a row fits one cube and `k <= n / 2`, else sorting.
    #[default]
    Auto,
    /// Radix selection inside one cube per row: the k-th key digit by digit, then only the
    /// `k` kept keys are sorted. Rows must fit one cube ([`Error::Unsupported`] otherwise).
    Select,
    /// Sort each row (in one cube, or device-wide for long rows) and keep the first `k`.
    Sort,
}

/// The dtype of the indices argsort, top-k and searchsorted return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IndexType {
    /// `u32` (half the traffic; rows up to 2^32 - 1).
    #[default]
    U32,
    /// `i64`, as PyTorch returns (where the runtime has 64-bit integers).
    I64,
}

impl IndexType {
    /// The [`DType`] of these indices.
    pub fn dtype(self) -> DType {
        match self {
            IndexType::U32 => DType::U32,
            IndexType::I64 => DType::I64,
        }
    }
}

/// What a sort moves along with the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Payload {
    /// Keys only.
    None,
    /// The position of each key in its row (argsort, sort with indices).
    Indices(IndexType),
    /// Values of this dtype (sort pairs).
    Values(DType),
}

impl Payload {
    fn kind(self) -> ValueKind {
        match self {
            Payload::None => ValueKind::None,
            Payload::Indices(i) => ValueKind::Indices(i.dtype()),
            Payload::Values(d) => ValueKind::Values(d),
        }
    }
}

/// Tile shape of the device-wide passes (normally chosen by the plan).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SortTuning {
    /// Units per cube (a multiple of the plane width, at most 1024).
    pub threads: u32,
    /// Keys per unit.
    pub items: u32,
    /// Rank two digit bits per cube scan with 64-bit packed counters (needs 64-bit integers;
    /// the default where the runtime has them), else one bit per scan.
    pub wide_counts: bool,
}

/// Variants of a sort.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SortOptions {
    /// Largest first (NaN first). Equal keys keep their input order either way.
    pub descending: bool,
    /// Ordered-key bits below `begin_bit` are ignored (known to be equal).
    pub begin_bit: u32,
    /// Ordered-key bits from `end_bit` up are ignored (`None`: all bits of the key type: 16 for
    /// f16 / bf16, 32 or 64 for the others). The ordered key of a float is its bits with the
    /// sign bit set (positive) or negated as an integer, `!bits + 1` (negative, so `-0.0` has
    /// `+0.0`'s key; CUB flips every bit after making `-0.0` `+0.0`); of a signed integer, its bits
    /// with the sign bit flipped; NaN's is all ones.
    pub end_bit: Option<u32>,
    /// Whether tiles are ranked with plane (subgroup) ballots or with shared-memory scans.
    pub plane_ops: PlaneOps,
    /// Overrides of the tile shape of the device-wide passes, for benchmarks and tests.
    #[doc(hidden)]
    pub tuning: Option<SortTuning>,
    /// Whether the scatter kernels of full tiles are built per digit, its shift, width and
    /// direction constants (`None`: the plan's choice, on CUDA only; see
    /// `SortPlan::const_digits`).
    #[doc(hidden)]
    pub const_digits: Option<bool>,
    /// Whether a device-wide argsort of 4-byte keys moves each key and its index as one u64
    /// word (`None`: wherever it applies: an argsort without the sorted keys, of 4-byte keys
    /// in rows longer than one cube, sorted by histogram → scan → scatter, on a runtime with
    /// 64-bit integers).
    pub pack_indices: Option<bool>,
}

impl SortOptions {
    /// Largest first (NaN first); equal keys still keep their input order.
    pub fn descending(mut self) -> Self {
        self.descending = true;
        self
    }
    /// Sorts by the ordered-key bits `begin_bit..end_bit` only (see [`SortOptions::end_bit`]).
    pub fn bits(mut self, begin_bit: u32, end_bit: u32) -> Self {
        self.begin_bit = begin_bit;
        self.end_bit = Some(end_bit);
        self
    }
    /// Whether tiles are ranked with plane (subgroup) ballots.
    pub fn plane_ops(mut self, p: PlaneOps) -> Self {
        self.plane_ops = p;
        self
    }
    /// Overrides the plan's tile shape (benchmarks and tests).
    #[doc(hidden)]
    pub fn tuning(mut self, t: SortTuning) -> Self {
        self.tuning = Some(t);
        self
    }
    /// Forces the per-digit scatter kernels on or off (benchmarks and tests).
    #[doc(hidden)]
    pub fn const_digits(mut self, on: bool) -> Self {
        self.const_digits = Some(on);
        self
    }
    /// Turns the packed argsort (key and index moved as one u64 word) on or off where it
    /// applies; on by default.
    pub fn pack_indices(mut self, on: bool) -> Self {
        self.pack_indices = Some(on);
        self
    }
}

/// Rows and row length of a sort along the last axis of `shape`.
fn rows_of(shape: &[usize]) -> Result<(usize, usize)> {
    let n = *shape
        .last()
        .ok_or(Error::AxisOutOfRange { axis: -1, rank: 0 })?;
    Ok((shape[..shape.len() - 1].iter().product(), n))
}

/// Workspace bytes of a sort of a tensor of `shape` (along its last axis) with `payload`;
/// `len_on_device`: the length will be a [`Len::Device`] count (1-D only). With indices, enough
/// for both an argsort and a sort with indices (their plans differ: an argsort of 4-byte keys
/// may pack each key with its index, see [`SortOptions::pack_indices`]). The size to give
/// [`Workspace::with_capacity`] so that such sorts allocate no scratch.
///
/// # Errors
///
/// [`Error::TooLarge`] for a shape past [`MAX_ELEMENTS`](crate::MAX_ELEMENTS);
/// [`Error::Unsupported`] for a bit range past the key or a tile the device cannot run.
pub fn sort_workspace_bytes<R: Runtime>(
    client: &ComputeClient<R>,
    shape: &[usize],
    key: DType,
    payload: Payload,
    len_on_device: bool,
    opts: SortOptions,
) -> Result<usize> {
    workspace_bytes_of(client, shape, key, payload, len_on_device, opts, true)
}

/// [`sort_workspace_bytes`] for outputs of whole rows (`full_rows`, a sort's) or shorter ones
/// (top-k's, which cannot double as ping-pong buffers).
fn workspace_bytes_of<R: Runtime>(
    client: &ComputeClient<R>,
    shape: &[usize],
    key: DType,
    payload: Payload,
    len_on_device: bool,
    opts: SortOptions,
    full_rows: bool,
) -> Result<usize> {
    crate::tensor::check_shape(shape)?;
    let (rows, n) = rows_of(shape)?;
    if rows * n == 0 {
        return Ok(0);
    }
    let bytes_for = |kind: ValueKind, keys: bool| -> Result<usize> {
        let outputs = SortOutputs { keys, full_rows };
        let plan = SortPlan::new(
            client,
            &Tuning::default(),
            rows,
            n,
            key,
            kind,
            outputs,
            len_on_device,
            opts,
        )?;
        Ok(plan.workspace_bytes())
    };
    let bytes = bytes_for(payload.kind(), true)?;
    Ok(match payload {
        Payload::Indices(_) => bytes.max(bytes_for(payload.kind(), false)?),
        _ => bytes,
    })
}

/// The plan of a sort of a tensor of `shape` that writes the sorted keys (arguments as
/// [`sort_workspace_bytes`]): route, tile and ranking (`cfg.plane_ops`: ranked by plane
/// ballots), for tests and benchmarks.
#[doc(hidden)]
pub fn sort_plan<R: Runtime>(
    client: &ComputeClient<R>,
    shape: &[usize],
    key: DType,
    payload: Payload,
    len_on_device: bool,
    opts: SortOptions,
) -> Result<SortPlan> {
    crate::tensor::check_shape(shape)?;
    let (rows, n) = rows_of(shape)?;
    SortPlan::new(
        client,
        &Tuning::default(),
        rows,
        n,
        key,
        payload.kind(),
        SortOutputs {
            keys: true,
            full_rows: true,
        },
        len_on_device,
        opts,
    )
}

/// The plan of an argsort (indices only) of a tensor of `shape`, as [`sort_plan`].
#[doc(hidden)]
pub fn argsort_plan<R: Runtime>(
    client: &ComputeClient<R>,
    shape: &[usize],
    key: DType,
    index: IndexType,
    len_on_device: bool,
    opts: SortOptions,
) -> Result<SortPlan> {
    crate::tensor::check_shape(shape)?;
    let (rows, n) = rows_of(shape)?;
    let payload = Payload::Indices(index);
    SortPlan::new(
        client,
        &Tuning::default(),
        rows,
        n,
        key,
        payload.kind(),
        SortOutputs {
            keys: false,
            full_rows: true,
        },
        len_on_device,
        opts,
    )
}

/// Checks that `t` is a contiguous tensor of `shape` and `dtype` (an output buffer).
fn check_output<R: Runtime>(t: &DeviceTensor<R>, shape: &[usize], dtype: DType) -> Result<()> {
    if t.shape != shape {
        return Err(Error::ShapeMismatch {
            expected: shape.to_vec(),
            got: t.shape.clone(),
        });
    }
    if t.dtype != dtype {
        return Err(Error::UnsupportedDType {
            dtype: t.dtype,
            reason: format!("this output must be {dtype}"),
        });
    }
    if !t.is_contiguous() {
        return Err(Error::Unsupported("outputs must be contiguous".into()));
    }
    Ok(())
}

fn check_strides<R: Runtime>(t: &DeviceTensor<R>) -> Result<()> {
    if t.strides.len() != t.rank() || t.rank() == 0 {
        return Err(Error::ShapeMismatch {
            expected: t.shape.clone(),
            got: t.strides.clone(),
        });
    }
    Ok(())
}

/// `v` as a kernel's 32-bit argument, or [`Error::Unsupported`] naming `what`.
pub(crate) fn to_u32(v: usize, what: &str) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::Unsupported(format!("{what} {v} does not fit in 32 bits")))
}

/// The row layout the sort kernels read (see `row_offsets`) of a view sorted along its last
/// axis: `[rank - 1, leading dims.., their strides.., their contiguous strides.., offset]`.
pub(crate) fn row_layout(shape: &[usize], strides: &[usize], offset: usize) -> Result<Vec<u32>> {
    let r = shape.len();
    let others = &shape[..r - 1];
    let mut layout = vec![others.len() as u32];
    for &s in others {
        layout.push(to_u32(s, "dimension")?);
    }
    for &s in &strides[..r - 1] {
        layout.push(to_u32(s, "stride")?);
    }
    for &s in &contiguous_strides(others) {
        layout.push(to_u32(s, "stride")?);
    }
    layout.push(to_u32(offset, "offset")?);
    Ok(layout)
}

/// The keys of `x` as launches read them: row layout uploaded through the workspace.
fn keys_in<R: Runtime>(
    client: &ComputeClient<R>,
    x: &DeviceTensor<R>,
    ws: &mut Workspace<R>,
) -> Result<KeysIn> {
    let r = x.rank();
    let layout = row_layout(&x.shape, &x.strides, x.offset)?;
    let handle = ws.layout(client, &layout)?;
    Ok(KeysIn {
        handle: x.handle.clone(),
        len: x.handle.size_in_used() as usize / x.dtype.size(),
        layout: handle,
        layout_len: layout.len(),
        stride: to_u32(x.strides[r - 1], "stride")?,
        rows_contiguous: x.offset == 0 && x.strides == contiguous_strides(&x.shape),
    })
}

/// [`supports_dtype`] as a typed error.
fn check_dtype<R: Runtime>(client: &ComputeClient<R>, dtype: DType) -> Result<()> {
    if supports_dtype(client, dtype) {
        Ok(())
    } else {
        Err(Error::UnsupportedDType {
            dtype,
            reason: format!("the {} runtime does not support it", R::name(client)),
        })
    }
}

fn check_index<R: Runtime>(client: &ComputeClient<R>, index: IndexType) -> Result<()> {
    check_dtype(client, index.dtype())
}

/// The sort engine behind every public entry point.
#[allow(clippy::too_many_arguments)]
fn sort_impl<R: Runtime>(
    client: &ComputeClient<R>,
    keys: &DeviceTensor<R>,
    values: Option<&DeviceTensor<R>>,
    keys_out: Option<&DeviceTensor<R>>,
    payload_out: Option<&DeviceTensor<R>>,
    payload: Payload,
    len: Len<'_, R>,
    out_cols: Option<usize>,
    opts: SortOptions,
    ws: &mut Workspace<R>,
) -> Result<()> {
    check_strides(keys)?;
    check_dtype(client, keys.dtype)?;
    crate::validate::args(
        client,
        &[
            ("the keys", Some(keys)),
            ("the values", values),
            ("the length", len.device_count()),
        ],
        &[
            ("the key output", keys_out),
            ("the payload output", payload_out),
        ],
    )?;
    let (rows, n) = rows_of(&keys.shape)?;
    let out_shape = |cols: usize| {
        let mut s = keys.shape.clone();
        *s.last_mut().unwrap() = cols;
        s
    };
    let cols = out_cols.unwrap_or(n);
    if let Some(o) = keys_out {
        check_output(o, &out_shape(cols), keys.dtype)?;
    }
    match payload {
        Payload::None => {}
        Payload::Indices(i) => {
            check_index(client, i)?;
            let o = payload_out.ok_or(Error::Unsupported("an index output is needed".into()))?;
            check_output(o, &out_shape(cols), i.dtype())?;
        }
        Payload::Values(d) => {
            check_dtype(client, d)?;
            let v = values.ok_or(Error::Unsupported("values are needed".into()))?;
            if v.shape != keys.shape {
                return Err(Error::ShapeMismatch {
                    expected: keys.shape.clone(),
                    got: v.shape.clone(),
                });
            }
            if !v.is_contiguous() {
                return Err(Error::Unsupported("values must be contiguous".into()));
            }
            let o = payload_out.ok_or(Error::Unsupported("a value output is needed".into()))?;
            check_output(o, &out_shape(cols), d)?;
        }
    }
    len.validate(n)?;
    let device_len = len.device_count().is_some();
    if device_len && rows != 1 {
        return Err(Error::Unsupported(
            "a device-resident length applies to 1-D sorts".into(),
        ));
    }
    let n = if rows == 1 { len.capacity() } else { n };
    if rows * n == 0 || cols == 0 {
        return Ok(());
    }
    let plan = SortPlan::new(
        client,
        ws.tuning(),
        rows,
        n,
        keys.dtype,
        payload.kind(),
        SortOutputs {
            keys: keys_out.is_some(),
            full_rows: cols == n,
        },
        device_len,
        opts,
    )?;
    let keys_in = keys_in(client, keys, ws)?;
    let b = SortBuffers {
        keys: keys_in,
        values: values.map(|v| &v.handle),
        keys_out: keys_out.map(|o| &o.handle),
        values_out: payload_out.map(|o| &o.handle),
        count: len.device_count().map(|c| &c.handle),
        out_cols: to_u32(cols, "row length")?,
        descending: opts.descending,
    };
    launch::run(client, &plan, keys.dtype, payload.kind(), &b, ws)
}

/// Sorts `x` along its last axis, stably (equal keys keep their order), ascending or with
/// [`SortOptions::descending`]; a 1-D tensor is one row. Returns a new contiguous tensor. Any
/// layout is read in place. Floats sort NaN last (first descending) and `-0.0` equal to
/// `+0.0`, as `torch.sort(stable=True)`. Rows that fit one cube are sorted inside it, longer
/// ones by an LSD radix sort over the device.
///
/// # Errors
///
/// [`Error::UnsupportedDType`] for a key, value or index dtype the runtime lacks (bytes are never
/// keys); [`Error::Unsupported`] for a bit range past the key or a tile the device cannot run;
/// [`Error::ShapeMismatch`] for a 0-d tensor; the argument checks of every call
/// ([`Error::ShapeMismatch`], [`Error::TooLarge`], [`Error::OutOfBounds`],
/// [`Error::InvalidArgument`]; see [`Error`]); [`Error::BufferTooLarge`],
/// [`Error::ScratchTooSmall`] or [`Error::WorkspaceMismatch`] from `ws`.
///
/// # Example
///
/// The family's example is in the [module docs](mod@crate::sort) (sort, argsort, top-k and
/// searchsorted).
pub fn sort<R: Runtime>(
    client: &ComputeClient<R>,
    x: &DeviceTensor<R>,
    opts: SortOptions,
    ws: &mut Workspace<R>,
) -> Result<DeviceTensor<R>> {
    before_alloc(client, x)?;
    let out = DeviceTensor::try_empty(client, &x.shape, x.dtype)?;
    sort_into(client, x, Some(&out), None, Len::Host(last(x)), opts, ws)?;
    Ok(out)
}

/// Checks an input of a call that returns fresh outputs, before they are allocated.
fn before_alloc<R: Runtime>(client: &ComputeClient<R>, x: &DeviceTensor<R>) -> Result<()> {
    crate::validate::input(client, "the keys", x)
}

/// The shape of top-k's outputs (`x`'s, with `k` for its last axis), after checking `x` and
/// `k` (at most the row length) before they are allocated.
fn top_k_shape<R: Runtime>(
    client: &ComputeClient<R>,
    x: &DeviceTensor<R>,
    k: usize,
) -> Result<Vec<usize>> {
    check_strides(x)?;
    before_alloc(client, x)?;
    let n = last(x);
    if k > n {
        return Err(Error::LengthMismatch {
            expected: n,
            got: k,
        });
    }
    let mut shape = x.shape.clone();
    if let Some(l) = shape.last_mut() {
        *l = k;
    }
    Ok(shape)
}

fn last<R: Runtime>(x: &DeviceTensor<R>) -> usize {
    x.shape.last().copied().unwrap_or(0)
}

/// Sorts `x` along its last axis and returns the sorted values with the position each came
/// from (`torch.sort(stable=True)`), as `index` (u32 or i64). See [`sort`] for the order and the
/// [module docs](mod@crate::sort) for an example.
///
/// # Errors
///
/// [`Error::UnsupportedDType`] for a key, value or index dtype the runtime lacks (bytes are never
/// keys); [`Error::Unsupported`] for a bit range past the key or a tile the device cannot run;
/// [`Error::ShapeMismatch`] for a 0-d tensor; the argument checks of every call
/// ([`Error::ShapeMismatch`], [`Error::TooLarge`], [`Error::OutOfBounds`],
/// [`Error::InvalidArgument`]; see [`Error`]); [`Error::BufferTooLarge`],
/// [`Error::ScratchTooSmall`] or [`Error::WorkspaceMismatch`] from `ws`.
pub fn sort_with_indices<R: Runtime>(
    client: &ComputeClient<R>,
    x: &DeviceTensor<R>,
    index: IndexType,
    opts: SortOptions,
    ws: &mut Workspace<R>,
) -> Result<(DeviceTensor<R>, DeviceTensor<R>)> {
    before_alloc(client, x)?;
    let out = DeviceTensor::try_empty(client, &x.shape, x.dtype)?;
    let idx = DeviceTensor::try_empty(client, &x.shape, index.dtype())?;
    sort_into(
        client,
        x,
        Some(&out),
        Some(&idx),
        Len::Host(last(x)),
        opts,
        ws,
    )?;
    Ok((out, idx))
}

/// The stable sorting permutation of `x` along its last axis (`torch.argsort(stable=True)`),
/// as `index` (u32 or i64): for each output position, the position of the key that goes there.
/// See [`sort`] for the order and the [module docs](mod@crate::sort) for an example.
///
/// # Errors
///
/// [`Error::UnsupportedDType`] for a key, value or index dtype the runtime lacks (bytes are never
/// keys); [`Error::Unsupported`] for a bit range past the key or a tile the device cannot run;
/// [`Error::ShapeMismatch`] for a 0-d tensor; the argument checks of every call
/// ([`Error::ShapeMismatch`], [`Error::TooLarge`], [`Error::OutOfBounds`],
/// [`Error::InvalidArgument`]; see [`Error`]); [`Error::BufferTooLarge`],
/// [`Error::ScratchTooSmall`] or [`Error::WorkspaceMismatch`] from `ws`.
pub fn argsort<R: Runtime>(
    client: &ComputeClient<R>,
    x: &DeviceTensor<R>,
    index: IndexType,
    opts: SortOptions,
    ws: &mut Workspace<R>,
) -> Result<DeviceTensor<R>> {
    before_alloc(client, x)?;
    let idx = DeviceTensor::try_empty(client, &x.shape, index.dtype())?;
    sort_into(client, x, None, Some(&idx), Len::Host(last(x)), opts, ws)?;
    Ok(idx)
}

/// Sort, argsort or sort-with-indices into caller-provided contiguous outputs (at least one
/// of `out`, `indices`; `indices` of dtype u32 or i64). `len`: for a 1-D `x`, how many of its
/// leading elements to sort (a host number or a device-resident count with a capacity);
/// otherwise the row length. Allocates nothing with a [`Workspace`] sized by
/// [`sort_workspace_bytes`].
///
/// # Errors
///
/// As [`sort`], and: [`Error::Unsupported`] when neither output is given, for a device count
/// with an N-d `x` or a non-contiguous output; [`Error::UnsupportedDType`] for indices that
/// are not u32 / i64 or an output of another dtype than `x`; [`Error::ShapeMismatch`] for an
/// output of another shape; [`Error::LengthMismatch`] for a capacity of `len` past the row;
/// [`Error::Aliased`] for an output that shares memory with `x`, the count or the other output.
#[allow(clippy::too_many_arguments)]
pub fn sort_into<R: Runtime>(
    client: &ComputeClient<R>,
    x: &DeviceTensor<R>,
    out: Option<&DeviceTensor<R>>,
    indices: Option<&DeviceTensor<R>>,
    len: Len<'_, R>,
    opts: SortOptions,
    ws: &mut Workspace<R>,
) -> Result<()> {
    let payload = match indices {
        None => Payload::None,
        Some(i) => Payload::Indices(match i.dtype {
            DType::U32 => IndexType::U32,
            DType::I64 => IndexType::I64,
            d => {
                return Err(Error::UnsupportedDType {
                    dtype: d,
                    reason: "indices are u32 or i64".into(),
                })
            }
        }),
    };
    if out.is_none() && indices.is_none() {
        return Err(Error::Unsupported(
            "nothing to write: give out or indices".into(),
        ));
    }
    sort_impl(client, x, None, out, indices, payload, len, None, opts, ws)
}

/// Sorts `(key, value)` pairs by key along the last axis, stably: returns the sorted keys and
/// the values moved with them (CUB's `SortPairs`). `values` (any dtype the runtime has) must
/// be contiguous, with the keys' shape. See [`sort`] for the order.
///
/// # Errors
///
/// As [`sort`], and: [`Error::ShapeMismatch`] for values of another shape,
/// [`Error::Unsupported`] for non-contiguous values.
pub fn sort_pairs<R: Runtime>(
    client: &ComputeClient<R>,
    keys: &DeviceTensor<R>,
    values: &DeviceTensor<R>,
    opts: SortOptions,
    ws: &mut Workspace<R>,
) -> Result<(DeviceTensor<R>, DeviceTensor<R>)> {
    before_alloc(client, keys)?;
    before_alloc(client, values)?;
    let ko = DeviceTensor::try_empty(client, &keys.shape, keys.dtype)?;
    let vo = DeviceTensor::try_empty(client, &values.shape, values.dtype)?;
    sort_pairs_into(
        client,
        keys,
        values,
        &ko,
        &vo,
        Len::Host(last(keys)),
        opts,
        ws,
    )?;
    Ok((ko, vo))
}

/// [`sort_pairs`] into caller-provided outputs, with a length as in [`sort_into`].
///
/// # Errors
///
/// As [`sort_pairs`] and [`sort_into`].
#[allow(clippy::too_many_arguments)]
pub fn sort_pairs_into<R: Runtime>(
    client: &ComputeClient<R>,
    keys: &DeviceTensor<R>,
    values: &DeviceTensor<R>,
    keys_out: &DeviceTensor<R>,
    values_out: &DeviceTensor<R>,
    len: Len<'_, R>,
    opts: SortOptions,
    ws: &mut Workspace<R>,
) -> Result<()> {
    sort_impl(
        client,
        keys,
        Some(values),
        Some(keys_out),
        Some(values_out),
        Payload::Values(values.dtype),
        len,
        None,
        opts,
        ws,
    )
}

/// Workspace bytes of [`top_k`] on a tensor of `shape`: the size to give
/// [`Workspace::with_capacity`] so that such top-k calls allocate no scratch.
///
/// # Errors
///
/// As [`sort_workspace_bytes`].
pub fn top_k_workspace_bytes<R: Runtime>(
    client: &ComputeClient<R>,
    shape: &[usize],
    dtype: DType,
    index: IndexType,
) -> Result<usize> {
    // Top-k's outputs are shorter than its rows: no ping-pong through them.
    workspace_bytes_of(
        client,
        shape,
        dtype,
        Payload::Indices(index),
        false,
        SortOptions::default(),
        false,
    )
}

/// The `k` largest (`largest`) or smallest values along the last axis with their positions,
/// best first (`torch.topk(sorted=True)`); equal values keep the earlier position first, NaN
/// counts as the largest value. Rows that fit one cube are selected by radix selection
/// (only the `k` kept keys are sorted), longer ones sorted. The [module docs](mod@crate::sort)
/// have an example.
///
/// # Errors
///
/// [`Error::LengthMismatch`] for `k` past the row length; otherwise as [`sort`].
pub fn top_k<R: Runtime>(
    client: &ComputeClient<R>,
    x: &DeviceTensor<R>,
    k: usize,
    largest: bool,
    index: IndexType,
    ws: &mut Workspace<R>,
) -> Result<(DeviceTensor<R>, DeviceTensor<R>)> {
    let shape = top_k_shape(client, x, k)?;
    let values = DeviceTensor::try_empty(client, &shape, x.dtype)?;
    let indices = DeviceTensor::try_empty(client, &shape, index.dtype())?;
    top_k_into(client, x, k, largest, &values, &indices, ws)?;
    Ok((values, indices))
}

/// [`top_k`] into caller-provided contiguous outputs of shape `[.., k]` (`indices` u32 or i64).
///
/// # Errors
///
/// As [`top_k`], and: [`Error::ShapeMismatch`] or [`Error::UnsupportedDType`] for an output of
/// another shape or dtype, [`Error::Unsupported`] for a non-contiguous output,
/// [`Error::Aliased`] for an output that shares memory with `x` or the other output.
pub fn top_k_into<R: Runtime>(
    client: &ComputeClient<R>,
    x: &DeviceTensor<R>,
    k: usize,
    largest: bool,
    values: &DeviceTensor<R>,
    indices: &DeviceTensor<R>,
    ws: &mut Workspace<R>,
) -> Result<()> {
    top_k_into_with(client, x, k, largest, TopKMethod::Auto, values, indices, ws)
}

/// [`top_k`] by the given method (both give the same result).
///
/// # Errors
///
/// As [`top_k`], and [`Error::Unsupported`] for [`TopKMethod::Select`] on rows that do not fit
/// one cube.
pub fn top_k_with<R: Runtime>(
    client: &ComputeClient<R>,
    x: &DeviceTensor<R>,
    k: usize,
    largest: bool,
    index: IndexType,
    method: TopKMethod,
    ws: &mut Workspace<R>,
) -> Result<(DeviceTensor<R>, DeviceTensor<R>)> {
    let shape = top_k_shape(client, x, k)?;
    let values = DeviceTensor::try_empty(client, &shape, x.dtype)?;
    let indices = DeviceTensor::try_empty(client, &shape, index.dtype())?;
    top_k_into_with(client, x, k, largest, method, &values, &indices, ws)?;
    Ok((values, indices))
}

/// [`top_k_into`] by the given method.
///
/// # Errors
///
/// As [`top_k_into`] and [`top_k_with`].
#[allow(clippy::too_many_arguments)]
pub fn top_k_into_with<R: Runtime>(
    client: &ComputeClient<R>,
    x: &DeviceTensor<R>,
    k: usize,
    largest: bool,
    method: TopKMethod,
    values: &DeviceTensor<R>,
    indices: &DeviceTensor<R>,
    ws: &mut Workspace<R>,
) -> Result<()> {
    check_strides(x)?;
    crate::validate::args(
        client,
        &[("the keys", Some(x))],
        &[("the values", Some(values)), ("the indices", Some(indices))],
    )?;
    let n = last(x);
    if k > n {
        return Err(Error::LengthMismatch {
            expected: n,
            got: k,
        });
    }
    let index = match indices.dtype {
        DType::U32 => IndexType::U32,
        DType::I64 => IndexType::I64,
        d => {
            return Err(Error::UnsupportedDType {
                dtype: d,
                reason: "indices are u32 or i64".into(),
            })
        }
    };
    if method != TopKMethod::Sort {
        check_dtype(client, x.dtype)?;
        check_index(client, index)?;
        let (rows, _) = rows_of(&x.shape)?;
        let mut out_shape = x.shape.clone();
        *out_shape.last_mut().unwrap() = k;
        check_output(values, &out_shape, x.dtype)?;
        check_output(indices, &out_shape, index.dtype())?;
        if rows * k == 0 {
            return Ok(());
        }
        let plan = SelectPlan::new(client, ws.tuning(), n, k, x.dtype, PlaneOps::Auto);
        let chosen = match (method, plan) {
            (TopKMethod::Select, None) => {
                return Err(Error::Unsupported(format!(
                    "top-k by selection of {k} of {n} keys: a row does not fit one cube"
                )))
            }
            (TopKMethod::Auto, Some(_)) if 2 * k > n => None,
            (_, p) => p,
        };
        if let Some(p) = chosen {
            to_u32(rows * n, "key count")?;
            let keys = keys_in(client, x, ws)?;
            launch::select_rows(
                client,
                p,
                x.dtype,
                index.dtype(),
                &keys,
                rows,
                n,
                k,
                largest,
                &values.handle,
                &indices.handle,
            );
            return Ok(());
        }
    }
    let opts = SortOptions {
        descending: largest,
        ..Default::default()
    };
    sort_impl(
        client,
        x,
        None,
        Some(values),
        Some(indices),
        Payload::Indices(index),
        Len::Host(n),
        Some(k),
        opts,
        ws,
    )
}

/// Which insertion point searchsorted returns among equal keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Side {
    /// The first position whose key is not less than the query.
    #[default]
    Left,
    /// The first position whose key is greater than the query.
    Right,
}

/// For each query, the position in `sorted` (sorted ascending along its last axis, in the
/// sort order above: NaN last) where inserting it keeps the row sorted
/// (`torch.searchsorted`). `sorted` is 1-D (shared by every query, `queries` of any shape) or
/// `[.., n]` with `queries` `[.., m]` of the same leading shape. Both contiguous, same dtype.
/// Needs no workspace. Returns `index` positions (u32 or i64) of the queries' shape. See
/// the [module docs](mod@crate::sort) for an example.
///
/// # Errors
///
/// [`Error::UnsupportedDType`] for a dtype the runtime lacks or queries of another dtype than
/// `sorted`; [`Error::Unsupported`] for a non-contiguous tensor; [`Error::ShapeMismatch`] for
/// queries whose leading shape is not `sorted`'s, or a 0-d `sorted`; the argument checks of
/// every call ([`Error::ShapeMismatch`], [`Error::TooLarge`], [`Error::OutOfBounds`],
/// [`Error::InvalidArgument`]; see [`Error`]).
pub fn searchsorted<R: Runtime>(
    client: &ComputeClient<R>,
    sorted: &DeviceTensor<R>,
    queries: &DeviceTensor<R>,
    side: Side,
    index: IndexType,
) -> Result<DeviceTensor<R>> {
    before_alloc(client, sorted)?;
    before_alloc(client, queries)?;
    let out = DeviceTensor::try_empty(client, &queries.shape, index.dtype())?;
    searchsorted_into(client, sorted, queries, side, &out)?;
    Ok(out)
}

/// `torch.bucketize(input, boundaries, right)`: the bucket of each input value among the
/// sorted 1-D `boundaries`: [`searchsorted`] of `input` in `boundaries`, [`Side::Right`] when
/// `right`.
///
/// # Errors
///
/// [`Error::ShapeMismatch`] for `boundaries` that are not 1-D; otherwise as [`searchsorted`].
pub fn bucketize<R: Runtime>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    boundaries: &DeviceTensor<R>,
    right: bool,
    index: IndexType,
) -> Result<DeviceTensor<R>> {
    if boundaries.rank() != 1 {
        return Err(Error::ShapeMismatch {
            expected: vec![boundaries.num_elements()],
            got: boundaries.shape.clone(),
        });
    }
    let side = if right { Side::Right } else { Side::Left };
    searchsorted(client, boundaries, input, side, index)
}

/// [`searchsorted`] into a caller-provided contiguous output (u32 or i64, the queries' shape).
///
/// # Errors
///
/// As [`searchsorted`], and: [`Error::UnsupportedDType`] for an output that is not u32 / i64,
/// [`Error::ShapeMismatch`] for an output of another shape, [`Error::Aliased`] for an output
/// that shares memory with an input.
pub fn searchsorted_into<R: Runtime>(
    client: &ComputeClient<R>,
    sorted: &DeviceTensor<R>,
    queries: &DeviceTensor<R>,
    side: Side,
    out: &DeviceTensor<R>,
) -> Result<()> {
    check_strides(sorted)?;
    check_dtype(client, sorted.dtype)?;
    crate::validate::args(
        client,
        &[
            ("the sorted keys", Some(sorted)),
            ("the queries", Some(queries)),
        ],
        &[("the output", Some(out))],
    )?;
    if queries.dtype != sorted.dtype {
        return Err(Error::UnsupportedDType {
            dtype: queries.dtype,
            reason: format!(
                "queries must have the sorted tensor's dtype {}",
                sorted.dtype
            ),
        });
    }
    if !sorted.is_contiguous() || !queries.is_contiguous() {
        return Err(Error::Unsupported(
            "searchsorted takes contiguous tensors".into(),
        ));
    }
    if !matches!(out.dtype, DType::U32 | DType::I64) {
        return Err(Error::UnsupportedDType {
            dtype: out.dtype,
            reason: "indices are u32 or i64".into(),
        });
    }
    check_dtype(client, out.dtype)?;
    check_output(out, &queries.shape, out.dtype)?;
    let (rows, n) = rows_of(&sorted.shape)?;
    let total = queries.num_elements();
    let (m, row_stride) = if sorted.rank() == 1 {
        (total.max(1), 0)
    } else {
        let lead = &sorted.shape[..sorted.rank() - 1];
        if queries.rank() != sorted.rank() || &queries.shape[..queries.rank() - 1] != lead {
            return Err(Error::ShapeMismatch {
                expected: lead.to_vec(),
                got: queries.shape.clone(),
            });
        }
        (last(queries).max(1), n)
    };
    let _ = rows;
    if total == 0 {
        return Ok(());
    }
    let total = to_u32(total, "query count")?;
    let steps = usize::BITS - n.leading_zeros() + 1;
    let threads = 256u32;
    let count = SortPlan::cube_count(total.div_ceil(threads));
    let right = side == Side::Right;
    let sorted_len = sorted.num_elements().max(1);
    with_key!(sorted.dtype, |K| {
        macro_rules! go {
            ($X:ty) => {
                // SAFETY: queries and outputs are `total` long; rows of `sorted` are in bounds.
                unsafe {
                    search_sorted::launch_unchecked::<K, $X, R>(
                        client,
                        count,
                        CubeDim::new_1d(threads),
                        ArrayArg::from_raw_parts(sorted.handle.clone(), sorted_len),
                        ArrayArg::from_raw_parts(queries.handle.clone(), total as usize),
                        ArrayArg::from_raw_parts(out.handle.clone(), total as usize),
                        to_u32(n, "row length")?,
                        to_u32(m, "row length")?,
                        total,
                        to_u32(row_stride, "row length")?,
                        steps,
                        right,
                    )
                }
            };
        }
        if out.dtype == DType::I64 {
            go!(i64)
        } else {
            go!(u32)
        }
    });
    Ok(())
}
