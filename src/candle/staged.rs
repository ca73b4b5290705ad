//! The Metal path of the multi-kernel ops (sorts, top-k, searchsorted, reduce, compaction,
//! runs, unique, histogram): cubeprim's own host code on cubecl's wgpu runtime, which on macOS
//! runs on Metal and compiles every kernel to MSL (cubecl's `metal` feature), with the data
//! staged through host memory between candle's Metal buffers and cubecl's.
//!
//! **Not yet run on Apple hardware** (none in this project). What is checked here:
//! - the staging itself is generic over candle's backend ([`run`]); CI runs it on candle's CPU
//!   storage with cubecl's wgpu runtime on lavapipe, every op family, with strided and offset
//!   inputs, against the CPU path (`device_tests`);
//! - the Metal glue ([`on_metal`]) type-checks on Linux (`.ci/metal-check`, in CI);
//! - the MSL of every kernel is generated in CI (tests/candle_codegen.rs, tests/codegen*.rs).
//!
//! Why this route: candle 0.11's Metal buffers are `MTLBuffer`s of its own device and command
//! queue, and cubecl-wgpu allocates and launches through wgpu's; handing one to the other
//! means wgpu-hal interop (wrapping raw Metal objects) that cannot be exercised here. The
//! route uses only candle's backend traits: [`BackendStorage::to_cpu_storage`] (which waits
//! for candle's queued work) and [`BackendDevice::storage_from_cpu_storage_owned`]. Its cost
//! per call: each input is copied to host memory and uploaded, each output read back and
//! copied into a new candle buffer, with the syncs those reads imply. On Apple silicon's
//! unified memory these are memory copies, not bus transfers; not measured (no hardware).
//! The scans keep their own Metal path (`super::metal`: MSL on candle's encoder, no copy).

use super::ops::{bad_dtype, dtype_of, OnDevice, PrimOp};
use crate::{DType, DeviceTensor, Element, Workspace};
use candle_core::backend::{BackendDevice, BackendStorage};
use candle_core::cpu_backend::CpuDevice;
use candle_core::{CpuStorage, Layout, Result, Shape};
use cubecl::prelude::*;
use cubecl::stream_id::StreamId;

/// A cubecl client and the scratch its ops share.
pub(crate) struct Staged<R: Runtime> {
    pub client: ComputeClient<R>,
    pub ws: Workspace<R>,
    /// The one cubecl stream every call runs on, whichever thread makes it: the workspace is
    /// used on one stream only (see [`Workspace`]), and calls are serialised by the lock the
    /// owner holds around [`run`].
    pub stream: StreamId,
}

impl<R: Runtime> Staged<R> {
    pub fn new(client: ComputeClient<R>) -> Self {
        Self {
            client,
            ws: Workspace::new(),
            stream: StreamId::current(),
        }
    }
}

/// Runs `op` on storages of any candle backend through cubecl's runtime `R`: inputs read to
/// host memory (made contiguous there) and uploaded, outputs read back and handed to the
/// inputs' device.
pub(crate) fn run<O, R, S>(
    op: &O,
    st: &mut Staged<R>,
    inputs: &[(&S, &Layout)],
) -> Result<Vec<(S, Shape)>>
where
    O: PrimOp,
    R: Runtime,
    S: BackendStorage,
    S::Device: BackendDevice<Storage = S>,
{
    st.stream.executes(|| run_on_stream(op, st, inputs))
}

fn run_on_stream<O, R, S>(
    op: &O,
    st: &mut Staged<R>,
    inputs: &[(&S, &Layout)],
) -> Result<Vec<(S, Shape)>>
where
    O: PrimOp,
    R: Runtime,
    S: BackendStorage,
    S::Device: BackendDevice<Storage = S>,
{
    let dev = inputs[0].0.device().clone();
    let mut tensors = Vec::with_capacity(inputs.len());
    for &(s, l) in inputs {
        if dtype_of(s.dtype()).is_none() {
            return Err(bad_dtype(s.dtype(), O::NAME));
        }
        let host = contiguous(s.to_cpu_storage()?, l)?;
        tensors.push(upload(&st.client, &host, l.dims())?);
    }
    let outs = op
        .device(OnDevice {
            client: &st.client,
            inputs: tensors,
            ws: &mut st.ws,
        })
        .map_err(super::wrap)?;
    outs.iter()
        .map(|t| {
            let host = download(&st.client, t)?;
            Ok((
                dev.storage_from_cpu_storage_owned(host)?,
                Shape::from(t.shape.clone()),
            ))
        })
        .collect()
}

