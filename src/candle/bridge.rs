//! The CUDA path of the multi-kernel ops (sorts of rows longer than one cube — shorter ones
//! run on candle's stream, `super::cuda_sort` — top-k, searchsorted, reduce, compaction,
//! runs, unique, histogram): cubecl's own `CudaRuntime`, in the same process and CUDA context
//! as candle, with device-to-device copies between candle's memory and cubecl's.
//!
//! Why this route and not the one of the scans (`super::cuda`: one kernel's generated source
//! launched with cudarc on candle's stream, no copy): these ops are host programs of several
//! kernels (a radix sort is per digit a histogram, a scan of the counts and a scatter, with
//! the plan choosing tile shapes and the route from the device's limits and a [`Workspace`]
//! holding the scratch). Re-launching each of them by hand through cudarc would duplicate
//! that host side (plans, workspace layout, argument lists of about ten kernels) in a second
//! copy that must follow every kernel change. Running cubeprim's own host code keeps one
//! implementation and gives every op at once.
//!
//! What it costs, per call:
//! - candle and cubecl share the device's primary context (both retain it), so pointers are
//!   valid in both; cubecl-cuda exposes its buffers' device pointers
//!   (`ComputeClient::get_resource` → `GpuResource::ptr`) and candle its slices' (cudarc's
//!   `DevicePtr`). Each input is copied (one `cuMemcpyDtoDAsync` on candle's stream; a
//!   non-contiguous view is first made contiguous by candle's own strided copy) into a fresh
//!   cubecl buffer, each output back into a buffer candle allocates. At the H200's ~4 TB/s
//!   device bandwidth a copy of `b` bytes costs about `2b / 4e12` s plus a launch (a few µs):
//!   small beside a radix sort, which reads and writes its keys twice per 8-bit digit.
//! - The two runtimes use different streams, ordered by three host syncs: cubecl's stream
//!   (its stream-ordered allocations are done), candle's (the inputs are copied), cubecl's
//!   (the op is done), and candle's once more after the output copies (cubecl's buffers may
//!   then be reused). Ops whose output size depends on the data already read a count back.
//! - Nothing is allocated on the hot path beyond the inputs' and outputs' buffers: the cubecl
//!   client and its [`Workspace`] (the scratch of sorts, scans and compactions) are kept per
//!   device, and cubecl's memory pool reuses the buffers of earlier calls.
//!
//! The binary links cubecl-cuda (and its NCCL dependency) besides candle's CUDA libraries.

use super::ops::{bad_dtype, dtype_of, OnDevice, PrimOp};
use crate::{DType, DeviceTensor, Workspace};
use candle_core::backend::{BackendDevice, BackendStorage};
use candle_core::cuda_backend::cudarc::driver::{
    result, sys::CUdeviceptr, DevicePtr, DevicePtrMut,
};
use candle_core::cuda_backend::{CudaDevice, CudaStorageSlice, WrapErr};
use candle_core::{CudaStorage, Layout, Result, Shape};
use cubecl::cuda::{CudaDevice as CubeDevice, CudaRuntime};
use cubecl::prelude::*;
use cubecl::stream_id::StreamId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// cubecl's client of one device and the scratch the ops share there.
struct Bridge {
    client: ComputeClient<CudaRuntime>,
    ws: Workspace<CudaRuntime>,
    /// The one cubecl stream every call runs on, whichever thread makes it (candle's threads
    /// would each get their own): the workspace is used on one stream only (see
    /// [`Workspace`]); the lock serialises the calls.
    stream: StreamId,
}

/// One [`Bridge`] per CUDA ordinal.
static BRIDGES: OnceLock<Mutex<HashMap<usize, Arc<Mutex<Bridge>>>>> = OnceLock::new();

fn bridge(ordinal: usize) -> Arc<Mutex<Bridge>> {
    let mut all = BRIDGES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    all.entry(ordinal)
        .or_insert_with(|| {
            Arc::new(Mutex::new(Bridge {
                client: CudaRuntime::client(&CubeDevice::new(ordinal)),
                ws: Workspace::new(),
                stream: StreamId::current(),
            }))
        })
        .clone()
}

/// cubecl's client of a CUDA ordinal, for plans that need the device's limits (the launches
/// of `super::cuda_sort` go through candle's stream, not this client).
pub(crate) fn client(ordinal: usize) -> ComputeClient<CudaRuntime> {
    let b = bridge(ordinal);
    let guard = b.lock().unwrap_or_else(|e| e.into_inner());
    guard.client.clone()
}

