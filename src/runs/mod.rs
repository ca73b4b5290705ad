//! Run-length primitives: reduce_by_key and unique_consecutive (with counts and inverse
//! indices), in one single-pass kernel ([`cubeprim_kernels::device::run_length`]).
//!
//! A run is a maximal stretch of equal consecutive keys; NaN keys are each their own run (NaN !=
//! NaN, as PyTorch), and `-0.0 == 0.0`. Outputs are sized for the capacity of the length; the
//! number of runs is written to a `u32[1]` device count (no host sync). The `*_sized` variants
//! read that count once to return tensors of the right length.
//!
//! `unique` (sorted unique values) is `sort` followed by [`unique_consecutive`]; it lands with
//! the sort.

use crate::alloc::Buf;
use crate::count::Len;
use crate::dispatch::with_dtype;
#[doc(hidden)]
pub use crate::select::plan::PassLimits;
use crate::select::plan::{
    check_count, check_input, check_output, len_parts, max_vpt, vector_width, Pass, THREADS,
};
use crate::select::{new_count, read_count};
use crate::tuning::{Policy, Tuning};
use crate::{DType, DeviceTensor, Error, Result, ScanOp, Workspace};
use cubecl::prelude::*;
use cubeprim_kernels::device::run_length::{
    padded_len, run_length, RunConfig, RunInputsLaunch, RunOutputsLaunch,
};
use cubeprim_kernels::device::run_length_fixup::{run_length_fixup, RECORD_WORDS};
use cubeprim_kernels::device::single_pass::{PassScalarsLaunch, TileStateArgsLaunch};
use cubeprim_kernels::ops::{Add, LogAddExp, Max, Min, Mul};

/// Bytes of [`Workspace`] a run-length pass over up to `capacity` keys needs (`values`: the
/// value dtype of reduce_by_key; `None` for unique_consecutive): the size to give
/// [`Workspace::with_capacity`] so that such passes allocate no scratch.
///
/// # Errors
///
/// [`Error::TooLarge`] for a capacity past [`MAX_ELEMENTS`](crate::MAX_ELEMENTS),
/// [`Error::Unsupported`] where no tile fits the device.
pub fn runs_workspace_bytes<R: Runtime>(
    client: &ComputeClient<R>,
    capacity: usize,
    keys: DType,
    values: Option<DType>,
) -> Result<usize> {
    crate::tensor::check_len("the capacity", capacity)?;
    let acc = values.map(|v| v.accumulator_size()).unwrap_or(4);
    let policy = Policy::default_of(client);
    // Every variant a call may run (with or without inverse indices and written values): the
    // tile of each depends on what it stages, and a variant whose staged tile does not fit
    // runs unstaged on a larger tile, so no one variant needs the most.
    let mut bytes = 0;
    for (inverse, write_values) in [(true, true), (false, true), (true, false), (false, false)] {
        let run = RunConfig {
            ones: values.is_none(),
            inverse,
            write_values,
        };
        let pass = plan(
            &policy,
            capacity,
            keys.size(),
            values.map(|v| v.size()),
            acc,
            false,
            run,
        )?;
        bytes = bytes.max(crate::workspace_bytes(
            pass.state_bytes,
            records_bytes(&pass, run),
        ));
    }
    Ok(bytes)
}

/// Bytes of the per-tile records of a pass whose lengths are fixed up afterwards.
fn records_bytes(pass: &Pass, run: RunConfig) -> usize {
    if fixes_up(pass, run) {
        4 * RECORD_WORDS as usize * pass.tiles as usize
    } else {
        0
    }
}

/// Whether the pass runs the head-mask tile with lengths and the fix-up after it.
fn fixes_up(pass: &Pass, run: RunConfig) -> bool {
    pass.cfg.staged && run.heads() && run.write_values
}

/// Units per cube of [`run_length_fixup`] (one tile each).
const FIXUP_THREADS: u32 = 256;

/// Shared memory the staged run-length tile may take (with the look-back's and the scan's
/// shared memory under the device's limit). Larger tiles measured faster on the H200
/// (unique_consecutive with counts, 2^28 sorted i32: 8 vectors per unit, 68 KiB staged,
/// 1.18 ms; 4 vectors, 34 KiB, 1.54 ms).
const STAGE_BUDGET: usize = 128 * 1024;

