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
//! of the ordinal, used for the plan only). Per call: the outputs (by candle) and the row
//! layout (a few words, uploaded); compiled kernels are cached per device and variant.

use super::cuda::compile_ptx;
use super::kernels::{radix_sort_rows_info, radix_sort_rows_source, RowSortVariant, Target};
use super::ops::dtype_of;
use crate::sort::{Route, SortPlan, ValueKind};
use crate::tensor::contiguous_strides;
use crate::{DType, SortOptions};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{
    sys::CUfunction_attribute, CudaFunction, DeviceRepr, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::{CudaDType, CudaDevice, WrapErr};
use candle_core::{CudaStorage, Layout, Result, Shape};
use cubecl::prelude::CubeCount;
use half::{bf16, f16};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Loaded kernels per (device ordinal, variant), with their dynamic shared memory.
type Funcs = HashMap<(usize, RowSortVariant), (CudaFunction, u32)>;
static FUNCS: OnceLock<Mutex<Funcs>> = OnceLock::new();

/// The loaded kernel of a variant (compiled on first use on each device).
fn function(dev: &CudaDevice, v: RowSortVariant) -> Result<(CudaFunction, u32)> {
    let ctx = dev.cuda_stream().context().clone();
    let key = (ctx.ordinal(), v);
    let cache = FUNCS.get_or_init(Default::default);
    if let Some(f) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(f.clone());
    }
    let src = radix_sort_rows_source(&v, Target::Cuda).map_err(super::wrap)?;
    let ptx = compile_ptx(&src.source, ctx.compute_capability().w()?)?;
    let func = ctx
        .load_module(ptx)
        .w()?
        .load_function(super::kernels::RADIX_SORT_ROWS)
        .w()?;
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
    let plan = SortPlan::new(&client, total / n, n, key, vk, false, opts).ok()?;
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

/// The row layout `radix_sort_rows` reads (as the device sort's): the leading dims, their
/// strides in the view, their contiguous strides, the view's offset.
fn row_layout(layout: &Layout) -> Result<Vec<u32>> {
    let r = layout.dims().len();
    let others = &layout.dims()[..r - 1];
    let word = |v: usize| {
        u32::try_from(v)
            .map_err(|_| candle_core::Error::Msg(format!("cubeprim sort: {v} past u32")))
    };
    let mut words = vec![word(others.len())?];
    for &d in others {
        words.push(word(d)?);
    }
    for &s in &layout.stride()[..r - 1] {
        words.push(word(s)?);
    }
    for s in contiguous_strides(others) {
        words.push(word(s)?);
    }
    words.push(word(layout.start_offset())?);
    Ok(words)
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
    let (func, shared) = function(dev, v)?;
    let words = row_layout(layout)?;
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
    let dummy = dev.alloc_zeros::<u64>(1)?;
    let stride = *layout.stride().last().expect("rank >= 1");
    let word = |v: usize, what: &str| {
        u32::try_from(v)
            .map_err(|_| candle_core::Error::Msg(format!("cubeprim sort: {what} {v} past u32")))
    };
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
