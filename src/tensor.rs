use crate::{DType, Element};
use cubecl::prelude::*;
use cubecl::server::Handle;

/// A strided view of device memory: the small tensor type cubeprim's functions take and return.
/// `strides` and `offset` count elements. Outputs are always contiguous (row-major).
#[derive(Clone, Debug)]
pub struct DeviceTensor<R: Runtime> {
    pub handle: Handle,
    pub shape: Vec<usize>,
    pub strides: Vec<usize>,
    pub offset: usize,
    pub dtype: DType,
    _r: std::marker::PhantomData<R>,
}

/// Row-major strides of `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1].max(1);
    }
    s
}

impl<R: Runtime> DeviceTensor<R> {
    /// Wraps existing device memory. `handle` must hold every element the view reaches.
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

    /// Uploads `data` as a contiguous tensor of `shape`.
    pub fn from_slice<E: Element>(client: &ComputeClient<R>, data: &[E], shape: &[usize]) -> Self {
        assert_eq!(
            data.len(),
            shape.iter().product::<usize>(),
            "data does not fill the shape"
        );
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
        Self::from_parts(
            handle,
            shape.to_vec(),
            contiguous_strides(shape),
            0,
            E::DTYPE,
        )
    }

    /// An uninitialised contiguous tensor.
    pub fn empty(client: &ComputeClient<R>, shape: &[usize], dtype: DType) -> Self {
        let n: usize = shape.iter().product();
        // Bytes are read as vectors of words: whole 16-byte vectors.
        let handle = client.empty((n.max(1) * dtype.size()).next_multiple_of(16));
        Self::from_parts(handle, shape.to_vec(), contiguous_strides(shape), 0, dtype)
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }
    pub fn num_elements(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn is_contiguous(&self) -> bool {
        self.offset == 0 && self.strides == contiguous_strides(&self.shape)
    }

    /// The same memory with two axes swapped (no copy).
    pub fn transpose(&self, a: usize, b: usize) -> Self {
        let mut t = self.clone();
        t.shape.swap(a, b);
        t.strides.swap(a, b);
        t
    }

    /// A view of `len` elements starting at `start` along `axis` (no copy).
    pub fn narrow(&self, axis: usize, start: usize, len: usize) -> Self {
        assert!(start + len <= self.shape[axis]);
        let mut t = self.clone();
        t.offset += start * self.strides[axis];
        t.shape[axis] = len;
        t
    }

    /// Reads the tensor back in row-major order (syncs with the device).
    pub fn to_vec<E: Element>(&self, client: &ComputeClient<R>) -> Vec<E> {
        assert_eq!(E::DTYPE, self.dtype, "to_vec with the wrong element type");
        let bytes = client.read_one_unchecked(self.handle.clone());
        let whole = bytes.len() / E::DTYPE.size() * E::DTYPE.size();
        let all: Vec<E> = bytemuck::pod_collect_to_vec(&bytes[..whole]);
        if self.is_contiguous() {
            return all[..self.num_elements()].to_vec();
        }
        crate::cpu::gather(&all, &self.shape, &self.strides, self.offset)
    }
}
