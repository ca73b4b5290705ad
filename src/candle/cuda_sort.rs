//! Row sorts that fit one cube, on candle's CUDA stream: sort / argsort of candle CUDA tensors
//! whose rows fit one radix tile (the plan's in-cube route: up to a few thousand keys).
//!
//! Route: as the scans (`super::cuda`), the one kernel of that route, `radix_sort_rows`, is
//! compiled to CUDA C++ by cubecl's compiler ([`super::kernels`]), to PTX by NVRTC, and
//! launched with cudarc on candle's stream, on candle's buffers: no copy, no host sync. The
//! bridge (`super::bridge`) costs about 0.12 ms per call in copies and syncs between the two
//! runtimes' streams, more than the sort of a short row takes: through it candle's own
//! one-block bitonic `arg_sort_last_dim` beat ours on rows of 256 keys. Longer rows (the
//! device-wide passes, several kernels and a workspace) still go through the bridge.
//!
//! The tile comes from cubeprim's own [`SortPlan`] for the device's limits (cubecl's client
//! of the ordinal, used for the plan only). Per call: the outputs and a one-word stand-in for
//! an output not asked for (by candle), and the row layout (a few words, uploaded); compiled
//! kernels are cached per device and variant (`super::cuda::cached_kernel`).

use super::cuda::{cached_kernel, KernelCache};
use super::kernels::{radix_sort_rows_info, radix_sort_rows_source, RowSortVariant, Target};
use super::ops::dtype_of;
use crate::sort::{row_layout, to_u32, Route, SortOutputs, SortPlan, ValueKind};
use crate::{DType, SortOptions};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{DeviceRepr, LaunchConfig, PushKernelArg};
use candle_core::cuda_backend::{CudaDType, CudaDevice, WrapErr};
use candle_core::{CudaStorage, Layout, Result, Shape};
use cubecl::prelude::CubeCount;
use half::{bf16, f16};
use std::sync::OnceLock;

/// Loaded row sorts per (device ordinal, variant).
static FUNCS: KernelCache<(usize, RowSortVariant)> = OnceLock::new();

/// The rows of `layout` (along its last axis), each sorted stably (`asc`ending, NaN last; or
/// descending): the sorted values (when `values`) and u32 positions (when `indices`), both
/// contiguous of `layout`'s shape. `None` where this route does not apply (a dtype it does
/// not sort, no elements, or rows longer than one tile): the caller takes the bridge.
pub(crate) fn sort_rows(
    storage: &CudaStorage,
    layout: &Layout,
    asc: bool,
    values: bool,
    indices: bool,
) -> Option<Result<Vec<(CudaStorage, Shape)>>> {
    let key = dtype_of(storage.dtype())?;
    let dims = layout.dims();
    let n = *dims.last()?;
    let total = layout.shape().elem_count();
    if total == 0 {
        return None;
    }
    let dev = storage.device().clone();
    let ordinal = dev.cuda_stream().context().ordinal();
    let client = super::bridge::client(ordinal);
    let opts = SortOptions {
        descending: !asc,
        ..Default::default()
    };
    let vk = if indices {
        ValueKind::Indices(DType::U32)
    } else {
        ValueKind::None
    };
    let tuning = crate::tuning::Tuning::default();
    let outputs = SortOutputs {
        keys: values,
        full_rows: true,
    };
    let plan = SortPlan::new(
        &client,
        &tuning,
        total / n,
        n,
        key,
        vk,
        outputs,
        false,
        opts,
    )
    .ok()?;
    if plan.route != Route::InCube {
        return None;
    }
    let v = RowSortVariant {
        key,
        cfg: plan.cfg,
        indexed: indices,
        write_keys: values,
    };
    Some(match key {
        DType::F32 => launch::<f32>(&dev, storage, layout, &plan, v, asc),
        DType::F64 => launch::<f64>(&dev, storage, layout, &plan, v, asc),
        DType::F16 => launch::<f16>(&dev, storage, layout, &plan, v, asc),
        DType::BF16 => launch::<bf16>(&dev, storage, layout, &plan, v, asc),
        DType::U32 => launch::<u32>(&dev, storage, layout, &plan, v, asc),
        DType::I32 => launch::<i32>(&dev, storage, layout, &plan, v, asc),
        DType::I64 => launch::<i64>(&dev, storage, layout, &plan, v, asc),
        DType::U64 | DType::U8 => unreachable!("dtype_of gives neither u64 nor u8"),
    })
}

