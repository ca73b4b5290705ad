//! The backend trait ([`PrimBackend`]) and the glue between burn's tensor kinds and it.

use super::op::{Kind, OutputSpec, PrimOp, TensorMeta};
use ::burn::tensor::backend::Backend;
use ::burn::tensor::ops::{BoolTensor, FloatTensor, IntTensor};
use ::burn::tensor::{BasicOps, Bool, Device, Float, Int, TensorMetadata, TensorPrimitive};

/// A float, int or bool primitive of backend `B`.
pub enum AnyPrimitive<B: Backend> {
    /// A float tensor's primitive.
    Float(FloatTensor<B>),
    /// An int tensor's primitive.
    Int(IntTensor<B>),
    /// A bool tensor's primitive.
    Bool(BoolTensor<B>),
}

impl<B: Backend> Clone for AnyPrimitive<B> {
    fn clone(&self) -> Self {
        match self {
            AnyPrimitive::Float(t) => AnyPrimitive::Float(t.clone()),
            AnyPrimitive::Int(t) => AnyPrimitive::Int(t.clone()),
            AnyPrimitive::Bool(t) => AnyPrimitive::Bool(t.clone()),
        }
    }
}

impl<B: Backend> std::fmt::Debug for AnyPrimitive<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnyPrimitive::Float(t) => write!(f, "Float({t:?})"),
            AnyPrimitive::Int(t) => write!(f, "Int({t:?})"),
            AnyPrimitive::Bool(t) => write!(f, "Bool({t:?})"),
        }
    }
}

impl<B: Backend> AnyPrimitive<B> {
    /// Which of the three kinds this is.
    pub fn kind(&self) -> Kind {
        match self {
            AnyPrimitive::Float(_) => Kind::Float,
            AnyPrimitive::Int(_) => Kind::Int,
            AnyPrimitive::Bool(_) => Kind::Bool,
        }
    }

    /// Kind, shape and dtype, as an op's [`PrimOp::outputs`] sees them.
    pub fn meta(&self) -> TensorMeta {
        let (shape, dtype) = match self {
            AnyPrimitive::Float(t) => (t.shape(), t.dtype()),
            AnyPrimitive::Int(t) => (t.shape(), t.dtype()),
            AnyPrimitive::Bool(t) => (t.shape(), t.dtype()),
        };
        TensorMeta {
            kind: self.kind(),
            shape: shape.to_vec(),
            dtype,
        }
    }

    /// The device the primitive lives on.
    pub fn device(&self) -> Device<B> {
        match self {
            AnyPrimitive::Float(t) => B::float_device(t),
            AnyPrimitive::Int(t) => B::int_device(t),
            AnyPrimitive::Bool(t) => B::bool_device(t),
        }
    }
}

/// A burn backend that runs cubeprim's ops.
///
/// Implemented for `CubeBackend` (wgpu, CUDA, … : cubeprim's kernels on the tensors' own
/// buffers), `Fusion<B>` (a custom op on the fusion stream) and `NdArray` (cubeprim's CPU path,
/// parallel over rows), and `Autodiff<B>` of each (feature `burn-autodiff`: the op runs on `B`,
/// its backward pass is recorded; see [`PrimOp::grad_output`]).
pub trait PrimBackend: Backend {
    /// Checks arguments and device support before anything is queued.
    fn prim_check<O: PrimOp>(
        op: &O,
        inputs: &[TensorMeta],
        device: &Device<Self>,
    ) -> crate::Result<()>;

    /// Runs `op` (checked with [`PrimBackend::prim_check`]) on `inputs`, described by `metas`;
    /// `specs` are its [`PrimOp::outputs`] for them, which the outputs follow. Panics if the op
    /// fails.
    fn prim_run<O: PrimOp>(
        op: &O,
        inputs: Vec<AnyPrimitive<Self>>,
        metas: &[TensorMeta],
        specs: &[OutputSpec],
    ) -> Vec<AnyPrimitive<Self>>;
}

/// The panic of an op that cannot run (burn's convention for invalid arguments).
pub(crate) fn fail<O: PrimOp>(e: crate::Error) -> ! {
    panic!("{}: {e}", O::NAME)
}