/// Runs `$body` with `$x` bound to the `CudaSlice` of any dtype.
macro_rules! with_slice {
    ($s:expr, |$x:ident| $body:expr) => {
        match $s {
            CudaStorageSlice::U8($x) => $body,
            CudaStorageSlice::U32($x) => $body,
            CudaStorageSlice::I16($x) => $body,
            CudaStorageSlice::I32($x) => $body,
            CudaStorageSlice::I64($x) => $body,
            CudaStorageSlice::BF16($x) => $body,
            CudaStorageSlice::F16($x) => $body,
            CudaStorageSlice::F32($x) => $body,
            CudaStorageSlice::F64($x) => $body,
            CudaStorageSlice::F8E4M3($x) => $body,
            CudaStorageSlice::F6E2M3($x) => $body,
            CudaStorageSlice::F6E3M2($x) => $body,
            CudaStorageSlice::F4($x) => $body,
            CudaStorageSlice::F8E8M0($x) => $body,
        }
    };
}

fn sync_cubecl(client: &ComputeClient<CudaRuntime>) -> Result<()> {
    cubecl::future::block_on(client.sync())
        .map_err(|e| candle_core::Error::Cuda(format!("cubecl: {e:?}").into()))
}

/// The device address of the first element of a (contiguous) cubecl tensor.
fn cubecl_ptr(client: &ComputeClient<CudaRuntime>, t: &DeviceTensor<CudaRuntime>) -> Result<u64> {
    let r = client
        .get_resource(t.handle.clone())
        .map_err(|e| candle_core::Error::Cuda(format!("cubecl: {e:?}").into()))?;
    Ok(r.resource().ptr + (t.offset * t.dtype.size()) as u64)
}

/// `bytes` from `src` to `dst` on candle's stream.
fn copy(dev: &CudaDevice, dst: CUdeviceptr, src: CUdeviceptr, bytes: usize) -> Result<()> {
    let stream = dev.cuda_stream();
    stream.context().bind_to_thread().w()?;
    // SAFETY: both ranges are live device allocations of the shared context, at least `bytes`
    // long (checked by the callers' element counts).
    unsafe { result::memcpy_dtod_async(dst, src, bytes, stream.cu_stream()) }.w()
}

/// Runs `op` on candle CUDA storages through cubecl's `CudaRuntime`.
pub(crate) fn run<O: PrimOp>(
    op: &O,
    inputs: &[(&CudaStorage, &Layout)],
) -> Result<Vec<(CudaStorage, Shape)>> {
    let dev = inputs[0].0.device().clone();
    let stream = dev.cuda_stream();
    let bridge = bridge(stream.context().ordinal());
    let mut guard = bridge.lock().unwrap_or_else(|e| e.into_inner());
    let Bridge {
        client,
        ws,
        stream: on,
    } = &mut *guard;
    on.executes(|| run_locked(op, inputs, client, ws))
}

fn run_locked<O: PrimOp>(
    op: &O,
    inputs: &[(&CudaStorage, &Layout)],
    client: &ComputeClient<CudaRuntime>,
    ws: &mut Workspace<CudaRuntime>,
) -> Result<Vec<(CudaStorage, Shape)>> {
    let dev = inputs[0].0.device().clone();
    let stream = dev.cuda_stream();

    // Inputs: contiguous candle storage (copied by candle first where strided) and a fresh
    // cubecl buffer of the same bytes; see `Staged` for the views candle cannot copy.
    let mut staged = Vec::with_capacity(inputs.len());
    for &(s, l) in inputs {
        let dtype = dtype_of(s.dtype()).ok_or_else(|| bad_dtype(s.dtype(), O::NAME))?;
        let (src, start, span) = match l.contiguous_offsets() {
            Some((a, _)) => (None, a, None),
            None if candle_copies(s.dtype()) => {
                // SAFETY: `copy_strided_src` writes every element.
                let mut dst = unsafe { dev.alloc_uninit(l.shape(), s.dtype()) }?;
                s.copy_strided_src(&mut dst, 0, l)?;
                (Some(dst), 0, None)
            }
            None => (None, l.start_offset(), Some(span_len(l))),
        };
        let t = match span {
            Some(len) => DeviceTensor::<CudaRuntime>::empty(client, &[len], dtype),
            None => DeviceTensor::<CudaRuntime>::empty(client, l.dims(), dtype),
        };
        let ptr = cubecl_ptr(client, &t)?;
        staged.push((src, start, t, ptr, s, span.map(|_| l)));
    }
    // cubecl's allocations are ordered on its stream: done before candle's stream writes them.
    sync_cubecl(client)?;
    for (src, start, t, ptr, s, _) in &staged {
        let bytes = t.num_elements() * t.dtype.size();
        if bytes > 0 {
            let src = src.as_ref().unwrap_or(s);
            with_slice!(&src.slice, |x| {
                let (p, _sync) = x.device_ptr(&stream);
                copy(&dev, *ptr, p + (start * t.dtype.size()) as u64, bytes)?
            });
        }
    }
    stream.synchronize().w()?;
    let tensors: Vec<_> = staged
        .into_iter()
        .map(|(_, _, t, _, _, view)| match view {
            Some(l) => contiguous_on_cubecl(client, t, l),
            None => t,
        })
        .collect();

    let on = OnDevice {
        client,
        inputs: tensors,
        ws,
    };
    let outs = op.device(on).map_err(super::wrap)?;
    sync_cubecl(client)?;

    let mut result = Vec::with_capacity(outs.len());
    for t in &outs {
        if !t.is_contiguous() {
            return Err(candle_core::Error::Msg(format!(
                "cubeprim {}: a non-contiguous output",
                O::NAME
            )));
        }
        let dtype = candle_dtype(t.dtype)?;
        let shape = Shape::from(t.shape.clone());
        // SAFETY: the copy below writes every element.
        let mut out = unsafe { dev.alloc_uninit(&shape, dtype) }?;
        let bytes = t.num_elements() * t.dtype.size();
        if bytes > 0 {
            let src = cubecl_ptr(client, t)?;
            with_slice!(&mut out.slice, |x| {
                let (p, _sync) = x.device_ptr_mut(&stream);
                copy(&dev, p, src, bytes)?
            });
        }
        result.push((out, shape));
    }
    // cubecl's buffers are free for reuse once the copies have read them.
    stream.synchronize().w()?;
    Ok(result)
}

