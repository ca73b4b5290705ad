//! First pass of one radix-sort digit (reduce-then-scan): the digit histogram of every tile.
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::row_offsets;
use crate::cube::{clear_shared_counters, RadixConfig};
use crate::ops::radix_digit;
use cubecl::prelude::*;

/// Digits of the 8-bit radix.
pub const RADIX: u32 = 256;

/// Keys in a row: `n`, or with `device_len` the device-resident count (at most `n`).
#[cube]
pub fn radix_row_len(n: u32, count: &Array<u32>, #[comptime] device_len: bool) -> u32 {
    let mut len = n;
    if comptime![device_len] {
        len = select(count[0] < n, count[0], n);
    }
    len
}

/// Where row `row` starts in the keys: through `layout` (see [`row_offsets()`]) when `strided`
/// is non-zero, else `row * n` (a contiguous `[rows, n]` buffer).
#[cube]
pub fn radix_row_base(row: u32, n: u32, layout: &Array<u32>, strided: u32) -> usize {
    let mut base = row as usize * n as usize;
    if strided != 0u32 {
        let (b, _) = row_offsets(row, layout);
        base = b;
    }
    base
}

/// What a digit pass's launch ([`radix_histogram()`], [`radix_scatter`](super::radix_scatter::radix_scatter()))
/// knows at compile time about the tiles it serves.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum PassTiles {
    /// Any tile: the last tile of a row may be partial (or the row shorter than its `n`, with a
    /// device-resident length), keys may be strided, outputs clipped to `out_cols`.
    Checked,
    /// Only full tiles of keys read with stride 1 (the scatter: every output position kept):
    /// no bound checks. `digit`: the digit's `(shift, bits, descending)` as constants (the runtime
    /// `shift`, `bits` and `flip` are then ignored), else read from the arguments. On the H200
    /// a pass of the u32 sort's scatter took 1.80 ms checked, 1.47 full and 1.35 full with the
    /// digit constant (48 registers instead of 80), in one run of the generated CUDA edited by
    /// hand the same way (BENCHMARKS.md at 52581a0, 2026-12-02 (H200), "One scatter pass, the
    /// generated CUDA edited by hand").
    Full {
        /// The digit's `(shift, bits, descending)` when built in as constants.
        digit: Option<(u32, u32, bool)>,
    },
}

impl PassTiles {
    /// Whether the kernel reads only full tiles (no bound checks).
    pub fn is_full(&self) -> bool {
        matches!(self, PassTiles::Full { .. })
    }

    /// `(shift, bits, flip)` when the digit is a constant.
    pub fn const_digit(&self) -> Option<(u32, u32, u32)> {
        match *self {
            PassTiles::Full {
                digit: Some((shift, bits, descending)),
            } => Some((shift, bits, if descending { u32::MAX } else { 0 })),
            _ => None,
        }
    }
}

/// A pass's digit `(shift, bits, flip)`: the arguments, or the constants of `tiles`
/// ([`PassTiles::const_digit`]).
#[cube]
pub fn pass_digit(
    shift: u32,
    bits: u32,
    flip: u32,
    #[comptime] tiles: PassTiles,
) -> (u32, u32, u32) {
    let mut shift = shift;
    let mut bits = bits;
    let mut flip = flip;
    if comptime![tiles.const_digit().is_some()] {
        let (s, b, f) = comptime![tiles.const_digit().unwrap()];
        shift = s;
        bits = b;
        flip = f;
    }
    (shift, bits, flip)
}

/// Consecutive tiles of a row one [`radix_histogram()`] cube counts (8 counts of 4 bytes: its
/// writes of one digit fill a 32-byte sector).
pub const HISTOGRAM_GROUP: u32 = 8;

/// The rows of a sort pass: their offsets (where the keys are a strided view) and the
/// device-resident length (a dummy unless the length is read on the device).
#[derive(CubeLaunch, CubeType)]
pub struct RadixRows {
    pub layout: Array<u32>,
    pub count: Array<u32>,
}

/// The tiles a sort pass's cubes take: the row length (unless read on the device), tiles per
/// row, cubes in all and per row, the first tile of a row, the keys' stride along the row, and
/// whether rows start at offsets from the layout (`strided`).
#[derive(CubeLaunch, CubeType)]
pub struct RadixGrid {
    pub n: u32,
    pub tiles_per_row: u32,
    pub num_cubes: u32,
    pub cubes_per_row: u32,
    pub first_tile: u32,
    pub in_stride: u32,
    pub strided: u32,
}

/// The digit of a pass: its shift and width in the ordered key, and the bits flipped for a
/// descending sort.
#[derive(CubeLaunch, CubeType)]
pub struct RadixDigit {
    pub shift: u32,
    pub bits: u32,
    pub flip: u32,
}

