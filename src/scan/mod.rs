//! Scans along any axis: the host side of the scan family.
//!
//! One engine ([`cubeprim_kernels::device::scan_rows`]) serves every operator, direction and
//! dtype. The plan picks the algorithm from the shape:
//! - rows that fit one tile (`256 × 4` vectors, i.e. 4096 f32) get one cube per row;
//! - longer rows and 1-D arrays are cut into tiles scanned in a single pass with decoupled
//!   look-back ([`ScanAlgorithm::DecoupledLookback`]), whose fallback makes it safe on runtimes
//!   without forward-progress guarantees;
//! - [`ScanAlgorithm::ReduceThenScan`] (tile aggregates → scan of aggregates → rescan) is kept
//!   as a baseline.
//!
//! Any axis of a strided tensor is scanned in place (no transpose, no copy); the output is
//! contiguous. The last axis of a contiguous tensor takes the vectorised fast path.

pub(crate) mod launch;
mod plan;

use crate::{DType, DeviceTensor, Error, Len, Result, Workspace};
use cubecl::prelude::*;

/// Tests only: set in [`ScanTuning::spins`], no tile publishes its inclusive prefix, so every
/// look-back deeper than its windows takes the bounded fallback (a stalled predecessor).
#[doc(hidden)]
pub use cubeprim_kernels::device::lookback::STALL_PREFIXES;
pub use launch::supports_dtype;
/// The scan's planning internals, public for the tests and benchmarks.
#[doc(hidden)]
pub use plan::{tile_len, DeviceLimits, ScanPlan, LONG_TILE, SPINS, SPINS_CUDA, WINDOWS};

/// The built-in scan (and reduce) operators. Other operators: [`scan_with`] and
/// [`crate::reduce_with`] take any [`crate::ops::ScanOp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ScanOp {
    /// Running sum (integers wrap).
    Sum,
    /// Running product (integers wrap).
    Prod,
    /// Running maximum (NaN propagates).
    Max,
    /// Running minimum (NaN propagates).
    Min,
    /// `log(exp(a) + exp(b))`: `torch.logcumsumexp` as a scan, `torch.logsumexp` as a
    /// reduction. Floats only (integers: [`Error::UnsupportedDType`]); computed as
    /// `max + log1p(exp(min - max))`, so large inputs neither overflow nor underflow; the
    /// identity (first element of an exclusive scan, result of an empty reduction) is -inf;
    /// NaN propagates.
    LogSumExp,
}

impl ScanOp {
    /// [`Error::UnsupportedDType`] for a dtype the operator is not defined on (integers for
    /// [`ScanOp::LogSumExp`]).
    pub(crate) fn check_dtype(self, dtype: DType) -> Result<()> {
        if self == ScanOp::LogSumExp && !dtype.is_float() {
            return Err(Error::UnsupportedDType {
                dtype,
                reason: "logsumexp is defined for floats only".into(),
            });
        }
        Ok(())
    }

    /// [`Self::check_dtype`], and [`Error::UnsupportedDType`] for an f64 logsumexp outside
    /// CUDA: it needs f64 `exp` / `log1p`, which the shading languages of wgpu and Metal lack
    /// (SPIR-V's GLSL.std.450 defines them for 16- and 32-bit floats only; on lavapipe the
    /// f64 results were wrong by about 88).
    pub(crate) fn check_device<R: Runtime>(
        self,
        client: &ComputeClient<R>,
        dtype: DType,
    ) -> Result<()> {
        self.check_dtype(dtype)?;
        if self == ScanOp::LogSumExp && dtype == DType::F64 && R::name(client) != "cuda" {
            return Err(Error::UnsupportedDType {
                dtype,
                reason: format!(
                    "logsumexp needs f64 exp / log, which the {} runtime lacks",
                    R::name(client)
                ),
            });
        }
        Ok(())
    }
}

/// How long rows are scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ScanAlgorithm {
    /// One cube per row when the row fits a tile, else decoupled look-back.
    #[default]
    Auto,
    /// Single pass, decoupled look-back with fallback (also for short rows).
    DecoupledLookback,
    /// Three passes: tile aggregates, scan of the aggregates, rescan with prefixes.
    /// Not available with indices.
    ReduceThenScan,
}

