//! The CUDA path: cubeprim's CubeCL kernels on candle's device memory and stream.
//!
//! Route: each kernel variant is compiled to CUDA C++ by cubecl's own compiler
//! ([`super::kernels`], the exact text cubecl-cuda would hand NVRTC), to PTX by NVRTC, loaded
//! into candle's context and launched with cudarc on **candle's stream**, with candle's
//! buffers as arguments. Why not run cubecl's `CudaRuntime` beside candle, as the other
//! families do (`super::bridge`): its client owns its own memory pool and streams, so candle's
//! buffers would have to be copied into cubecl memory and back, with host syncs between the
//! two streams. Here there is no copy, no extra sync, and the op orders with candle's other
//! work like any candle kernel: the scan is one kernel, cheap to launch by hand.
//!
//! Per call, only the output (and indices) are allocated, by candle. Everything else is kept
//! per device and stream ([`Scratch`]): the look-back state is allocated zeroed once (grown by doubling)
//! and then reused without clearing — each launch gets a fresh epoch and ticket base, so what
//! earlier launches left is stale, as with [`crate::Workspace`] — the row layout is uploaded
//! only when it changes, and the unused arguments share one small buffer. Scratch is kept per
//! stream, so a launch never overlaps the previous user of its state. Compiled modules are cached per device and variant.
//!
//! Sorts of rows that fit one cube are one kernel too and take the same route
//! (`super::cuda_sort`). The other op families (longer sorts, histogram, …) are host programs
//! of several kernels and run through cubecl's own runtime instead: see `super::bridge`.
//!
//! Status: NVRTC compiles every variant to sm_90a PTX (tests/candle_cuda.rs, no GPU needed);
//! on the H200 the scans match the CPU path and run 8–308× faster than candle's `cumsum`
//! (`tests/candle_cuda.rs`, `examples/bench_candle.rs`; figures in BENCHMARKS.md at 52581a0,
//! 2026-11-30 (H200), "staged scan, byte masks", and 2026-12-01 (H200), "one-cube row sorts on
//! candle's stream").

use super::kernels::{scan_rows_info, scan_rows_source, KernelSource, Target};
use super::ops::dtype_of;
use super::plan::ScanLaunch;
use super::scan::ScanCustomOp;
use crate::scan::DeviceLimits;
use crate::{DType, ScanOp};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{
    sys::CUfunction_attribute, CudaFunction, CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions, Ptx};
use candle_core::cuda_backend::{CudaDevice, WrapErr};
use candle_core::{CudaStorage, Layout, Result, Shape, Storage};
use cubeprim_kernels::cube::TileConfig;
use cubeprim_kernels::device::tile_state::MAX_EPOCH;
use cubeprim_kernels::device::ScanMode;
use half::{bf16, f16};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// A compiled variant: (device ordinal, dtype, op, vector width, tile, mode).
type Key = (usize, DType, ScanOp, usize, TileConfig, ScanMode);

/// Loaded scan kernels.
static FUNCS: KernelCache<Key> = OnceLock::new();

