//! Last pass of one radix-sort digit: each cube ranks its tile stably by the digit and writes
//! every key (and value) to its place, `first position of (digit, tile)` + `rank in the tile
//! among keys of that digit`. The tile is ranked by plane ballots
//! ([`tile_rank_match()`]) where the runtime has plane operations, else by bit splits
//! ([`tile_sort_by_digit()`]).
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::radix_histogram::{
    pass_digit, radix_row_base, radix_row_len, PassTiles, RadixDigit, RadixGrid, RadixRows, RADIX,
};
use crate::cube::{
    match_counter_slots, radix_slot, radix_slots, tile_rank_match, tile_sort_by_digit,
    warp_striped_pos, RadixConfig, RankLayout, DIGIT_BITS,
};
use crate::ops::{ordered_key32, radix_digit};
use cubecl::prelude::*;

/// Where a pass's values come from.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum RadixValues {
    /// Keys only.
    None,
    /// Values read from `values_in` (a contiguous `[rows, n]` buffer).
    Load,
    /// The key's position in its row (argsort's first pass).
    Iota,
    /// The packed argsort's first pass (keys of 4 bytes, no keys written): each key's value is
    /// the u64 word `(ordered key ^ flip) << 32 | position in its row` (`VO` = u64). The
    /// passes after it sort these words as u64 keys by their upper half, ascending.
    PackIota,
    /// The packed argsort's last pass: the keys are [`PackIota`](Self::PackIota)'s u64 words,
    /// and each one's value is its lower half, the position (no keys written).
    LowBits,
}

impl RadixValues {
    /// Whether the pass stages a value per key in shared memory (read or made from the
    /// position); [`LowBits`](Self::LowBits) takes its value from the key.
    pub fn staged(self) -> bool {
        matches!(self, Self::Load | Self::Iota | Self::PackIota)
    }
}

/// What a scatter pass reads: the keys and the values beside them (a dummy for keys only).
#[derive(CubeLaunch, CubeType)]
pub struct ScatterInputs<T: Numeric, VI: Numeric> {
    pub keys_in: Array<T>,
    pub values_in: Array<VI>,
}

/// What a scatter pass writes: the keys (a dummy where the pass writes none) and values.
#[derive(CubeLaunch, CubeType)]
pub struct ScatterOutputs<T: Numeric, VO: Numeric> {
    pub keys_out: Array<T>,
    pub values_out: Array<VO>,
}

/// One scatter pass. `offsets`: the exclusive scan (per row) of the counts of
/// [`radix_histogram`](super::radix_histogram::radix_histogram()), same tiling. Keys are read
/// as the histogram reads them; values (`values_in`) from a contiguous `[rows, n]` buffer.
/// Outputs are contiguous rows of `out_cols` (= `n`, or `k` for top-k: positions past it are
/// dropped). Values are converted `VI` → `VO` on the way (u32 indices → i64).
///
/// Cube `c` (of `num_cubes`) serves tile `first_tile + c % cubes_per_row` of row
/// `c / cubes_per_row`: every tile with `cubes_per_row = tiles_per_row` and `first_tile = 0`;
/// a row's full tiles with `tiles` [`PassTiles::Full`], and its partial last tile in a
/// second, checked launch (`cubes_per_row = 1`, `first_tile = tiles_per_row - 1`).
#[cube(launch_unchecked)]
pub fn radix_scatter<T: Numeric, VI: Numeric, VO: Numeric>(
    input: &ScatterInputs<T, VI>,
    output: &mut ScatterOutputs<T, VO>,
    offsets: &Array<u32>,
    rows: &RadixRows,
    grid: RadixGrid,
    out_cols: u32,
    digit: RadixDigit,
    #[comptime] cfg: RadixConfig,
    #[comptime] device_len: bool,
    #[comptime] values: RadixValues,
    #[comptime] write_keys: bool,
    #[comptime] tiles: PassTiles,
) {
    let c = CUBE_POS as u32;
    let tile_len = comptime![cfg.tile_len()];
    let row = c / grid.cubes_per_row;
    let tile = grid.first_tile + c % grid.cubes_per_row;
    let len = radix_row_len(grid.n, &rows.count, device_len);
    let start = tile * tile_len;
    // Uniform per cube: a whole cube leaves or stays.
    if c < grid.num_cubes && start < len {
        let t = UNIT_POS;
        let threads = comptime![cfg.threads];
        let valid = select(len - start < tile_len, len - start, tile_len);
        let full = comptime![tiles.is_full()];
        let mut in_stride = grid.in_stride;
        if comptime![full] {
            in_stride = 1u32;
        }
        let (shift, bits, flip) = pass_digit(digit.shift, digit.bits, digit.flip, tiles);
        let base = radix_row_base(row, grid.n, &rows.layout, grid.strided);
        let vbase = row as usize * grid.n as usize;
        let mut starts = SharedMemory::<u32>::new(comptime![RADIX as usize]);
        let mut firsts = SharedMemory::<u32>::new(comptime![RADIX as usize]);
        let obase = row as usize * (RADIX * grid.tiles_per_row) as usize + tile as usize;
        #[unroll]
        for k in 0..comptime![RADIX.div_ceil(cfg.threads)] {
            let d = k * threads + t;
            if d < RADIX {
                firsts[d as usize] = offsets[obase + (d * grid.tiles_per_row) as usize];
            }
        }
        if comptime![cfg.plane_ops] {
            scatter_ranked_match::<T, VI, VO>(
                &input.keys_in,
                &input.values_in,
                &mut output.keys_out,
                &mut output.values_out,
                base,
                vbase,
                start,
                valid,
                in_stride,
                shift,
                bits,
                flip,
                &mut starts,
                &mut firsts,
                row as usize * out_cols as usize,
                out_cols,
                cfg,
                values,
                write_keys,
                !full,
            );
        } else {
            scatter_ranked_split::<T, VI, VO>(
                &input.keys_in,
                &input.values_in,
                &mut output.keys_out,
                &mut output.values_out,
                base,
                vbase,
                start,
                valid,
                in_stride,
                shift,
                bits,
                flip,
                &mut starts,
                &firsts,
                row as usize * out_cols as usize,
                out_cols,
                cfg,
                values,
                write_keys,
            );
        }
    }
}

