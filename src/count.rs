use crate::{DType, DeviceTensor, Error, Result};
use cubecl::prelude::*;

/// How many elements a device-wide op works on: a number known on the host, or a `u32` count
/// held on the device (the output count of an earlier select, say) together with a host-known
/// `capacity` that sizes the launch. With a device count, tiles past the count do nothing and
/// no host read happens, so ops chain with zero host syncs.
pub enum Len<'a, R: Runtime> {
    /// The length, known on the host.
    Host(usize),
    /// The length is `count[0]` (a `u32` tensor of one element); at most `capacity`.
    Device {
        /// The `u32[1]` tensor holding the length (at offset 0 of its buffer).
        count: &'a DeviceTensor<R>,
        /// The most the count can be: sizes the launch, and the buffers must hold it.
        capacity: usize,
    },
}

impl<R: Runtime> Clone for Len<'_, R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R: Runtime> Copy for Len<'_, R> {}

impl<'a, R: Runtime> Len<'a, R> {
    /// The largest length this can be: the launch is sized for it.
    pub fn capacity(&self) -> usize {
        match *self {
            Len::Host(n) => n,
            Len::Device { capacity, .. } => capacity,
        }
    }

    /// The device count, if any.
    pub fn device_count(&self) -> Option<&'a DeviceTensor<R>> {
        match *self {
            Len::Host(_) => None,
            Len::Device { count, .. } => Some(count),
        }
    }

    /// Checks that a device count is one `u32` and that `capacity` fits in `available`
    /// elements of the buffers it applies to.
    pub fn validate(&self, available: usize) -> Result<()> {
        if let Len::Device { count, .. } = *self {
            if count.dtype != DType::U32 {
                return Err(Error::UnsupportedDType {
                    dtype: count.dtype,
                    reason: "a device-resident count is a u32".into(),
                });
            }
            if count.num_elements() != 1 {
                return Err(Error::LengthMismatch {
                    expected: 1,
                    got: count.num_elements(),
                });
            }
            if count.offset != 0 {
                return Err(Error::Unsupported(
                    "a device-resident count must be the first element of its buffer".into(),
                ));
            }
        }
        if self.capacity() > available {
            return Err(Error::LengthMismatch {
                expected: available,
                got: self.capacity(),
            });
        }
        Ok(())
    }
}

impl<R: Runtime> From<usize> for Len<'_, R> {
    fn from(n: usize) -> Self {
        Len::Host(n)
    }
}