/// Where NVRTC finds the CUDA headers the generated source includes (as cubecl-cuda:
/// `$CUDA_PATH/include`, and its `cccl` folder where there is one).
fn include_paths() -> Vec<String> {
    let root = ["CUDA_PATH", "CUDA_ROOT", "CUDA_HOME"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .unwrap_or_else(|| "/usr/local/cuda".into());
    let include = format!("{root}/include");
    let cccl = format!("{include}/cccl");
    if std::path::Path::new(&cccl).exists() {
        vec![include, cccl]
    } else {
        vec![include]
    }
}

/// CUDA C++ to PTX with NVRTC, for compute capability `(major, minor)`, with the options
/// cubecl-cuda uses.
pub fn compile_ptx(source: &str, (major, minor): (i32, i32)) -> Result<Ptx> {
    // As cubecl-cuda: the arch-specific target from sm_90 on.
    let suffix = if major >= 9 { "a" } else { "" };
    let opts = CompileOptions {
        options: vec![
            format!("--gpu-architecture=sm_{major}{minor}{suffix}"),
            "-lineinfo".into(),
        ],
        include_paths: include_paths(),
        ..Default::default()
    };
    compile_ptx_with_opts(source, opts)
        .map_err(|e| candle_core::Error::Cuda(format!("NVRTC: {e:?}").into()))
}

/// What every scan on one device reuses.
struct Scratch {
    /// Bound where an argument is unused.
    dummy: CudaSlice<u64>,
    /// Look-back state: zero or tagged with an older epoch.
    state: Option<CudaSlice<u32>>,
    epoch: u32,
    /// Tickets handed out since the state was last zeroed.
    counter: u32,
    /// The last row layout uploaded.
    layout: Option<(Vec<u32>, CudaSlice<u32>)>,
}

/// [`Scratch`] per device ordinal and CUDA stream (the stream's handle as an address).
///
/// One per stream, not per device: candle launches on each `CudaDevice`'s own stream (one
/// per `Device::new_cuda_with_stream`), and the lock orders only the host's enqueues, not the
/// kernels, so two streams sharing one look-back state (and one row layout buffer) would run
/// their scans over each other's tiles.
static SCRATCH: OnceLock<Mutex<HashMap<(usize, usize), Scratch>>> = OnceLock::new();

impl Scratch {
    fn new(dev: &CudaDevice) -> Result<Self> {
        Ok(Self {
            dummy: dev.alloc_zeros::<u64>(2)?,
            state: None,
            epoch: 0,
            counter: 0,
            layout: None,
        })
    }

    /// State for a launch of `words` words and `cubes` cubes: sets its epoch and ticket base,
    /// allocating (zeroed) or clearing only when it must.
    fn lease(&mut self, dev: &CudaDevice, launch: &mut ScanLaunch) -> Result<()> {
        let have = self.state.as_ref().map_or(0, |s| s.len());
        if launch.state_words > have {
            self.state = Some(dev.alloc_zeros::<u32>(launch.state_words.max(2 * have))?);
            (self.epoch, self.counter) = (0, 0);
        }
        if self.epoch >= MAX_EPOCH || self.counter.checked_add(launch.num_tiles).is_none() {
            let state = self.state.as_mut().expect("allocated above");
            dev.cuda_stream().memset_zeros(state).w()?;
            (self.epoch, self.counter) = (0, 0);
        }
        self.epoch += 1;
        launch.epoch = self.epoch;
        launch.counter_base = self.counter;
        self.counter += launch.num_tiles;
        Ok(())
    }

    /// The row layout on the device, uploaded when it differs from the last one.
    fn layout(&mut self, dev: &CudaDevice, words: &[u32]) -> Result<&CudaSlice<u32>> {
        if self.layout.as_ref().is_none_or(|(w, _)| w != words) {
            self.layout = Some((words.to_vec(), dev.clone_htod(words)?));
        }
        Ok(&self.layout.as_ref().expect("uploaded above").1)
    }
}

/// Loaded kernels, each with the dynamic shared memory it launches with, by `K` (which
/// includes the device ordinal).
pub(super) type KernelCache<K> = OnceLock<Mutex<HashMap<K, (CudaFunction, u32)>>>;

/// The kernel `key` names in `cache`; on its first use, `source` is compiled by NVRTC for
/// `dev`, loaded into its context and allowed the dynamic shared memory it needs.
pub(super) fn cached_kernel<K: std::hash::Hash + Eq>(
    cache: &KernelCache<K>,
    key: K,
    dev: &CudaDevice,
    source: impl FnOnce() -> crate::Result<KernelSource>,
) -> Result<(CudaFunction, u32)> {
    let cache = cache.get_or_init(Default::default);
    if let Some(f) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(f.clone());
    }
    let ctx = dev.cuda_stream().context().clone();
    let src = source().map_err(super::wrap)?;
    let ptx = compile_ptx(&src.source, ctx.compute_capability().w()?)?;
    let func = ctx.load_module(ptx).w()?.load_function(&src.name).w()?;
    let shared = src.shared_bytes as u32;
    if shared > 48 * 1024 {
        func.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            shared as i32,
        )
        .w()?;
    }
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, (func.clone(), shared));
    Ok((func, shared))
}

/// The loaded kernel of a launch (compiled on first use on each device).
fn function(
    dev: &CudaDevice,
    dtype: DType,
    op: ScanOp,
    launch: &ScanLaunch,
) -> Result<(CudaFunction, u32)> {
    let ordinal = dev.cuda_stream().context().ordinal();
    let key: Key = (ordinal, dtype, op, launch.vec, launch.cfg, launch.mode);
    cached_kernel(&FUNCS, key, dev, || {
        scan_rows_source(dtype, op, launch, Target::Cuda)
    })
}

