//! One digit pass of a onesweep radix sort (Adinets & Merrill 2022): each cube counts its
//! tile's digits and publishes the counts (CUB's early counts), ranks the tile by the digit,
//! learns where each digit's keys of the earlier tiles of its row end by a decoupled look-back
//! over per-(tile, digit) counts, and scatters the tile. The digit totals
//! of the whole row come from [`radix_histogram_all`](super::radix_histogram_all), computed
//! once for every pass; so a pass reads the keys once and writes them once.
//!
//! State: word 0 is the tile-id counter, then 256 words per tile (`1 + tile * 256 + d`), each
//! `status << 30 | count` with status [`AGGREGATE`] (the tile's own count of the digit) or
//! [`INCLUSIVE`] (the count of the tile and every earlier tile of its row). Status and count
//! share one 32-bit atomic word, so a reader never sees one without the other (cubecl's
//! atomics are relaxed and it has no fence; WGSL has no 64-bit atomics): rows must be shorter
//! than 2^30 keys. The state must be zero before the launch.
//!
//! Forward progress: tile ids come from the counter, so every predecessor has started; a digit
//! whose predecessor has published nothing after `spins` look-back rounds is counted by this
//! cube itself from the predecessor's keys (the decoupled fallback of Smith, Levien & Owens,
//! as [`lookback`](super::lookback) does for the scan). Rounds are cube-uniform (agreement
//! through shared memory and barriers), and every per-unit loop is bounded, so no runtime
//! needs forward-progress guarantees between cubes (WGSL, Metal, lavapipe) and llvmpipe's
//! loop limit is never reached.
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::radix_histogram::{radix_row_base, radix_row_len, RADIX};
use super::radix_scatter::{load_tile_digits, write_ranked_match, RadixValues};
use crate::cube::{
    clear_shared_counters, cube_exclusive_scan, match_counter_slots, tile_rank_match,
    warp_striped_pos, RadixConfig,
};
use crate::ops::{radix_digit, Add, Item};
use cubecl::prelude::*;

/// Status of a (tile, digit) word holding the tile's own count.
pub const AGGREGATE: u32 = 1 << 30;
/// Status of a (tile, digit) word holding the inclusive count of the row up to the tile.
pub const INCLUSIVE: u32 = 2 << 30;
/// The count bits of a state word.
pub const COUNT_MASK: u32 = (1 << 30) - 1;
/// The status bits of a state word.
const STATUS_MASK: u32 = 3 << 30;
/// Longest row (exclusive) the onesweep pass serves.
pub const MAX_ROW: usize = 1 << 30;

/// Look-back settings of [`radix_onesweep()`].
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub struct OnesweepLookback {
    /// Rounds a digit waits on a silent predecessor before counting its keys itself.
    pub spins: u32,
    /// Predecessors a unit reads per digit per round (walking over aggregates): their words are
    /// loaded together, then read nearest first.
    pub steps: u32,
    /// Poll with plain loads through `state_view` (CUDA: atomic loads are read-modify-writes
    /// there), refreshing with an atomic load every 8th round.
    pub plain_reads: bool,
}

/// State words of a pass over `num_tiles` tiles (the counter included).
pub fn onesweep_state_words(num_tiles: u32) -> usize {
    1 + num_tiles as usize * RADIX as usize
}

/// Shared bytes [`radix_onesweep()`] needs beyond [`radix_scatter`](super::radix_scatter)'s ballot
/// path: the digit-total scan's scratch, the early counts, the fallback histogram and a few
/// words.
pub fn onesweep_extra_shared_bytes(threads: u32) -> usize {
    8 * threads as usize + 8 * RADIX as usize + 64
}

