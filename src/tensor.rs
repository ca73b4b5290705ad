use crate::{DType, Element, Error, Result};
use cubecl::prelude::*;
use cubecl::server::Handle;

/// The most elements any tensor, view or output of a cubeprim call may have, and the furthest
/// element a view may reach (its offset included): 2^31. The kernels compute positions in
/// 32-bit integers; with every position below 2^31, a position plus a tile of overshoot stays
/// below 2^32. Every entry point refuses larger sizes with [`Error::TooLarge`] before it
/// launches anything (a broadcast view of 2^32 elements over a one-element buffer is refused
/// too: its positions would wrap).
pub const MAX_ELEMENTS: usize = 1 << 31;

/// A strided view of device memory: the small tensor type cubeprim's functions take and return.
/// `strides` and `offset` count elements. Outputs are always contiguous (row-major).
///
/// The fields are public and [`DeviceTensor::from_parts`] takes them as they come: every entry
/// point of the crate checks each tensor it is given ([`DeviceTensor::check`]: strides of the
/// tensor's rank, at most [`MAX_ELEMENTS`] elements, a reach inside the handle's memory; and a
/// handle cut from a buffer with `offset_start` starting on a multiple of the device's memory
/// alignment, where the runtimes can bind it) and that no output overlaps an
/// input or another output ([`DeviceTensor::overlaps`]) before it launches a kernel, and
/// answers an [`Error`] otherwise.
#[derive(Clone, Debug)]
pub struct DeviceTensor<R: Runtime> {
    /// The device memory the view reads (cubecl's handle; it may be cut from a larger buffer
    /// with `offset_start` / `offset_end`).
    pub handle: Handle,
    /// Size of each axis.
    pub shape: Vec<usize>,
    /// Step of each axis, in elements (one per axis; 0 broadcasts).
    pub strides: Vec<usize>,
    /// Position of the first element from the start of the handle, in elements.
    pub offset: usize,
    /// Element type of the memory.
    pub dtype: DType,
    _r: std::marker::PhantomData<R>,
}

/// Row-major strides of `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1].saturating_mul(shape[i + 1].max(1));
    }
    s
}

/// The product of `shape`, `None` past `usize`.
pub(crate) fn checked_len(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
}

/// The elements of a contiguous tensor of `shape` and the bytes of its buffer: whole 16-byte
/// vectors (bytes are read as vectors of words), at least one element's worth.
/// [`Error::TooLarge`] past [`MAX_ELEMENTS`] elements.
fn buffer_bytes(shape: &[usize], dtype: DType) -> Result<(usize, usize)> {
    let n = checked_len(shape).ok_or(Error::TooLarge {
        what: "a shape",
        len: usize::MAX,
        max: MAX_ELEMENTS,
    })?;
    let bytes = n
        .max(1)
        .checked_mul(dtype.size())
        .and_then(|b| b.checked_next_multiple_of(16))
        .ok_or(Error::TooLarge {
            what: "a tensor",
            len: n,
            max: MAX_ELEMENTS,
        })?;
    Ok((n, bytes))
}

/// `len` elements of `what`, at most [`MAX_ELEMENTS`].
pub(crate) fn check_len(what: &'static str, len: usize) -> Result<()> {
    if len > MAX_ELEMENTS {
        return Err(Error::TooLarge {
            what,
            len,
            max: MAX_ELEMENTS,
        });
    }
    Ok(())
}

/// A shape of at most [`MAX_ELEMENTS`] elements (the size queries' argument): its element count.
pub(crate) fn check_shape(shape: &[usize]) -> Result<usize> {
    let n = checked_len(shape).unwrap_or(usize::MAX);
    check_len("a shape", n)?;
    Ok(n)
}