/// Checks, then runs `op`: what every extension method calls.
pub fn run<B: PrimBackend, O: PrimOp>(
    op: &O,
    inputs: Vec<AnyPrimitive<B>>,
) -> Vec<AnyPrimitive<B>> {
    let metas: Vec<TensorMeta> = inputs.iter().map(AnyPrimitive::meta).collect();
    let device = inputs.first().map(AnyPrimitive::device).unwrap_or_default();
    if let Err(e) = B::prim_check(op, &metas, &device) {
        fail::<O>(e)
    }
    let specs = op.outputs(&metas).unwrap_or_else(|e| fail::<O>(e));
    B::prim_run(op, inputs, &metas, &specs)
}

/// A burn tensor kind whose primitive converts to and from [`AnyPrimitive`].
pub trait PrimKind<B: Backend>: BasicOps<B> {
    /// Wraps a primitive of this kind.
    fn into_any(p: Self::Primitive) -> AnyPrimitive<B>;
    /// Panics on a primitive of another kind (an op returned the wrong kind).
    fn from_any(p: AnyPrimitive<B>) -> Self::Primitive;
}

/// Float and int tensors (the kinds with arithmetic and order).
pub trait NumericKind<B: Backend>: PrimKind<B> {}

impl<B: Backend> PrimKind<B> for Float {
    fn into_any(p: TensorPrimitive<B>) -> AnyPrimitive<B> {
        AnyPrimitive::Float(p.tensor())
    }
    fn from_any(p: AnyPrimitive<B>) -> TensorPrimitive<B> {
        match p {
            AnyPrimitive::Float(t) => TensorPrimitive::Float(t),
            other => panic!("expected a float tensor, got {:?}", other.kind()),
        }
    }
}

impl<B: Backend> PrimKind<B> for Int {
    fn into_any(p: IntTensor<B>) -> AnyPrimitive<B> {
        AnyPrimitive::Int(p)
    }
    fn from_any(p: AnyPrimitive<B>) -> IntTensor<B> {
        match p {
            AnyPrimitive::Int(t) => t,
            other => panic!("expected an int tensor, got {:?}", other.kind()),
        }
    }
}

impl<B: Backend> PrimKind<B> for Bool {
    fn into_any(p: BoolTensor<B>) -> AnyPrimitive<B> {
        AnyPrimitive::Bool(p)
    }
    fn from_any(p: AnyPrimitive<B>) -> BoolTensor<B> {
        match p {
            AnyPrimitive::Bool(t) => t,
            other => panic!("expected a bool tensor, got {:?}", other.kind()),
        }
    }
}

impl<B: Backend> NumericKind<B> for Float {}
impl<B: Backend> NumericKind<B> for Int {}

/// A tensor's primitive as an [`AnyPrimitive`].
pub(crate) fn any<B: Backend, const D: usize, K: PrimKind<B>>(
    t: ::burn::tensor::Tensor<B, D, K>,
) -> AnyPrimitive<B> {
    K::into_any(t.into_primitive())
}

/// The tensor of an op's output (panics on a primitive of another kind).
pub(crate) fn tensor<B: Backend, const D: usize, K: PrimKind<B>>(
    p: AnyPrimitive<B>,
) -> ::burn::tensor::Tensor<B, D, K> {
    ::burn::tensor::Tensor::from_primitive(K::from_any(p))
}

/// The outputs of an op sized by the data (capacity-sized outputs, then the `u32[1]` count
/// of [`super::op::OutputSpec::count`]) and the count, read back: the one host read (a sync)
/// of such ops. The caller cuts the outputs to the count.
pub(crate) fn read_count<B: Backend>(
    mut outs: Vec<AnyPrimitive<B>>,
) -> (Vec<AnyPrimitive<B>>, usize) {
    let count = tensor::<B, 1, Int>(outs.pop().expect("a count output"));
    let k = count
        .into_data()
        .iter::<u64>()
        .next()
        .expect("a count of one element");
    (outs, k as usize)
}