/// Ranks by plane ballots: keys are read warp-striped into registers, ranked, placed in shared
/// memory in tile order, and written out striped (each digit's run to its first position).
#[cube]
#[allow(clippy::too_many_arguments)]
fn scatter_ranked_match<T: Numeric, VI: Numeric, VO: Numeric>(
    keys_in: &Array<T>,
    values_in: &Array<VI>,
    keys_out: &mut Array<T>,
    values_out: &mut Array<VO>,
    base: usize,
    vbase: usize,
    start: u32,
    valid: u32,
    in_stride: u32,
    shift: u32,
    bits: u32,
    flip: u32,
    starts: &mut SharedMemory<u32>,
    firsts: &mut SharedMemory<u32>,
    out_row: usize,
    out_cols: u32,
    #[comptime] cfg: RadixConfig,
    #[comptime] values: RadixValues,
    #[comptime] write_keys: bool,
    #[comptime] checked: bool,
) {
    let mut keys = Array::<T>::new(comptime![cfg.items as usize]);
    let mut ranks = Array::<u32>::new(comptime![cfg.items as usize]);
    rank_tile_match::<T>(
        keys_in, base, start, valid, in_stride, shift, bits, flip, &mut keys, &mut ranks, starts,
        cfg, checked,
    );
    // Unit `t` wrote `firsts[d]` and `starts[d]` of its digits `d = t, t + threads, ..`.
    #[unroll]
    for k in 0..comptime![RADIX.div_ceil(cfg.threads)] {
        let d = k * comptime![cfg.threads] + UNIT_POS;
        if d < RADIX {
            firsts[d as usize] -= starts[d as usize];
        }
    }
    write_ranked_match::<T, VI, VO>(
        &keys, &ranks, values_in, keys_out, values_out, vbase, start, valid, shift, bits, flip,
        firsts, out_row, out_cols, cfg, values, write_keys, checked,
    );
}

/// First half of `scatter_ranked_match`: reads the tile's keys warp-striped into `keys` and
/// ranks them by digit (`ranks`; `starts[d]`: the first rank of digit `d`, see
/// [`tile_rank_match()`]). Keys past `valid` rank last, as digit `(1 << bits) - 1`; without
/// `checked` the tile must be full. The caller syncs the cube before reading `starts`.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn rank_tile_match<T: Numeric>(
    keys_in: &Array<T>,
    base: usize,
    start: u32,
    valid: u32,
    in_stride: u32,
    shift: u32,
    bits: u32,
    flip: u32,
    keys: &mut Array<T>,
    ranks: &mut Array<u32>,
    starts: &mut SharedMemory<u32>,
    #[comptime] cfg: RadixConfig,
    #[comptime] checked: bool,
) {
    let mut counters = SharedMemory::<u32>::new(comptime![match_counter_slots(&cfg)]);
    let mut scan_v = SharedMemory::<u32>::new(comptime![2 * cfg.threads as usize]);
    let mut scan_i = SharedMemory::<u32>::new(1usize);
    let mut digits = Array::<u32>::new(comptime![cfg.items as usize]);
    load_tile_digits::<T>(
        keys_in,
        base,
        start,
        valid,
        in_stride,
        shift,
        bits,
        flip,
        keys,
        &mut digits,
        cfg,
        checked,
    );
    tile_rank_match(
        &digits,
        ranks,
        &mut counters,
        starts,
        &mut scan_v,
        &mut scan_i,
        cfg,
        RankLayout::OWN_ARRAYS,
        true,
        false,
    );
}