/// Whether the cube-wide scan uses plane (subgroup) operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PlaneOps {
    /// Where the runtime reports them.
    #[default]
    Auto,
    /// Always (e.g. lavapipe, which runs them but does not report them).
    Force,
    /// Never: shared memory only.
    Off,
}

/// Variants of a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ScanOptions {
    /// Element `i` gets the combination of the elements before it (the identity first).
    pub exclusive: bool,
    /// Scan from the end of the axis towards its start.
    pub reverse: bool,
    /// How long rows are scanned ([`ScanAlgorithm::Auto`] unless a benchmark picks one).
    pub algorithm: ScanAlgorithm,
    /// Whether the cube-wide scan uses plane (subgroup) operations.
    pub plane_ops: PlaneOps,
    /// Overrides of the tile shape and look-back constants, for benchmarks and tests.
    #[doc(hidden)]
    pub tuning: Option<ScanTuning>,
}

/// Tile shape and look-back constants (normally chosen by the plan).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScanTuning {
    /// Units per cube of long-row tiles (a multiple of the plane width, at most 1024).
    pub threads: u32,
    /// Vectors each unit loads.
    pub vectors_per_thread: u32,
    /// Plane windows the look-back may walk over (plane path).
    pub windows: u32,
    /// Rounds a cube waits on a silent predecessor before reducing its tile itself.
    pub spins: u32,
    /// Park look-back tiles in shared memory between load and write (where it fits; never
    /// with indices). See `TileConfig::stage` in the kernel crate.
    pub stage: bool,
    /// Load staged tiles with asynchronous copies where the device has them (CUDA sm_80+)
    /// and the tile allows (see `TileConfig::async_copy`); the plan's choice without a tuning.
    /// On the H200 the 1-D 2^28 f32 cumsum took 0.554 ms with them against 0.606 with plain
    /// loads (device clock, 2026-12-06; BENCHMARKS.md, `cumsum f32 1-D (look-back)` and
    /// `cumsum f32 1-D (look-back, plain loads)`).
    pub async_copy: bool,
}

impl ScanTuning {
    /// The most units per cube.
    pub const MAX_THREADS: u32 = 1024;
    /// The most vectors per unit (the tile must also fit the device's shared memory).
    pub const MAX_VECTORS_PER_THREAD: u32 = 256;
    /// The most look-back windows.
    pub const MAX_WINDOWS: u32 = 256;

    /// [`Error::InvalidArgument`] unless `threads` is a non-zero multiple of 32 up to
    /// [`Self::MAX_THREADS`], `vectors_per_thread` is 1 to [`Self::MAX_VECTORS_PER_THREAD`]
    /// and `windows` 1 to [`Self::MAX_WINDOWS`]. (Any `spins` is valid: 0 makes each cube
    /// reduce a silent predecessor's tile at once.) The plan also checks the tile against the
    /// device's plane width and shared memory.
    pub fn check(&self) -> Result<()> {
        if self.threads == 0 || !self.threads.is_multiple_of(32) || self.threads > Self::MAX_THREADS
        {
            return Err(Error::InvalidArgument(format!(
                "ScanTuning::threads = {}: a multiple of 32 from 32 to {}",
                self.threads,
                Self::MAX_THREADS
            )));
        }
        if self.vectors_per_thread == 0 || self.vectors_per_thread > Self::MAX_VECTORS_PER_THREAD {
            return Err(Error::InvalidArgument(format!(
                "ScanTuning::vectors_per_thread = {}: 1 to {}",
                self.vectors_per_thread,
                Self::MAX_VECTORS_PER_THREAD
            )));
        }
        if self.windows == 0 || self.windows > Self::MAX_WINDOWS {
            return Err(Error::InvalidArgument(format!(
                "ScanTuning::windows = {}: 1 to {}",
                self.windows,
                Self::MAX_WINDOWS
            )));
        }
        Ok(())
    }
}

