//! Histogram (`torch.bincount(keys, minlength=bins)` restricted to `bins` bins) of `u32`,
//! `i32`, `u64` or `i64` keys on the device.
//!
//! Keys outside `[0, bins)` — negative keys too — are ignored. While the bins fit the
//! device's shared memory, each cube counts a bounded chunk of keys into private bins there
//! and adds its non-zero bins to the output with global atomics; more bins than that go
//! straight to global atomics. The output is zeroed first, so the result holds exactly this
//! call's counts. No scratch, no host sync; a device-resident [`Len`] counts only the keys
//! before `count[0]`.

use crate::select::plan::{check_input, check_layout, check_output, len_parts};
use crate::sort::SortPlan;
use crate::{DType, DeviceTensor, Error, Len, Result, Workspace};
use cubecl::prelude::*;
use cubeprim_kernels::device::fill::fill_u32;
use cubeprim_kernels::device::histogram::{histogram_global, histogram_shared};

/// Units per cube.
const THREADS: u32 = 256;
/// Keys per unit on the global-atomics path.
const GLOBAL_ITEMS: u32 = 16;
/// Keys one call counts: 2^32 less one chunk of the largest cube (256 units × 512 keys).
const MAX_KEYS: usize = (u32::MAX - (1 << 17)) as usize;

/// At most 2^31 - 1 bins (the kernels compare keys with the bin count as `i32`).
fn check_bins(bins: usize) -> Result<()> {
    if bins > i32::MAX as usize {
        return Err(Error::Unsupported(format!("{bins} bins: at most 2^31 - 1")));
    }
    Ok(())
}

/// Bytes of [`Workspace`] a histogram needs: none (kept for the uniform size-query API).
pub fn histogram_workspace_bytes(_bins: usize) -> usize {
    0
}

/// Shared-memory words the privatised path reserves for `bins` bins (a multiple of 256, so
/// few kernel variants are compiled), or `None` when they do not fit the device.
fn shared_bins<R: Runtime>(client: &ComputeClient<R>, bins: usize) -> Option<usize> {
    let words = bins.div_ceil(256) * 256;
    let max = client.properties().hardware.max_shared_memory_size;
    (words * 4 <= max).then_some(words)
}

