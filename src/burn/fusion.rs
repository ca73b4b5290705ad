//! `Fusion<B>` (the default `Wgpu` / `Cuda` backends): the op is registered as a custom
//! operation on the fusion stream. It runs in stream order with the fused graph, with no sync
//! and no host round-trip; when it runs, it calls `B`'s implementation on the real primitives.

use super::backend::{AnyPrimitive, PrimBackend};
use super::op::{Kind, OutputSpec, PrimOp, TensorMeta};
use ::burn::tensor::{Device, Element, Shape};
use burn_fusion::stream::{Operation, OperationStreams};
use burn_fusion::{Fusion, FusionBackend, FusionRuntime, FusionTensor};
use burn_ir::{CustomOpIr, HandleContainer, OperationIr, TensorIr};
use std::marker::PhantomData;

/// The op as it waits on the fusion stream.
#[derive(Debug)]
struct FusedOp<B, O> {
    desc: CustomOpIr,
    op: O,
    /// The inputs and outputs as checked at registration: `execute` does not redo that work.
    metas: Vec<TensorMeta>,
    specs: Vec<OutputSpec>,
    _b: PhantomData<fn() -> B>,
}

impl<B: FusionBackend + PrimBackend, O: PrimOp> Operation<B::FusionRuntime> for FusedOp<B, O> {
    fn execute(
        &self,
        handles: &mut HandleContainer<<B::FusionRuntime as FusionRuntime>::FusionHandle>,
    ) {
        let inputs = self
            .desc
            .inputs
            .iter()
            .zip(&self.metas)
            .map(|(ir, meta)| match meta.kind {
                Kind::Float => AnyPrimitive::Float(handles.get_float_tensor::<B>(ir)),
                Kind::Int => AnyPrimitive::Int(handles.get_int_tensor::<B>(ir)),
                Kind::Bool => AnyPrimitive::Bool(handles.get_bool_tensor::<B>(ir)),
            })
            .collect();
        let outputs = B::prim_run(&self.op, inputs, &self.metas, &self.specs);
        for (ir, out) in self.desc.outputs.iter().zip(outputs) {
            match out {
                AnyPrimitive::Float(t) => handles.register_float_tensor::<B>(&ir.id, t),
                AnyPrimitive::Int(t) => handles.register_int_tensor::<B>(&ir.id, t),
                AnyPrimitive::Bool(t) => handles.register_bool_tensor::<B>(&ir.id, t),
            }
        }
    }
}

impl<B: FusionBackend + PrimBackend> PrimBackend for Fusion<B> {
    fn prim_check<O: PrimOp>(
        op: &O,
        inputs: &[TensorMeta],
        device: &Device<Self>,
    ) -> crate::Result<()> {
        B::prim_check(op, inputs, device)
    }

    fn prim_run<O: PrimOp>(
        op: &O,
        inputs: Vec<AnyPrimitive<Self>>,
        metas: &[TensorMeta],
        specs: &[OutputSpec],
    ) -> Vec<AnyPrimitive<Self>> {
        let tensors: Vec<FusionTensor<B::FusionRuntime>> = inputs
            .into_iter()
            .map(|p| match p {
                AnyPrimitive::Float(t) | AnyPrimitive::Int(t) | AnyPrimitive::Bool(t) => t,
            })
            .collect();
        let client = tensors.first().expect("an op has inputs").client.clone();
        let streams = OperationStreams::with_inputs(tensors.iter());
        let outs: Vec<TensorIr> = specs
            .iter()
            .map(|s| {
                TensorIr::uninit(
                    client.create_empty_handle(),
                    Shape::from(s.shape.clone()),
                    s.dtype.resolve(metas, B::IntElem::dtype()),
                )
            })
            .collect();
        let ins: Vec<TensorIr> = tensors.into_iter().map(FusionTensor::into_ir).collect();
        let desc = CustomOpIr::new(O::NAME, &ins, &outs);
        let fused = FusedOp::<B, O> {
            desc: desc.clone(),
            op: op.clone(),
            metas: metas.to_vec(),
            specs: specs.to_vec(),
            _b: PhantomData,
        };
        client
            .register(streams, OperationIr::Custom(desc), fused)
            .into_iter()
            .zip(specs)
            .map(|(t, s)| match s.kind {
                Kind::Float => AnyPrimitive::Float(t),
                Kind::Int => AnyPrimitive::Int(t),
                Kind::Bool => AnyPrimitive::Bool(t),
            })
            .collect()
    }
}