/// Whether candle 0.11.1's CUDA kernels can make a strided view of `d` contiguous: they have
/// no `ucopy_i32` (nor `ucopy_i16`; i16 reaches the ops cast to i32 on candle's side).
fn candle_copies(d: candle_core::DType) -> bool {
    !matches!(d, candle_core::DType::I32 | candle_core::DType::I16)
}

/// Elements from a strided view's first element to its last, inclusive (0 when it is empty).
fn span_len(l: &Layout) -> usize {
    if l.dims().contains(&0) {
        return 0;
    }
    1 + l
        .dims()
        .iter()
        .zip(l.stride())
        .map(|(d, s)| (d - 1) * s)
        .sum::<usize>()
}

/// cubecl's storage type of a dtype the bridge moves.
fn storage_type(d: DType) -> cubecl::ir::StorageType {
    match d {
        DType::F32 => f32::as_type_native_unchecked(),
        DType::F64 => f64::as_type_native_unchecked(),
        DType::F16 => half::f16::as_type_native_unchecked(),
        DType::BF16 => half::bf16::as_type_native_unchecked(),
        DType::U32 => u32::as_type_native_unchecked(),
        DType::I32 => i32::as_type_native_unchecked(),
        DType::I64 => i64::as_type_native_unchecked(),
        DType::U64 => u64::as_type_native_unchecked(),
        DType::U8 => u8::as_type_native_unchecked(),
    }
    .storage_type()
}

/// The view `l` (rebased to its first element) of `span`, the covering elements of a strided
/// candle view copied as they are, made contiguous by cubecl-std's strided copy on cubecl's
/// stream (the op's own launches follow it there).
fn contiguous_on_cubecl(
    client: &ComputeClient<CudaRuntime>,
    span: DeviceTensor<CudaRuntime>,
    l: &Layout,
) -> DeviceTensor<CudaRuntime> {
    let n = l.shape().elem_count();
    let out = DeviceTensor::<CudaRuntime>::empty(client, l.dims(), span.dtype);
    if n == 0 {
        return out;
    }
    let storage = storage_type(span.dtype);
    let view = cubecl::std::tensor::TensorHandle::<CudaRuntime>::new(
        span.handle,
        l.dims().to_vec(),
        l.stride().to_vec(),
        storage,
    );
    let dst = cubecl::std::tensor::TensorHandle::<CudaRuntime>::new_contiguous(
        l.dims().to_vec(),
        out.handle.clone(),
        storage,
    );
    cubecl::std::tensor::copy_into(client, view.binding(), dst.binding(), storage);
    out
}

/// cubeprim's output dtype as candle's.
fn candle_dtype(d: DType) -> Result<candle_core::DType> {
    Ok(match d {
        DType::F32 => candle_core::DType::F32,
        DType::F64 => candle_core::DType::F64,
        DType::F16 => candle_core::DType::F16,
        DType::BF16 => candle_core::DType::BF16,
        DType::U32 => candle_core::DType::U32,
        DType::I32 => candle_core::DType::I32,
        DType::I64 => candle_core::DType::I64,
        DType::U8 => candle_core::DType::U8,
        DType::U64 => return Err(candle_core::Error::Msg("candle has no u64 tensors".into())),
    })
}