/// Reads the tile's keys warp-striped into `keys` and their digits into `digits` (keys past
/// `valid` get digit `(1 << bits) - 1` and are not read; without `checked` the tile must be
/// full).
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn load_tile_digits<T: Numeric>(
    keys_in: &Array<T>,
    base: usize,
    start: u32,
    valid: u32,
    in_stride: u32,
    shift: u32,
    bits: u32,
    flip: u32,
    keys: &mut Array<T>,
    digits: &mut Array<u32>,
    #[comptime] cfg: RadixConfig,
    #[comptime] checked: bool,
) {
    let items = comptime![cfg.items];
    let mask = (1u32 << bits) - 1u32;
    #[unroll]
    for i in 0..items {
        let j = warp_striped_pos(i, items);
        let mut d = mask;
        if below(j, valid, checked) {
            let key = keys_in[base + (start + j) as usize * in_stride as usize];
            keys[i as usize] = key;
            d = radix_digit::<T>(key, shift, mask, flip);
        }
        digits[i as usize] = d;
    }
}

/// `i < limit` where `checked`; without it (a full tile, every output kept) `true`, with no
/// test left in the kernel.
#[cube]
fn below(i: u32, limit: u32, #[comptime] checked: bool) -> bool {
    let mut inside = true;
    if comptime![checked] {
        inside = i < limit;
    }
    inside
}

/// Second half of `scatter_ranked_match`: places the keys ranked by [`rank_tile_match()`] (and
/// their values) in shared memory in tile order and writes each to `bases[d] + rank` of its
/// row, where `bases[d]` is digit `d`'s first output position minus its first rank in the
/// tile (dropped past `out_cols` when `checked`; without it the tile must be full and
/// `out_cols` at least the row's length).
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn write_ranked_match<T: Numeric, VI: Numeric, VO: Numeric>(
    keys: &Array<T>,
    ranks: &Array<u32>,
    values_in: &Array<VI>,
    keys_out: &mut Array<T>,
    values_out: &mut Array<VO>,
    vbase: usize,
    start: u32,
    valid: u32,
    shift: u32,
    bits: u32,
    flip: u32,
    bases: &SharedMemory<u32>,
    out_row: usize,
    out_cols: u32,
    #[comptime] cfg: RadixConfig,
    #[comptime] values: RadixValues,
    #[comptime] write_keys: bool,
    #[comptime] checked: bool,
) {
    let t = UNIT_POS;
    let threads = comptime![cfg.threads];
    let items = comptime![cfg.items];
    let slots = comptime![radix_slots(cfg.tile_len())];
    let has_values = comptime![values != RadixValues::None];
    let mask = (1u32 << bits) - 1u32;
    let mut keys_sh = SharedMemory::<T>::new(slots);
    let mut vals_sh = SharedMemory::<VI>::new(comptime![if values.staged() { slots } else { 1 }]);
    #[unroll]
    for i in 0..items {
        let j = warp_striped_pos(i, items);
        if below(j, valid, checked) {
            let at = radix_slot(ranks[i as usize]);
            keys_sh[at] = keys[i as usize];
            stage_value::<VI>(values_in, &mut vals_sh, at, vbase, start + j, values);
        }
    }
    sync_cube();
    #[unroll]
    for k in 0..items {
        let j = k * threads + t;
        if below(j, valid, checked) {
            let at = radix_slot(j);
            let key = keys_sh[at];
            let d = radix_digit::<T>(key, shift, mask, flip) as usize;
            let dst = bases[d] + j;
            if below(dst, out_cols, checked) {
                let o = out_row + dst as usize;
                if comptime![write_keys] {
                    keys_out[o] = key;
                }
                if comptime![has_values] {
                    values_out[o] = pass_value::<T, VI, VO>(key, &vals_sh, at, flip, values);
                }
            }
        }
    }
}

