//! Plain data for the single-pass look-back kernels over flat data (select, run-length): tile
//! shape, vector width, look-back constants and the state they need.

use crate::count::Len;
use crate::scan::{SPINS, WINDOWS};
use crate::tuning::Policy;
use crate::{DType, DeviceTensor, Error, Result};
use cubecl::prelude::*;
use cubeprim_kernels::device::lookback::lookback_shared_bytes;
use cubeprim_kernels::device::select::{scan_shared_bytes, PassConfig};
use cubeprim_kernels::device::single_pass::LookbackConfig;
use cubeprim_kernels::device::tile_state::words_per_tile;

/// Units per cube of the single-pass kernels.
pub const THREADS: u32 = 256;
/// Predecessors read per look-back round (shared-memory variant).
const WINDOW: u32 = 32;

/// What a single-pass plan reads of the device: shared memory per cube, units per cube, and
/// the plane operations (and widest plane) its look-back and scans use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassLimits {
    /// Shared memory a cube may declare, in bytes.
    pub shared: usize,
    /// Units a cube may have.
    pub max_units: u32,
    /// The kernels use plane operations.
    pub plane_ops: bool,
    /// The widest plane (1..=64).
    pub plane_max: u32,
}

impl PassLimits {
    /// The limits of `client`'s device, without overrides.
    pub fn of<R: Runtime>(client: &ComputeClient<R>) -> Self {
        Self::from_policy(&Policy::default_of(client))
    }

    /// The limits a [`Policy`] gives: its device's, with its tuning's plane operations.
    pub fn from_policy(p: &Policy) -> Self {
        PassLimits {
            shared: p.profile.max_shared_bytes,
            max_units: p.profile.max_units_per_cube,
            plane_ops: p.plane_ops(crate::PlaneOps::Auto),
            plane_max: p.profile.plane_width_max.clamp(1, 64),
        }
    }

    /// Shared memory of a pass of `threads` units besides its staged tile: the cube-wide scans
    /// ([`scan_shared_bytes`]) and the look-back ([`lookback_shared_bytes`]) of an
    /// accumulator of `acc_bytes`, and the 1-element dummies of the arrays a variant leaves
    /// out.
    pub fn pass_shared_bytes(&self, threads: u32, acc_bytes: usize) -> usize {
        scan_shared_bytes(threads, acc_bytes)
            + lookback_shared_bytes(WINDOW, WINDOWS, self.plane_ops, self.plane_max, acc_bytes)
            + 64
    }
}

/// A planned single-pass launch.
#[derive(Debug, Clone)]
pub(crate) struct Pass {
    /// Elements per vector.
    pub vec: usize,
    pub cfg: PassConfig,
    /// Tiles covering the capacity.
    pub tiles: u32,
    /// Look-back state bytes.
    pub state_bytes: usize,
}

