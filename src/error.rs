use crate::DType;

/// Everything that can go wrong in a cubeprim call. Bad input is reported, never a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("axis {axis} is out of range for a tensor of rank {rank}")]
    AxisOutOfRange { axis: isize, rank: usize },
    #[error("dtype {dtype} is not supported here: {reason}")]
    UnsupportedDType { dtype: DType, reason: String },
    #[error("shape mismatch: expected {expected:?}, got {got:?}")]
    ShapeMismatch {
        expected: Vec<usize>,
        got: Vec<usize>,
    },
    #[error("length mismatch: expected {expected} elements, got {got}")]
    LengthMismatch { expected: usize, got: usize },
    #[error("scratch too small: this call needs {needed} bytes, the workspace holds {available}")]
    ScratchTooSmall { needed: usize, available: usize },
    #[error("output too small: {needed} elements needed, the output holds {got}")]
    OutputTooSmall { needed: usize, got: usize },
    #[error(
        "a buffer of {bytes} bytes is past the device's largest buffer ({max} bytes): \
         split the call into smaller ones"
    )]
    BufferTooLarge { bytes: usize, max: usize },
    #[error("workspace used where it cannot be: {0}")]
    WorkspaceMismatch(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A size past what the kernels' 32-bit positions can address: `len` of `what` (elements)
    /// exceeds `max` ([`crate::MAX_ELEMENTS`]).
    #[error("{what} of {len} elements is too large: at most {max}")]
    TooLarge {
        what: &'static str,
        len: usize,
        max: usize,
    },
    /// A view reaches past the memory of its handle: `what` needs `needed` bytes of the
    /// handle, which holds `available` (its size less its offsets).
    #[error("{what} reaches {needed} bytes into a buffer of {available}")]
    OutOfBounds {
        what: &'static str,
        needed: usize,
        available: usize,
    },
    /// Two tensors of one call share memory where the op cannot allow it: an output overlaps
    /// an input or another output (`first` and `second` name them).
    #[error("{first} and {second} overlap in memory")]
    Aliased {
        first: &'static str,
        second: &'static str,
    },
    /// An argument out of its range (a zero tile size, an axis or a range past a shape, …).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

pub type Result<T> = std::result::Result<T, Error>;
