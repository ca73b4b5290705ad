//! Device allocations within the runtime's limits.
//!
//! cubecl 0.10 has no fallible allocation: `ComputeClient::empty` of more bytes than the
//! runtime's largest buffer returns a handle at once, the allocation then panics on the
//! server's thread, and every later call on that client fails. So every buffer cubeprim
//! allocates is checked here first, and a size past the limit is a typed error.

use crate::{Error, Result};
use cubecl::prelude::*;
use cubecl::server::Handle;

/// The largest buffer the runtime of `client` allocates, in bytes: wgpu's
/// `max_storage_buffer_binding_size` (2 GiB − 4 or 4 GiB − 4 on most Vulkan drivers, 128 MiB
/// on some), a quarter of the device's memory on CUDA (cubecl's largest memory page).
pub fn max_buffer_bytes<R: Runtime>(client: &ComputeClient<R>) -> usize {
    let m = &client.properties().memory;
    let align = m.alignment.max(1);
    usize::try_from(m.max_page_size / align * align).unwrap_or(usize::MAX)
}

/// Checks that `bytes` fit one buffer of `client`'s runtime.
pub(crate) fn check_bytes<R: Runtime>(client: &ComputeClient<R>, bytes: usize) -> Result<()> {
    let max = max_buffer_bytes(client);
    // The allocator rounds requests up to its alignment.
    let align = client.properties().memory.alignment.max(1) as usize;
    match bytes.checked_next_multiple_of(align) {
        Some(b) if b <= max => Ok(()),
        _ => Err(Error::BufferTooLarge { bytes, max }),
    }
}

/// An uninitialised buffer of `bytes`, or [`Error::BufferTooLarge`].
pub(crate) fn empty<R: Runtime>(client: &ComputeClient<R>, bytes: usize) -> Result<Handle> {
    check_bytes(client, bytes)?;
    Ok(client.empty(bytes))
}

/// A buffer as a kernel binds it: its handle and the number of items the kernel may index.
#[derive(Clone)]
pub(crate) struct Buf {
    pub handle: Handle,
    pub len: usize,
}

impl Buf {
    pub fn new(handle: &Handle, len: usize) -> Self {
        Self {
            handle: handle.clone(),
            len,
        }
    }

    /// The launch argument.
    ///
    /// # Safety
    ///
    /// The kernel must index the buffer within `len` items.
    pub unsafe fn arg<R: Runtime>(&self) -> ArrayArg<R> {
        unsafe { ArrayArg::from_raw_parts(self.handle.clone(), self.len) }
    }
}
