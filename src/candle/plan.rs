//! The launch geometry of a scan on a candle device (CUDA, Metal).
//!
//! The same choices as [`crate::scan::ScanPlan`] (vector width, tile sizes, single tile or
//! decoupled look-back), made from a [`DeviceLimits`] instead of a cubecl `ComputeClient`,
//! which candle's devices do not have.

use crate::scan::{ScanAlgorithm, ScanOptions, LONG_TILE, SPINS, WINDOWS};
use crate::{DType, Error, Result};
use cubeprim_kernels::cube::TileConfig;
use cubeprim_kernels::device::lookback::lookback_shared_bytes;
use cubeprim_kernels::device::tile_state::words_per_tile;
use cubeprim_kernels::device::ScanMode;

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

/// What a device offers the scan kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Plane (warp / SIMD-group) width.
    pub plane_width: u32,
    /// Shared (threadgroup) memory a cube may use without opting in.
    pub max_shared_bytes: usize,
    /// Poll the look-back state with plain loads (CUDA: atomic loads are read-modify-writes).
    pub plain_reads: bool,
}

impl DeviceLimits {
    /// Every CUDA GPU cubecl targets: 32-wide warps, 48 KiB of static shared memory.
    pub const CUDA: Self = Self {
        plane_width: 32,
        max_shared_bytes: 48 * 1024,
        plain_reads: true,
    };
    /// Apple GPUs: 32-wide SIMD groups, 32 KiB of threadgroup memory.
    pub const METAL: Self = Self {
        plane_width: 32,
        max_shared_bytes: 32 * 1024,
        plain_reads: false,
    };
}

/// One scan launch: which kernel variant, over which cubes, with which arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanLaunch {
    /// Elements along the axis.
    pub n: usize,
    /// Lines along the axis.
    pub rows: usize,
    /// Elements per vector.
    pub vec: usize,
    pub n_vec: u32,
    /// `[rank, shape.., in_strides.., out_strides.., in_offset]` of the other axes, in vectors.
    pub layout: Vec<u32>,
    pub in_stride: u32,
    pub out_stride: u32,
    pub cfg: TileConfig,
    pub mode: ScanMode,
    pub tiles_per_row: u32,
    pub num_tiles: u32,
    /// Cubes along x and y (2-D past 65 535).
    pub cubes: (u32, u32),
    /// u32 words of look-back state (0 for single tiles); zeroed before the launch.
    pub state_words: usize,
}

fn to_u32(v: usize, what: &str) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::Unsupported(format!("{what} {v} does not fit in 32 bits")))
}