/// The elements of the view `l` of `s`, contiguous (`s` itself when it is exactly that).
fn contiguous(s: CpuStorage, l: &Layout) -> Result<CpuStorage> {
    let n = l.shape().elem_count();
    if l.contiguous_offsets() == Some((0, n)) && storage_len(&s) == n {
        return Ok(s);
    }
    // SAFETY: `copy_strided_src` writes all `n` elements.
    let mut dst = unsafe { CpuDevice.alloc_uninit(l.shape(), s.dtype()) }?;
    s.copy_strided_src(&mut dst, 0, l)?;
    Ok(dst)
}

fn storage_len(s: &CpuStorage) -> usize {
    match s {
        CpuStorage::F32(v) => v.len(),
        CpuStorage::F64(v) => v.len(),
        CpuStorage::F16(v) => v.len(),
        CpuStorage::BF16(v) => v.len(),
        CpuStorage::U32(v) => v.len(),
        CpuStorage::I32(v) => v.len(),
        CpuStorage::I64(v) => v.len(),
        // Not uploaded: refused by `dtype_of` first.
        _ => usize::MAX,
    }
}

fn upload<R: Runtime>(
    client: &ComputeClient<R>,
    s: &CpuStorage,
    dims: &[usize],
) -> Result<DeviceTensor<R>> {
    Ok(match s {
        CpuStorage::F32(v) => DeviceTensor::from_slice(client, v, dims).map_err(super::wrap)?,
        CpuStorage::F64(v) => DeviceTensor::from_slice(client, v, dims).map_err(super::wrap)?,
        CpuStorage::F16(v) => DeviceTensor::from_slice(client, v, dims).map_err(super::wrap)?,
        CpuStorage::BF16(v) => DeviceTensor::from_slice(client, v, dims).map_err(super::wrap)?,
        CpuStorage::U32(v) => DeviceTensor::from_slice(client, v, dims).map_err(super::wrap)?,
        CpuStorage::I32(v) => DeviceTensor::from_slice(client, v, dims).map_err(super::wrap)?,
        CpuStorage::I64(v) => DeviceTensor::from_slice(client, v, dims).map_err(super::wrap)?,
        s => return Err(bad_dtype(s.dtype(), "upload")),
    })
}

fn download<R: Runtime>(client: &ComputeClient<R>, t: &DeviceTensor<R>) -> Result<CpuStorage> {
    fn read<R: Runtime, E: Element>(c: &ComputeClient<R>, t: &DeviceTensor<R>) -> Vec<E> {
        if t.num_elements() == 0 {
            Vec::new()
        } else {
            t.to_vec::<E>(c)
        }
    }
    Ok(match t.dtype {
        DType::F32 => CpuStorage::F32(read(client, t)),
        DType::F64 => CpuStorage::F64(read(client, t)),
        DType::F16 => CpuStorage::F16(read(client, t)),
        DType::BF16 => CpuStorage::BF16(read(client, t)),
        DType::U32 => CpuStorage::U32(read(client, t)),
        DType::I32 => CpuStorage::I32(read(client, t)),
        DType::I64 => CpuStorage::I64(read(client, t)),
        DType::U8 => CpuStorage::U8(read(client, t)),
        DType::U64 => return Err(candle_core::Error::Msg("candle has no u64 tensors".into())),
    })
}

/// [`run`] on candle's Metal device, through cubecl's wgpu runtime on the system's default
/// adapter (Metal, kernels as MSL). One client and workspace per process: Apple machines
/// have one GPU, which is both candle's Metal device and wgpu's default adapter.
#[cfg(all(feature = "candle-metal", target_os = "macos"))]
pub(crate) fn on_metal<O: PrimOp>(
    op: &O,
    inputs: &[(&candle_core::MetalStorage, &Layout)],
) -> Result<Vec<(candle_core::MetalStorage, Shape)>> {
    use cubecl::wgpu::{WgpuDevice, WgpuRuntime};
    use std::sync::{Mutex, OnceLock};
    static METAL: OnceLock<Mutex<Staged<WgpuRuntime>>> = OnceLock::new();
    let staged =
        METAL.get_or_init(|| Mutex::new(Staged::new(WgpuRuntime::client(&WgpuDevice::default()))));
    let mut guard = staged.lock().unwrap_or_else(|e| e.into_inner());
    run(op, &mut guard, inputs)
}
