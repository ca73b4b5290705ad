//! Plain data chosen on the host: how a scan is cut into rows, vectors and tiles.

use super::{PlaneOps, ScanAlgorithm, ScanOptions};
use crate::sort::to_u32;
use crate::tuning::{Policy, Tuning};
use crate::{DType, Error, Result};
use cubecl::prelude::*;
use cubeprim_kernels::cube::TileConfig;
use cubeprim_kernels::device::lookback::lookback_shared_bytes;
use cubeprim_kernels::device::single_pass::LookbackConfig;
use cubeprim_kernels::device::tile_state::words_per_tile;
use cubeprim_kernels::device::ScanMode;

/// Units and vectors per unit of the tile used for long rows. Measured on the H200 (1-D 2^28
/// f32 cumsum, staged, one run): 192 x 16 0.607 ms, 256 x 12 0.628, 128 x 24 0.663, 128 x 32
/// 0.747; in an earlier run: 256 x 16 0.622, 384 x 8 0.648, 768 x 8 0.642, 512 x 8 0.711
/// (BENCHMARKS.md at 52581a0, 2026-11-30 (H200), "long tile 192 × 16" and the tile sweeps of
/// "staged scan, byte masks").
#[doc(hidden)]
pub const LONG_TILE: (u32, u32) = (192, 16);
/// Tiles for rows that fit in one, smallest first: (units, vectors per unit).
const SHORT_TILES: [(u32, u32); 7] = [
    (32, 1),
    (32, 2),
    (64, 2),
    (128, 2),
    (128, 4),
    (256, 4),
    (256, 8),
];
/// Predecessors read per look-back round.
const WINDOW: u32 = 32;
/// Plane-wide windows the plane look-back may walk over before waiting for a prefix.
#[doc(hidden)]
pub const WINDOWS: u32 = 8;
/// Look-back rounds a cube waits for a silent predecessor before reducing its tile itself.
#[doc(hidden)]
pub const SPINS: u32 = 16;
/// [`SPINS`] on CUDA, whose resident cubes all make progress: a longer wait seldom ends in a
/// redundant fallback reduction (H200, 1-D 2^28 f32, tile 256 x 8 staged: 0.715 ms with 16
/// rounds, 0.696 ms with 256; BENCHMARKS.md at 52581a0, "Development runs", 2026-11-30 (H200)).
#[doc(hidden)]
pub const SPINS_CUDA: u32 = 256;

/// What the planner needs to know of a device: read from a cubecl client, or given for a
/// device without one (candle's).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Plane (warp / SIMD-group) width; the widest where it varies.
    pub plane_width: u32,
    /// Shared (threadgroup) memory a cube may use.
    pub max_shared_bytes: usize,
    /// Plane operations are available ([`PlaneOps::Auto`] uses them then).
    pub plane_ops: bool,
    /// A CUDA device: the look-back polls with plain loads (atomic loads are read-modify-writes
    /// there) and waits longer ([`SPINS_CUDA`]).
    pub cuda: bool,
    /// Asynchronous global-to-shared copies (CUDA sm_80+, cubecl's `features.copy_async`):
    /// staged look-back tiles of the input's own type load through them.
    pub copy_async: bool,
    /// Look-back tile ids from the cube position ([`Policy::ordered_tiles`]).
    pub ordered_tiles: bool,
}

impl DeviceLimits {
    /// Every CUDA GPU cubecl targets: 32-wide warps, 48 KiB of shared memory without opting in.
    pub const CUDA: Self = Self {
        plane_width: 32,
        max_shared_bytes: 48 * 1024,
        plane_ops: true,
        cuda: true,
        // Not assumed: candle's device may predate sm_80.
        copy_async: false,
        ordered_tiles: true,
    };
    /// Apple GPUs: 32-wide SIMD groups, 32 KiB of threadgroup memory.
    pub const METAL: Self = Self {
        plane_width: 32,
        max_shared_bytes: 32 * 1024,
        plane_ops: true,
        cuda: false,
        copy_async: false,
        ordered_tiles: false,
    };

    /// The limits of `client`'s device, without overrides.
    pub fn of<R: Runtime>(client: &ComputeClient<R>) -> Self {
        Self::from_policy(&Policy::default_of(client))
    }

