//! How the ops without a gradient reach candle's devices: one [`PrimOp`] per op, dispatched on
//! the storage of its inputs.
//!
//! A candle [`candle_core::CustomOp1`] has one output and one input; sorts with indices,
//! top-k, unique with counts or searchsorted (two inputs) do not fit it. These ops define no
//! gradient, so they take the inputs' storage directly (`Tensor::storage_and_layout`), run the
//! CPU path or the device path, and wrap each output with `Tensor::from_storage` (no backprop
//! node, as a `CustomOp` applied with `apply_op*_no_bwd`).

use crate::{DType, DeviceTensor, Workspace};
use candle_core::op::BackpropOp;
use candle_core::{CpuStorage, Layout, Result, Shape, Storage, Tensor};
use cubecl::prelude::*;

/// One op on candle tensors.
pub(crate) trait PrimOp {
    /// For error messages.
    const NAME: &'static str;

    /// The CPU path: inputs as stored (any layout), outputs contiguous with their shapes.
    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>>;

    /// The device path on any cubecl runtime: contiguous inputs (the candle layout's shape),
    /// outputs contiguous. Used by the CUDA bridge (`super::bridge`) and the Metal path
    /// (`super::staged`).
    #[cfg_attr(not(any(feature = "candle-cuda", test)), allow(dead_code))]
    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>>;

    /// A route on candle's own CUDA stream for these inputs, where the op has one (no copy,
    /// no sync; see `super::cuda_sort`); `None`: [`Self::device`] through the bridge.
    #[cfg(feature = "candle-cuda")]
    fn on_candle_stream(
        &self,
        _inputs: &[(&candle_core::CudaStorage, &Layout)],
    ) -> Option<Result<Vec<(candle_core::CudaStorage, Shape)>>> {
        None
    }
}

/// What the device path of an op works with.
pub(crate) struct OnDevice<'a, R: Runtime> {
    pub client: &'a ComputeClient<R>,
    /// The inputs, contiguous.
    pub inputs: Vec<DeviceTensor<R>>,
    /// Scratch shared by the ops on this device.
    pub ws: &'a mut Workspace<R>,
}

/// Runs `op` on the inputs' device; the outputs carry no gradient.
pub(crate) fn apply<O: PrimOp>(op: &O, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
    let first = inputs[0];
    for t in &inputs[1..] {
        if !t.device().same_device(first.device()) {
            return Err(candle_core::Error::DeviceMismatchBinaryOp {
                lhs: first.device().location(),
                rhs: t.device().location(),
                op: O::NAME,
            }
            .bt());
        }
    }
    let guards: Vec<_> = inputs.iter().map(|t| t.storage_and_layout()).collect();
    // The inputs' storages of one backend, with their layouts.
    fn each<'a, S>(
        guards: &'a [(candle_core::StorageRef<'_>, &'a Layout)],
        pick: impl Fn(&'a Storage) -> Option<&'a S>,
    ) -> Vec<(&'a S, &'a Layout)> {
        guards
            .iter()
            .map(|(s, l)| (pick(s).expect("checked: one device"), *l))
            .collect()
    }
    let outputs: Vec<(Storage, Shape)> = match &*guards[0].0 {
        Storage::Cpu(_) => {
            let ins = each(&guards, |s| match s {
                Storage::Cpu(c) => Some(c),
                _ => None,
            });
            let outs = op.cpu(&ins)?;
            outs.into_iter()
                .map(|(s, d)| (Storage::Cpu(s), d))
                .collect()
        }
        #[cfg(feature = "candle-cuda")]
        Storage::Cuda(_) => {
            let ins = each(&guards, |s| match s {
                Storage::Cuda(c) => Some(c),
                _ => None,
            });
            let outs = match op.on_candle_stream(&ins) {
                Some(outs) => outs?,
                None => super::bridge::run(op, &ins)?,
            };
            outs.into_iter()
                .map(|(s, d)| (Storage::Cuda(s), d))
                .collect()
        }
        #[cfg(all(feature = "candle-metal", target_os = "macos"))]
        Storage::Metal(_) => {
            let ins = each(&guards, |s| match s {
                Storage::Metal(c) => Some(c),
                _ => None,
            });
            let outs = super::staged::on_metal(op, &ins)?;
            outs.into_iter()
                .map(|(s, d)| (Storage::Metal(s), d))
                .collect()
        }
        s => {
            return Err(candle_core::Error::Msg(format!(
                "cubeprim {}: not available on {:?} (CPU, CUDA with the feature \
                 `candle-cuda`, Metal with `candle-metal`)",
                O::NAME,
                s.device().location()
            )))
        }
    };
    drop(guards);
    Ok(outputs
        .into_iter()
        .map(|(s, shape)| Tensor::from_storage(s, shape, BackpropOp::none(), false))
        .collect())
}

/// The first `N` outputs of an op.
pub(crate) fn outputs<const N: usize>(v: Vec<Tensor>) -> [Tensor; N] {
    v.try_into()
        .unwrap_or_else(|v: Vec<Tensor>| panic!("{N} outputs expected, got {}", v.len()))
}

/// candle's dtype as cubeprim's (the dtypes cubeprim's kernels take).
#[cfg_attr(not(feature = "candle-cuda"), allow(dead_code))]
pub(crate) fn dtype_of(d: candle_core::DType) -> Option<DType> {
    Some(match d {
        candle_core::DType::F32 => DType::F32,
        candle_core::DType::F64 => DType::F64,
        candle_core::DType::F16 => DType::F16,
        candle_core::DType::BF16 => DType::BF16,
        candle_core::DType::U32 => DType::U32,
        candle_core::DType::I32 => DType::I32,
        candle_core::DType::I64 => DType::I64,
        _ => return None,
    })
}

/// An unsupported dtype as a candle error.
pub(crate) fn bad_dtype(d: candle_core::DType, op: &'static str) -> candle_core::Error {
    candle_core::Error::UnsupportedDTypeForOp(d, op)
}

/// u8 and i16 tensors widened to u32 / i32 by candle (the kernels and the CPU reference take
/// 32-bit and wider types; the widening keeps order, equality and, cast back, wrapping
/// arithmetic), with the dtype to cast value outputs back to.
pub(crate) fn widen(t: &Tensor) -> Result<(Tensor, candle_core::DType)> {
    let wide = match t.dtype() {
        candle_core::DType::U8 => t.to_dtype(candle_core::DType::U32)?,
        candle_core::DType::I16 => t.to_dtype(candle_core::DType::I32)?,
        _ => t.clone(),
    };
    Ok((wide, t.dtype()))
}

/// [`widen`] where the kernels read the tensor (devices other than the CPU, whose path reads
/// every dtype): masks and flags.
pub(crate) fn widen_for_device(t: &Tensor) -> Result<Tensor> {
    if t.device().is_cpu() {
        Ok(t.clone())
    } else {
        Ok(widen(t)?.0)
    }
}