/// `counts[(row * 256 + d) * tiles_per_row + tile]` = keys of the tile whose digit is `d`
/// (digit-major per row, so that an exclusive scan of each row gives every (digit, tile) its
/// first output position). Rows are `grid.n` keys long, `grid.in_stride` apart; tiles past the
/// length count nothing. Each cube counts [`HISTOGRAM_GROUP`] consecutive tiles of one row: cube
/// `c` (of `grid.num_cubes`) counts tiles `first_tile + (c % cubes_per_row) * 8 ..` of row
/// `c / cubes_per_row` (every tile: `first_tile = 0`, `cubes_per_row =
/// tiles_per_row.div_ceil(8)`). One tile per cube wrote 256 counts to 256 sectors, and the
/// kernel was bound by those partial-sector writes in L2 (H200: 0.49 ms a pass over 2^28 keys,
/// 83 % of L2 throughput, against about 0.27 ms to read the keys); eight fill each sector.
///
/// With `tiles` [`PassTiles::Full`] the cube's 8 tiles are full, keys are read with stride 1
/// as vectors of `N` (the row's start and `cfg.items` multiples of `N`), with no bound
/// checks, and the digit may be a constant; [`PassTiles::Checked`] takes `N = 1`.
#[cube(launch_unchecked)]
// A comptime branch and a runtime one with the same body stay separate `if`s in cube code.
#[allow(clippy::if_same_then_else)]
pub fn radix_histogram<T: Numeric, N: Size>(
    keys: &Array<Vector<T, N>>,
    counts: &mut Array<u32>,
    rows: &RadixRows,
    grid: RadixGrid,
    digit: RadixDigit,
    #[comptime] cfg: RadixConfig,
    #[comptime] device_len: bool,
    #[comptime] tiles: PassTiles,
) {
    let t = UNIT_POS;
    let group_id = CUBE_POS as u32;
    let threads = comptime![cfg.threads];
    let group = comptime![HISTOGRAM_GROUP];
    let full = comptime![tiles.is_full()];
    // One histogram per tile of the group, rows of 257 words: one digit's counts of the 8
    // tiles, which 8 consecutive lanes gather, then sit in 8 different banks.
    let pitch = comptime![RADIX + 1];
    let words = comptime![(HISTOGRAM_GROUP * (RADIX + 1)) as usize];
    if group_id < grid.num_cubes {
        let row = group_id / grid.cubes_per_row;
        let first = grid.first_tile + (group_id % grid.cubes_per_row) * group;
        let (shift, bits, flip) = pass_digit(digit.shift, digit.bits, digit.flip, tiles);
        let mask = (1u32 << bits) - 1u32;
        let hist = SharedMemory::<Atomic<u32>>::new(words);
        clear_shared_counters(&hist, comptime![HISTOGRAM_GROUP * (RADIX + 1)], threads);
        sync_cube();
        let len = radix_row_len(grid.n, &rows.count, device_len);
        let base = radix_row_base(row, grid.n, &rows.layout, grid.strided);
        let mut in_group = select(
            grid.tiles_per_row - first < group,
            grid.tiles_per_row - first,
            group,
        );
        if comptime![full] {
            in_group = group;
        }
        for j in 0..in_group {
            let start = (first + j) * comptime![cfg.tile_len()];
            // Every load is issued before the first atomic: interleaved, each key's load would
            // wait on the atomic before it and the kernel would run at a third of the bandwidth.
            let mut digits = Array::<u32>::new(comptime![cfg.items as usize]);
            if comptime![full] {
                // Vector `k * threads + t` of the tile; its lanes in any order (a count).
                let nl = N::value();
                let v0 = (base + start as usize) / nl;
                #[unroll]
                for k in 0..comptime![cfg.items / nl as u32] {
                    let v = keys[v0 + (k * threads + t) as usize];
                    #[unroll]
                    for l in 0..nl {
                        digits[(k * nl as u32 + l as u32) as usize] =
                            radix_digit::<T>(v[l], shift, mask, flip);
                    }
                }
            } else {
                #[unroll]
                for k in 0..comptime![cfg.items] {
                    let i = start + k * threads + t;
                    let mut d = 256u32; // RADIX: no digit
                    if i < len {
                        let key = keys[base + i as usize * grid.in_stride as usize][0];
                        d = radix_digit::<T>(key, shift, mask, flip);
                    }
                    digits[k as usize] = d;
                }
            }
            let h = j * pitch;
            #[unroll]
            for k in 0..comptime![cfg.items] {
                let d = digits[k as usize];
                if comptime![full] {
                    hist[(h + d) as usize].fetch_add(1u32);
                } else if d < RADIX {
                    hist[(h + d) as usize].fetch_add(1u32);
                }
            }
        }
        sync_cube();
        // Entry `e` of the group's counts: digit `e / 8`, tile `first + e % 8`; eight
        // consecutive lanes write one digit's eight counts (one sector).
        let out = row as usize * (RADIX * grid.tiles_per_row) as usize + first as usize;
        for k in 0..comptime![(HISTOGRAM_GROUP * RADIX).div_ceil(cfg.threads)] {
            let e = k * threads + t;
            let d = e / group;
            let j = e % group;
            if d < RADIX && j < in_group {
                counts[out + (d * grid.tiles_per_row + j) as usize] =
                    hist[(j * pitch + d) as usize].load();
            }
        }
    }
}