    /// The limits a [`Policy`] gives: its device's, with its tuning's plane operations and
    /// tile order.
    pub fn from_policy(p: &Policy) -> Self {
        Self {
            plane_width: p.profile.plane_width_max,
            max_shared_bytes: p.profile.max_shared_bytes,
            plane_ops: p.plane_ops(PlaneOps::Auto),
            cuda: p.profile.is_cuda(),
            copy_async: p.profile.copy_async,
            ordered_tiles: p.ordered_tiles(),
        }
    }
}

/// The resolved algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    SingleTile,
    Lookback,
    ReduceThenScan,
}

/// Everything a scan launch needs, derived from shape, strides and options.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct ScanPlan {
    pub rows: usize,
    /// Elements along the axis.
    pub n: usize,
    /// Elements per vector.
    pub vec: usize,
    pub n_vec: u32,
    /// `[rank, shape.., in_strides.., out_strides.., in_offset]` of the other axes, in vectors.
    pub layout: Vec<u32>,
    pub in_stride: u32,
    pub out_stride: u32,
    pub cfg: TileConfig,
    pub tiles_per_row: u32,
    pub num_tiles: u32,
    pub route: Route,
    /// The look-back's constants (used where `route == Lookback`): plain polling loads on CUDA
    /// only (there atomic loads are RMWs), tile ids by position where
    /// [`Policy::ordered_tiles`] says so.
    pub lookback: LookbackConfig,
    /// Look-back state bytes (0 unless `route == Lookback`).
    pub state_bytes: usize,
    /// The row length is a count on the device (`n` is then its capacity).
    pub device_len: bool,
}

/// Elements in one tile of a long-row scan of `dtype` (vectorised by `vec`).
#[doc(hidden)]
pub fn tile_len(vec: usize) -> usize {
    (LONG_TILE.0 * LONG_TILE.1) as usize * vec
}

impl ScanPlan {
    #[allow(clippy::too_many_arguments)]
    pub fn new<R: Runtime>(
        client: &ComputeClient<R>,
        shape: &[usize],
        strides: &[usize],
        offset: usize,
        axis: usize,
        dtype: DType,
        indexed: bool,
        opts: ScanOptions,
    ) -> Result<Self> {
        Self::with_len(
            client,
            &Tuning::default(),
            shape,
            strides,
            offset,
            axis,
            dtype,
            indexed,
            opts,
            false,
        )
    }

    /// [`ScanPlan::new`]; with `device_len`, the length along the axis is read from the device
    /// at run time and `shape[axis]` is its capacity (no vectorisation then: the count need
    /// not be a multiple of the vector width); planned under `tuning`.
    #[allow(clippy::too_many_arguments)]
    pub fn with_len<R: Runtime>(
        client: &ComputeClient<R>,
        tuning: &Tuning,
        shape: &[usize],
        strides: &[usize],
        offset: usize,
        axis: usize,
        dtype: DType,
        indexed: bool,
        opts: ScanOptions,
        device_len: bool,
    ) -> Result<Self> {
        let limits = DeviceLimits::from_policy(&Policy::of(client, tuning));
        Self::with_limits(
            limits, shape, strides, offset, axis, dtype, indexed, opts, device_len,
        )
    }

