//! Plain data chosen on the host: how a sort is cut into rows, tiles and digit passes.

use super::to_u32;
use super::SortOptions;
use crate::scan::{scan_state_bytes, PlaneOps, ScanOptions};
use crate::tuning::{Policy, Tuning};
use crate::workspace::workspace_bytes;
use crate::{DType, Error, Result};
use cubecl::prelude::*;
use cubeprim_kernels::cube::{match_counter_slots, radix_slots, RadixConfig, DIGIT_BITS};
use cubeprim_kernels::device::radix_histogram::RADIX;

/// Tiles of the in-cube row sort, smallest first: (units, keys per unit).
const ROW_TILES: [(u32, u32); 9] = [
    (32, 1),
    (32, 2),
    (32, 4),
    (64, 4),
    (128, 4),
    (128, 8),
    (256, 8),
    (256, 16),
    (512, 16),
];
/// Tiles of the device-wide passes, largest first.
const DEVICE_TILES: [(u32, u32); 6] = [(256, 16), (256, 8), (128, 8), (64, 8), (64, 4), (32, 4)];
/// The tile tried before [`DEVICE_TILES`] by passes that move 4-byte values (indices, or values
/// of 4 bytes) with keys of at most 4 bytes, where tiles are ranked by ballots and the passes are
/// histogram → scan → scatter. Measured on the H200 with the full-tile scatter kernels (2^28,
/// `bench_gpu sort cuda --core --tile T`; BENCHMARKS.md at 52581a0, 2026-12-02 (H200), "scatter
/// kernels for full tiles"): stable f32 argsort with u32 indices 9.65 ms with 512 × 16, 9.96
/// with 256 × 20, 10.05–10.14 with 512 × 12, 10.16 with 384 × 16, 11.33 with 256 × 12; the
/// keys-only u32 sort was fastest with 256 × 16 there (7.35–7.39 ms; 7.37 with 256 × 20, 7.48
/// with 512 × 16).
const PAIRS_TILE: (u32, u32) = (512, 16);
/// The tile tried before [`DEVICE_TILES`] by keys-only passes of 4-byte keys ranked by ballots.
/// Measured on an H100 (2^28 keys, `bench_gpu sort cuda --keys --tile T`, device clock;
/// BENCHMARKS.md at 52581a0, 2026-12-05 (H100), "the keys-only sort's tile"): u32 keys
/// 6.57-6.58 ms with 384 × 20 in two processes, against 8.15-8.19 with 256 × 16, 7.28-7.30 with
/// 384 × 16, 7.69 with 256 × 20, 8.19 with 256 × 24, 8.27-8.29 with 320 × 16, 8.39-8.40 with
/// 384 × 12, 9.06-9.08 with 384 × 24 and 9.12 with 448 × 16; i32 keys 6.58-6.64 with 384 × 20
/// against 7.91-7.98. CuPy's CUB sort took 6.76-6.88 ms there. On the H200 (same measure;
/// 52581a0, 2026-12-05 (H200 and H100), "Issue 4 on the H200"): u32 keys 5.96-5.98 ms with
/// 384 × 20 in three processes against 6.45-6.47 with 256 × 16 in two, i32 5.97-5.99; CuPy's
/// CUB sort 6.78 ms in the same run (cases `sort u32 keys`, `sort i32 keys` in BENCHMARKS.md).
const KEYS_TILE: (u32, u32) = (384, 20);
/// The tile tried before [`DEVICE_TILES`] by keys-only passes of 8-byte keys ranked by ballots:
/// the packed argsort's words (key order bits and index in one u64), and u64 / i64 / f64 keys,
/// which run the same kernels. Measured on an H100 with the packed argsort (2^28 f32, stable,
/// `bench_gpu sort cuda --argsort --tile T`, device clock; BENCHMARKS.md at 52581a0, 2026-12-05
/// (H100), "the packed argsort's tile"): u32 indices 9.98-9.99 ms with 384 × 16 in two
/// processes, against 10.77-10.79 with 256 × 16, 10.16 with 384 × 18, 10.50 with 320 × 16, 10.62
/// with 256 × 20, 10.88 with 512 × 12, 11.28 with 384 × 12, 11.52 with 256 × 12, 11.92 with
/// 384 × 20, 11.98 with 384 × 14, 12.24 with 448 × 16, 12.60 with 512 × 8;
/// `torch.argsort(stable=True)` took 13.49 there. u64 keys (2^27, `--wide`; 52581a0, 2026-12-05
/// (H200 and H100), "u64 keys with `WIDE_KEYS_TILE` on the H100"): 11.06-11.07 ms against 12.79
/// with 256 × 16. On the H200 (same date, "Issue 4 on the H200") the other way round: the
/// argsort took 8.73-8.76 ms with 384 × 16 in two processes and 8.29 with 256 × 16 in one
/// (`torch.argsort` 11.78). Both cards are sm_90 with 132 SMs and differ in their memory; the
/// plan keeps one tile for both (the H200's figure is within issue 4's 9 ms).
const WIDE_KEYS_TILE: (u32, u32) = (384, 16);