/// Ranks by bit splits: keys (and values) are staged striped in shared memory, their packed
/// digits sorted in the exchange buffer, and written out through it.
#[cube]
#[allow(clippy::too_many_arguments)]
fn scatter_ranked_split<T: Numeric, VI: Numeric, VO: Numeric>(
    keys_in: &Array<T>,
    values_in: &Array<VI>,
    keys_out: &mut Array<T>,
    values_out: &mut Array<VO>,
    base: usize,
    vbase: usize,
    start: u32,
    valid: u32,
    in_stride: u32,
    shift: u32,
    bits: u32,
    flip: u32,
    starts: &mut SharedMemory<u32>,
    firsts: &SharedMemory<u32>,
    out_row: usize,
    out_cols: u32,
    #[comptime] cfg: RadixConfig,
    #[comptime] values: RadixValues,
    #[comptime] write_keys: bool,
) {
    let t = UNIT_POS;
    let threads = comptime![cfg.threads];
    let items = comptime![cfg.items];
    let slots = comptime![radix_slots(cfg.tile_len())];
    let has_values = comptime![values != RadixValues::None];
    let mask = (1u32 << bits) - 1u32;
    let mut keys_sh = SharedMemory::<T>::new(slots);
    let mut vals_sh = SharedMemory::<VI>::new(comptime![if values.staged() { slots } else { 1 }]);
    let mut xch = SharedMemory::<u32>::new(slots);
    let mut scan_v = SharedMemory::<u32>::new(comptime![2 * cfg.threads as usize]);
    let mut scan_i = SharedMemory::<u32>::new(1usize);
    #[unroll]
    for k in 0..items {
        let j = k * threads + t;
        let i = start + j;
        if j < valid {
            keys_sh[radix_slot(j)] = keys_in[base + i as usize * in_stride as usize];
            stage_value::<VI>(values_in, &mut vals_sh, radix_slot(j), vbase, i, values);
        }
    }
    sync_cube();

    let mut packed = Array::<u32>::new(comptime![cfg.items as usize]);
    #[unroll]
    for i in 0..items {
        let j = t * items + i;
        let mut d = mask;
        if j < valid {
            d = radix_digit::<T>(keys_sh[radix_slot(j)], shift, mask, flip);
        }
        packed[i as usize] = d | (j << DIGIT_BITS);
    }
    tile_sort_by_digit(
        &mut packed,
        &mut xch,
        &mut scan_v,
        &mut scan_i,
        bits,
        threads,
        items,
        comptime![cfg.plane_ops],
        comptime![cfg.wide_counts],
    );

    // Where each digit's run starts in the sorted tile.
    let low = (1u32 << DIGIT_BITS) - 1u32;
    #[unroll]
    for k in 0..items {
        let j = k * threads + t;
        if j < valid {
            let d = xch[radix_slot(j)] & low;
            // The entry before `j` (itself at `j == 0`, where no run can continue).
            let prev = xch[radix_slot(j - u32::cast_from(j > 0u32))] & low;
            if j == 0u32 || prev != d {
                starts[d as usize] = j;
            }
        }
    }
    sync_cube();

    #[unroll]
    for k in 0..items {
        let j = k * threads + t;
        if j < valid {
            let p = xch[radix_slot(j)];
            let d = p & low;
            let src = radix_slot(p >> DIGIT_BITS);
            let dst = firsts[d as usize] + j - starts[d as usize];
            if dst < out_cols {
                let o = out_row + dst as usize;
                if comptime![write_keys] {
                    keys_out[o] = keys_sh[src];
                }
                if comptime![has_values] {
                    let key = keys_sh[src];
                    values_out[o] = pass_value::<T, VI, VO>(key, &vals_sh, src, flip, values);
                }
            }
        }
    }
}

/// Stages the value of the key at position `pos` of its row in `vals_sh[at]`: read from
/// `values_in` (`Load`), or the position itself (`Iota`, `PackIota`); nothing otherwise.
#[cube]
fn stage_value<VI: Numeric>(
    values_in: &Array<VI>,
    vals_sh: &mut SharedMemory<VI>,
    at: usize,
    vbase: usize,
    pos: u32,
    #[comptime] values: RadixValues,
) {
    if comptime![values == RadixValues::Load] {
        vals_sh[at] = values_in[vbase + pos as usize];
    } else if comptime![values == RadixValues::Iota || values == RadixValues::PackIota] {
        vals_sh[at] = VI::cast_from(pos);
    }
}

/// The value written with `key` (see [`RadixValues`]): the staged `vals_sh[at]` converted to
/// `VO`; under `PackIota` the u64 `(ordered(key) ^ flip) << 32 | vals_sh[at]`; under
/// `LowBits` the lower half of the u64 key.
#[cube]
#[allow(unused_assignments)] // every comptime branch assigns `v`
pub fn pass_value<T: Numeric, VI: Numeric, VO: Numeric>(
    key: T,
    vals_sh: &SharedMemory<VI>,
    at: usize,
    flip: u32,
    #[comptime] values: RadixValues,
) -> VO {
    let mut v = VO::from_int(0);
    if comptime![values == RadixValues::PackIota] {
        let hi = u64::cast_from(ordered_key32::<T>(key) ^ flip);
        v = VO::cast_from((hi << 32u64) | u64::cast_from(vals_sh[at]));
    } else if comptime![values == RadixValues::LowBits] {
        v = VO::cast_from(u32::cast_from(u64::reinterpret(key) & 0xffff_ffffu64));
    } else {
        v = VO::cast_from(vals_sh[at]);
    }
    v
}
