//! The CUDA path: cubeprim's CubeCL kernels on candle's device memory and stream.
//!
//! Route: each kernel variant is compiled to CUDA C++ by cubecl's own compiler
//! ([`super::kernels`], the exact text cubecl-cuda would hand NVRTC), to PTX by NVRTC, loaded
//! into candle's context and launched with cudarc on **candle's stream**, with candle's
//! buffers as arguments. Why not run cubecl's `CudaRuntime` beside candle: its client owns
//! its own memory pool and streams, so candle's buffers would have to be copied into cubecl
//! memory and back, with a host-side sync between the two streams each way. Here there is no
//! copy, no extra sync, the op orders with candle's other work like any candle kernel, and the
//! binary needs no second CUDA runtime (cubecl is used only as a compiler).
//!
//! Per call: the output (and indices) are allocated by candle, the look-back state (a few
//! bytes per tile) is zeroed on the stream, and the row layout (a few u32s) is uploaded.
//! Compiled modules are cached per device and variant.
//!
//! Status: NVRTC compiles every variant to sm_90a PTX (tests/candle_cuda.rs, no GPU needed);
//! the launches have not yet run on a GPU in this project. `tests/candle_cuda.rs` and
//! `examples/bench_candle.rs` check every op against the CPU path on a CUDA machine.

use super::kernels::{scan_rows_info, scan_rows_source, Target, SCAN_ROWS};
use super::ops::dtype_of;
use super::plan::{DeviceLimits, ScanLaunch};
use super::scan::ScanCustomOp;
use crate::{DType, ScanOp};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{
    sys::CUfunction_attribute, CudaFunction, CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions, Ptx};
use candle_core::cuda_backend::{CudaDevice, WrapErr};
use candle_core::{CudaStorage, Layout, Result, Shape, Storage};
use cubeprim_kernels::cube::TileConfig;
use cubeprim_kernels::device::ScanMode;
use half::{bf16, f16};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// A compiled variant: (device ordinal, dtype, op, vector width, tile, mode).
type Key = (usize, DType, ScanOp, usize, TileConfig, ScanMode);

/// Loaded kernels and the dynamic shared memory each launches with.
static FUNCS: OnceLock<Mutex<HashMap<Key, (CudaFunction, u32)>>> = OnceLock::new();

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

/// The loaded kernel of a launch (compiled on first use on each device).
fn function(
    dev: &CudaDevice,
    dtype: DType,
    op: ScanOp,
    launch: &ScanLaunch,
) -> Result<(CudaFunction, u32)> {
    let stream = dev.cuda_stream();
    let ctx = stream.context();
    let key: Key = (
        ctx.ordinal(),
        dtype,
        op,
        launch.vec,
        launch.cfg,
        launch.mode,
    );
    let cache = FUNCS.get_or_init(Default::default);
    if let Some(f) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(f.clone());
    }
    let src = scan_rows_source(dtype, op, launch, Target::Cuda).map_err(super::wrap)?;
    let ptx = compile_ptx(&src.source, ctx.compute_capability().w()?)?;
    let func = ctx.load_module(ptx).w()?.load_function(SCAN_ROWS).w()?;
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
        DType::U64 => unreachable!("candle has no u64"),
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
        let launch = ScanLaunch::new(
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
        let dummy = dev.alloc_zeros::<u64>(2)?;
        let state = if launch.state_words > 0 {
            Some(dev.alloc_zeros::<u32>(launch.state_words)?)
        } else {
            None
        };
        let rows = dev.clone_htod(&launch.layout)?;
        let info = scan_rows_info(&launch, input.len(), total);
        let cfg = LaunchConfig {
            grid_dim: (launch.cubes.0, launch.cubes.1, 1),
            block_dim: (launch.cfg.threads, 1, 1),
            shared_mem_bytes: shared,
        };
        let stream = dev.cuda_stream();
        let mut b = stream.launch_builder(&func);
        b.arg(input).arg(&out);
        match &indices {
            Some(i) => b.arg(i),
            None => b.arg(&dummy),
        };
        match &state {
            // The state twice: atomics, and plain polling loads (`plain_reads`).
            Some(s) => b.arg(s).arg(s),
            None => b.arg(&dummy).arg(&dummy),
        };
        // `prefixes` (reduce-then-scan only), the row layout, the device length (unused).
        b.arg(&dummy).arg(&rows).arg(&dummy);
        // The info struct, by value (`__grid_constant__`): the driver copies the parameter's
        // size from this address.
        b.arg(&info[0]);
        // SAFETY: the launch's geometry keeps every access inside the buffers above (row
        // offsets from the layout's own shape and strides; tiles masked at the row end).
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