impl ScanLaunch {
    /// The launch for a view (`dims`, `strides`, `offset` in elements) scanned along `axis`
    /// into a contiguous output.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        limits: DeviceLimits,
        dims: &[usize],
        strides: &[usize],
        offset: usize,
        axis: usize,
        dtype: DType,
        indexed: bool,
        opts: ScanOptions,
    ) -> Result<Self> {
        if opts.algorithm == ScanAlgorithm::ReduceThenScan {
            return Err(Error::Unsupported(
                "candle devices run the single-pass scan; use Auto or DecoupledLookback".into(),
            ));
        }
        let n = dims[axis];
        let others: Vec<usize> = (0..dims.len()).filter(|&d| d != axis).collect();
        let rows: usize = others.iter().map(|&d| dims[d]).product();
        let out_strides = crate::tensor::contiguous_strides(dims);

        // Vector width: the axis unit-stride in input and output, every other offset a
        // multiple of the width.
        let max_vec = (16 / dtype.size()).clamp(1, 4);
        let mut vec = 1;
        if strides[axis] == 1 && out_strides[axis] == 1 {
            for w in [4usize, 2] {
                if w <= max_vec
                    && n.is_multiple_of(w)
                    && offset.is_multiple_of(w)
                    && others
                        .iter()
                        .all(|&d| strides[d].is_multiple_of(w) || dims[d] == 1)
                {
                    vec = w;
                    break;
                }
            }
        }
        let n_vec = to_u32(n / vec, "row length")?;
        let mut layout = vec![others.len() as u32];
        for &d in &others {
            layout.push(to_u32(dims[d], "dimension")?);
        }
        for &d in &others {
            layout.push(to_u32(strides[d] / vec, "stride")?);
        }
        for &d in &others {
            layout.push(to_u32(out_strides[d] / vec, "stride")?);
        }
        layout.push(to_u32(offset / vec, "offset")?);

        let plane_max = limits.plane_width.min(64);
        let acc = dtype.accumulator_size();
        let windows = opts.tuning.map(|t| t.windows).unwrap_or(WINDOWS);
        let footprint = |threads: u32, vpt: u32| {
            let cfg = TileConfig {
                threads,
                vectors_per_thread: vpt,
                reverse: false,
                exclusive: false,
                indexed,
                plane_ops: true,
                stage: false,
            };
            cfg.shared_bytes(acc)
                + lookback_shared_bytes(WINDOW.min(threads), windows, true, plane_max, acc)
                + 4
                + 16 * 16
        };
        let fits_device = |&(t, v): &(u32, u32)| footprint(t, v) <= limits.max_shared_bytes;
        let mut long = opts
            .tuning
            .map(|t| (t.threads, t.vectors_per_thread))
            .unwrap_or(LONG_TILE);
        while long.1 > 1 && !fits_device(&long) {
            long.1 /= 2;
        }
        if !fits_device(&long) || !long.0.is_multiple_of(limits.plane_width) {
            return Err(Error::Unsupported(format!(
                "no scan tile of {} units fits the device ({} bytes of shared memory, planes of {})",
                long.0, limits.max_shared_bytes, limits.plane_width
            )));
        }
        let short = SHORT_TILES
            .iter()
            .filter(|tile| fits_device(tile) && tile.0 >= limits.plane_width)
            .find(|(t, v)| t * v >= n_vec.max(1))
            .filter(|(t, v)| t * v <= long.0 * long.1);
        let ((threads, vpt), single) = match (opts.algorithm, short) {
            (ScanAlgorithm::Auto, Some(&tile)) => (tile, true),
            (_, tile) => (tile.copied().unwrap_or(long), false),
        };
        let cfg = TileConfig {
            threads,
            vectors_per_thread: vpt,
            reverse: opts.reverse,
            exclusive: opts.exclusive,
            indexed,
            plane_ops: true,
            stage: false,
        };
        let mode = if single {
            ScanMode::SingleTile
        } else {
            ScanMode::Lookback {
                window: WINDOW.min(threads),
                windows,
                spins: opts.tuning.map(|t| t.spins).unwrap_or(SPINS),
                plain_reads: limits.plain_reads,
                plane_max,
            }
        };
        let tiles_per_row = n_vec.div_ceil(cfg.tile_vectors()).max(1);
        let num_tiles = to_u32(rows * tiles_per_row as usize, "tile count")?;
        let state_words = if single {
            0
        } else {
            1 + num_tiles as usize * words_per_tile(acc, indexed)
        };
        let x = num_tiles.clamp(1, 65535);
        Ok(Self {
            n,
            rows,
            vec,
            n_vec,
            layout,
            in_stride: to_u32(strides[axis], "stride")?,
            out_stride: to_u32(out_strides[axis], "stride")?,
            cfg,
            mode,
            tiles_per_row,
            num_tiles,
            cubes: (x, num_tiles.div_ceil(x).max(1)),
            state_words,
        })
    }

    /// The seven u32 scalars of `scan_rows`, in parameter order, for a fresh (zeroed) state:
    /// epoch 1, counter base 0.
    pub fn scalars(&self) -> [u32; 7] {
        [
            self.n_vec,
            self.tiles_per_row,
            self.num_tiles,
            self.in_stride,
            self.out_stride,
            1,
            0,
        ]
    }
}