/// How the rows are sorted.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Each row inside one cube (rows that fit one tile).
    InCube,
    /// Device-wide passes: per digit, tile histograms → scan of the counts → scatter.
    DeviceWide,
}

/// What a sort launch moves besides the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// Keys only.
    None,
    /// Each key's position in its row, written as this dtype (u32 or i64).
    Indices(DType),
    /// Values of this dtype, moved with their keys.
    Values(DType),
}

impl ValueKind {
    /// Bytes of the values moved between passes (indices travel as u32).
    pub fn pass_bytes(self) -> usize {
        match self {
            ValueKind::None => 0,
            ValueKind::Indices(_) => 4,
            ValueKind::Values(d) => d.size(),
        }
    }
}

/// Regions of the workspace's temp area (byte offsets, 256-aligned) of a device-wide sort. A
/// ping-pong region the passes do not write ([`ping_pong_used`]) is 0 and takes no space.
#[derive(Debug, Clone, Copy, Default)]
pub struct TempLayout {
    pub counts: usize,
    pub offsets: usize,
    pub keys: [usize; 2],
    pub values: [usize; 2],
    pub counts_len: usize,
    pub total: usize,
    /// The ping-pong keys and values are buffers of their own, allocated per call, not regions
    /// of the temp area: with them the workspace would pass the runtime's largest buffer (a
    /// sort of 2^28 u32 keys through Vulkan took 2 281 712 896 bytes of scratch against a
    /// largest buffer of 2 147 483 584), while each of them fits one. `keys` and `values` are
    /// unused then, and `total` leaves them out.
    pub apart: bool,
}

/// Everything a sort launch needs.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct SortPlan {
    pub rows: usize,
    pub n: usize,
    pub begin_bit: u32,
    pub end_bit: u32,
    pub passes: u32,
    pub route: Route,
    pub cfg: RadixConfig,
    pub tiles_per_row: u32,
    pub num_tiles: u32,
    /// Look-back state of the scan of the counts (device-wide only).
    pub state_bytes: usize,
    pub temp: TempLayout,
    /// The scan of the counts, `[rows, 256 * tiles_per_row]`.
    pub counts_shape: [usize; 2],
    /// Scatter kernels of full tiles are built per digit, its shift, width and direction
    /// constants ([`ScatterTiles::Full`](cubeprim_kernels::device::radix_scatter::ScatterTiles)):
    /// on CUDA, where a kernel compiles in well under a second; elsewhere one kernel serves
    /// every digit (llvmpipe takes seconds per kernel, and a sort of 32-bit keys would compile
    /// four; [`Policy::sort_const_digits`]). [`SortOptions::const_digits`] overrides it.
    pub const_digits: bool,
    /// The packed argsort (indices without the sorted keys, keys of 4 bytes, at least two
    /// passes, histogram → scan → scatter, 64-bit integers on the runtime): the first pass
    /// writes each key as the u64 word `ordered key << 32 | position`
    /// ([`RadixValues::PackIota`](cubeprim_kernels::device::radix_scatter::RadixValues)),
    /// the middle passes sort those words as u64 keys, and the last writes their lower halves
    /// (the indices). One 8-byte word moves per key instead of a key and an index, and the
    /// tile is that of 8-byte keys only. [`SortOptions::pack_indices`] overrides it.
    pub packed: bool,
}

/// Bytes of the keys and of the values a device-wide pass moves between passes: the packed
/// argsort's u64 words ([`SortPlan::packed`]) and nothing besides, else the key and
/// [`ValueKind::pass_bytes`].
pub(crate) fn pass_bytes(packed: bool, key: DType, values: ValueKind) -> (usize, usize) {
    if packed {
        (8, 0)
    } else {
        (key.size(), values.pass_bytes())
    }
}