/// Counts the keys of `keys` (`u32`, `i32`, `u64` or `i64`, contiguous; the first `len` of
/// them) equal to
/// each `b < bins` into `out` (`u32`, contiguous, at least `bins` elements; overwritten).
/// Keys outside `[0, bins)` are not counted. No scratch and no host sync; with a device
/// [`Len`], only the keys before `count[0]` are counted.
///
/// # Errors
///
/// [`Error::UnsupportedDType`] for keys of another type, an output that is not `u32` or a device
/// count that is not `u32`; [`Error::Unsupported`] for more than 2^31 - 1 bins, about 2^32 keys or
/// more, or a tensor that is not contiguous; [`Error::LengthMismatch`] for a capacity of `len` past
/// the keys; [`Error::OutputTooSmall`] for an output of fewer than `bins` elements;
/// [`Error::Aliased`] for an output that shares memory with the keys or the count; the argument
/// checks of every call ([`Error::ShapeMismatch`], [`Error::TooLarge`], [`Error::OutOfBounds`],
/// [`Error::InvalidArgument`]; see [`Error`]).
pub fn histogram_into<'a, R: Runtime>(
    client: &ComputeClient<R>,
    keys: &'a DeviceTensor<R>,
    bins: usize,
    len: impl Into<Len<'a, R>>,
    out: &DeviceTensor<R>,
    ws: &mut Workspace<R>,
) -> Result<()> {
    let len = len.into();
    crate::validate::args(
        client,
        &[("the keys", Some(keys)), ("the length", len.device_count())],
        &[("the output", Some(out))],
    )?;
    if !matches!(
        keys.dtype,
        DType::U32 | DType::I32 | DType::U64 | DType::I64
    ) {
        return Err(Error::UnsupportedDType {
            dtype: keys.dtype,
            reason: "histogram keys are u32, i32, u64 or i64".into(),
        });
    }
    // 64-bit keys are read as two u32 words each (no 64-bit arithmetic in the kernel).
    let wide = keys.dtype.size() == 8;
    check_bins(bins)?;
    len.validate(keys.num_elements())?;
    let cap = len.capacity();
    // Positions are 32-bit in the kernel: the last cube's chunk must not wrap past 2^32.
    if cap > MAX_KEYS {
        return Err(Error::Unsupported(format!(
            "{cap} keys: at most {MAX_KEYS} per call"
        )));
    }
    if wide {
        // Read as u32 words: no 64-bit support needed from the runtime.
        check_layout(keys, cap)?;
    } else {
        check_input(client, keys, cap)?;
    }
    check_output(out, bins, DType::U32)?;
    if bins == 0 {
        return Ok(());
    }
    let fill_cubes = (bins as u32).div_ceil(THREADS);
    fill_u32::launch::<R>(
        client,
        SortPlan::cube_count(fill_cubes),
        CubeDim::new_1d(THREADS),
        unsafe { ArrayArg::from_raw_parts(out.handle.clone(), bins) },
        0u32,
    );
    if cap == 0 {
        return Ok(());
    }
    let dummy = ws.dummy(client);
    let (len_h, n) = len_parts(len, &dummy);
    let device_len = len.device_count().is_some();
    let smem = shared_bins(client, bins);
    let items = match smem {
        Some(words) => (4 * words as u32 / THREADS).clamp(16, 512),
        None => GLOBAL_ITEMS,
    };
    let cubes = (cap as u64).div_ceil((THREADS * items) as u64) as u32;
    let count = SortPlan::cube_count(cubes);
    let dim = CubeDim::new_1d(THREADS);
    // SAFETY: `keys` holds `cap` elements (checked), `out` `bins`, the length one; every
    // access is bounded by them in the kernel. Keys are read as their u32 words.
    unsafe {
        let words = if wide { 2 * cap } else { cap };
        let k = ArrayArg::from_raw_parts(keys.handle.clone(), words);
        let o = ArrayArg::from_raw_parts(out.handle.clone(), bins);
        let l = ArrayArg::from_raw_parts(len_h, 1);
        match smem {
            Some(words) => histogram_shared::launch_unchecked::<R>(
                client,
                count,
                dim,
                k,
                o,
                l,
                n,
                bins as u32,
                items,
                words,
                device_len,
                wide,
            ),
            None => histogram_global::launch_unchecked::<R>(
                client,
                count,
                dim,
                k,
                o,
                l,
                n,
                bins as u32,
                items,
                device_len,
                wide,
            ),
        }
    }
    Ok(())
}

/// `torch.bincount(keys, minlength=bins)` restricted to `bins` bins: how many of the first
/// `len` keys (`u32`, `i32`, `u64` or `i64`, contiguous) equal each `b < bins`, in a fresh
/// `u32[bins]`; keys outside `[0, bins)`, negative ones too, are not counted. No host sync.
/// See [`reduce_by_key`](crate::reduce_by_key) for an example.
///
/// # Errors
///
/// As [`histogram_into`].
pub fn histogram<'a, R: Runtime>(
    client: &ComputeClient<R>,
    keys: &'a DeviceTensor<R>,
    bins: usize,
    len: impl Into<Len<'a, R>>,
    ws: &mut Workspace<R>,
) -> Result<DeviceTensor<R>> {
    // Before the output is allocated.
    crate::validate::input(client, "the keys", keys)?;
    check_bins(bins)?;
    let out = DeviceTensor::try_empty(client, &[bins], DType::U32)?;
    histogram_into(client, keys, bins, len, &out, ws)?;
    Ok(out)
}