impl ScanOptions {
    /// An exclusive scan: element `i` gets the combination of the elements before it, the
    /// first one the operator's identity (or index `-1` with indices).
    pub fn exclusive(mut self) -> Self {
        self.exclusive = true;
        self
    }
    /// A reverse scan: from the end of the axis towards its start.
    pub fn reverse(mut self) -> Self {
        self.reverse = true;
        self
    }
    /// Forces an algorithm for long rows (benchmarks; the plan's choice is the default).
    pub fn algorithm(mut self, a: ScanAlgorithm) -> Self {
        self.algorithm = a;
        self
    }
    /// Overrides the plan's tile shape and look-back constants (benchmarks and tests).
    #[doc(hidden)]
    pub fn tuning(mut self, t: ScanTuning) -> Self {
        self.tuning = Some(t);
        self
    }
    /// Whether the cube-wide scan uses plane (subgroup) operations.
    pub fn plane_ops(mut self, p: PlaneOps) -> Self {
        self.plane_ops = p;
        self
    }
}

/// Resolves a possibly negative axis.
pub(crate) fn resolve_axis(axis: isize, rank: usize) -> Result<usize> {
    let a = if axis < 0 { axis + rank as isize } else { axis };
    if rank == 0 || a < 0 || a as usize >= rank {
        return Err(Error::AxisOutOfRange { axis, rank });
    }
    Ok(a as usize)
}

/// Bytes of [`Workspace`] a scan of this shape needs (0 when it needs none): the size to give
/// [`Workspace::with_capacity`] so that [`scan`] / [`scan_into`] of tensors of this shape,
/// dtype and options allocate nothing.
///
/// # Errors
///
/// [`Error::AxisOutOfRange`] for an axis past the rank, [`Error::TooLarge`] for a shape of more
/// than [`MAX_ELEMENTS`](crate::MAX_ELEMENTS) elements, [`Error::Unsupported`] for options the
/// device cannot run (a tuning that does not fit it, indices with
/// [`ScanAlgorithm::ReduceThenScan`]).
pub fn scan_workspace_bytes<R: Runtime>(
    client: &ComputeClient<R>,
    shape: &[usize],
    axis: isize,
    dtype: DType,
    with_indices: bool,
    opts: ScanOptions,
) -> Result<usize> {
    let tuning = crate::tuning::Tuning::default();
    scan_state_bytes(client, &tuning, shape, axis, dtype, with_indices, opts)
}

/// [`scan_workspace_bytes`] of a scan planned under `tuning`.
pub(crate) fn scan_state_bytes<R: Runtime>(
    client: &ComputeClient<R>,
    tuning: &crate::tuning::Tuning,
    shape: &[usize],
    axis: isize,
    dtype: DType,
    with_indices: bool,
    opts: ScanOptions,
) -> Result<usize> {
    let axis = resolve_axis(axis, shape.len())?;
    crate::tensor::check_shape(shape)?;
    let strides = crate::tensor::contiguous_strides(shape);
    let plan = ScanPlan::with_len(
        client,
        tuning,
        shape,
        &strides,
        0,
        axis,
        dtype,
        with_indices,
        opts,
        false,
    )?;
    Ok(plan.state_bytes)
}