/// What a sort writes, as its plan needs it: the sorted keys or not, and whether its outputs
/// have the input's whole rows (a sort's do; top-k's are shorter). Outputs of whole rows double
/// as ping-pong buffers between the passes, so the temp area needs one region fewer for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortOutputs {
    /// The sorted keys are written.
    pub keys: bool,
    /// Each output row has the input row's length.
    pub full_rows: bool,
}

impl SortOutputs {
    /// Whether the key passes chain through the key output.
    pub fn keys_chain(self) -> bool {
        self.keys && self.full_rows
    }

    /// Whether the value passes chain through the value output (not for i64 indices, which
    /// travel between the passes as u32).
    pub fn values_chain(self, values: ValueKind) -> bool {
        self.full_rows && !matches!(values, ValueKind::Indices(DType::I64))
    }
}

/// Whether the passes write ping-pong buffer `i` (0 or 1): the first whenever there is more
/// than one pass; the second only where the output does not chain and a third pass reads what
/// the second wrote.
pub(crate) fn ping_pong_used(passes: u32, i: usize, chained: bool) -> bool {
    passes > 1 && (i == 0 || (!chained && passes > 2))
}

fn align(b: usize) -> usize {
    b.div_ceil(256) * 256
}

/// A radix tile of `threads` units of `items` keys under `policy`. With `plane_ops`, tiles are
/// ranked by plane ballots, which read at most four 32-bit ballot words: plane widths must be
/// powers of two up to 128 (else no plane operations are used).
fn radix_config(
    policy: &Policy,
    (threads, items): (u32, u32),
    plane_ops: bool,
    wide_counts: bool,
) -> RadixConfig {
    let plane_max = policy.profile.plane_width_max;
    let plane_min = policy.profile.plane_width_min;
    let widths_ok = plane_max <= 128 && plane_max.is_power_of_two() && plane_min.is_power_of_two();
    RadixConfig {
        threads,
        items,
        plane_ops: plane_ops && widths_ok,
        wide_counts,
        plane_min,
        plane_max,
        plane_sync: policy.profile.plane_sync,
        ptx_ballot: plane_ops && widths_ok && policy.ptx_ballot(),
    }
}

