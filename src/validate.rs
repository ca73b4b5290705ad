//! The checks every entry point runs on its arguments before it allocates or launches: each
//! tensor well-formed and inside its memory ([`DeviceTensor::check`], sizes up to
//! [`crate::MAX_ELEMENTS`]) and no output sharing memory with an input or another output
//! ([`DeviceTensor::overlaps`]). Host-side, O(rank) per tensor.
//!
//! No kernel of the crate runs correctly in place: the look-back kernels (scan, select,
//! partition, run-length) re-read a predecessor's input when it is slow to publish, the sort's
//! passes scatter across the whole row, histogram zeroes its output first, and a device count
//! that is also written would change the length under the launch. Reading one tensor twice
//! (the same buffer as data and flags, say) is fine.

use crate::{DeviceTensor, Error, Result};
use cubecl::prelude::*;

/// A named tensor argument, if given.
pub(crate) type Arg<'a, R> = (&'static str, Option<&'a DeviceTensor<R>>);

/// Checks every tensor of `inputs` and `outputs` ([`input`]), then that no output overlaps an
/// input or another output ([`Error::Aliased`]).
pub(crate) fn args<R: Runtime>(
    client: &ComputeClient<R>,
    inputs: &[Arg<'_, R>],
    outputs: &[Arg<'_, R>],
) -> Result<()> {
    for &(what, t) in inputs.iter().chain(outputs) {
        if let Some(t) = t {
            input(client, what, t)?;
        }
    }
    for (i, &(out_name, out)) in outputs.iter().enumerate() {
        let Some(out) = out else { continue };
        for &(other, t) in inputs.iter().chain(&outputs[i + 1..]) {
            if t.is_some_and(|t| out.overlaps(t)) {
                return Err(Error::Aliased {
                    first: out_name,
                    second: other,
                });
            }
        }
    }
    Ok(())
}

/// Checks one tensor: [`DeviceTensor::check`], and a handle that starts on the device's
/// binding alignment ([`alignment`]).
pub(crate) fn input<R: Runtime>(
    client: &ComputeClient<R>,
    what: &'static str,
    t: &DeviceTensor<R>,
) -> Result<()> {
    t.check_as(what)?;
    let start = t.handle.offset_start.unwrap_or(0);
    let align = alignment(client);
    if !start.is_multiple_of(align) {
        return Err(Error::InvalidArgument(format!(
            "{what}: its handle starts {start} bytes into its memory, not a multiple of the \
             device's {align}-byte binding alignment"
        )));
    }
    Ok(())
}

/// Where a handle cut from a buffer (`Handle::offset_start`) may start. wgpu refuses to bind a
/// storage buffer at an offset off its `min_storage_buffer_offset_alignment` (cubecl's
/// `properties().memory.alignment` there) — its device thread panics then, which fails every
/// later call of the process. CUDA binds any address, and cubecl's own handles start on
/// 256-byte steps, not on its 512-byte memory alignment (`create_from_slice` gave a handle
/// 7 424 bytes in on an H100); there only the kernels' 16-byte vector loads need an aligned
/// start.
pub(crate) fn alignment<R: Runtime>(client: &ComputeClient<R>) -> u64 {
    let align = client.properties().memory.alignment.max(1);
    if R::name(client) == "cuda" {
        align.min(16)
    } else {
        align
    }
}