/// One onesweep pass over tiles of `cfg` (ballot ranking: `cfg.plane_ops` must hold). Keys
/// are read as [`radix_scatter`](super::radix_scatter::radix_scatter()) reads them and written
/// as it writes them (values, `out_cols`, `flip`, bit range alike). `totals`: the digit
/// totals of every row and pass (`[rows, passes, 256]`, this pass at `pass`). `state`:
/// [`onesweep_state_words`] zeroed words; `state_view` the same buffer bound again where
/// `lb.plain_reads`, else a dummy. Launch `num_tiles` cubes.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn radix_onesweep<T: Numeric, VI: Numeric, VO: Numeric>(
    keys_in: &Array<T>,
    values_in: &Array<VI>,
    keys_out: &mut Array<T>,
    values_out: &mut Array<VO>,
    totals: &Array<u32>,
    state: &mut Array<Atomic<u32>>,
    state_view: &mut Array<u32>,
    layout: &Array<u32>,
    count: &Array<u32>,
    n: u32,
    tiles_per_row: u32,
    num_tiles: u32,
    in_stride: u32,
    strided: u32,
    out_cols: u32,
    shift: u32,
    bits: u32,
    flip: u32,
    pass: u32,
    passes: u32,
    #[comptime] cfg: RadixConfig,
    #[comptime] device_len: bool,
    #[comptime] values: RadixValues,
    #[comptime] write_keys: bool,
    #[comptime] lb: OnesweepLookback,
) {
    let t = UNIT_POS;
    let threads = comptime![cfg.threads];
    let tile_len = comptime![cfg.tile_len()];
    let dr = comptime![RADIX.div_ceil(cfg.threads)];
    // Tile ids in the order cubes start, so every predecessor has started.
    let mut ticket = SharedMemory::<u32>::new(1usize);
    if t == 0 {
        ticket[0] = state[0].fetch_add(1u32);
    }
    sync_cube();
    let tile_id = ticket[0];
    let row = tile_id / tiles_per_row;
    let tile = tile_id % tiles_per_row;
    let len = radix_row_len(n, count, device_len);
    let start = tile * tile_len;
    // Uniform per cube. Tiles past a device-resident length do nothing: no later tile of the
    // row waits for them.
    if tile_id < num_tiles && start < len {
        let valid = select(len - start < tile_len, len - start, tile_len);
        let base = radix_row_base(row, n, layout, strided);
        let vbase = row as usize * n as usize;
        let mask = (1u32 << bits) - 1u32;
        let mut starts = SharedMemory::<u32>::new(comptime![RADIX as usize]);
        let mut firsts = SharedMemory::<u32>::new(comptime![RADIX as usize]);
        let mut keys = Array::<T>::new(comptime![cfg.items as usize]);
        let mut ranks = Array::<u32>::new(comptime![cfg.items as usize]);
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
            &mut keys,
            &mut digits,
            cfg,
            true,
        );

        // This tile's count of each digit, published before the ranking (CUB's early counts):
        // by the time a later tile looks back, its predecessors' counts are out, so its rounds
        // walk over them instead of waiting. Unit t holds digits t, t + threads, ...
        let row_tile0 = tile_id - tile;
        let sbase = 1 + tile_id as usize * RADIX as usize;
        let own_status = select(tile == 0u32, INCLUSIVE, AGGREGATE);
        let hist = SharedMemory::<Atomic<u32>>::new(comptime![RADIX as usize]);
        clear_shared_counters(&hist, RADIX, threads);
        sync_cube();
        #[unroll]
        for i in 0..comptime![cfg.items] {
            if warp_striped_pos(i, comptime![cfg.items]) < valid {
                hist[digits[i as usize] as usize].fetch_add(1u32);
            }
        }
        sync_cube();
        let mut cnt = Array::<u32>::new(comptime![dr as usize]);
        #[unroll]
        for k in 0..dr {
            let d = k * threads + t;
            let mut c = 0u32;
            if d < RADIX {
                c = hist[d as usize].load();
                state[sbase + d as usize].store(own_status | c);
            }
            cnt[k as usize] = c;
        }

        let mut counters = SharedMemory::<u32>::new(comptime![match_counter_slots(&cfg)]);
        let mut rscan_v = SharedMemory::<u32>::new(comptime![2 * cfg.threads as usize]);
        let mut rscan_i = SharedMemory::<u32>::new(1usize);
        tile_rank_match(
            &digits,
            &mut ranks,
            &mut counters,
            &mut starts,
            &mut rscan_v,
            &mut rscan_i,
            cfg,
            true,
            false,
        );
        sync_cube();

        // Each digit's first position in the row: exclusive scan of the row's digit totals
        // (unit t owns digits t * dr ..).
        let tbase = (row * passes + pass) as usize * RADIX as usize;
        let mut scan_v = SharedMemory::<u32>::new(comptime![2 * cfg.threads as usize]);
        let mut scan_i = SharedMemory::<u32>::new(1usize);
        let mut sum = 0u32;
        #[unroll]
        for k in 0..dr {
            let d = t * dr + k;
            if d < RADIX {
                sum += totals[tbase + d as usize];
            }
        }
        let cs = cube_exclusive_scan::<u32, Add>(
            count_item::<u32>(sum),
            &mut scan_v,
            &mut scan_i,
            threads,
            false,
            comptime![cfg.plane_ops],
        );
        let mut run = cs.exclusive.value;
        #[unroll]
        for k in 0..dr {
            let d = t * dr + k;
            if d < RADIX {
                firsts[d as usize] = run;
                run += totals[tbase + d as usize];
            }
        }

        let mut excl = Array::<u32>::new(comptime![dr as usize]);
        #[unroll]
        for k in 0..dr {
            excl[k as usize] = 0u32;
        }
        if tile > 0u32 {
            digit_lookback::<T>(
                keys_in, base, in_stride, shift, mask, flip, state, state_view, row_tile0, tile,
                &mut excl, cfg, lb,
            );
        }
        // Every unit's `firsts` are written (the look-back ends on a barrier; tile 0 has none).
        sync_cube();
        #[unroll]
        for k in 0..dr {
            let d = k * threads + t;
            if d < RADIX {
                if tile > 0u32 {
                    state[sbase + d as usize]
                        .store(INCLUSIVE | (excl[k as usize] + cnt[k as usize]));
                }
                // Minus the digit's first rank in the tile: `write_ranked_match`'s bases.
                firsts[d as usize] += excl[k as usize] - starts[d as usize];
            }
        }
        // `write_ranked_match` syncs the cube before it reads `firsts`.
        write_ranked_match::<T, VI, VO>(
            &keys,
            &ranks,
            values_in,
            keys_out,
            values_out,
            vbase,
            start,
            valid,
            shift,
            bits,
            flip,
            &firsts,
            row as usize * out_cols as usize,
            out_cols,
            cfg,
            values,
            write_keys,
            true,
        );
    }
}

