//! `CubeBackend` (wgpu, CUDA, …): cubeprim's kernels on the tensors' own buffers.
//!
//! A `CubeTensor`'s handle, shape and strides become a [`DeviceTensor`] view (no copy, no
//! host read); outputs are wrapped back as contiguous `CubeTensor`s. Index outputs are cast to
//! the backend's int dtype where the device computed them in another one.

use super::backend::{fail, AnyPrimitive, PrimBackend};
use super::op::{burn_dtype, prim_dtype, OutDType, PrimOp, TensorMeta};
use crate::{DeviceTensor, Workspace};
use ::burn::tensor::Shape;
use burn_cubecl::tensor::CubeTensor;
use burn_cubecl::{BoolElement, CubeBackend, CubeRuntime, FloatElement, IntElement};
use cubecl::device::{Device as _, DeviceId};
use cubecl::prelude::*;
use cubecl::stream_id::StreamId;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

type WorkspaceKey = (TypeId, DeviceId, u64);
type WorkspaceCache = Mutex<HashMap<WorkspaceKey, Box<dyn Any + Send>>>;

/// Runs `f` with the [`Workspace`] of this runtime, device and stream: scratch is allocated
/// once and reused (nothing is cleared on the hot path; see [`Workspace`]). One per stream, so
/// launches that share one are ordered.
pub(crate) fn with_workspace<R: Runtime, T>(
    device: &R::Device,
    f: impl FnOnce(&mut Workspace<R>) -> T,
) -> T {
    static CACHE: OnceLock<WorkspaceCache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (TypeId::of::<R>(), device.to_id(), StreamId::current().value);
    let taken = cache.lock().expect("workspace cache").remove(&key);
    let mut ws = taken
        .and_then(|b| b.downcast::<Workspace<R>>().ok())
        .map(|b| *b)
        .unwrap_or_default();
    let out = f(&mut ws);
    cache
        .lock()
        .expect("workspace cache")
        .insert(key, Box::new(ws));
    out
}

/// The cubeprim view of a `CubeTensor` (same buffer, strides and dtype).
pub(crate) fn device_view<R: CubeRuntime>(
    t: &CubeTensor<R>,
    meta: &TensorMeta,
) -> crate::Result<DeviceTensor<R>> {
    Ok(DeviceTensor::from_parts(
        t.handle.clone(),
        meta.shape.clone(),
        t.meta.strides().iter().copied().collect(),
        0,
        meta.prim_dtype()?,
    ))
}

impl<R, F, I, BT> PrimBackend for CubeBackend<R, F, I, BT>
where
    R: CubeRuntime,
    F: FloatElement,
    I: IntElement,
    BT: BoolElement,
{
    fn prim_check<O: PrimOp>(
        op: &O,
        inputs: &[TensorMeta],
        device: &R::Device,
    ) -> crate::Result<()> {
        op.outputs(inputs)?;
        op.check_device(&R::client(device), inputs)
    }

    fn prim_run<O: PrimOp>(op: &O, inputs: Vec<AnyPrimitive<Self>>) -> Vec<AnyPrimitive<Self>> {
        let metas: Vec<TensorMeta> = inputs.iter().map(AnyPrimitive::meta).collect();
        let specs = op.outputs(&metas).unwrap_or_else(|e| fail::<O>(e));
        let tensors: Vec<CubeTensor<R>> = inputs
            .into_iter()
            .map(|p| match p {
                AnyPrimitive::Float(t) | AnyPrimitive::Int(t) | AnyPrimitive::Bool(t) => t,
            })
            .map(|t| {
                if op.needs_contiguous() {
                    burn_cubecl::kernel::into_contiguous(t)
                } else {
                    t
                }
            })
            .collect();
        let first = tensors.first().expect("an op has inputs");
        let (client, device) = (first.client.clone(), first.device.clone());
        let views = tensors
            .iter()
            .zip(&metas)
            .map(|(t, m)| device_view(t, m))
            .collect::<crate::Result<Vec<_>>>()
            .unwrap_or_else(|e| fail::<O>(e));
        let outs = with_workspace(&device, |ws| op.run_device(&client, &views, ws))
            .unwrap_or_else(|e| fail::<O>(e));
        outs.into_iter()
            .zip(specs)
            .map(|(out, spec)| {
                let want = spec.dtype.resolve(&metas, I::dtype());
                let mut t = CubeTensor::new_contiguous(
                    client.clone(),
                    device.clone(),
                    Shape::from(out.shape.clone()),
                    out.handle,
                    burn_dtype(out.dtype),
                );
                if prim_dtype(want).ok() == Some(out.dtype) {
                    t.dtype = want;
                } else if spec.dtype == OutDType::Index {
                    t = burn_cubecl::kernel::cast(t, want);
                } else {
                    panic!(
                        "{}: output dtype {} where {want:?} was promised",
                        O::NAME,
                        out.dtype
                    );
                }
                match spec.kind {
                    super::op::Kind::Float => AnyPrimitive::Float(t),
                    super::op::Kind::Int => AnyPrimitive::Int(t),
                    super::op::Kind::Bool => AnyPrimitive::Bool(t),
                }
            })
            .collect()
    }
}