/// The identity of the device memory behind a handle: the addresses of the two shared
/// pointers of its `ManagedMemoryHandle`, which every clone of the handle (and every handle
/// cut from it with `offset_start` / `offset_end`) shares, and no other allocation has while
/// it lives. cubecl 0.10 exposes no identifier of its own (its memory id is private).
fn memory_id(h: &Handle) -> [*const u8; 2] {
    fn addresses<T>(m: &T) -> [*const u8; 2] {
        // `ManagedMemoryHandle` of cubecl-runtime 0.10 is two `Arc`s: two pointers, no
        // padding. Another layout fails to compile here.
        const {
            assert!(std::mem::size_of::<T>() == std::mem::size_of::<[*const u8; 2]>());
        }
        // SAFETY: `T` is two non-null pointers (size checked above); their addresses are
        // copied, never dereferenced.
        unsafe { std::mem::transmute_copy::<T, [*const u8; 2]>(m) }
    }
    addresses(&h.memory)
}

impl<R: Runtime> DeviceTensor<R> {
    /// Wraps existing device memory. Nothing is checked here: every cubeprim function checks
    /// the tensors it takes ([`DeviceTensor::check`]) and answers an [`Error`] for a view that
    /// reaches past its handle, strides of another rank or too many elements.
    pub fn from_parts(
        handle: Handle,
        shape: Vec<usize>,
        strides: Vec<usize>,
        offset: usize,
        dtype: DType,
    ) -> Self {
        Self {
            handle,
            shape,
            strides,
            offset,
            dtype,
            _r: Default::default(),
        }
    }

    /// Uploads `data` as a contiguous tensor of `shape`. [`Error::LengthMismatch`] unless
    /// `data` fills the shape exactly; [`Error::BufferTooLarge`] past the runtime's largest
    /// buffer.
    pub fn from_slice<E: Element>(
        client: &ComputeClient<R>,
        data: &[E],
        shape: &[usize],
    ) -> Result<Self> {
        let (n, bytes) = buffer_bytes(shape, E::DTYPE)?;
        if data.len() != n {
            return Err(Error::LengthMismatch {
                expected: n,
                got: data.len(),
            });
        }
        // Checked before cubecl sees them, as `try_empty` checks its own.
        crate::alloc::check_bytes(client, bytes)?;
        // A zero-sized buffer is not allowed everywhere: keep at least one element.
        let handle = if data.is_empty() {
            client.empty(E::DTYPE.size().max(4))
        } else if E::DTYPE == DType::U8 {
            // Bytes are read as vectors of words: pad to whole 16-byte vectors.
            let mut bytes = bytemuck::cast_slice::<E, u8>(data).to_vec();
            bytes.resize(bytes.len().next_multiple_of(16), 0);
            client.create_from_slice(&bytes)
        } else {
            client.create_from_slice(bytemuck::cast_slice(data))
        };
        Ok(Self::from_parts(
            handle,
            shape.to_vec(),
            contiguous_strides(shape),
            0,
            E::DTYPE,
        ))
    }

    /// An uninitialised contiguous tensor.
    ///
    /// # Panics
    ///
    /// Where [`DeviceTensor::try_empty`] returns an error: on the caller's thread, before
    /// anything is asked of the runtime, so the client stays usable.
    pub fn empty(client: &ComputeClient<R>, shape: &[usize], dtype: DType) -> Self {
        Self::try_empty(client, shape, dtype)
            .unwrap_or_else(|e| panic!("DeviceTensor::empty({shape:?}, {dtype:?}): {e}"))
    }