/// Scan of `input` along `axis` (negative counts from the end) with `op`: element `i` of each
/// row combines the elements up to and including `i` (before `i` with
/// [`ScanOptions::exclusive`], from the end of the axis with [`ScanOptions::reverse`]). Any
/// layout of `input` is read in place; the result is a new contiguous tensor of the input's
/// shape and dtype. f16 / bf16 accumulate in f32, integer sums and products wrap, max / min
/// propagate NaN. The combine order depends only on the shape, dtype, options and device, so
/// results are reproducible run to run.
///
/// # Errors
///
/// [`Error::AxisOutOfRange`] for an axis past the rank; [`Error::UnsupportedDType`] for a dtype the
/// runtime lacks ([`supports_dtype`]; bytes are never scanned); [`Error::Unsupported`] for options
/// the device cannot run; the argument checks of every call ([`Error::ShapeMismatch`],
/// [`Error::TooLarge`], [`Error::OutOfBounds`], [`Error::InvalidArgument`]; see [`Error`]);
/// [`Error::BufferTooLarge`], [`Error::ScratchTooSmall`] or [`Error::WorkspaceMismatch`] from
/// `workspace`.
///
/// # Example
///
/// ```
/// use cubecl::wgpu::{WgpuDevice, WgpuRuntime};
/// use cubecl::Runtime;
/// use cubeprim::{DType, DeviceTensor, ScanOp, ScanOptions, Workspace};
///
/// let client = WgpuRuntime::client(&WgpuDevice::default());
/// let x = DeviceTensor::<WgpuRuntime>::from_slice(&client, &[3i32, 1, 4, 1, 5, 9], &[2, 3])?;
/// let mut ws = Workspace::new(); // grows once, then reused by every call
///
/// // Exclusive running sums of each row: where each element's segment starts.
/// let opts = ScanOptions::default().exclusive();
/// let starts = cubeprim::scan(&client, &x, -1, ScanOp::Sum, opts, &mut ws)?;
/// assert_eq!(starts.to_vec::<i32>(&client), [0, 3, 4, 0, 1, 6]);
///
/// // Running maximum down each column, and the row that holds it (`torch.cummax`).
/// let opts = ScanOptions::default();
/// let (max, at) = cubeprim::scan_with_indices(&client, &x, 0, ScanOp::Max, opts, &mut ws)?;
/// assert_eq!(max.to_vec::<i32>(&client), [3, 1, 4, 3, 5, 9]);
/// if at.dtype == DType::I64 {
///     // i64 where the runtime has 64-bit integers (`cubeprim::index_dtype`), else i32
///     assert_eq!(at.to_vec::<i64>(&client), [0, 0, 0, 0, 1, 1]);
/// }
/// # Ok::<(), cubeprim::Error>(())
/// ```
pub fn scan<R: Runtime>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    axis: isize,
    op: ScanOp,
    opts: ScanOptions,
    workspace: &mut Workspace<R>,
) -> Result<DeviceTensor<R>> {
    launch::scan(client, input, axis, op, opts, workspace, false).map(|(out, _)| out)
}

/// [`scan`] into caller-provided contiguous outputs (`output`: the input's shape and dtype;
/// `indices`: with [`ScanOp::Max`] / [`ScanOp::Min`] only, the index dtype of
/// [`scan_with_indices`]). With a reused [`Workspace`], this call allocates nothing.
///
/// # Errors
///
/// As [`scan`], and: [`Error::ShapeMismatch`] for an output of another shape,
/// [`Error::UnsupportedDType`] for an output of another dtype, [`Error::Unsupported`] for a
/// non-contiguous output or for indices with [`ScanOp::Sum`] / [`ScanOp::Prod`],
/// [`Error::Aliased`] for an output that shares memory with the input or the other output.
#[allow(clippy::too_many_arguments)]
pub fn scan_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    output: &DeviceTensor<R>,
    indices: Option<&DeviceTensor<R>>,
    axis: isize,
    op: ScanOp,
    opts: ScanOptions,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    launch::scan_into(client, input, output, indices, axis, op, opts, workspace)
}

/// [`scan`] with a user-defined operator: any [`crate::ops::ScanOp`] implemented in a
/// `#[cube]` impl block (an associative `combine` and its two-sided identity; see the trait).
/// The operator runs in the same kernels as the built-ins (every route, dtype and option of
/// [`scan`]); `A`, the type it combines, is the accumulator of the input's dtype (f32 for
/// f16 / bf16, the dtype itself otherwise). Indices ([`scan_with_indices`]) stay with
/// [`ScanOp::Max`] / [`ScanOp::Min`]. User operators run on the cubecl runtimes (wgpu, CUDA,
/// Metal): the CPU implementation ([`crate::cpu`]) and the burn / candle adapters take the
/// built-in [`ScanOp`]s only.
///
/// # Errors
///
/// As [`scan`].
///
/// # Example
///
/// ```
/// use cubecl::prelude::*;
/// use cubecl::wgpu::{WgpuDevice, WgpuRuntime};
/// use cubeprim::{DeviceTensor, ScanOptions, Workspace};
///
/// /// Compounding: `(1 + a)(1 + b) - 1`, the growth over a period of growth `a` followed by
/// /// one of growth `b`. Associative, with identity 0.
/// struct Compound;
///
/// #[cube]
/// impl cubeprim::ops::ScanOp for Compound {
///     fn identity<A: Numeric>() -> A {
///         A::from_int(0)
///     }
///     fn combine<A: Numeric>(a: A, b: A) -> A {
///         a + b + a * b
///     }
///     // Not a selection operator (only those track indices).
///     #[allow(clippy::useless_conversion)]
///     fn take_second<A: Numeric>(_a: A, _b: A) -> bool {
///         false.into()
///     }
/// }
///
/// # fn main() -> Result<(), cubeprim::Error> {
/// let client = WgpuRuntime::client(&WgpuDevice::default());
/// let x = DeviceTensor::<WgpuRuntime>::from_slice(&client, &[1i32, 2, 3, 1, 1, 1], &[2, 3])?;
/// let mut ws = Workspace::new();
///
/// let opts = ScanOptions::default();
/// let growth = cubeprim::scan_with(&client, &x, -1, Compound, opts, &mut ws)?;
/// assert_eq!(growth.to_vec::<i32>(&client), [1, 5, 23, 1, 3, 7]);
///
/// let total = cubeprim::reduce_with(&client, &x, Some(1), Compound, &mut ws)?;
/// assert_eq!(total.to_vec::<i32>(&client), [23, 7]);
/// # Ok(())
/// # }
/// ```
pub fn scan_with<R: Runtime, O: crate::ops::ScanOp>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    axis: isize,
    _op: O,
    opts: ScanOptions,
    workspace: &mut Workspace<R>,
) -> Result<DeviceTensor<R>> {
    launch::scan_op::<R, O>(client, input, axis, opts, workspace, false).map(|(out, _)| out)
}

