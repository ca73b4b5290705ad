//! `NdArray` (CPU): cubeprim's host path, parallel over rows.
//!
//! Contiguous inputs are read in place; strided ones are gathered once (O(n)).

use super::backend::{fail, AnyPrimitive, PrimBackend};
use super::host::{HostData, HostTensor};
use super::op::{prim_dtype, Kind, OutDType, OutputSpec, PrimOp, TensorMeta};
use crate::{Error, Result};
use ::ndarray::{ArcArray, ArrayViewD, IxDyn};
use burn_ndarray::{
    FloatNdArrayElement, IntNdArrayElement, NdArray, NdArrayDevice, NdArrayTensor, QuantElement,
    SharedArray,
};
use std::borrow::Cow;

/// Row-major data of a view: borrowed when the view is in standard order.
fn host_slice<'a, E: Clone>(v: ArrayViewD<'a, E>) -> Cow<'a, [E]> {
    match v.to_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(v.iter().cloned().collect()),
    }
}

/// The host view of an NdArray tensor.
fn host_view(t: &NdArrayTensor) -> Result<HostTensor<'_>> {
    let (shape, data) = match t {
        NdArrayTensor::F32(s) => (s.shape(), HostData::F32(host_slice(s.view()))),
        NdArrayTensor::F64(s) => (s.shape(), HostData::F64(host_slice(s.view()))),
        NdArrayTensor::I32(s) => (s.shape(), HostData::I32(host_slice(s.view()))),
        NdArrayTensor::I64(s) => (s.shape(), HostData::I64(host_slice(s.view()))),
        NdArrayTensor::U32(s) => (s.shape(), HostData::U32(host_slice(s.view()))),
        NdArrayTensor::U64(s) => (s.shape(), HostData::U64(host_slice(s.view()))),
        // Flags as u32 (one copy): the host path reads bool tensors as 0 / 1.
        NdArrayTensor::Bool(s) => (
            s.shape(),
            HostData::U32(Cow::Owned(s.view().iter().map(|&b| u32::from(b)).collect())),
        ),
        other => {
            return Err(Error::Unsupported(format!(
                "NdArray tensors of dtype {:?}",
                ::burn::tensor::TensorMetadata::dtype(other)
            )))
        }
    };
    Ok(HostTensor {
        shape: shape.to_vec(),
        data,
    })
}

fn to_ndarray(t: HostTensor<'static>) -> Result<NdArrayTensor> {
    fn arr<E: Clone>(shape: &[usize], v: Cow<'static, [E]>) -> SharedArray<E> {
        ArcArray::from_shape_vec(IxDyn(shape), v.into_owned()).expect("data fills the shape")
    }
    let s = &t.shape;
    Ok(match t.data {
        HostData::F32(v) => arr(s, v).into(),
        HostData::F64(v) => arr(s, v).into(),
        HostData::I32(v) => arr(s, v).into(),
        HostData::I64(v) => arr(s, v).into(),
        HostData::U32(v) => arr(s, v).into(),
        HostData::U64(v) => arr(s, v).into(),
        other => {
            return Err(Error::UnsupportedDType {
                dtype: other.dtype(),
                reason: "NdArray has no such dtype".into(),
            })
        }
    })
}

impl<E, I, Q> PrimBackend for NdArray<E, I, Q>
where
    E: FloatNdArrayElement,
    I: IntNdArrayElement,
    Q: QuantElement,
    NdArrayTensor: From<SharedArray<E>> + From<SharedArray<I>>,
{
    fn prim_check<O: PrimOp>(op: &O, inputs: &[TensorMeta], _: &NdArrayDevice) -> Result<()> {
        op.outputs(inputs).map(drop)
    }

    fn prim_run<O: PrimOp>(
        op: &O,
        inputs: Vec<AnyPrimitive<Self>>,
        metas: &[TensorMeta],
        specs: &[OutputSpec],
    ) -> Vec<AnyPrimitive<Self>> {
        let tensors: Vec<NdArrayTensor> = inputs
            .into_iter()
            .map(|p| match p {
                AnyPrimitive::Float(t) | AnyPrimitive::Int(t) | AnyPrimitive::Bool(t) => t,
            })
            .collect();
        let run = || -> Result<Vec<AnyPrimitive<Self>>> {
            let views = tensors.iter().map(host_view).collect::<Result<Vec<_>>>()?;
            let outs = op.run_host(&views)?;
            outs.into_iter()
                .zip(specs)
                .map(|(out, spec)| {
                    let want = prim_dtype(spec.dtype.resolve(metas, I::dtype()))?;
                    let out = if spec.dtype == OutDType::Index && out.data.dtype() != want {
                        HostTensor {
                            data: out.data.cast_int(want)?,
                            shape: out.shape,
                        }
                    } else {
                        out
                    };
                    let t = to_ndarray(out)?;
                    Ok(match spec.kind {
                        Kind::Float => AnyPrimitive::Float(t),
                        Kind::Int => AnyPrimitive::Int(t),
                        Kind::Bool => AnyPrimitive::Bool(t),
                    })
                })
                .collect()
        };
        run().unwrap_or_else(|e| fail::<O>(e))
    }
}
