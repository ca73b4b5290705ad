//! `torch.unique(x, sorted=True, return_inverse, return_counts)` on the device: a stable sort
//! of the flattened keys with their positions ([`crate::sort_with_indices`]), runs of equal
//! sorted keys ([`crate::unique_consecutive`]), and the run index of each sorted key
//! scattered back through the sort permutation for the inverse.
//!
//! The output is always sorted ascending (as torch on CUDA). Key types: those the sort takes.
//! NaN sorts last and every NaN is its own entry (NaN != NaN, as torch); `-0.0 == 0.0` (one
//! entry, the value of its first sorted occurrence: the first zero of the input).

use crate::select::read_count;
use crate::sort::{sort_with_indices, IndexType, SortOptions};
use crate::tensor::contiguous_strides;
use crate::{unique_consecutive, DType, DeviceTensor, Error, Result, UniqueConsecutive, Workspace};
use cubecl::prelude::*;
use cubeprim_kernels::device::scatter::scatter_by_index;

/// Units per cube of the inverse scatter.
const THREADS: u32 = 256;

/// Sorted unique values of `x` (any rank, contiguous; or 1-D with any stride), with the count
/// of each (`return_counts`) and, for every element of `x`, the index of its value
/// (`return_inverse`, shaped like `x`). Counts and inverse use the index dtype (i64 where the
/// runtime has it, else i32). Reads the number of unique values back once (one host sync).
/// NaN sorts last and every NaN is its own value; `-0.0` and `+0.0` are one value. The
/// run-length family's example is on [`reduce_by_key`](crate::reduce_by_key): `unique` is
/// [`unique_consecutive`] of the keys sorted by [`sort_with_indices`].
///
/// # Errors
///
/// As [`unique_unsized`].
pub fn unique<R: Runtime>(
    client: &ComputeClient<R>,
    x: &DeviceTensor<R>,
    return_inverse: bool,
    return_counts: bool,
    ws: &mut Workspace<R>,
) -> Result<UniqueConsecutive<R>> {
    let mut u = unique_unsized(client, x, return_inverse, return_counts, ws)?;
    let k = read_count(client, &u.count);
    u.values = u.values.narrow(0, 0, k)?;
    u.counts = u.counts.map(|c| c.narrow(0, 0, k)).transpose()?;
    Ok(u)
}

/// [`unique`] without the host read: `values` and `counts` are sized for every element of `x`
/// (their first `count[0]` elements are the result), the number of unique values stays on the
/// device in `count`, and `inverse` is complete. No host sync.
///
/// # Errors
///
/// [`Error::Unsupported`] for an N-d view that is not contiguous or more than 2^32 - 1
/// elements; [`Error::UnsupportedDType`] for a key type the sort does not take (or the runtime
/// lacks); the argument checks of every call ([`Error::ShapeMismatch`], [`Error::TooLarge`],
/// [`Error::OutOfBounds`], [`Error::InvalidArgument`]); [`Error::BufferTooLarge`],
/// [`Error::ScratchTooSmall`] or [`Error::WorkspaceMismatch`] from `ws`.
pub fn unique_unsized<R: Runtime>(
    client: &ComputeClient<R>,
    x: &DeviceTensor<R>,
    return_inverse: bool,
    return_counts: bool,
    ws: &mut Workspace<R>,
) -> Result<UniqueConsecutive<R>> {
    crate::validate::input(client, "the input", x)?;
    let n = x.num_elements();
    if n > u32::MAX as usize {
        return Err(Error::Unsupported(format!(
            "{n} elements: unique takes at most 2^32 - 1"
        )));
    }
    let stride = match (x.rank(), x.is_contiguous()) {
        (1, _) => x.strides[0],
        (_, true) => 1,
        _ => {
            return Err(Error::Unsupported(
                "unique flattens its input: give a contiguous tensor (or a 1-D view)".into(),
            ))
        }
    };
    let (stride, offset) = if n == 0 { (1, 0) } else { (stride, x.offset) };
    let flat = DeviceTensor::from_parts(x.handle.clone(), vec![n], vec![stride], offset, x.dtype);
    let (sorted, perm) = if n == 0 {
        (flat.clone(), DeviceTensor::empty(client, &[0], DType::U32))
    } else {
        sort_with_indices(client, &flat, IndexType::U32, SortOptions::default(), ws)?
    };
    let mut u = unique_consecutive(client, &sorted, n, return_inverse, return_counts, ws)?;
    if let Some(inv_sorted) = u.inverse.take() {
        let inv = DeviceTensor::try_empty(client, &[n], inv_sorted.dtype)?;
        if n > 0 {
            scatter(client, &inv_sorted, &perm, &inv, n);
        }
        let mut inv = inv;
        inv.shape = x.shape.clone();
        inv.strides = contiguous_strides(&x.shape);
        u.inverse = Some(inv);
    }
    Ok(u)
}

/// `out[perm[i]] = src[i]` for `i < n` (`src`, `out` of the index dtype).
fn scatter<R: Runtime>(
    client: &ComputeClient<R>,
    src: &DeviceTensor<R>,
    perm: &DeviceTensor<R>,
    out: &DeviceTensor<R>,
    n: usize,
) {
    let cubes = crate::sort::SortPlan::cube_count((n as u32).div_ceil(THREADS));
    let dim = CubeDim::new_1d(THREADS);
    // SAFETY: `src`, `perm` and `out` hold `n` elements and `perm` is a permutation of
    // `0..n` (the sort's), so every write is in bounds.
    unsafe {
        let a = |t: &DeviceTensor<R>| ArrayArg::from_raw_parts(t.handle.clone(), n);
        match src.dtype {
            DType::I64 => scatter_by_index::launch_unchecked::<i64, R>(
                client,
                cubes,
                dim,
                a(src),
                a(perm),
                a(out),
                n as u32,
            ),
            _ => scatter_by_index::launch_unchecked::<i32, R>(
                client,
                cubes,
                dim,
                a(src),
                a(perm),
                a(out),
                n as u32,
            ),
        }
    }
}