/// [`scan_with`] into a caller-provided contiguous output of the input's shape and dtype. With
/// a reused [`Workspace`], this call allocates nothing.
///
/// # Errors
///
/// As [`scan_into`] (without indices).
pub fn scan_with_into<R: Runtime, O: crate::ops::ScanOp>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    output: &DeviceTensor<R>,
    axis: isize,
    _op: O,
    opts: ScanOptions,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    launch::scan_rows_into::<R, O>(
        client, input, output, None, axis, opts, workspace, None, None,
    )
}

/// [`scan_into`] of the first `len` elements of the 1-D `input`; `len` is a host number or a
/// `u32` count left on the device by an earlier op (e.g. the count of a select), in which case
/// nothing is read back: the launch is sized for `len.capacity()` and the tiles past the count
/// do nothing. `input` and `output` (and `indices`) hold at least `len.capacity()` elements;
/// outputs past the length are left untouched.
///
/// # Errors
///
/// As [`scan_into`], and: [`Error::Unsupported`] for a tensor that is not 1-D (or a device
/// count not at the start of its buffer); [`Error::LengthMismatch`] for a capacity past the
/// elements of `input`, `output` or `indices`, or a device count of more than one element;
/// [`Error::UnsupportedDType`] for a device count that is not `u32`.
#[allow(clippy::too_many_arguments)]
pub fn scan_len_into<R: Runtime>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    output: &DeviceTensor<R>,
    indices: Option<&DeviceTensor<R>>,
    len: Len<'_, R>,
    op: ScanOp,
    opts: ScanOptions,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    for t in [Some(input), Some(output), indices].into_iter().flatten() {
        if t.rank() != 1 {
            return Err(Error::Unsupported(format!(
                "scan_len_into takes 1-D tensors, got shape {:?}",
                t.shape
            )));
        }
    }
    crate::validate::args(
        client,
        &[
            ("the input", Some(input)),
            ("the length", len.device_count()),
        ],
        &[("the output", Some(output)), ("the indices", indices)],
    )?;
    let available = [Some(input), Some(output), indices]
        .into_iter()
        .flatten()
        .map(|t| t.shape[0])
        .min()
        .unwrap_or(0);
    len.validate(available)?;
    let cap = len.capacity();
    let input = input.narrow(0, 0, cap)?;
    let output = output.narrow(0, 0, cap)?;
    let indices = indices.map(|t| t.narrow(0, 0, cap)).transpose()?;
    launch::scan_into_len(
        client,
        &input,
        &output,
        indices.as_ref(),
        0,
        op,
        opts,
        workspace,
        len.device_count(),
    )
}

/// The dtype of the indices of [`scan_with_indices`] on this runtime: i64 where the runtime
/// has 64-bit integers, else i32.
pub fn index_dtype<R: Runtime>(client: &ComputeClient<R>) -> DType {
    launch::index_dtype(client)
}