    /// [`ScanPlan::with_len`] for a device described by its [`DeviceLimits`] instead of a
    /// client (candle's devices have none).
    #[allow(clippy::too_many_arguments)]
    pub fn with_limits(
        limits: DeviceLimits,
        shape: &[usize],
        strides: &[usize],
        offset: usize,
        axis: usize,
        dtype: DType,
        indexed: bool,
        opts: ScanOptions,
        device_len: bool,
    ) -> Result<Self> {
        let cuda = limits.cuda;
        if strides.len() != shape.len() {
            return Err(Error::ShapeMismatch {
                expected: shape.to_vec(),
                got: strides.to_vec(),
            });
        }
        if axis >= shape.len() {
            return Err(Error::AxisOutOfRange {
                axis: isize::try_from(axis).unwrap_or(isize::MAX),
                rank: shape.len(),
            });
        }
        crate::tensor::check_shape(shape)?;
        if let Some(t) = opts.tuning {
            t.check()?;
        }
        let n = shape[axis];
        let rows: usize = shape
            .iter()
            .enumerate()
            .filter(|(d, _)| *d != axis)
            .map(|(_, s)| s)
            .product();
        let out_strides = crate::tensor::contiguous_strides(shape);
        let others: Vec<usize> = (0..shape.len()).filter(|&d| d != axis).collect();

        // Vector width: the axis must be unit-stride in input and output, and every other
        // offset a multiple of the width.
        let max_vec = (16 / dtype.size()).clamp(1, 4);
        let mut vec = 1;
        if strides[axis] == 1 && out_strides[axis] == 1 && !device_len {
            for w in [4usize, 2] {
                if w <= max_vec
                    && n.is_multiple_of(w)
                    && offset.is_multiple_of(w)
                    && others
                        .iter()
                        .all(|&d| strides[d].is_multiple_of(w) || shape[d] == 1)
                {
                    vec = w;
                    break;
                }
            }
        }
        let n_vec = to_u32(n / vec, "row length")?;
        let mut layout = vec![others.len() as u32];
        for &d in &others {
            layout.push(to_u32(shape[d], "dimension")?);
        }
        for &d in &others {
            layout.push(to_u32(strides[d] / vec, "stride")?);
        }
        for &d in &others {
            layout.push(to_u32(out_strides[d] / vec, "stride")?);
        }
        layout.push(to_u32(offset / vec, "offset")?);

        let plane_ops = match opts.plane_ops {
            PlaneOps::Auto => limits.plane_ops,
            PlaneOps::Force => true,
            PlaneOps::Off => false,
        };
        let plane_max = limits.plane_width.max(1);
        let min_threads = if plane_ops { plane_max.max(32) } else { 32 };
        if plane_ops && (plane_max > 256 || 256 % plane_max != 0) {
            return Err(Error::Unsupported(format!("plane width {plane_max}")));
        }
        if let Some(t) = opts.tuning {
            if t.threads < min_threads || (plane_ops && !t.threads.is_multiple_of(plane_max)) {
                return Err(Error::Unsupported(format!(
                    "a tile of {} units on a device whose planes are {plane_max} wide",
                    t.threads
                )));
            }
        }

        if indexed && opts.algorithm == ScanAlgorithm::ReduceThenScan {
            return Err(Error::Unsupported(
                "reduce-then-scan does not track indices; use DecoupledLookback".into(),
            ));
        }
        // Shared memory of a kernel with tile (threads, vpt): the tile scan, the look-back,
        // the ticket, and slack for the alignment of each array.
        let acc = dtype.accumulator_size();
        let windows = opts.tuning.map(|t| t.windows).unwrap_or(WINDOWS);
        let plane_max_k = plane_max.min(64);
        let shared_limit = limits.max_shared_bytes;
        let footprint_staged = |threads: u32, vpt: u32, stage: bool| {
            let cfg = TileConfig {
                threads,
                vectors_per_thread: vpt,
                reverse: false,
                exclusive: false,
                indexed,
                plane_ops,
                stage,
                // The copies' barrier counted whether or not they are asked for, so whether
                // the tile is staged does not depend on it.
                async_copy: stage,
            };
            cfg.shared_bytes(acc)
                + cfg.stage_bytes(vec, acc)
                + lookback_shared_bytes(WINDOW.min(threads), windows, plane_ops, plane_max_k, acc)
                + 4
                + 16 * 16
        };
        let footprint = |threads: u32, vpt: u32| footprint_staged(threads, vpt, false);
        let fits_device = |&(t, v): &(u32, u32)| footprint(t, v) <= shared_limit;
        let long = match opts.tuning {
            Some(t) => {
                let tile = (t.threads, t.vectors_per_thread);
                if !fits_device(&tile) {
                    return Err(Error::Unsupported(format!(
                        "a tile of {} units x {} vectors needs {} bytes of shared memory; the \
                         device has {shared_limit}",
                        tile.0,
                        tile.1,
                        footprint(tile.0, tile.1)
                    )));
                }
                tile
            }
            None => {
                let mut tile = LONG_TILE;
                while tile.1 > 1 && !fits_device(&tile) {
                    tile.1 /= 2;
                }
                tile
            }
        };
        if !fits_device(&long) {
            return Err(Error::Unsupported(format!(
                "no scan tile fits in the device's {shared_limit} bytes of shared memory"
            )));
        }
        let fits = SHORT_TILES
            .iter()
            .filter(|tile| fits_device(tile))
            .find(|(t, v)| *t >= min_threads && t * v >= n_vec.max(1));
        let fits = fits.filter(|(t, v)| t * v <= long.0 * long.1);
        let (route, (threads, vpt)) = match (opts.algorithm, fits) {
            (ScanAlgorithm::Auto, Some(&tile)) => (Route::SingleTile, tile),
            (ScanAlgorithm::Auto, None) | (ScanAlgorithm::DecoupledLookback, _) => {
                (Route::Lookback, fits.copied().unwrap_or(long))
            }
            (ScanAlgorithm::ReduceThenScan, Some(&tile)) => (Route::SingleTile, tile),
            (ScanAlgorithm::ReduceThenScan, None) => (Route::ReduceThenScan, long),
        };
        // Staging pays where cubes wait on each other (the look-back), on devices with the
        // shared memory for it (H200, 1-D 2^28 f32, tile 256 x 8: 0.715 ms staged against 0.782
        // in registers; BENCHMARKS.md at 52581a0, "Development runs", 2026-11-30 (H200)).
        let stage = route == Route::Lookback
            && !indexed
            && opts.tuning.map(|t| t.stage).unwrap_or(true)
            && footprint_staged(threads, vpt, true) <= shared_limit;
        // Asynchronous copies wherever the device has them (CUDA sm_80+) and the tile allows,
        // unless a tuning turns them off. On the H200 (1-D 2^28 f32, CUDA events; BENCHMARKS.md
        // at 52581a0, 2026-12-03 (H200), "The look-back: the prefix published by the unit that
        // finds it"): 0.552-0.555 ms against 0.600-0.608 with plain loads, in every shared layout
        // but one with the copies' barrier at byte 0 (0.658), which the kernel never has (its
        // scan scratch is put there: `cubeprim_kernels::cube::lead_shared`). By the device clock
        // see BENCHMARKS.md's `cumsum f32 1-D (look-back)` and `(look-back, plain loads)`. The
        // stage holds accumulators: copied straight from the input where they are its own type,
        // in 4-, 8- or 16-byte vectors, read forwards.
        let async_copy = stage
            && limits.copy_async
            && opts.tuning.is_none_or(|t| t.async_copy)
            && dtype.accumulator_size() == dtype.size()
            && !opts.reverse
            && matches!(vec * dtype.size(), 4 | 8 | 16);
        let cfg = TileConfig {
            threads,
            vectors_per_thread: vpt,
            reverse: opts.reverse,
            exclusive: opts.exclusive,
            indexed,
            plane_ops,
            stage,
            async_copy,
        };
        let tiles_per_row = n_vec.div_ceil(cfg.tile_vectors()).max(1);
        let num_tiles = to_u32(rows * tiles_per_row as usize, "tile count")?;
        let state_bytes = if route == Route::Lookback {
            4 * (1 + num_tiles as usize * words_per_tile(dtype.accumulator_size(), indexed))
        } else {
            0
        };
        Ok(Self {
            rows,
            n,
            vec,
            n_vec,
            layout,
            in_stride: to_u32(strides[axis], "stride")?,
            out_stride: to_u32(out_strides[axis], "stride")?,
            cfg,
            tiles_per_row,
            num_tiles,
            route,
            lookback: LookbackConfig {
                window: WINDOW.min(threads),
                windows,
                spins: crate::device::lookback_spins(
                    opts.tuning
                        .map(|t| t.spins)
                        .unwrap_or(if cuda { SPINS_CUDA } else { SPINS }),
                    cuda,
                ),
                plain_reads: cuda,
                plane_max: plane_max_k,
                ordered: limits.ordered_tiles,
            },
            state_bytes,
            device_len,
        })
    }

    /// The kernel's mode for this plan's route.
    pub fn mode(&self) -> ScanMode {
        match self.route {
            Route::SingleTile => ScanMode::SingleTile,
            Route::Lookback => ScanMode::Lookback(self.lookback),
            Route::ReduceThenScan => ScanMode::Prefixed,
        }
    }

    /// Cube count covering `num_tiles` cubes (2-D past 65535), and its size.
    pub fn cube_count(&self) -> (CubeCount, u32) {
        let (x, y) = crate::device::grid_2d(self.num_tiles);
        (CubeCount::Static(x, y, 1), x * y)
    }
}
