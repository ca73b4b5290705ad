//! `Autodiff<B>` (feature `burn-autodiff`): every op runs on the inner backend `B`; the output
//! an op names in [`PrimOp::grad_output`] becomes a node of burn's graph whose backward step is
//! the op's [`PrimOp::backward`] (on `B`, with cubeprim's own ops); other float outputs are
//! constants to autodiff, int and bool outputs pass through.
//!
//! ```
//! use burn::backend::{Autodiff, NdArray};
//! use burn::tensor::Tensor;
//! use cubeprim::burn::prelude::*;
//! let x = Tensor::<Autodiff<NdArray>, 1>::from_floats([1.0, 0.0, 3.0], &Default::default())
//!     .require_grad();
//! let grads = x.clone().prim_cumprod(0).sum().backward();
//! // d/dx of x0 + x0 x1 + x0 x1 x2, at a zero too (PyTorch's cumprod backward).
//! let g = x.grad(&grads).unwrap().into_data().to_vec::<f32>().unwrap();
//! assert_eq!(g, [1.0, 4.0, 0.0]);
//! ```

use super::backend::{AnyPrimitive, PrimBackend};
use super::grad::Saved;
use super::op::{Kind, OutputSpec, PrimOp, TensorMeta};
use ::burn::tensor::backend::AutodiffBackend;
use ::burn::tensor::backend::Backend;
use ::burn::tensor::Device;
use burn_autodiff::checkpoint::base::Checkpointer;
use burn_autodiff::checkpoint::strategy::CheckpointStrategy;
use burn_autodiff::grads::Gradients;
use burn_autodiff::ops::{Backward, Ops, OpsKind};
use burn_autodiff::Autodiff;
use std::marker::PhantomData;

/// The backward step of op `O`.
struct PrimStep<O>(PhantomData<O>);

impl<O> std::fmt::Debug for PrimStep<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PrimStep({})", std::any::type_name::<O>())
    }
}

/// What the backward step keeps: the op, its inputs and outputs, and which input each parent
/// node is.
struct State<B: Backend, O> {
    op: O,
    saved: Saved<B>,
    parents: Vec<usize>,
}

impl<B: Backend, O: Clone> Clone for State<B, O> {
    fn clone(&self) -> Self {
        Self {
            op: self.op.clone(),
            saved: self.saved.clone(),
            parents: self.parents.clone(),
        }
    }
}

impl<B: Backend, O: std::fmt::Debug> std::fmt::Debug for State<B, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "State({:?}, {:?})", self.op, self.saved)
    }
}

impl<B: PrimBackend, O: PrimOp, const N: usize> Backward<B, N> for PrimStep<O> {
    type State = State<B, O>;

    fn backward(self, ops: Ops<Self::State, N>, grads: &mut Gradients, _: &mut Checkpointer) {
        let grad = grads.consume::<B>(&ops.node);
        let State { op, saved, parents } = ops.state;
        let mut input_grads = op.backward::<B>(&saved, grad);
        for (node, &input) in ops.parents.iter().zip(&parents) {
            if let (Some(node), Some(g)) = (node, input_grads[input].take()) {
                grads.register::<B>(node.id, g);
            }
        }
    }
}

/// The tracked output: `$output` as a node of the graph over `$nodes` (the float inputs'),
/// with op `$O`'s backward step; or, when no input needs a gradient, an untracked tensor.
/// (A macro: burn-autodiff's node and tensor types cannot be named outside it.)
macro_rules! track {
    ($B:ty, $C:ty, $O:ty, $N:literal, $nodes:expr, $state:expr, $output:expr) => {
        match <PrimStep<$O> as Backward<$B, $N>>::prepare::<$C>(PrimStep(PhantomData), $nodes)
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => prep.finish($state, $output),
            OpsKind::UnTracked(prep) => prep.finish($output),
        }
    };
}

impl<B: PrimBackend, C: CheckpointStrategy> PrimBackend for Autodiff<B, C> {
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
        let mut nodes = Vec::new();
        let mut parents = Vec::new();
        let inner: Vec<AnyPrimitive<B>> = inputs
            .into_iter()
            .enumerate()
            .map(|(i, p)| match p {
                AnyPrimitive::Float(t) => {
                    nodes.push(t.node.clone());
                    parents.push(i);
                    AnyPrimitive::Float(t.primitive)
                }
                AnyPrimitive::Int(t) => AnyPrimitive::Int(t),
                AnyPrimitive::Bool(t) => AnyPrimitive::Bool(t),
            })
            .collect();
        let outputs = B::prim_run(op, inner.clone(), metas, specs);
        let tracked = op
            .grad_output()
            .filter(|&o| specs[o].kind == Kind::Float && !nodes.is_empty());
        let saved = tracked.map(|_| Saved {
            inputs: inner,
            outputs: outputs.clone(),
        });
        let mut saved = saved;
        outputs
            .into_iter()
            .enumerate()
            .map(|(k, p)| match p {
                AnyPrimitive::Float(t) if tracked == Some(k) => {
                    let state = State {
                        op: op.clone(),
                        saved: saved.take().expect("one tracked output"),
                        parents: parents.clone(),
                    };
                    let out = match nodes.len() {
                        1 => track!(B, C, O, 1, [nodes[0].clone()], state, t),
                        2 => track!(B, C, O, 2, [nodes[0].clone(), nodes[1].clone()], state, t),
                        3 => track!(
                            B,
                            C,
                            O,
                            3,
                            [nodes[0].clone(), nodes[1].clone(), nodes[2].clone()],
                            state,
                            t
                        ),
                        n => panic!("{}: {n} float inputs (at most 3 are tracked)", O::NAME),
                    };
                    AnyPrimitive::Float(out)
                }
                AnyPrimitive::Float(t) => AnyPrimitive::Float(Self::from_inner(t)),
                AnyPrimitive::Int(t) => AnyPrimitive::Int(t),
                AnyPrimitive::Bool(t) => AnyPrimitive::Bool(t),
            })
            .collect()
    }
}