impl SortPlan {
    /// `rows` rows of `n` keys (`n` is the capacity for a device-resident length, which forces
    /// the device-wide route).
    #[allow(clippy::too_many_arguments)]
    pub fn new<R: Runtime>(
        client: &ComputeClient<R>,
        tuning: &Tuning,
        rows: usize,
        n: usize,
        key: DType,
        values: ValueKind,
        outputs: SortOutputs,
        device_len: bool,
        opts: SortOptions,
    ) -> Result<Self> {
        let key_bits = crate::cpu::key_bits(key);
        let end_bit = opts.end_bit.unwrap_or(key_bits);
        if opts.begin_bit > end_bit || end_bit > key_bits {
            return Err(Error::Unsupported(format!(
                "bit range [{}, {end_bit}) of a {key_bits}-bit key",
                opts.begin_bit
            )));
        }
        let begin_bit = opts.begin_bit;
        let passes = (end_bit - begin_bit).div_ceil(DIGIT_BITS).max(1);
        rows.checked_mul(n)
            .filter(|&t| t < u32::MAX as usize)
            .ok_or_else(|| {
                Error::Unsupported(format!("{rows} x {n} keys: at most 2^32 - 1 keys per call"))
            })?;
        let policy = Policy::of(client, tuning);
        let plane_ops = policy.plane_ops(opts.plane_ops);
        let plane = policy.profile.plane_width_max;
        let min_threads = if plane_ops { plane.max(32) } else { 32 };
        let shared = policy.profile.max_shared_bytes;
        let ks = key.size();
        let wide_counts = policy.profile.int64;
        let cfg_of = |tile: (u32, u32)| radix_config(&policy, tile, plane_ops, wide_counts);
        // Shared bytes of the ranking: the ballot ranking's counters and scan scratch, or the
        // split ranking's exchange buffer and scan scratch (u32, or u64 for wide counts).
        let rank_bytes = |c: RadixConfig| {
            if c.plane_ops {
                4 * match_counter_slots(&c) + 8 * c.threads as usize
            } else {
                4 * radix_slots(c.tile_len()) + 24 * c.threads as usize
            }
        };
        // Shared bytes: keys, values, ranking, digit tables, slack.
        let row_bytes = |c: RadixConfig| {
            let idx = if matches!(values, ValueKind::None) {
                0
            } else {
                4
            };
            radix_slots(c.tile_len()) * (ks + idx) + rank_bytes(c) + 256
        };
        // Device-wide passes of a packed argsort move one u64 word per key (`packed`).
        let packed = opts.pack_indices.unwrap_or(true)
            && !outputs.keys
            && matches!(values, ValueKind::Indices(_))
            && ks == 4
            && passes >= 2
            && wide_counts;
        let (dks, dvs) = pass_bytes(packed, key, values);
        let dev_bytes = |c: RadixConfig| {
            radix_slots(c.tile_len()) * (dks + dvs) + rank_bytes(c) + 8 * RADIX as usize + 256
        };
        // Units a cube can launch: at least a plane's worth for the ranking, a whole count of
        // planes where tiles are ranked by ballots.
        let units_fit = |c: &RadixConfig| {
            c.threads >= min_threads
                && c.threads <= 1024
                && (!c.plane_ops || c.threads.is_multiple_of(c.plane_max))
        };
        let fits = |c: &RadixConfig| {
            units_fit(c) && row_bytes(*c) <= shared && c.tile_len() as usize >= n.max(1)
        };
        let row_tile = policy
            .sort_row_tile()
            .map(cfg_of)
            .filter(fits)
            .or_else(|| ROW_TILES.iter().map(|&t| cfg_of(t)).find(fits));
        let in_cube = !device_len && matches!(values, ValueKind::None | ValueKind::Indices(_));
        if let (true, Some(cfg)) = (in_cube, row_tile) {
            return Ok(Self {
                rows,
                n,
                begin_bit,
                end_bit,
                passes,
                route: Route::InCube,
                cfg,
                tiles_per_row: 1,
                num_tiles: to_u32(rows, "row count")?,
                state_bytes: 0,
                temp: TempLayout::default(),
                counts_shape: [0, 0],
                const_digits: false,
                packed: false,
            });
        }
        // The tile tried first where tiles are ranked by ballots (else the listed tiles only).
        let ballots = cfg_of((32, 1)).plane_ops;
        let first_tile = match (dks, dvs) {
            (..=4, 4) => Some(PAIRS_TILE),
            (4, 0) => Some(KEYS_TILE),
            (8, 0) => Some(WIDE_KEYS_TILE),
            _ => None,
        }
        .filter(|_| ballots);
        let cfg = match opts.tuning {
            Some(t) => {
                let c = RadixConfig {
                    wide_counts: t.wide_counts && wide_counts,
                    ..cfg_of((t.threads, t.items))
                };
                // A tile past 2^20 keys fits no device (and its length would overflow).
                let tile_ok =
                    t.items > 0 && t.threads.checked_mul(t.items).is_some_and(|l| l <= 1 << 20);
                if !tile_ok || !units_fit(&c) || dev_bytes(c) > shared {
                    return Err(Error::Unsupported(format!(
                        "a radix tile of {} units x {} keys does not fit this device",
                        t.threads, t.items
                    )));
                }
                c
            }
            None => first_tile
                .into_iter()
                .chain(DEVICE_TILES)
                .map(cfg_of)
                .find(|c| units_fit(c) && dev_bytes(*c) <= shared)
                .ok_or_else(|| {
                    Error::Unsupported(format!(
                        "no radix tile fits in the device's {shared} bytes of shared memory"
                    ))
                })?,
        };
        // CUB's PTX ballots where no values travel between the passes (keys only, and the
        // packed argsort). On the H200 (same runs; BENCHMARKS.md at 52581a0, 2026-12-02 (H200),
        // "CUB's PTX ballots in the radix ranking") they took the u32 sort of 2^28 from
        // 7.15-7.19 to 6.56-6.60 ms and the packed argsort (u32 indices) from 8.81-8.84 to
        // 8.57-8.66, but the key-value passes (512 x 16 tile) from 9.30-9.34 to 9.87-10.06.
        let cfg = RadixConfig {
            ptx_ballot: cfg.ptx_ballot && dvs == 0,
            ..cfg
        };
        if cfg.tile_len() > 1 << (32 - DIGIT_BITS) {
            return Err(Error::Unsupported("radix tile too large".into()));
        }
        let tiles_per_row = to_u32(n.div_ceil(cfg.tile_len() as usize).max(1), "tile count")?;
        let num_tiles = to_u32(rows * tiles_per_row as usize, "tile count")?;
        let counts_len = rows * RADIX as usize * tiles_per_row as usize;
        to_u32(counts_len, "digit-count table")?;
        let counts_shape = [rows, RADIX as usize * tiles_per_row as usize];
        let state_bytes = scan_state_bytes(
            client,
            tuning,
            &counts_shape,
            1,
            DType::U32,
            false,
            ScanOptions::default().exclusive().plane_ops(opts.plane_ops),
        )?;
        let mut at = 0usize;
        let mut region = |bytes: usize| {
            let r = at;
            at += align(bytes.max(4));
            r
        };
        let counts = region(4 * counts_len);
        let offsets = region(4 * counts_len);
        let data = rows * n;
        let mut pair = |bytes: usize, chained: bool| {
            [0, 1].map(|i| {
                if ping_pong_used(passes, i, chained) {
                    region(bytes)
                } else {
                    0
                }
            })
        };
        let keys = pair(dks * data, outputs.keys_chain());
        let mut vals = [0; 2];
        if dvs > 0 {
            vals = pair(dvs * data, outputs.values_chain(values));
        }
        let apart = passes > 1
            && crate::workspace::workspace_bytes(state_bytes, at) > crate::max_buffer_bytes(client);
        if apart {
            // The temp area ends where the first ping-pong region would start.
            at = keys[0];
        }
        let temp = TempLayout {
            counts,
            offsets,
            keys,
            values: vals,
            counts_len,
            total: at,
            apart,
        };
        Ok(Self {
            rows,
            n,
            begin_bit,
            end_bit,
            passes,
            route: Route::DeviceWide,
            cfg,
            tiles_per_row,
            num_tiles,
            state_bytes,
            temp,
            counts_shape,
            const_digits: opts
                .const_digits
                .unwrap_or_else(|| policy.sort_const_digits()),
            packed,
        })
    }

