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
    Ok(apply_storages(op, inputs)?
        .into_iter()
        .map(|(s, shape)| Tensor::from_storage(s, shape, BackpropOp::none(), false))
        .collect())
}

/// [`apply`], its output `which` recorded in candle's graph as a function of the input `x`
/// (one of `inputs`, which tracks a gradient) with the backward pass `bwd` makes from the
/// other outputs (in order, `which` left out). The output's storage moves into the graph node
/// (no copy): the same work as [`apply`].
pub(crate) fn apply_tracked<O: PrimOp>(
    op: &O,
    inputs: &[&Tensor],
    x: &Tensor,
    which: usize,
    bwd: impl FnOnce(&[Tensor]) -> Result<super::grad::Backward>,
) -> Result<Vec<Tensor>> {
    let mut outs = apply_storages(op, inputs)?;
    let out = outs.remove(which);
    let mut rest: Vec<Tensor> = outs
        .into_iter()
        .map(|(s, shape)| Tensor::from_storage(s, shape, BackpropOp::none(), false))
        .collect();
    let node = super::grad::Node::new(out, bwd(&rest)?);
    let y = x.apply_op1(node)?;
    rest.insert(which, y);
    Ok(rest)
}

/// [`apply`]'s work: the outputs' storages and shapes.
fn apply_storages<O: PrimOp>(op: &O, inputs: &[&Tensor]) -> Result<Vec<(Storage, Shape)>> {
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
    Ok(outputs)
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

/// `UnsupportedDTypeForOp` for a dtype `op` is not defined on (integers for logsumexp).
pub(crate) fn check_op_dtype(t: &Tensor, op: crate::ScanOp, name: &'static str) -> Result<()> {
    if op == crate::ScanOp::LogSumExp && !t.dtype().is_float() {
        return Err(bad_dtype(t.dtype(), name));
    }
    Ok(())
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

/// The adapter's index policy: every index, position and count it returns is u32, so an op
/// whose indices range over `len` (a dimension, or the elements) refuses a `len` past
/// `u32::MAX`: cubeprim's [`Error::TooLarge`](crate::Error::TooLarge), wrapped.
pub(crate) fn u32_len(len: usize, what: &'static str) -> Result<()> {
    if len > u32::MAX as usize {
        return Err(super::wrap(crate::Error::TooLarge {
            what,
            len,
            max: u32::MAX as usize,
        }));
    }
    Ok(())
}

/// A host count as the `u32[1]` storage of a device count.
pub(crate) fn count_storage(count: usize, what: &'static str) -> Result<CpuStorage> {
    u32_len(count, what)?;
    Ok(CpuStorage::U32(vec![count as u32]))
}

/// `v` grown to `n` elements with zeros: the unspecified tail of a padded output on the CPU.
pub(crate) fn pad<E: bytemuck::Zeroable + Clone>(mut v: Vec<E>, n: usize) -> Vec<E> {
    v.resize(n, E::zeroed());
    v
}

/// Units per cube of [`index_u32`].
const INDEX_THREADS: u32 = 256;

/// An index output of a device path (the runtime's index dtype: i64, or i32 where it has no
/// 64-bit integers; contiguous from the start of its memory) as u32, the dtype the CPU path
/// gives: one element-wise kernel. The values are non-negative and below 2^31
/// ([`MAX_ELEMENTS`](crate::MAX_ELEMENTS)), so nothing is lost.
pub(crate) fn index_u32<R: Runtime>(
    client: &ComputeClient<R>,
    t: DeviceTensor<R>,
) -> crate::Result<DeviceTensor<R>> {
    if t.dtype == DType::U32 {
        return Ok(t);
    }
    let n = t.num_elements();
    let out = DeviceTensor::try_empty(client, &t.shape, DType::U32)?;
    if n == 0 {
        return Ok(out);
    }
    if !t.is_contiguous() || t.offset != 0 {
        return Err(crate::Error::Unsupported(
            "an index output that does not start its memory".into(),
        ));
    }
    match t.dtype {
        DType::I64 => launch_index_to_u32::<i64, R>(client, &t, &out, n),
        DType::I32 => launch_index_to_u32::<i32, R>(client, &t, &out, n),
        dtype => {
            return Err(crate::Error::UnsupportedDType {
                dtype,
                reason: "not an index dtype".into(),
            })
        }
    }
    Ok(out)
}

/// [`index_u32`]'s launch for the index dtype `T`.
fn launch_index_to_u32<T: Numeric, R: Runtime>(
    client: &ComputeClient<R>,
    t: &DeviceTensor<R>,
    out: &DeviceTensor<R>,
    n: usize,
) {
    use cubeprim_kernels::device::index::index_to_u32;
    let cubes = crate::device::cube_count_2d((n as u32).div_ceil(INDEX_THREADS));
    let dim = CubeDim::new_1d(INDEX_THREADS);
    // SAFETY: `t` and `out` hold `n` elements from the start of their memory; units past `n`
    // write nothing.
    unsafe {
        let a = |t: &DeviceTensor<R>| ArrayArg::from_raw_parts(t.handle.clone(), n);
        index_to_u32::launch_unchecked::<T, R>(client, cubes, dim, a(t), a(out), n as u32);
    }
}

/// candle's `ShapeMismatchBinaryOp` unless `a` and `b` have one shape.
pub(crate) fn same_shape(a: &Tensor, b: &Tensor, op: &'static str) -> Result<()> {
    if a.shape() != b.shape() {
        return Err(candle_core::Error::ShapeMismatchBinaryOp {
            lhs: a.shape().clone(),
            rhs: b.shape().clone(),
            op,
        }
        .bt());
    }
    Ok(())
}

/// `t` contiguous, as candle's own outputs are: candle's copy where its backend has one for
/// the dtype, else [`Contiguous`] (candle 0.11.1 has no strided copy of i32 and i16 on CUDA
/// and Metal, nor of f64 on Metal).
pub(crate) fn contiguous(t: Tensor) -> Result<Tensor> {
    use candle_core::DType as D;
    let candle_copies = t.device().is_cpu()
        || matches!(
            t.dtype(),
            D::U8 | D::U32 | D::I64 | D::F32 | D::F16 | D::BF16
        )
        || (t.device().is_cuda() && t.dtype() == D::F64);
    if t.is_contiguous() {
        Ok(t)
    } else if candle_copies {
        t.contiguous()
    } else {
        let [c] = outputs(apply(&Contiguous, &[&t])?);
        Ok(c)
    }
}

/// A view copied contiguous by the adapter's own paths: the device path gets its inputs
/// contiguous (the CUDA bridge makes a strided view contiguous with cubecl's copy where
/// candle has none) and returns them.
pub(crate) struct Contiguous;

impl PrimOp for Contiguous {
    const NAME: &'static str = "contiguous";

    fn cpu(&self, inputs: &[(&CpuStorage, &Layout)]) -> Result<Vec<(CpuStorage, Shape)>> {
        use super::cpu::{with_any_cpu_storage, IntoCpuStorage, Rows};
        use candle_core::backend::BackendStorage;
        let (s, l) = inputs[0];
        let out = with_any_cpu_storage!(
            s,
            |v| IntoCpuStorage::into_storage(Rows::flat(v, l).into_owned()),
            return Err(bad_dtype(s.dtype(), "cubeprim contiguous"))
        );
        Ok(vec![(out, l.shape().clone())])
    }

    fn device<R: Runtime>(&self, d: OnDevice<'_, R>) -> crate::Result<Vec<DeviceTensor<R>>> {
        Ok(d.inputs)
    }
}