/// The scan of a candle CUDA tensor (values; indices kept in `op` when indexed).
pub(crate) fn scan(
    op: &ScanCustomOp,
    storage: &CudaStorage,
    layout: &Layout,
) -> Result<(CudaStorage, Shape)> {
    let dtype = dtype_of(storage.dtype()).ok_or(candle_core::Error::UnsupportedDTypeForOp(
        storage.dtype(),
        "cubeprim scan",
    ))?;
    match dtype {
        DType::F32 => scan_typed::<f32>(op, storage, layout, dtype),
        DType::F64 => scan_typed::<f64>(op, storage, layout, dtype),
        DType::F16 => scan_typed::<f16>(op, storage, layout, dtype),
        DType::BF16 => scan_typed::<bf16>(op, storage, layout, dtype),
        DType::U32 => scan_typed::<u32>(op, storage, layout, dtype),
        DType::I32 => scan_typed::<i32>(op, storage, layout, dtype),
        DType::I64 => scan_typed::<i64>(op, storage, layout, dtype),
        DType::U64 | DType::U8 => unreachable!("dtype_of gives neither u64 nor u8"),
    }
}

fn scan_typed<T: candle_core::cuda_backend::CudaDType + DeviceRepr>(
    op: &ScanCustomOp,
    storage: &CudaStorage,
    layout: &Layout,
    dtype: DType,
) -> Result<(CudaStorage, Shape)> {
    let dev = storage.device().clone();
    let input: &CudaSlice<T> = storage.as_cuda_slice::<T>()?;
    let total = layout.shape().elem_count();
    // SAFETY: every element is written by the kernel before it is read.
    let out = unsafe { dev.alloc::<T>(total.max(1)) }?;
    let indices = if op.indexed {
        // SAFETY: as above.
        Some(unsafe { dev.alloc::<i64>(total.max(1)) }?)
    } else {
        None
    };
    if total > 0 {
        let mut launch = ScanLaunch::new(
            DeviceLimits::CUDA,
            layout.dims(),
            layout.stride(),
            layout.start_offset(),
            op.axis,
            dtype,
            op.indexed,
            op.opts,
        )
        .map_err(super::wrap)?;
        let (func, shared) = function(&dev, dtype, op.op, &launch)?;
        let stream = dev.cuda_stream();
        let mut all = SCRATCH
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let key = (stream.context().ordinal(), stream.cu_stream() as usize);
        let scratch = match all.entry(key) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(Scratch::new(&dev)?),
        };
        if launch.state_words > 0 {
            scratch.lease(&dev, &mut launch)?;
        }
        scratch.layout(&dev, &launch.layout)?;
        let Scratch {
            dummy,
            state,
            layout: rows,
            ..
        } = &*scratch;
        let rows = &rows.as_ref().expect("uploaded above").1;
        let info = scan_rows_info(&launch, input.len(), total);
        let cfg = LaunchConfig {
            grid_dim: (launch.cubes.0, launch.cubes.1, 1),
            block_dim: (launch.cfg.threads, 1, 1),
            shared_mem_bytes: shared,
        };
        let mut b = stream.launch_builder(&func);
        // The multipliers and initial states of a linear recurrence: dummies.
        b.arg(input).arg(dummy).arg(dummy).arg(&out);
        match &indices {
            Some(i) => b.arg(i),
            None => b.arg(dummy),
        };
        match (state, launch.state_words) {
            // The state twice: atomics, and plain polling loads (`plain_reads`).
            (Some(s), 1..) => b.arg(s).arg(s),
            _ => b.arg(dummy).arg(dummy),
        };
        // `prefixes` (reduce-then-scan only), the row layout, the device length (unused).
        b.arg(dummy).arg(rows).arg(dummy);
        // The info struct, by value (`__grid_constant__`): the driver copies the parameter's
        // size from this address.
        b.arg(&info[0]);
        // SAFETY: the launch's geometry keeps every access inside the buffers above (row
        // offsets from the layout's own shape and strides; tiles masked at the row end); the
        // state holds at least `state_words`.
        unsafe { b.launch(cfg) }.w()?;
    }
    if let Some(i) = indices {
        op.keep_indices(Storage::Cuda(CudaStorage::wrap_cuda_slice(i, dev.clone())));
    }
    Ok((
        CudaStorage::wrap_cuda_slice(out, dev),
        layout.shape().clone(),
    ))
}
