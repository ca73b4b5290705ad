//! What every op tells the adapters: its outputs (shapes and dtypes, known before it runs), how
//! it runs on a device, and how it runs on the host. The adapters for each burn backend
//! (`cube.rs`, `fusion.rs`, `ndarray.rs`) are written once against this trait.

use super::backend::PrimBackend;
use super::grad::Saved;
use super::host::HostTensor;
use crate::{DType, DeviceTensor, Error, Result, Workspace};
use ::burn::tensor::ops::FloatTensor;
use ::burn::tensor::DType as BurnDType;
use cubecl::prelude::*;
use std::fmt::Debug;
use std::hash::Hash;

/// The kind of a burn tensor primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `Tensor<B, D, Float>`.
    Float,
    /// `Tensor<B, D, Int>`.
    Int,
    /// `Tensor<B, D, Bool>`.
    Bool,
}

/// Kind, shape and dtype of an input, as an op sees it before it runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorMeta {
    /// Float, int or bool.
    pub kind: Kind,
    /// Size of each axis.
    pub shape: Vec<usize>,
    /// burn's dtype of the storage.
    pub dtype: BurnDType,
}

impl TensorMeta {
    /// cubeprim's dtype for this tensor's storage. Bool tensors are read as `u32` flags (0 or
    /// 1): the adapters convert other bool storage (`u8` on CUDA, `bool` on NdArray) to `u32`
    /// with one copy, except for the inputs an op reads as byte flags
    /// ([`PrimOp::reads_byte_flags`]).
    pub fn prim_dtype(&self) -> Result<DType> {
        match self.dtype {
            BurnDType::Bool(_) => Ok(DType::U32),
            d => prim_dtype(d),
        }
    }
    /// Number of axes.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
}

/// cubeprim's dtype for a burn dtype (`Flex32` is stored as f32).
pub fn prim_dtype(d: BurnDType) -> Result<DType> {
    Ok(match d {
        BurnDType::F32 | BurnDType::Flex32 => DType::F32,
        BurnDType::F16 => DType::F16,
        BurnDType::BF16 => DType::BF16,
        BurnDType::F64 => DType::F64,
        BurnDType::I32 => DType::I32,
        BurnDType::U32 => DType::U32,
        BurnDType::I64 => DType::I64,
        BurnDType::U64 => DType::U64,
        other => {
            return Err(Error::Unsupported(format!(
                "burn dtype {other:?} (cubeprim handles f32, f16, bf16, f64, i32, u32, i64, u64)"
            )))
        }
    })
}

/// The burn dtype of a cubeprim dtype.
pub fn burn_dtype(d: DType) -> BurnDType {
    match d {
        DType::F32 => BurnDType::F32,
        DType::F16 => BurnDType::F16,
        DType::BF16 => BurnDType::BF16,
        DType::F64 => BurnDType::F64,
        DType::I32 => BurnDType::I32,
        DType::U32 => BurnDType::U32,
        DType::I64 => BurnDType::I64,
        DType::U64 => BurnDType::U64,
        DType::U8 => BurnDType::U8,
    }
}

/// The dtype of an output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutDType {
    /// The dtype of input `i`.
    Like(usize),
    /// The backend's int dtype (indices, counts). Devices and the host may compute indices in
    /// another integer type; the adapter casts them.
    Index,
    /// This dtype on every backend (the `u32` count of a data-sized output).
    Fixed(BurnDType),
}

impl OutDType {
    /// The burn dtype, given the inputs and the backend's int dtype.
    pub fn resolve(self, inputs: &[TensorMeta], int_dtype: BurnDType) -> BurnDType {
        match self {
            OutDType::Like(i) => inputs[i].dtype,
            OutDType::Index => int_dtype,
            OutDType::Fixed(d) => d,
        }
    }
}

/// Kind, shape and dtype of an output.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSpec {
    /// Float, int or bool.
    pub kind: Kind,
    /// Size of each axis, fixed before the op runs.
    pub shape: Vec<usize>,
    /// The dtype, relative to the inputs or the backend.
    pub dtype: OutDType,
}