/// Units per cube of the folding tile (reduce-by-key, inverse indices) where the device allows
/// them: twice [`THREADS`], each with half the vectors (the staged tile keeps its size). On the
/// H200 reduce_by_key of 2^28 i32 keys / f32 values took 1.21 ms with 512 × 4 against
/// 1.30–1.32 ms with 256 × 8 (BENCHMARKS.md at 52581a0, 2026-11-30 (H200), "runs from the head
/// mask"): the same shared memory per cube, twice the units to hide the loads. The head-mask
/// tile of unique-consecutive keeps 256 units of 8 vectors: with counts 0.81–0.83 ms, against
/// 0.82–0.83 for 512 × 8 and 0.88–0.99 for the other shapes tried (BENCHMARKS.md at 52581a0,
/// 2026-12-01 (H200), "unique_consecutive with counts").
const FOLD_THREADS: u32 = 512;

/// The run-length pass: the tile staged in shared memory when it fits (keys in / unique keys
/// out; values in / folds out; run indices; each padded), else unstaged.
#[allow(clippy::too_many_arguments)]
fn plan(
    policy: &Policy,
    cap: usize,
    key_size: usize,
    value_size: Option<usize>,
    acc_size: usize,
    device_len: bool,
    run: RunConfig,
) -> Result<Pass> {
    let (vec, threads, vpt, staged) = run_length_tile(
        PassLimits::from_policy(policy),
        &policy.tuning,
        cap,
        key_size,
        value_size,
        acc_size,
        run,
    );
    Pass::with_tile(
        policy, cap, vec, threads, vpt, device_len, acc_size, true, staged, false,
    )
}

/// The run-length tile under `limits`: `(elements per vector, units, vectors per unit,
/// staged)`. The staged tile takes what shared memory the pass's scans and look-back leave
/// ([`PassLimits::pass_shared_bytes`]), at most [`STAGE_BUDGET`]; if even one vector per unit
/// does not fit, the tile is not staged. Public for the tests, which compile the planned
/// kernels for other devices' limits and check their shared memory against them.
#[doc(hidden)]
pub fn run_length_tile(
    limits: PassLimits,
    tuning: &Tuning,
    cap: usize,
    key_size: usize,
    value_size: Option<usize>,
    acc_size: usize,
    run: RunConfig,
) -> (usize, u32, u32, bool) {
    let sizes = [key_size, value_size.unwrap_or(1)];
    let vec = vector_width(cap, &sizes);
    let top = max_vpt(vec);
    let folds = if run.write_values || !run.ones {
        acc_size
    } else {
        0
    };
    let inverse = if run.inverse { 4 } else { 0 };
    // Unique-consecutive without inverse stages only its keys (padded) and lengths
    // (run_length_heads).
    let heads = run.heads();
    let max_units = limits.max_units;
    let threads = tuning
        .checked_runs_units()
        .filter(|&t| t <= max_units)
        .unwrap_or(if !heads && FOLD_THREADS <= max_units {
            FOLD_THREADS
        } else {
            THREADS
        });
    let stage = |vpt: u32| {
        let te = (threads * vpt) as usize * vec;
        if heads {
            // Lengths are staged in the keys' place when keys are 4 bytes, else beside them.
            let lengths = if run.write_values && key_size != 4 {
                4
            } else {
                0
            };
            padded_len(te) * key_size + te * lengths
        } else {
            padded_len(te) * (key_size + folds + inverse)
        }
    };
    let limit = limits
        .shared
        .saturating_sub(limits.pass_shared_bytes(threads, acc_size));
    let budget = STAGE_BUDGET.min(limit);
    let (vpt, staged) = match tuning.runs_vectors_per_unit {
        Some(0) => (top, false),
        Some(v) => {
            let v = v.clamp(1, top).next_power_of_two().min(top);
            (v, stage(v) <= limit)
        }
        None => {
            let mut v = top;
            while v > 1 && stage(v) > budget {
                v /= 2;
            }
            if stage(v) <= budget {
                (v, true)
            } else {
                (top, false)
            }
        }
    };
    (vec, threads, vpt, staged)
}