    /// An uninitialised contiguous tensor, or an error where it cannot be allocated.
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`] past [`MAX_ELEMENTS`] elements; [`Error::BufferTooLarge`] past the
    /// runtime's largest buffer ([`crate::max_buffer_bytes`]: 2 GiB on many Vulkan drivers),
    /// where cubecl would panic on its server thread and fail every later call of the client.
    pub fn try_empty(client: &ComputeClient<R>, shape: &[usize], dtype: DType) -> Result<Self> {
        let (_, bytes) = buffer_bytes(shape, dtype)?;
        let handle = crate::alloc::empty(client, bytes)?;
        Ok(Self::from_parts(
            handle,
            shape.to_vec(),
            contiguous_strides(shape),
            0,
            dtype,
        ))
    }

    /// Number of axes.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
    /// The product of the shape (`usize::MAX` where it overflows: such a tensor is refused by
    /// every function that takes it).
    pub fn num_elements(&self) -> usize {
        checked_len(&self.shape).unwrap_or(usize::MAX)
    }
    /// Row-major from the handle's start, as PyTorch counts it: a view of no element is
    /// contiguous whatever its strides and offset (burn gives `[r, 0]` the strides `[0, 1]`),
    /// and the stride of a dimension of size 1 does not matter.
    pub fn is_contiguous(&self) -> bool {
        if self.strides.len() != self.shape.len() {
            return false;
        }
        if self.shape.contains(&0) {
            return true;
        }
        self.offset == 0
            && self
                .shape
                .iter()
                .zip(&self.strides)
                .zip(contiguous_strides(&self.shape))
                .all(|((&d, &s), c)| d == 1 || s == c)
    }

    /// One past the furthest element the view reaches, counted from the start of its handle:
    /// `offset + Σ (shape[i] - 1) · strides[i] + 1`, or 0 for a view of no element. `None` where
    /// that overflows `usize` or the strides do not match the rank.
    pub fn reach(&self) -> Option<usize> {
        if self.strides.len() != self.shape.len() {
            return None;
        }
        if self.shape.contains(&0) {
            return Some(0);
        }
        let mut last = self.offset;
        for (&d, &s) in self.shape.iter().zip(&self.strides) {
            last = last.checked_add((d - 1).checked_mul(s)?)?;
        }
        last.checked_add(1)
    }

    /// Bytes of device memory the handle holds: its size less its offsets (`None` where the
    /// offsets exceed the size).
    pub fn available_bytes(&self) -> Option<usize> {
        let h = &self.handle;
        let used = h
            .size()
            .checked_sub(h.offset_start.unwrap_or(0))?
            .checked_sub(h.offset_end.unwrap_or(0))?;
        usize::try_from(used).ok()
    }

    /// Checks that the view is well-formed and inside its memory: strides of its rank, at most
    /// [`MAX_ELEMENTS`] elements, a reach ([`DeviceTensor::reach`]) of at most
    /// [`MAX_ELEMENTS`] and inside the handle ([`DeviceTensor::available_bytes`]). Every
    /// cubeprim function runs it on every tensor it takes.
    pub fn check(&self) -> Result<()> {
        self.check_as("a tensor")
    }

    /// [`DeviceTensor::check`], with `what` naming the tensor in the error.
    pub(crate) fn check_as(&self, what: &'static str) -> Result<()> {
        if self.strides.len() != self.shape.len() {
            return Err(Error::ShapeMismatch {
                expected: self.shape.clone(),
                got: self.strides.clone(),
            });
        }
        let n = checked_len(&self.shape).unwrap_or(usize::MAX);
        check_len(what, n)?;
        let reach = self.reach().unwrap_or(usize::MAX);
        check_len(what, reach)?;
        let needed = reach * self.dtype.size();
        let available = self.available_bytes().unwrap_or(0);
        if needed > available {
            return Err(Error::OutOfBounds {
                what,
                needed,
                available,
            });
        }
        Ok(())
    }

    /// The bytes of the underlying memory the view spans, from its first to one past its last
    /// element (`None` for a view of no element).
    fn span(&self) -> Option<(usize, usize)> {
        let reach = self.reach()?;
        if reach == 0 {
            return None;
        }
        let base = usize::try_from(self.handle.offset_start.unwrap_or(0)).ok()?;
        let size = self.dtype.size();
        let start = base.checked_add(self.offset.checked_mul(size)?)?;
        let end = base.checked_add(reach.checked_mul(size)?)?;
        Some((start, end))
    }

    /// Whether the two views may share memory: the same allocation, and byte ranges (first to
    /// last element) that intersect. Interleaved views (two strided halves of one buffer) count
    /// as overlapping; views of no element overlap nothing.
    pub fn overlaps(&self, other: &Self) -> bool {
        if memory_id(&self.handle) != memory_id(&other.handle) {
            return false;
        }
        match (self.span(), other.span()) {
            (Some((a0, a1)), Some((b0, b1))) => a0 < b1 && b0 < a1,
            // A span past usize: treated as overlapping (such a view is refused anyway).
            _ => self.reach().is_none() || other.reach().is_none(),
        }
    }

    /// The same memory with two axes swapped (no copy). [`Error::AxisOutOfRange`] for an axis
    /// past the rank.
    pub fn transpose(&self, a: usize, b: usize) -> Result<Self> {
        self.check_rank()?;
        for axis in [a, b] {
            if axis >= self.rank() {
                return Err(Error::AxisOutOfRange {
                    axis: isize::try_from(axis).unwrap_or(isize::MAX),
                    rank: self.rank(),
                });
            }
        }
        let mut t = self.clone();
        t.shape.swap(a, b);
        t.strides.swap(a, b);
        Ok(t)
    }

    /// A view of `len` elements starting at `start` along `axis` (no copy).
    /// [`Error::AxisOutOfRange`] for an axis past the rank, [`Error::InvalidArgument`] for a
    /// range past the axis.
    pub fn narrow(&self, axis: usize, start: usize, len: usize) -> Result<Self> {
        self.check_rank()?;
        if axis >= self.rank() {
            return Err(Error::AxisOutOfRange {
                axis: isize::try_from(axis).unwrap_or(isize::MAX),
                rank: self.rank(),
            });
        }
        let dim = self.shape[axis];
        if start.checked_add(len).is_none_or(|end| end > dim) {
            return Err(Error::InvalidArgument(format!(
                "narrow({axis}, {start}, {len}) of an axis of {dim} elements"
            )));
        }
        let offset = start
            .checked_mul(self.strides[axis])
            .and_then(|o| o.checked_add(self.offset))
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "narrow({axis}, {start}, {len}): the offset overflows"
                ))
            })?;
        let mut t = self.clone();
        t.offset = offset;
        t.shape[axis] = len;
        Ok(t)
    }

    /// Strides of the tensor's rank ([`Error::ShapeMismatch`] otherwise).
    fn check_rank(&self) -> Result<()> {
        if self.strides.len() != self.shape.len() {
            return Err(Error::ShapeMismatch {
                expected: self.shape.clone(),
                got: self.strides.clone(),
            });
        }
        Ok(())
    }

    /// Reads the tensor back in row-major order (syncs with the device).
    ///
    /// # Panics
    ///
    /// Where [`DeviceTensor::try_to_vec`] fails: `E` is not the tensor's dtype, or the view
    /// fails [`DeviceTensor::check`].
    pub fn to_vec<E: Element>(&self, client: &ComputeClient<R>) -> Vec<E> {
        match self.try_to_vec(client) {
            Ok(v) => v,
            Err(e) => panic!("to_vec: {e}"),
        }
    }

    /// [`DeviceTensor::to_vec`], with an [`Error`] for the wrong element type or a view that
    /// fails [`DeviceTensor::check`].
    pub fn try_to_vec<E: Element>(&self, client: &ComputeClient<R>) -> Result<Vec<E>> {
        if E::DTYPE != self.dtype {
            return Err(Error::UnsupportedDType {
                dtype: E::DTYPE,
                reason: format!("the tensor holds {}", self.dtype),
            });
        }
        self.check()?;
        let bytes = client.read_one_unchecked(self.handle.clone());
        let whole = bytes.len() / E::DTYPE.size() * E::DTYPE.size();
        let all: Vec<E> = bytemuck::pod_collect_to_vec(&bytes[..whole]);
        if self.is_contiguous() {
            return all
                .get(..self.num_elements())
                .map(<[E]>::to_vec)
                .ok_or(Error::OutOfBounds {
                    what: "a tensor",
                    needed: self.num_elements() * E::DTYPE.size(),
                    available: whole,
                });
        }
        crate::cpu::gather(&all, &self.shape, &self.strides, self.offset)
    }
}
