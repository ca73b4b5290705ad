//! The Metal path: the same CubeCL kernels as MSL, on candle's Metal device and command
//! encoder, reading and writing candle's buffers directly.
//!
//! **Not yet run on hardware** (no Apple machine in this project's CI): it is written against
//! candle 0.11.1's Metal backend as a user would need it; CI generates and checks the MSL of
//! every kernel variant it launches (tests/candle_codegen.rs).
//!
//! Each variant is compiled to MSL by cubecl's compiler ([`super::kernels`]), built into a
//! pipeline by the Metal driver on first use (cached per device and variant), and encoded on
//! candle's current compute encoder, so it orders with candle's other work. The kernel's
//! threadgroup memory is declared in the MSL itself.

use super::kernels::{scan_rows_info, scan_rows_source, Target, SCAN_ROWS};
use super::plan::ScanLaunch;
use super::scan::ScanCustomOp;
use crate::scan::DeviceLimits;
use crate::{DType, ScanOp};
use candle_core::backend::BackendStorage;
use candle_core::{Layout, MetalDevice, MetalStorage, Result, Shape, Storage};
use candle_metal_kernels::metal::ComputePipeline;
use cubeprim_kernels::cube::TileConfig;
use cubeprim_kernels::device::ScanMode;
use objc2_metal::MTLSize;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// A compiled variant: (device id, dtype, op, vector width, tile, mode).
type Key = (
    candle_core::metal_backend::DeviceId,
    DType,
    ScanOp,
    usize,
    TileConfig,
    ScanMode,
);

static PIPELINES: OnceLock<Mutex<HashMap<Key, ComputePipeline>>> = OnceLock::new();

fn metal_err(e: impl std::fmt::Display) -> candle_core::Error {
    candle_core::Error::Metal(candle_core::MetalError::Message(e.to_string()))
}

/// The dtypes cubeprim scans, but f64: Metal has none.
fn dtype_of(d: candle_core::DType) -> Option<DType> {
    super::ops::dtype_of(d).filter(|&d| d != DType::F64)
}

fn pipeline(
    dev: &MetalDevice,
    dtype: DType,
    op: ScanOp,
    launch: &ScanLaunch,
) -> Result<ComputePipeline> {
    let key: Key = (dev.id(), dtype, op, launch.vec, launch.cfg, launch.mode);
    let cache = PIPELINES.get_or_init(Default::default);
    if let Some(p) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(p.clone());
    }
    let src = scan_rows_source(dtype, op, launch, Target::Msl).map_err(super::wrap)?;
    let library = dev
        .device()
        .new_library_with_source(&src.source, None)
        .map_err(metal_err)?;
    let function = library.get_function(SCAN_ROWS, None).map_err(metal_err)?;
    let p = dev
        .device()
        .new_compute_pipeline_state_with_function(&function)
        .map_err(metal_err)?;
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, p.clone());
    Ok(p)
}

/// The scan of a candle Metal tensor (values; indices kept in `op` when indexed).
pub(crate) fn scan(
    op: &ScanCustomOp,
    storage: &MetalStorage,
    layout: &Layout,
) -> Result<(MetalStorage, Shape)> {
    let cdtype = storage.dtype();
    let dtype = dtype_of(cdtype).ok_or(candle_core::Error::UnsupportedDTypeForOp(
        cdtype,
        "cubeprim scan",
    ))?;
    let dev = storage.device().clone();
    let total = layout.shape().elem_count();
    let out = dev.new_buffer(total.max(1), cdtype, "cubeprim-scan")?;
    let indices = if op.indexed {
        Some(dev.new_buffer(
            total.max(1),
            candle_core::DType::I64,
            "cubeprim-scan-indices",
        )?)
    } else {
        None
    };
    if total > 0 {
        let launch = ScanLaunch::new(
            DeviceLimits::METAL,
            layout.dims(),
            layout.stride(),
            layout.start_offset(),
            op.axis,
            dtype,
            op.indexed,
            op.opts,
        )
        .map_err(super::wrap)?;
        let p = pipeline(&dev, dtype, op.op, &launch)?;
        let dummy = dev.allocate_zeros(16)?;
        let state = if launch.state_words > 0 {
            Some(dev.allocate_zeros(4 * launch.state_words)?)
        } else {
            None
        };
        let rows = dev.new_buffer_with_data(&launch.layout)?;
        let input_len = storage.buffer().length() / cdtype.size_in_bytes();
        let info = scan_rows_info(&launch, input_len, total);

        let encoder = dev.command_encoder()?;
        let e = encoder.as_ref();
        e.set_compute_pipeline_state(&p);
        e.set_input_buffer(0, Some(storage.buffer()), 0);
        // The multipliers and initial states of a linear recurrence: dummies.
        e.set_input_buffer(1, Some(&dummy), 0);
        e.set_input_buffer(2, Some(&dummy), 0);
        e.set_output_buffer(3, Some(&out), 0);
        e.set_output_buffer(4, Some(indices.as_deref().unwrap_or(&dummy)), 0);
        let state = state.as_deref().unwrap_or(&dummy);
        e.set_output_buffer(5, Some(state), 0);
        e.set_output_buffer(6, Some(state), 0);
        e.set_input_buffer(7, Some(&dummy), 0);
        e.set_input_buffer(8, Some(&rows), 0);
        // The device length of `scan_len_into` (unused here).
        e.set_input_buffer(9, Some(&dummy), 0);
        e.set_bytes_directly(10, info.len() * 8, info.as_ptr().cast());
        e.dispatch_thread_groups(
            MTLSize {
                width: launch.cubes.0 as usize,
                height: launch.cubes.1 as usize,
                depth: 1,
            },
            MTLSize {
                width: launch.cfg.threads as usize,
                height: 1,
                depth: 1,
            },
        );
    }
    if let Some(i) = indices {
        op.keep_indices(Storage::Metal(MetalStorage::new(
            i,
            dev.clone(),
            total,
            candle_core::DType::I64,
        )));
    }
    Ok((
        MetalStorage::new(out, dev, total, cdtype),
        layout.shape().clone(),
    ))
}