impl OutputSpec {
    /// An output of the kind, shape and dtype of input `i`.
    pub fn like(inputs: &[TensorMeta], i: usize) -> Self {
        Self {
            kind: inputs[i].kind,
            shape: inputs[i].shape.clone(),
            dtype: OutDType::Like(i),
        }
    }
    /// An int output of `shape` in the backend's int dtype.
    pub fn index(shape: Vec<usize>) -> Self {
        Self {
            kind: Kind::Int,
            shape,
            dtype: OutDType::Index,
        }
    }
    /// Input `i` flattened: its kind and dtype, 1-D of all its elements (the capacity of an
    /// output sized by the data).
    pub fn flat(inputs: &[TensorMeta], i: usize) -> Self {
        Self {
            shape: vec![inputs[i].shape.iter().product()],
            ..Self::like(inputs, i)
        }
    }
    /// The `u32[1]` device count of an output sized by the data: the extension method reads it
    /// (the one host read of such ops) and cuts the capacity-sized outputs to it.
    pub fn count() -> Self {
        Self {
            kind: Kind::Int,
            shape: vec![1],
            dtype: OutDType::Fixed(BurnDType::U32),
        }
    }
}

/// One cubeprim op on burn tensors. Its parameters (axis, flags) are the struct's fields; it
/// must be cheap to clone and `'static`, as the fusion stream keeps it until it runs, and
/// comparable: device backends check each set of arguments once and remember that it passed.
pub trait PrimOp: Clone + Debug + PartialEq + Eq + Hash + Send + Sync + 'static {
    /// The op's name (fusion IR id, error messages).
    const NAME: &'static str;

    /// The outputs made from inputs of these kinds, shapes and dtypes; an error for bad
    /// arguments (wrong axis, kind, dtype).
    fn outputs(&self, inputs: &[TensorMeta]) -> Result<Vec<OutputSpec>>;

    /// Whether the device path needs contiguous inputs (the adapter copies strided ones).
    fn needs_contiguous(&self) -> bool {
        false
    }

    /// Whether input `input`, when it is a bool tensor stored in bytes (`u8`, burn's CUDA
    /// default), is read as it is, as byte flags (`DType::U8`: the compaction ops); else the
    /// adapter converts it to `u32` flags with one copy.
    fn reads_byte_flags(&self, _input: usize) -> bool {
        false
    }

    /// What the device must support beyond [`PrimOp::outputs`] (dtype support, shared memory).
    fn check_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[TensorMeta],
    ) -> Result<()>;

    /// Runs on the device, on the inputs' own buffers (strided views), with the outputs in the
    /// order and shapes of [`PrimOp::outputs`], contiguous.
    fn run_device<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        inputs: &[DeviceTensor<R>],
        workspace: &mut Workspace<R>,
    ) -> Result<Vec<DeviceTensor<R>>>;

    /// Runs on the host (row-major inputs), in parallel over rows.
    fn run_host(&self, inputs: &[HostTensor<'_>]) -> Result<Vec<HostTensor<'static>>>;

    /// The output that carries a gradient under `Autodiff<B>` (when it is a float tensor), or
    /// `None`: the op has no gradient, and autodiff sees its float outputs as constants.
    fn grad_output(&self) -> Option<usize> {
        None
    }

    /// The backward pass (see `grad.rs`): for each input, its gradient given `grad`, the
    /// gradient of output [`PrimOp::grad_output`]; `None` for an input with no gradient.
    fn backward<B: PrimBackend>(
        &self,
        saved: &Saved<B>,
        grad: FloatTensor<B>,
    ) -> Vec<Option<FloatTensor<B>>> {
        let _ = (saved, grad);
        unreachable!("{} has no gradient", Self::NAME)
    }
}

/// Checks `count` inputs, each of a dtype cubeprim has; bool tensors only where `bool_ok`
/// (`what` names the op in the error).
pub(crate) fn check_inputs(
    inputs: &[TensorMeta],
    count: usize,
    bool_ok: bool,
    what: &str,
) -> Result<()> {
    if inputs.len() != count {
        return Err(Error::LengthMismatch {
            expected: count,
            got: inputs.len(),
        });
    }
    for x in inputs {
        if !bool_ok && x.kind == Kind::Bool {
            return Err(Error::Unsupported(format!("{what} of bool tensors")));
        }
        x.prim_dtype()?;
    }
    Ok(())
}

/// cubeprim's dtype of `x`, or an error where the device lacks it.
pub(crate) fn device_dtype<R: Runtime>(client: &ComputeClient<R>, x: &TensorMeta) -> Result<DType> {
    let dtype = x.prim_dtype()?;
    if !crate::supports_dtype(client, dtype) {
        return Err(Error::UnsupportedDType {
            dtype,
            reason: format!("the {} runtime does not support it", R::name(client)),
        });
    }
    Ok(dtype)
}

/// Checks that two inputs have the same shape.
pub(crate) fn same_shape(a: &TensorMeta, b: &TensorMeta) -> Result<()> {
    if a.shape != b.shape {
        return Err(Error::ShapeMismatch {
            expected: a.shape.clone(),
            got: b.shape.clone(),
        });
    }
    Ok(())
}