struct Job<'a, R: Runtime> {
    keys: &'a DeviceTensor<R>,
    values: Option<&'a DeviceTensor<R>>,
    op: ScanOp,
    out_keys: &'a DeviceTensor<R>,
    out_values: Option<&'a DeviceTensor<R>>,
    inverse: Option<&'a DeviceTensor<R>>,
    count: &'a DeviceTensor<R>,
    len: Len<'a, R>,
}

fn run<R: Runtime>(
    client: &ComputeClient<R>,
    job: Job<'_, R>,
    ws: &mut Workspace<R>,
) -> Result<()> {
    if let Some(v) = job.values {
        job.op.check_device(client, v.dtype)?;
    }
    crate::validate::args(
        client,
        &[
            ("the keys", Some(job.keys)),
            ("the values", job.values),
            ("the length", job.len.device_count()),
        ],
        &[
            ("the key output", Some(job.out_keys)),
            ("the value output", job.out_values),
            ("the inverse", job.inverse),
            ("the count", Some(job.count)),
        ],
    )?;
    let available = [Some(job.keys), job.values]
        .into_iter()
        .flatten()
        .map(|t| t.num_elements())
        .min()
        .unwrap_or(0);
    if let Some(v) = job.values {
        if v.num_elements() != job.keys.num_elements() {
            return Err(Error::LengthMismatch {
                expected: job.keys.num_elements(),
                got: v.num_elements(),
            });
        }
    }
    job.len.validate(available)?;
    let cap = job.len.capacity();
    check_input(client, job.keys, cap)?;
    if let Some(v) = job.values {
        check_input(client, v, cap)?;
    }
    check_output(job.out_keys, cap, job.keys.dtype)?;
    let idx = crate::scan::index_dtype(client);
    match (job.values, job.out_values) {
        (Some(v), Some(o)) => check_output(o, cap, v.dtype)?,
        (None, Some(o)) => check_output(o, cap, idx)?,
        _ => {}
    }
    if let Some(i) = job.inverse {
        check_output(i, cap, idx)?;
    }
    check_count(job.count)?;
    if cap == 0 {
        crate::select::plan::zero_count(client, job.count);
        return Ok(());
    }
    let ones = job.values.is_none();
    let acc_dtype = job
        .values
        .map(|v| crate::dtype::accumulator_dtype(v.dtype))
        .unwrap_or(DType::U32);
    let device_len = job.len.device_count().is_some();
    let run = RunConfig {
        ones,
        inverse: job.inverse.is_some(),
        write_values: job.out_values.is_some(),
    };
    let pass = plan(
        &Policy::of(client, ws.tuning()),
        cap,
        job.keys.dtype.size(),
        job.values.map(|v| v.dtype.size()),
        acc_dtype.size(),
        device_len,
        run,
    )?;
    let (cubes, ncubes) = pass.cube_count();
    let (lease, records) =
        ws.lease_with_temp(client, pass.state_bytes, records_bytes(&pass, run), ncubes)?;
    let dummy = ws.dummy(client);
    let (len_h, n_host) = len_parts(job.len, &dummy);
    let vecs = cap.max(pass.vec) / pass.vec;
    let h = |t: Option<&DeviceTensor<R>>, n: usize| {
        Buf::new(
            t.map(|t| &t.handle).unwrap_or(&dummy),
            if t.is_some() { n } else { 1 },
        )
    };
    let bufs = Bufs {
        keys: h(Some(job.keys), vecs),
        values: h(job.values, vecs),
        out_keys: h(Some(job.out_keys), cap.max(1)),
        out_values: h(job.out_values, cap.max(1)),
        inverse: h(job.inverse, cap.max(1)),
        count: Buf::new(&job.count.handle, 1),
        len: Buf::new(&len_h, 1),
        records: match &records {
            Some(r) => Buf::new(r, RECORD_WORDS as usize * pass.tiles as usize),
            None => Buf::new(&dummy, 1),
        },
        state: Buf::new(&lease.handle, lease.words),
    };
    let l = Launch {
        pass: &pass,
        bufs: &bufs,
        cubes,
        n_host,
        epoch: lease.epoch,
        base: lease.counter_base,
        run,
        fixup: fixes_up(&pass, run),
    };
    let x64 = idx == DType::I64;
    match job.values {
        None => with_dtype!(job.keys.dtype, |K, _A| if x64 {
            l.go::<R, K, u32, u32, i64, i64, Add>(client)
        } else {
            l.go::<R, K, u32, u32, i32, i32, Add>(client)
        }),
        Some(v) => with_dtype!(job.keys.dtype, |K, _KA| with_dtype!(v.dtype, |V, A| {
            match job.op {
                ScanOp::Sum => l.go::<R, K, V, A, V, i32, Add>(client),
                ScanOp::Prod => l.go::<R, K, V, A, V, i32, Mul>(client),
                ScanOp::Max => l.go::<R, K, V, A, V, i32, Max>(client),
                ScanOp::Min => l.go::<R, K, V, A, V, i32, Min>(client),
                ScanOp::LogSumExp => l.go::<R, K, V, A, V, i32, LogAddExp>(client),
            }
        })),
    }
    Ok(())
}