/// Running max / min with the index (along `axis`) of the element holding it, as PyTorch's
/// `cummax` / `cummin` (ties and NaN pick the latest index). Indices are i64 where the runtime
/// has 64-bit integers, else i32 ([`index_dtype`]); `-1` marks "no element" (first slot of an
/// exclusive scan). Both results are new contiguous tensors of the input's shape. See [`scan`]
/// for an example.
///
/// # Errors
///
/// As [`scan`], and [`Error::Unsupported`] for [`ScanOp::Sum`] / [`ScanOp::Prod`] (indices are
/// defined for max and min only) or with [`ScanAlgorithm::ReduceThenScan`].
pub fn scan_with_indices<R: Runtime>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    axis: isize,
    op: ScanOp,
    opts: ScanOptions,
    workspace: &mut Workspace<R>,
) -> Result<(DeviceTensor<R>, DeviceTensor<R>)> {
    launch::scan(client, input, axis, op, opts, workspace, true)
        .map(|(out, idx)| (out, idx.expect("indexed scan returns indices")))
}

macro_rules! shorthand {
    ($(#[$m:meta])* $name:ident, $op:ident) => {
        $(#[$m])*
        pub fn $name<R: Runtime>(
            client: &ComputeClient<R>,
            input: &DeviceTensor<R>,
            axis: isize,
        ) -> Result<DeviceTensor<R>> {
            scan(client, input, axis, ScanOp::$op, ScanOptions::default(), &mut Workspace::new())
        }
    };
}
shorthand!(
    /// Inclusive running sum along `axis` (`torch.cumsum`): [`scan`] with [`ScanOp::Sum`] and
    /// a fresh [`Workspace`] (allocated for this call; pass your own to [`scan`] when calling
    /// it repeatedly).
    ///
    /// # Errors
    ///
    /// As [`scan`].
    cumsum, Sum);
shorthand!(
    /// Inclusive running product along `axis` (`torch.cumprod`): [`scan`] with
    /// [`ScanOp::Prod`] and a fresh [`Workspace`].
    ///
    /// # Errors
    ///
    /// As [`scan`].
    cumprod, Prod);
shorthand!(
    /// Inclusive running maximum along `axis` (`torch.cummax(..).values`; NaN propagates):
    /// [`scan`] with [`ScanOp::Max`] and a fresh [`Workspace`].
    ///
    /// # Errors
    ///
    /// As [`scan`].
    cummax, Max);
shorthand!(
    /// Inclusive running minimum along `axis` (`torch.cummin(..).values`; NaN propagates):
    /// [`scan`] with [`ScanOp::Min`] and a fresh [`Workspace`].
    ///
    /// # Errors
    ///
    /// As [`scan`].
    cummin, Min);
shorthand!(
    /// Running `log(sum(exp(x)))` along `axis` (`torch.logcumsumexp`; floats only, stable
    /// for large inputs, NaN propagates): [`scan`] with [`ScanOp::LogSumExp`] and a fresh
    /// [`Workspace`].
    ///
    /// # Errors
    ///
    /// As [`scan`]; [`Error::UnsupportedDType`] for an integer dtype.
    logcumsumexp, LogSumExp);

/// Running maximum along `axis` and the index of the element holding it (`torch.cummax`; ties
/// and NaN pick the later index): [`scan_with_indices`] with [`ScanOp::Max`] and a fresh
/// [`Workspace`].
///
/// # Errors
///
/// As [`scan`].
pub fn cummax_with_indices<R: Runtime>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    axis: isize,
) -> Result<(DeviceTensor<R>, DeviceTensor<R>)> {
    scan_with_indices(
        client,
        input,
        axis,
        ScanOp::Max,
        ScanOptions::default(),
        &mut Workspace::new(),
    )
}

/// Running minimum along `axis` and the index of the element holding it (`torch.cummin`; ties
/// and NaN pick the later index): [`scan_with_indices`] with [`ScanOp::Min`] and a fresh
/// [`Workspace`].
///
/// # Errors
///
/// As [`scan`].
pub fn cummin_with_indices<R: Runtime>(
    client: &ComputeClient<R>,
    input: &DeviceTensor<R>,
    axis: isize,
) -> Result<(DeviceTensor<R>, DeviceTensor<R>)> {
    scan_with_indices(
        client,
        input,
        axis,
        ScanOp::Min,
        ScanOptions::default(),
        &mut Workspace::new(),
    )
}