impl Pass {
    /// `capacity` elements of buffers whose element sizes are `sizes`; the look-back carries
    /// `acc_bytes` (and an index when `indexed`). `stage_bytes` > 0: the selection is staged
    /// in shared memory, that many bytes per element (the tile shrinks to fit).
    /// `packed_flags`: the flags are bytes, read four to a word ([`PassConfig::packed_flags`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        policy: &Policy,
        capacity: usize,
        sizes: &[usize],
        device_len: bool,
        acc_bytes: usize,
        indexed: bool,
        stage_bytes: usize,
        packed_flags: bool,
    ) -> Result<Self> {
        let mut vec = vector_width(capacity, sizes);
        let limits = PassLimits::from_policy(policy);
        let shared_limit = limits.shared;
        // What the scans and look-back take beside the staged selection, at least the 12 KiB
        // the tiles were tuned with (more with 64-wide planes and 8-byte accumulators).
        let reserve = limits.pass_shared_bytes(THREADS, acc_bytes).max(12 * 1024);
        let limit = shared_limit.saturating_sub(reserve);
        let budget = (32 * 1024).min(limit);
        // Byte flags are read in whole vectors of words: four vectors per unit at least.
        let min_vpt = if packed_flags { 4 } else { 1 };
        let staged = |vec: usize, vpt: u32| (THREADS * vpt) as usize * vec * stage_bytes;
        let mut vpt = max_vpt(vec);
        loop {
            while stage_bytes > 0 && vpt > min_vpt && staged(vec, vpt) > budget {
                vpt /= 2;
            }
            // Where the fewest vectors per unit still overflow (byte flags, 32 KiB of shared
            // memory as on lavapipe and Metal, wide keys and values), narrower vectors shrink
            // the tile further; any narrower width divides the capacity too.
            if staged(vec, vpt) <= limit || vec == 1 {
                break;
            }
            vec /= 2;
            vpt = max_vpt(vec);
        }
        if staged(vec, vpt) > limit {
            return Err(Error::Unsupported(format!(
                "the compaction tile does not fit in {shared_limit} bytes of shared memory"
            )));
        }
        Self::with_tile(
            policy,
            capacity,
            vec,
            THREADS,
            vpt,
            device_len,
            acc_bytes,
            indexed,
            stage_bytes > 0,
            packed_flags,
        )
    }

    /// A pass of `threads` units of `vpt` vectors of `vec` elements (`staged`: see
    /// [`PassConfig::staged`]; the caller checked that the tile fits in shared memory).
    #[allow(clippy::too_many_arguments)]
    pub fn with_tile(
        policy: &Policy,
        capacity: usize,
        vec: usize,
        threads: u32,
        vpt: u32,
        device_len: bool,
        acc_bytes: usize,
        indexed: bool,
        staged: bool,
        packed_flags: bool,
    ) -> Result<Self> {
        let PassLimits {
            plane_ops,
            plane_max,
            ..
        } = PassLimits::from_policy(policy);
        let cfg = PassConfig {
            threads,
            vectors_per_thread: vpt,
            plane_ops,
            lookback: LookbackConfig {
                window: WINDOW,
                windows: WINDOWS,
                spins: policy.lookback_spins(SPINS),
                plain_reads: policy.plain_reads(),
                plane_max,
                ordered: policy.ordered_tiles(),
            },
            device_len,
            staged,
            packed_flags,
            prefetch: policy.select_prefetch(),
        };
        let tile = (threads * vpt) as usize * vec;
        let tiles = u32::try_from(capacity.div_ceil(tile).max(1))
            .map_err(|_| Error::Unsupported(format!("{capacity} elements are too many")))?;
        if capacity >= u32::MAX as usize - tile {
            return Err(Error::Unsupported(format!(
                "{capacity} elements do not fit 32-bit indexing"
            )));
        }
        let state_bytes = 4 * (1 + tiles as usize * words_per_tile(acc_bytes, indexed));
        Ok(Self {
            vec,
            cfg,
            tiles,
            state_bytes,
        })
    }

    /// The cube count (2-D past 65535 cubes) and the number of cubes it launches.
    pub fn cube_count(&self) -> (CubeCount, u32) {
        let (x, y) = crate::device::grid_2d(self.tiles);
        (CubeCount::Static(x, y, 1), x * y)
    }
}

/// Elements per vector of a pass over `capacity` elements of buffers of element sizes `sizes`:
/// the widest vector of at most 16 bytes that divides the capacity.
pub(crate) fn vector_width(capacity: usize, sizes: &[usize]) -> usize {
    let widest = sizes.iter().copied().max().unwrap_or(4);
    [4usize, 2, 1]
        .into_iter()
        .find(|&w| w * widest <= 16 && capacity.is_multiple_of(w))
        .unwrap_or(1)
}

/// The most vectors per unit for vectors of `vec` elements (a unit's flags fit a `u32`).
pub(crate) fn max_vpt(vec: usize) -> u32 {
    (32 / vec as u32).min(16)
}

/// The device length buffer of `len` (the dummy for a host length) and the host bound.
pub(crate) fn len_parts<R: Runtime>(
    len: Len<'_, R>,
    dummy: &cubecl::server::Handle,
) -> (cubecl::server::Handle, u32) {
    match len {
        Len::Host(n) => (dummy.clone(), n as u32),
        Len::Device { count, capacity } => (count.handle.clone(), capacity as u32),
    }
}