/// The buffers of one pass (one-element dummies where not asked for).
struct Bufs {
    keys: Buf,
    values: Buf,
    out_keys: Buf,
    out_values: Buf,
    inverse: Buf,
    count: Buf,
    len: Buf,
    /// The tiles' records for [`run_length_fixup`].
    records: Buf,
    /// The tile state (bound twice: atomics and plain loads).
    state: Buf,
}

struct Launch<'a> {
    pass: &'a Pass,
    bufs: &'a Bufs,
    cubes: CubeCount,
    n_host: u32,
    epoch: u32,
    base: u32,
    run: RunConfig,
    /// Launch [`run_length_fixup`] after the pass (see [`fixes_up`]).
    fixup: bool,
}

impl Launch<'_> {
    fn go<
        R: Runtime,
        K: Numeric,
        V: Numeric,
        A: Numeric,
        W: Numeric,
        X: Int,
        O: cubeprim_kernels::ops::ScanOp,
    >(
        &self,
        client: &ComputeClient<R>,
    ) {
        let b = self.bufs;
        // SAFETY: every buffer holds the launch's capacity (checked by `run`).
        unsafe {
            run_length::launch_unchecked::<K, V, A, W, X, O, R>(
                client,
                self.cubes.clone(),
                CubeDim::new_1d(self.pass.cfg.threads),
                self.pass.vec,
                RunInputsLaunch::new(b.keys.arg(), b.values.arg()),
                RunOutputsLaunch::new(
                    b.out_keys.arg(),
                    b.out_values.arg(),
                    b.inverse.arg(),
                    b.count.arg(),
                ),
                b.len.arg(),
                b.records.arg(),
                TileStateArgsLaunch::new(b.state.arg(), b.state.arg()),
                PassScalarsLaunch::new(self.n_host, self.epoch, self.base),
                self.pass.cfg,
                self.run,
            );
            if self.fixup {
                let tile = self.pass.cfg.tile_vectors() * self.pass.vec as u32;
                run_length_fixup::launch_unchecked::<W, R>(
                    client,
                    CubeCount::Static(self.pass.tiles.div_ceil(FIXUP_THREADS), 1, 1),
                    CubeDim::new_1d(FIXUP_THREADS),
                    b.records.arg(),
                    b.out_values.arg(),
                    b.count.arg(),
                    b.len.arg(),
                    self.n_host,
                    tile,
                    FIXUP_THREADS,
                    self.pass.cfg.plane_ops,
                    self.pass.cfg.device_len,
                );
            }
        }
    }
}

