use crate::DType;

/// Everything that can go wrong in a cubeprim call. Bad input is reported, never a panic.
///
/// Every entry point runs the same argument checks before it allocates or launches anything
/// ([`DeviceTensor::check`](crate::DeviceTensor::check) on each tensor it takes): strides of
/// another rank than the shape give [`Error::ShapeMismatch`], more than
/// [`MAX_ELEMENTS`](crate::MAX_ELEMENTS) elements [`Error::TooLarge`], a view past its
/// handle's memory [`Error::OutOfBounds`], a handle that starts off the device's binding
/// alignment [`Error::InvalidArgument`], and an output that shares memory with an input or
/// another output [`Error::Aliased`]. The `# Errors` section of each function names the
/// variants its own arguments can add.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An axis (possibly negative, counted from the end) that is not one of the tensor's.
    #[error("axis {axis} is out of range for a tensor of rank {rank}")]
    AxisOutOfRange {
        /// The axis asked for.
        axis: isize,
        /// The rank of the tensor.
        rank: usize,
    },
    /// A dtype the op does not take, or that the runtime cannot compute in (bf16 on Vulkan,
    /// 64-bit types where the device lacks them, a device count that is not `u32`, …).
    #[error("dtype {dtype} is not supported here: {reason}")]
    UnsupportedDType {
        /// The refused dtype.
        dtype: DType,
        /// Why it is refused.
        reason: String,
    },
    /// Two shapes that must agree do not (an output's shape, a values tensor against its
    /// keys, or strides of another rank than the shape).
    #[error("shape mismatch: expected {expected:?}, got {got:?}")]
    ShapeMismatch {
        /// The shape the call needs.
        expected: Vec<usize>,
        /// The shape it was given.
        got: Vec<usize>,
    },
    /// An element count that does not fit: host data that does not fill its shape, a
    /// [`Len`](crate::Len) past the buffers it applies to, a device count of more than one
    /// element.
    #[error("length mismatch: expected {expected} elements, got {got}")]
    LengthMismatch {
        /// The count the call needs (or the most it can take).
        expected: usize,
        /// The count it was given.
        got: usize,
    },
    /// A fixed-size [`Workspace`](crate::Workspace) (made by
    /// [`Workspace::with_capacity`](crate::Workspace::with_capacity)) smaller than the call's
    /// scratch; the `*_workspace_bytes` queries give the size to allocate.
    #[error("scratch too small: this call needs {needed} bytes, the workspace holds {available}")]
    ScratchTooSmall {
        /// Bytes the call needs.
        needed: usize,
        /// Bytes the workspace holds.
        available: usize,
    },
    /// A caller-provided output with fewer elements than the call writes.
    #[error("output too small: {needed} elements needed, the output holds {got}")]
    OutputTooSmall {
        /// Elements the call writes.
        needed: usize,
        /// Elements the output holds.
        got: usize,
    },
    /// An output or scratch buffer larger than the runtime's largest buffer
    /// ([`max_buffer_bytes`](crate::max_buffer_bytes)); refused before anything is allocated,
    /// because cubecl would panic on its own thread instead.
    #[error(
        "a buffer of {bytes} bytes is past the device's largest buffer ({max} bytes): \
         split the call into smaller ones"
    )]
    BufferTooLarge {
        /// Bytes the buffer would need.
        bytes: usize,
        /// The runtime's largest buffer, in bytes.
        max: usize,
    },
    /// A [`Workspace`](crate::Workspace) used from another device or another cubecl stream
    /// (thread) than the one of its first use: keep one workspace per device and thread.
    #[error("workspace used where it cannot be: {0}")]
    WorkspaceMismatch(String),
    /// A combination of arguments the op does not handle (a layout it needs contiguous, a
    /// rank it does not take, a max / min of no elements, …); the message says which.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A size past what the kernels' 32-bit positions can address: `len` of `what` (elements)
    /// exceeds `max` ([`crate::MAX_ELEMENTS`]).
    #[error("{what} of {len} elements is too large: at most {max}")]
    TooLarge {
        /// The argument or buffer at fault.
        what: &'static str,
        /// Its size, in elements.
        len: usize,
        /// The most allowed.
        max: usize,
    },
    /// A view reaches past the memory of its handle: `what` needs `needed` bytes of the
    /// handle, which holds `available` (its size less its offsets).
    #[error("{what} reaches {needed} bytes into a buffer of {available}")]
    OutOfBounds {
        /// The tensor at fault.
        what: &'static str,
        /// Bytes of the handle the view reaches.
        needed: usize,
        /// Bytes the handle holds.
        available: usize,
    },
    /// Two tensors of one call share memory where the op cannot allow it: an output overlaps
    /// an input or another output (`first` and `second` name them).
    #[error("{first} and {second} overlap in memory")]
    Aliased {
        /// The output.
        first: &'static str,
        /// The input or output it overlaps.
        second: &'static str,
    },
    /// An argument out of its range (a zero tile size, an axis or a range past a shape, …).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

/// The result of every fallible cubeprim call.
pub type Result<T> = std::result::Result<T, Error>;
