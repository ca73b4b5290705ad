//! `CubeBackend` (wgpu, CUDA, …): cubeprim's kernels on the tensors' own buffers.
//!
//! A `CubeTensor`'s handle, shape and strides become a [`DeviceTensor`] view (no copy, no
//! host read); outputs are wrapped back as contiguous `CubeTensor`s. Index outputs are cast to
//! the backend's int dtype where the device computed them in another one.

use super::backend::{fail, AnyPrimitive, PrimBackend};
use super::op::{burn_dtype, prim_dtype, OutDType, OutputSpec, PrimOp, TensorMeta};
use crate::{DeviceTensor, Workspace};
use ::burn::tensor::Shape;
use burn_cubecl::tensor::CubeTensor;
use burn_cubecl::{BoolElement, CubeBackend, CubeRuntime, FloatElement, IntElement};
use cubecl::device::{Device as _, DeviceId};
use cubecl::prelude::*;
use cubecl::stream_id::StreamId;
use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

type WorkspaceKey = (TypeId, DeviceId, u64);

thread_local! {
    /// Workspaces by runtime, device and stream, of the ops this thread runs (the caller's
    /// thread on `CubeBackend`, the fusion runner's thread on `Fusion`).
    static WORKSPACES: RefCell<HashMap<WorkspaceKey, Box<dyn Any>>> = RefCell::default();
    /// The arguments already checked on this thread ([`PrimBackend::prim_check`] is a pure
    /// function of them), by runtime and op type.
    static CHECKED: RefCell<HashMap<TypeId, Box<dyn Any>>> = RefCell::default();
}

/// Checked arguments remembered per runtime and op type, at most this many (then forgotten).
const CHECKED_MAX: usize = 1024;

/// Runs `f` with the [`Workspace`] of this runtime, device and stream: scratch is allocated
/// once and reused (nothing is cleared on the hot path; see [`Workspace`]). One per stream, so
/// launches that share one are ordered. Kept per thread: no lock and no allocation per call.
pub(crate) fn with_workspace<R: Runtime, T>(
    device: &R::Device,
    f: impl FnOnce(&mut Workspace<R>) -> T,
) -> T {
    let key = (TypeId::of::<R>(), device.to_id(), StreamId::current().value);
    let taken = WORKSPACES.with_borrow_mut(|m| m.remove(&key));
    let mut ws: Box<Workspace<R>> = taken.and_then(|b| b.downcast().ok()).unwrap_or_default();
    let out = f(&mut ws);
    WORKSPACES.with_borrow_mut(|m| m.insert(key, ws));
    out
}

/// Arguments of one check: the op, its inputs and the device.
type CheckKey<O> = (O, Vec<TensorMeta>, DeviceId);
/// Passed arguments by their hash.
type Checked<O> = HashMap<u64, Vec<CheckKey<O>>>;

/// Runs `check` unless these arguments passed it before on this thread; remembers a pass.
fn checked_once<R: Runtime, O: PrimOp>(
    op: &O,
    inputs: &[TensorMeta],
    device: DeviceId,
    check: impl FnOnce() -> crate::Result<()>,
) -> crate::Result<()> {
    let id = TypeId::of::<(R, O)>();
    let mut h = DefaultHasher::new();
    (op, inputs, device).hash(&mut h);
    let hash = h.finish();
    let same = |(o, i, d): &CheckKey<O>| o == op && i == inputs && *d == device;
    let seen = CHECKED.with_borrow(|m| {
        m.get(&id)
            .and_then(|c| c.downcast_ref::<Checked<O>>())
            .and_then(|c| c.get(&hash))
            .is_some_and(|keys| keys.iter().any(same))
    });
    if seen {
        return Ok(());
    }
    check()?;
    CHECKED.with_borrow_mut(|m| {
        let checked = m
            .entry(id)
            .or_insert_with(|| Box::new(Checked::<O>::new()))
            .downcast_mut::<Checked<O>>()
            .expect("one map type per op type");
        if checked.len() >= CHECKED_MAX {
            checked.clear();
        }
        let key = (op.clone(), inputs.to_vec(), device);
        checked.entry(hash).or_default().push(key);
    });
    Ok(())
}