fn launch<T: CudaDType + DeviceRepr>(
    dev: &CudaDevice,
    storage: &CudaStorage,
    layout: &Layout,
    plan: &SortPlan,
    v: RowSortVariant,
    asc: bool,
) -> Result<Vec<(CudaStorage, Shape)>> {
    let input = storage.as_cuda_slice::<T>()?;
    let (rows, n) = (plan.rows, plan.n);
    let total = rows * n;
    let ordinal = dev.cuda_stream().context().ordinal();
    let (func, shared) = cached_kernel(&FUNCS, (ordinal, v), dev, || {
        radix_sort_rows_source(&v, Target::Cuda)
    })?;
    let words =
        row_layout(layout.dims(), layout.stride(), layout.start_offset()).map_err(super::wrap)?;
    let rows_layout = dev.clone_htod(&words)?;
    // SAFETY: the kernel writes every element of each output it is given.
    let keys_out = match v.write_keys {
        true => Some(unsafe { dev.alloc::<T>(total) }?),
        false => None,
    };
    // SAFETY: as above.
    let idx_out = match v.indexed {
        true => Some(unsafe { dev.alloc::<u32>(total) }?),
        false => None,
    };
    // SAFETY: bound where an output is not asked for, which the kernel then never touches.
    let dummy = unsafe { dev.alloc::<u32>(1) }?;
    let stride = *layout.stride().last().expect("rank >= 1");
    let word = |v: usize, what: &str| to_u32(v, what).map_err(super::wrap);
    let scalars = [
        word(rows, "rows")?,
        word(n, "row length")?,
        word(stride, "stride")?,
        word(n, "row length")?,
        plan.begin_bit,
        plan.end_bit,
        if asc { 0 } else { u32::MAX },
    ];
    let out_len = |on: bool| if on { total } else { 1 };
    let info = radix_sort_rows_info(
        scalars,
        [
            input.len(),
            out_len(v.write_keys),
            out_len(v.indexed),
            words.len(),
        ],
    );
    let CubeCount::Static(x, y, _) = SortPlan::cube_count(plan.num_tiles) else {
        unreachable!("a static count")
    };
    let cfg = LaunchConfig {
        grid_dim: (x, y, 1),
        block_dim: (v.cfg.threads, 1, 1),
        shared_mem_bytes: shared,
    };
    let stream = dev.cuda_stream();
    let mut b = stream.launch_builder(&func);
    b.arg(input);
    match &keys_out {
        Some(k) => b.arg(k),
        None => b.arg(&dummy),
    };
    match &idx_out {
        Some(i) => b.arg(i),
        None => b.arg(&dummy),
    };
    b.arg(&rows_layout);
    // The info struct, by value (`__grid_constant__`): the driver copies the parameter's size
    // from this address.
    b.arg(&info[0]);
    // SAFETY: row `r` reads `n` keys from the view's own offset and strides (the layout of
    // `layout`, inside `input`) and writes row `r` of the outputs (`total` elements each);
    // cubes past the row count return.
    unsafe { b.launch(cfg) }.w()?;
    let mut out = Vec::new();
    if let Some(k) = keys_out {
        out.push((
            CudaStorage::wrap_cuda_slice(k, dev.clone()),
            layout.shape().clone(),
        ));
    }
    if let Some(i) = idx_out {
        out.push((
            CudaStorage::wrap_cuda_slice(i, dev.clone()),
            layout.shape().clone(),
        ));
    }
    Ok(out)
}