/// Runs of equal consecutive keys → `(unique key, fold of the run's values with op)` into the
/// front of `out_keys` / `out_values` (values in their own dtype; f16 / bf16 accumulate in
/// f32); `count[0]` = number of runs. Outputs need room for the capacity of `len`. One
/// single-pass kernel; no host sync, and with a reused [`Workspace`] no allocation.
///
/// # Errors
///
/// [`Error::UnsupportedDType`] for keys or values the runtime lacks, for an output of another dtype
/// than its input (counts and inverse: [`index_dtype`](crate::index_dtype)), or for a count that is
/// not `u32`; [`Error::Unsupported`] for a tensor that is not contiguous (or a device count not at
/// the start of its buffer); [`Error::LengthMismatch`] for values of another length than the keys,
/// a capacity of `len` past the keys, or a device count of more than one element;
/// [`Error::OutputTooSmall`] for an output with room for fewer than the capacity;
/// [`Error::Aliased`] for an output that shares memory with an input or another output; the
/// argument checks of every call ([`Error::ShapeMismatch`], [`Error::TooLarge`],
/// [`Error::OutOfBounds`], [`Error::InvalidArgument`]; see [`Error`]); [`Error::BufferTooLarge`],
/// [`Error::ScratchTooSmall`] or [`Error::WorkspaceMismatch`] from `workspace`.
#[allow(clippy::too_many_arguments)]
pub fn reduce_by_key_into<'a, R: Runtime>(
    client: &ComputeClient<R>,
    keys: &'a DeviceTensor<R>,
    values: &'a DeviceTensor<R>,
    len: impl Into<Len<'a, R>>,
    op: ScanOp,
    out_keys: &DeviceTensor<R>,
    out_values: &DeviceTensor<R>,
    count: &DeviceTensor<R>,
    workspace: &mut Workspace<R>,
) -> Result<()> {
    run(
        client,
        Job {
            keys,
            values: Some(values),
            op,
            out_keys,
            out_values: Some(out_values),
            inverse: None,
            count,
            len: len.into(),
        },
        workspace,
    )
}

/// Segmented reduction over runs of equal consecutive keys (CUB's `ReduceByKey`): the first
/// key of each run and the fold of its values with `op`, for the first `len` keys. Returns
/// `(keys, values, count)`: fresh outputs sized for the capacity of `len`, whose first
/// `count[0]` elements are the runs, and the run count left on the device (no host sync).
/// NaN keys are each their own run; `-0.0` and `+0.0` are one key.
///
/// # Errors
///
/// As [`reduce_by_key_into`].
///
/// # Example
///
/// The run-length family: reduce-by-key, unique-consecutive and a histogram.
///
/// ```
/// use cubecl::wgpu::{WgpuDevice, WgpuRuntime};
/// use cubecl::Runtime;
/// use cubeprim::{DeviceTensor, ReduceOp, Workspace};
///
/// let client = WgpuRuntime::client(&WgpuDevice::default());
/// let keys = DeviceTensor::<WgpuRuntime>::from_slice(&client, &[7u32, 7, 2, 2, 2, 7], &[6])?;
/// let data = [1.0f32, 2., 3., 4., 5., 6.];
/// let vals = DeviceTensor::<WgpuRuntime>::from_slice(&client, &data, &[6])?;
/// let mut ws = Workspace::new();
///
/// // Sum of the values of each run of equal keys; the run count stays on the device.
/// let (k, v, count) = cubeprim::reduce_by_key(&client, &keys, &vals, 6, ReduceOp::Sum, &mut ws)?;
/// let runs = cubeprim::read_count(&client, &count);
/// assert_eq!(&k.to_vec::<u32>(&client)[..runs], [7, 2, 7]);
/// assert_eq!(&v.to_vec::<f32>(&client)[..runs], [3., 12., 6.]);
///
/// // torch.unique_consecutive, sized by one count read.
/// let u = cubeprim::unique_consecutive_sized(&client, &keys, false, false, &mut ws)?;
/// assert_eq!(u.values.to_vec::<u32>(&client), [7, 2, 7]);
///
/// // torch.bincount(keys, minlength=8): on the device, no host read.
/// let hist = cubeprim::histogram(&client, &keys, 8, 6, &mut ws)?;
/// assert_eq!(hist.to_vec::<u32>(&client), [0, 0, 3, 0, 0, 0, 0, 3]);
/// # Ok::<(), cubeprim::Error>(())
/// ```
pub fn reduce_by_key<'a, R: Runtime>(
    client: &ComputeClient<R>,
    keys: &'a DeviceTensor<R>,
    values: &'a DeviceTensor<R>,
    len: impl Into<Len<'a, R>>,
    op: ScanOp,
    workspace: &mut Workspace<R>,
) -> Result<(DeviceTensor<R>, DeviceTensor<R>, DeviceTensor<R>)> {
    let len = len.into();
    before_alloc(client, &[keys, values], len)?;
    let ok = DeviceTensor::try_empty(client, &[len.capacity()], keys.dtype)?;
    let ov = DeviceTensor::try_empty(client, &[len.capacity()], values.dtype)?;
    let count = new_count(client);
    reduce_by_key_into(client, keys, values, len, op, &ok, &ov, &count, workspace)?;
    Ok((ok, ov, count))
}