/// [`crate::supports_dtype`] as a typed error.
pub(crate) fn check_supported<R: Runtime>(client: &ComputeClient<R>, dtype: DType) -> Result<()> {
    crate::scan::supports_dtype(client, dtype)
        .then_some(())
        .ok_or_else(|| Error::UnsupportedDType {
            dtype,
            reason: format!("the {} runtime does not support it", R::name(client)),
        })
}

/// Checks an input of a flat op: supported dtype, contiguous, at least `n` elements.
pub(crate) fn check_input<R: Runtime>(
    client: &ComputeClient<R>,
    t: &DeviceTensor<R>,
    n: usize,
) -> Result<()> {
    check_supported(client, t.dtype)?;
    check_layout(t, n)
}

/// [`check_input`] of flags: byte flags (`U8`) too, on every runtime (read as words).
pub(crate) fn check_flags<R: Runtime>(
    client: &ComputeClient<R>,
    t: &DeviceTensor<R>,
    n: usize,
) -> Result<()> {
    if t.dtype != DType::U8 {
        check_supported(client, t.dtype)?;
    }
    check_layout(t, n)
}

/// Contiguous, at least `n` elements.
pub(crate) fn check_layout<R: Runtime>(t: &DeviceTensor<R>, n: usize) -> Result<()> {
    if !t.is_contiguous() {
        return Err(Error::Unsupported(
            "this op reads contiguous tensors (offset 0, row-major)".into(),
        ));
    }
    if t.num_elements() < n {
        return Err(Error::LengthMismatch {
            expected: n,
            got: t.num_elements(),
        });
    }
    Ok(())
}

/// Checks an output buffer: `dtype`, contiguous, room for `n` elements.
pub(crate) fn check_output<R: Runtime>(t: &DeviceTensor<R>, n: usize, dtype: DType) -> Result<()> {
    if t.dtype != dtype {
        return Err(Error::UnsupportedDType {
            dtype: t.dtype,
            reason: format!("this output must be {dtype}"),
        });
    }
    if !t.is_contiguous() {
        return Err(Error::Unsupported("outputs must be contiguous".into()));
    }
    if t.num_elements() < n {
        return Err(Error::OutputTooSmall {
            needed: n,
            got: t.num_elements(),
        });
    }
    Ok(())
}

/// Checks a `u32[1]` count buffer.
pub(crate) fn check_count<R: Runtime>(t: &DeviceTensor<R>) -> Result<()> {
    check_output(t, 1, DType::U32)
}

/// Runs `$body` with `$T` bound to a kernel type of the dtype's size (data that is only moved).
macro_rules! with_bits {
    ($dtype:expr, |$T:ident| $body:expr) => {{
        match $dtype.size() {
            2 => {
                type $T = half::f16;
                $body
            }
            4 => {
                type $T = u32;
                $body
            }
            _ => {
                type $T = u64;
                $body
            }
        }
    }};
}

pub(crate) use with_bits;

/// Runs `$body` with `$F` bound to the kernel type of the flags and `$G` to the look-back
/// carry that counts them: `u32` words and the packed count for byte flags (four flags to a
/// word, [`PassConfig::packed_flags`]), else the dtype's own type and the plain count.
macro_rules! with_flags {
    ($dtype:expr, |$F:ident, $G:ident| $body:expr) => {{
        if $dtype == $crate::DType::U8 {
            type $F = u32;
            type $G = cubeprim_kernels::device::select::CountCarry<true>;
            $body
        } else {
            type $G = cubeprim_kernels::device::select::CountCarry<false>;
            $crate::dispatch::with_dtype!($dtype, |$F, _FlagAcc| $body)
        }
    }};
}

pub(crate) use with_flags;

/// Writes 0 to a `u32[1]` count (the result of an op over no elements).
pub(crate) fn zero_count<R: Runtime>(client: &ComputeClient<R>, count: &DeviceTensor<R>) {
    cubeprim_kernels::device::fill::fill_u32::launch::<R>(
        client,
        CubeCount::Static(1, 1, 1),
        CubeDim::new_1d(32),
        unsafe { ArrayArg::from_raw_parts(count.handle.clone(), 1) },
        0u32,
    );
}