/// A count as a scan item.
#[cube]
fn count_item<A: Numeric>(value: A) -> Item<A> {
    Item::<A> { value, index: 0u32 }
}

/// A state word: an atomic load, or with `plain` an ordinary load through `view` (see
/// `tile_state::load_word`).
#[cube]
fn state_word(
    state: &Array<Atomic<u32>>,
    view: &Array<u32>,
    i: usize,
    round: u32,
    #[comptime] plain_reads: bool,
) -> u32 {
    if comptime![plain_reads] {
        if round % 8u32 != 7u32 {
            view[i]
        } else {
            state[i].load()
        }
    } else {
        state[i].load()
    }
}

/// `excl[k]` += the keys with digit `k * threads + UNIT_POS` in the tiles `0 .. tile` of the
/// row whose tile 0 has id `row_tile0`. Every unit of the cube calls it (cube-uniform rounds);
/// it ends on a barrier.
#[cube]
#[allow(clippy::too_many_arguments)]
fn digit_lookback<T: Numeric>(
    keys_in: &Array<T>,
    base: usize,
    in_stride: u32,
    shift: u32,
    mask: u32,
    flip: u32,
    state: &Array<Atomic<u32>>,
    view: &Array<u32>,
    row_tile0: u32,
    tile: u32,
    excl: &mut Array<u32>,
    #[comptime] cfg: RadixConfig,
    #[comptime] lb: OnesweepLookback,
) {
    let t = UNIT_POS;
    let threads = comptime![cfg.threads];
    let items = comptime![cfg.items];
    let tile_len = comptime![cfg.tile_len()];
    let dr = comptime![RADIX.div_ceil(cfg.threads)];
    // Per digit: predecessors passed, done (1), rounds waited on the current one.
    let mut passed = Array::<u32>::new(comptime![dr as usize]);
    let mut done = Array::<u32>::new(comptime![dr as usize]);
    let mut waited = Array::<u32>::new(comptime![dr as usize]);
    #[unroll]
    for k in 0..dr {
        passed[k as usize] = 0u32;
        waited[k as usize] = 0u32;
        done[k as usize] = u32::cast_from(k * threads + t >= RADIX);
    }
    // The digit counts of one predecessor this cube counted itself (fallback), and which
    // (row-relative tile + 1; 0: none).
    let own = SharedMemory::<Atomic<u32>>::new(comptime![RADIX as usize]);
    let mut own_tile = SharedMemory::<u32>::new(1usize);
    // [a digit is still open, the tile to count + 1]
    let ctrl = SharedMemory::<Atomic<u32>>::new(2usize);
    if t == 0 {
        own_tile[0] = 0u32;
        ctrl[0].store(0u32);
        ctrl[1].store(0u32);
    }
    sync_cube();
    let mut round = 0u32;
    loop {
        round += 1;
        let counted = own_tile[0];
        let mut open = false;
        let mut stuck = 0u32;
        #[unroll]
        for k in 0..dr {
            let d = k * threads + t;
            if done[k as usize] == 0u32 {
                // The nearest predecessor not yet passed (row-relative), and the window of
                // `lb.steps` predecessors from it down: their words are loaded back to back
                // (independent loads, one latency), then read nearest first.
                let p0 = tile - 1 - passed[k as usize];
                let mut words = Array::<u32>::new(comptime![lb.steps as usize]);
                #[unroll]
                for s in 0..comptime![lb.steps] {
                    let mut w = 0u32;
                    if s <= p0 {
                        let i = 1 + (row_tile0 + p0 - s) as usize * RADIX as usize + d as usize;
                        w = state_word(state, view, i, round, comptime![lb.plain_reads]);
                    }
                    words[s as usize] = w;
                }
                // Runtime-true (a literal flag may be folded in the unrolled loop).
                let mut go = done[k as usize] == 0u32;
                #[unroll]
                for s in 0..comptime![lb.steps] {
                    if go && s <= p0 {
                        let p = p0 - s;
                        let w = words[s as usize];
                        let status = w & STATUS_MASK;
                        let mut c = w & COUNT_MASK;
                        let mut ready = status != 0u32;
                        if !ready && counted == p + 1 {
                            c = own[d as usize].load();
                            ready = true;
                        }
                        if ready {
                            excl[k as usize] += c;
                            passed[k as usize] += 1;
                            waited[k as usize] = 0u32;
                            if status == INCLUSIVE || passed[k as usize] == tile {
                                done[k as usize] = 1u32;
                                go = false;
                            }
                        } else {
                            waited[k as usize] += 1;
                            if waited[k as usize] >= comptime![lb.spins] && p + 1 > stuck {
                                stuck = p + 1;
                            }
                            go = false;
                        }
                    }
                }
            }
            if done[k as usize] == 0u32 {
                open = true;
            }
        }
        if open {
            ctrl[0].store(1u32);
        }
        if stuck > 0u32 {
            ctrl[1].fetch_max(stuck);
        }
        sync_cube();
        let any_open = ctrl[0].load();
        let fallback = ctrl[1].load();
        sync_cube();
        if any_open == 0u32 {
            break;
        }
        if fallback > 0u32 {
            // Count the silent predecessor's digits from its keys (a full tile).
            clear_shared_counters(&own, RADIX, threads);
            sync_cube();
            let pstart = (fallback - 1) * tile_len;
            #[unroll]
            for k in 0..items {
                let j = pstart + k * threads + t;
                let key = keys_in[base + j as usize * in_stride as usize];
                own[radix_digit::<T>(key, shift, mask, flip) as usize].fetch_add(1u32);
            }
            if t == 0 {
                own_tile[0] = fallback;
            }
        }
        if t == 0 {
            ctrl[0].store(0u32);
            ctrl[1].store(0u32);
        }
        sync_cube();
    }
}