    /// Workspace bytes of this plan.
    pub fn workspace_bytes(&self) -> usize {
        match self.route {
            Route::InCube => 0,
            Route::DeviceWide => workspace_bytes(self.state_bytes, self.temp.total),
        }
    }

    /// Cube count covering `cubes` cubes (2-D past 65535).
    pub fn cube_count(cubes: u32) -> CubeCount {
        crate::device::cube_count_2d(cubes)
    }
}

/// The tile of the selection top-k ([`cubeprim_kernels::device::radix_select_rows`]): rows of
/// `n` keys of `key` in one cube, `k` of them sorted in a tile of `threads * cand_items`.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct SelectPlan {
    pub cfg: RadixConfig,
    pub cand_items: u32,
}

impl SelectPlan {
    /// `None` where a row does not fit one tile of this device (or `k` is 0 or above `n`).
    pub fn new<R: Runtime>(
        client: &ComputeClient<R>,
        tuning: &Tuning,
        n: usize,
        k: usize,
        key: DType,
        p: PlaneOps,
    ) -> Option<Self> {
        if k == 0 || k > n {
            return None;
        }
        let policy = Policy::of(client, tuning);
        let plane_ops = policy.plane_ops(p);
        let plane = policy.profile.plane_width_max;
        let min_threads = if plane_ops { plane.max(32) } else { 32 };
        let shared = policy.profile.max_shared_bytes;
        let wide_counts = policy.profile.int64;
        let ks = key.size();
        ROW_TILES.iter().find_map(|&(threads, items)| {
            let cfg = radix_config(&policy, (threads, items), plane_ops, wide_counts);
            if threads < min_threads || (cfg.tile_len() as usize) < n {
                return None;
            }
            let cand_items = std::iter::successors(Some(1u32), |&i| Some(2 * i))
                .take_while(|&i| i <= items)
                .find(|&i| (threads * i) as usize >= k)?;
            // Keys (then candidates), candidate positions and exchange, histogram, scan
            // scratch (u32 and the u64 of the two-bit ranking), small words and alignment.
            let bytes = radix_slots(cfg.tile_len()) * ks
                + radix_slots(threads * cand_items) * 8
                + 4 * RADIX as usize
                + 24 * threads as usize
                + 96;
            (bytes <= shared).then_some(Self { cfg, cand_items })
        })
    }
}