/// Whether `t` has no elements. burn's element-wise kernels (cast, bool cast, contiguous copy)
/// launch no cubes for it, and on CUDA such a launch fails (`CUDA_ERROR_INVALID_VALUE`) and
/// leaves the client's server invalid for every later call: the adapter launches none of them
/// for an empty tensor.
fn is_empty<R: CubeRuntime>(t: &CubeTensor<R>) -> bool {
    t.meta.num_elements() == 0
}

/// A new empty tensor of `t`'s shape in `dtype` (no launch).
fn empty_as<R: CubeRuntime>(t: &CubeTensor<R>, dtype: ::burn::tensor::DType) -> CubeTensor<R> {
    burn_cubecl::ops::numeric::empty_device_dtype(
        t.client.clone(),
        t.device.clone(),
        Shape::from(t.meta.shape().to_vec()),
        dtype,
    )
}

/// The cubeprim view of a `CubeTensor` (same buffer, strides and dtype).
pub(crate) fn device_view<R: CubeRuntime>(
    t: &CubeTensor<R>,
    meta: &TensorMeta,
) -> crate::Result<DeviceTensor<R>> {
    // Byte bools the op reads as they are (see `PrimOp::reads_byte_flags`) are byte flags.
    let dtype = if t.dtype.is_bool() && t.dtype.size() == 1 {
        crate::DType::U8
    } else {
        meta.prim_dtype()?
    };
    Ok(DeviceTensor::from_parts(
        t.handle.clone(),
        meta.shape.clone(),
        t.meta.strides().iter().copied().collect(),
        0,
        dtype,
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
        checked_once::<R, O>(op, inputs, device.to_id(), || {
            op.outputs(inputs)?;
            op.check_device(&R::client(device), inputs)
        })
    }

    fn prim_run<O: PrimOp>(
        op: &O,
        inputs: Vec<AnyPrimitive<Self>>,
        metas: &[TensorMeta],
        specs: &[OutputSpec],
    ) -> Vec<AnyPrimitive<Self>> {
        let tensors: Vec<CubeTensor<R>> = inputs
            .into_iter()
            .map(|p| match p {
                AnyPrimitive::Float(t) | AnyPrimitive::Int(t) | AnyPrimitive::Bool(t) => t,
            })
            .enumerate()
            .map(|(i, t)| {
                let bytes = t.dtype.is_bool() && t.dtype.size() == 1;
                if t.dtype.is_bool() && t.dtype.size() != 4 && !(bytes && op.reads_byte_flags(i)) {
                    // Bool storage other than u32, where the op does not read bytes: one
                    // contiguous copy as u32 flags.
                    if is_empty(&t) {
                        empty_as(&t, ::burn::tensor::DType::U32)
                    } else {
                        burn_cubecl::kernel::bool_cast(t, ::burn::tensor::DType::U32)
                    }
                } else if op.needs_contiguous() && !is_empty(&t) {
                    // An empty view is contiguous as it is (`DeviceTensor::is_contiguous`).
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
            .zip(metas)
            .map(|(t, m)| device_view(t, m))
            .collect::<crate::Result<Vec<_>>>()
            .unwrap_or_else(|e| fail::<O>(e));
        let outs = with_workspace(&device, |ws| op.run_device(&client, &views, ws))
            .unwrap_or_else(|e| fail::<O>(e));
        outs.into_iter()
            .zip(specs)
            .map(|(out, spec)| {
                let want = spec.dtype.resolve(metas, I::dtype());
                let mut t = CubeTensor::new_contiguous(
                    client.clone(),
                    device.clone(),
                    Shape::from(out.shape.clone()),
                    out.handle,
                    burn_dtype(out.dtype),
                );
                if prim_dtype(want).ok() == Some(out.dtype) {
                    t.dtype = want;
                } else if spec.dtype == OutDType::Index && is_empty(&t) {
                    t = empty_as(&t, want);
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