/// The inputs of a call that returns fresh outputs, checked before they are allocated, and
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

/// The outputs of [`unique_consecutive`].
pub struct UniqueConsecutive<R: Runtime> {
    /// The first key of each run (front `count` elements).
    pub values: DeviceTensor<R>,
    /// Run lengths (index dtype: i64 where the runtime has it, else i32).
    pub counts: Option<DeviceTensor<R>>,
    /// For every input element, the index of its run (index dtype).
    pub inverse: Option<DeviceTensor<R>>,
    /// `u32[1]`: the number of runs.
    pub count: DeviceTensor<R>,
}

/// `torch.unique_consecutive` on the device: the first key of each run of equal consecutive
/// keys among the first `len`, with the run lengths (`return_counts`) and the run index of
/// every key (`return_inverse`), in outputs sized for the capacity of `len`; the run count is
/// left on the device in [`UniqueConsecutive::count`] (no host sync). See [`reduce_by_key`]
/// for an example.
///
/// # Errors
///
/// As [`reduce_by_key_into`].
pub fn unique_consecutive<'a, R: Runtime>(
    client: &ComputeClient<R>,
    keys: &'a DeviceTensor<R>,
    len: impl Into<Len<'a, R>>,
    return_inverse: bool,
    return_counts: bool,
    workspace: &mut Workspace<R>,
) -> Result<UniqueConsecutive<R>> {
    let len = len.into();
    before_alloc(client, &[keys], len)?;
    let cap = len.capacity();
    let idx = crate::scan::index_dtype(client);
    let values = DeviceTensor::try_empty(client, &[cap], keys.dtype)?;
    let counts = return_counts
        .then(|| DeviceTensor::try_empty(client, &[cap], idx))
        .transpose()?;
    let inverse = return_inverse
        .then(|| DeviceTensor::try_empty(client, &[cap], idx))
        .transpose()?;
    let count = new_count(client);
    run(
        client,
        Job {
            keys,
            values: None,
            op: ScanOp::Sum,
            out_keys: &values,
            out_values: counts.as_ref(),
            inverse: inverse.as_ref(),
            count: &count,
            len,
        },
        workspace,
    )?;
    Ok(UniqueConsecutive {
        values,
        counts,
        inverse,
        count,
    })
}

/// [`unique_consecutive`] of a whole tensor (flattened), with `values` and `counts` cut to the
/// number of runs: reads the count back once (the one sync it does). `inverse` keeps the
/// input's shape. The keys must be contiguous.
///
/// # Errors
///
/// As [`reduce_by_key_into`].
pub fn unique_consecutive_sized<R: Runtime>(
    client: &ComputeClient<R>,
    keys: &DeviceTensor<R>,
    return_inverse: bool,
    return_counts: bool,
    workspace: &mut Workspace<R>,
) -> Result<UniqueConsecutive<R>> {
    let n = keys.num_elements();
    let mut u = unique_consecutive(client, keys, n, return_inverse, return_counts, workspace)?;
    let k = read_count(client, &u.count);
    u.values = u.values.narrow(0, 0, k)?;
    u.counts = u.counts.map(|c| c.narrow(0, 0, k)).transpose()?;
    u.inverse = u.inverse.map(|i| {
        let mut i = i;
        i.shape = keys.shape.clone();
        i.strides = crate::tensor::contiguous_strides(&keys.shape);
        i
    });
    Ok(u)
}
