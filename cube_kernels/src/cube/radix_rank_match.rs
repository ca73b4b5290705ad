//! Stable ranking of a tile by an 8-bit digit with plane ballots (CUB's `BlockRadixRankMatch`).
//!
//! Keys are warp-striped: plane `w` holds the contiguous run `[w * PLANE_DIM * items, ..)` of
//! the tile, its `i`-th chunk of `PLANE_DIM` keys at `(w * items + i) * PLANE_DIM + lane`
//! ([`warp_striped_pos`]). The chunks of a plane are ranked in order: eight ballots (one per
//! digit bit) give each key the lanes holding the same digit; its rank in the plane is the
//! plane's running count of that digit plus the matching lanes below it. The lowest matching
//! lane reads and bumps the count (one counter of 256 per plane, in shared memory) and hands
//! the old value to the others by a shuffle. An exclusive scan of the counters in digit-major
//! order (digit, then plane) turns them into each (digit, plane)'s first rank in the tile.
//! Ranks are stable: planes cover increasing runs and each plane walks its chunks in order.
//!
//! Every plane must be full (`threads` a multiple of the plane width) and every unit must call
//! it in uniform control flow (the ballots and shuffles see the whole plane). The ballot words
//! past the first come from runtimes whose ballot fills them (WGSL's `subgroupBallot`);
//! cubecl 0.10's HIP dialect keeps only the low 32 bits, so 64-lane HIP planes would need it
//! fixed there first (cubeprim has no HIP runtime).
// `#[cube]` generates an undocumented module (and its items) beside each function, and
// `#[derive(CubeType)]` an undocumented expand type beside each type.
#![allow(missing_docs)]

use super::radix_rank::count_item;
use super::{cube_exclusive_scan, cube_exclusive_scan_at, radix_slot, radix_slots, RadixConfig};
use crate::ops::Add;
use cubecl::prelude::*;

/// Digits of the 8-bit radix.
const RADIX: u32 = 256;

/// Tile position of a unit's `i`-th key in the warp-striped arrangement.
#[cube]
pub fn warp_striped_pos(i: u32, #[comptime] items: u32) -> u32 {
    (UNIT_POS / PLANE_DIM * items + i) * PLANE_DIM + UNIT_POS_PLANE
}

/// Bits of ballot word `k` that belong to lanes of the plane (`PLANE_DIM` lanes).
#[cube]
fn lanes_in_word(k: u32) -> u32 {
    let first = 32u32 * k;
    let mut m = 0u32;
    if PLANE_DIM >= first + 32u32 {
        m = 0xffff_ffffu32;
    } else if PLANE_DIM > first {
        m = (1u32 << (PLANE_DIM - first)) - 1u32;
    }
    m
}

/// Bits of ballot word `k` of the lanes below this unit's lane.
#[cube]
fn lanes_below_in_word(k: u32) -> u32 {
    let first = 32u32 * k;
    let lane = UNIT_POS_PLANE;
    let mut m = 0u32;
    if lane >= first + 32u32 {
        m = 0xffff_ffffu32;
    } else if lane > first {
        m = (1u32 << (lane - first)) - 1u32;
    }
    m
}

/// Shared-memory counters of [`tile_rank_match()`]: 256 per plane, for the most planes a cube of
/// `cfg.threads` units can have (`threads / plane_min`), padded like [`radix_slot()`], after
/// `COUNTER_LEAD` unused words.
pub fn match_counter_slots(cfg: &RadixConfig) -> usize {
    COUNTER_LEAD as usize + radix_slots(RADIX * (cfg.threads / cfg.plane_min.max(1)).max(1))
}

/// Words left unused before the first counter (one 128-byte line), so that no counter sits at
/// byte 0 of the cube's shared memory. cubecl places the shared arrays in a different order in
/// every process; when the counters came first, NVRTC compiled the row sort to 126 registers
/// instead of 80 and it ran 9-10 % slower on the H200 (BENCHMARKS.md at 52581a0, 2026-12-03
/// (H200), "The row sort's two speeds come from where cubecl puts the ballot counters").
pub const COUNTER_LEAD: u32 = 32;

/// Where [`tile_rank_match()`] keeps its scratch in shared memory.
///
/// A kernel whose layout matters carves its u32 arrays from one shared array in a fixed order
/// (cubecl-opt 0.10 places separate arrays in a hash set's order, a different one in every
/// process): the counters then start at word `counters_at` of that array, and with
/// `scan_in_counters` the cube scan's scratch (`2 * threads` words) follows them there, at
/// `counters_at + match_counter_slots(cfg)`, instead of living in its own `scan_v`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RankLayout {
    /// Word of `counters` where the counters (and their [`COUNTER_LEAD`]) start.
    pub counters_at: usize,
    /// The cube scan's scratch follows the counters in `counters`; `scan_v` is not used.
    pub scan_in_counters: bool,
}

impl RankLayout {
    /// Counters from word 0 of their own array, the scan in `scan_v`.
    pub const OWN_ARRAYS: RankLayout = RankLayout {
        counters_at: 0,
        scan_in_counters: false,
    };

    /// Counters from word `at` of a carved array, the scan's scratch right after them.
    pub const fn carved(at: usize) -> RankLayout {
        RankLayout {
            counters_at: at,
            scan_in_counters: true,
        }
    }

    /// Words of the carved array that the ranking uses, from `counters_at` on.
    pub fn carved_words(cfg: &RadixConfig) -> usize {
        match_counter_slots(cfg) + 2 * cfg.threads as usize
    }
}

/// The word of counter `c` (see [`COUNTER_LEAD`]) in an array whose counters start at word
/// `at`.
#[cube]
fn counter_slot(c: u32, #[comptime] at: usize) -> usize {
    comptime![at + COUNTER_LEAD as usize] + radix_slot(c)
}

/// Ranks the tile by digit, stably (tiles of at most 2^24 keys). `digits`: the unit's `items`
/// digits (< 256), warp-striped (digit `i` is the key at
/// [`warp_striped_pos(i)`](warp_striped_pos())); `ranks`: on return, each key's position in the
/// tile sorted by digit. With `write_starts`, `starts[d]` is the first rank of digit `d` (the keys
/// of smaller digits). `counters`: [`match_counter_slots`] words from `layout.counters_at` (and
/// the scan's scratch after them where `layout.scan_in_counters`, see [`RankLayout`]);
/// `scan_v` / `scan_i`: scratch of [`cube_exclusive_scan()`] otherwise. It passes cube barriers after every unit has its digits, so shared
/// memory the digits were read from may be overwritten on return; the caller syncs before reusing
/// `counters` or reading `starts`. `mask_tests`: how the digit bits are tested for the ballots (see
/// the body; the same ranks either way).
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn tile_rank_match(
    digits: &Array<u32>,
    ranks: &mut Array<u32>,
    counters: &mut SharedMemory<u32>,
    starts: &mut SharedMemory<u32>,
    scan_v: &mut SharedMemory<u32>,
    scan_i: &mut SharedMemory<u32>,
    #[comptime] cfg: RadixConfig,
    #[comptime] layout: RankLayout,
    #[comptime] write_starts: bool,
    #[comptime] mask_tests: bool,
) {
    let at = comptime![layout.counters_at];
    let items = comptime![cfg.items];
    let words = comptime![cfg.plane_max.div_ceil(32).clamp(1, 4)];
    let plane = UNIT_POS / PLANE_DIM;
    let planes = CUBE_DIM / PLANE_DIM;
    // Each unit owns `256 / PLANE_DIM` consecutive counters (digit-major) for the zeroing and
    // the scan.
    let per = RADIX / PLANE_DIM;
    let own = UNIT_POS * per;
    for k in 0..per {
        counters[counter_slot(own + k, at)] = 0u32;
    }
    sync_cube();

    // Per ballot word: the plane's lanes, and those below this unit's lane.
    let mut plane_lanes = Array::<u32>::new(comptime![words as usize]);
    let mut lanes_below = Array::<u32>::new(comptime![words as usize]);
    #[unroll]
    for k in 0..words {
        plane_lanes[k as usize] = lanes_in_word(k);
        lanes_below[k as usize] = lanes_below_in_word(k);
    }
    #[unroll]
    for i in 0..items {
        let d = digits[i as usize];
        let mut lanes = Array::<u32>::new(comptime![words as usize]);
        #[unroll]
        for k in 0..words {
            lanes[k as usize] = plane_lanes[k as usize];
        }
        if comptime![cfg.ptx_ballot] {
            // CUDA only: until the `#undef` below, every `__shfl_sync(mask, v, lane)` that
            // cubecl writes becomes CUB's `MatchAny` step in inline PTX: a ballot of `v != 0`
            // and, where `v` is 0, a predicated `not` (the lanes whose bit equals this unit's).
            // cubecl 0.10 has no inline assembly, and its multi-line comments are written as
            // `/* .. */` verbatim: that is how the directive gets into the source. The shuffle
            // is only its carrier, chosen because it takes the u32 `d & bit` as it is. On the
            // H200 (BENCHMARKS.md at 52581a0, 2026-12-02 (H200), "CUB's PTX ballots in the
            // radix ranking") the u32 sort of 2^28 took 6.56 ms this way against 7.18 with
            // cubecl's ballots; with `__ballot_sync` of the bool as the carrier (a conversion
            // back to a predicate), 7.39-7.43 against 7.28. `codegen_sort` checks that the
            // CUDA source carries the directive around every carrier.
            comment!(
                "*/\n#define __shfl_sync(mask_, v_, lane_) ([](const unsigned int x_) { unsigned int r_; asm(\"{ .reg .pred p; setp.ne.u32 p, %1, 0; vote.sync.ballot.b32 %0, p, 0xffffffff; @!p not.b32 %0, %0; }\" : \"=r\"(r_) : \"r\"(x_)); return r_; }(v_))\n/*"
            );
        }
        #[unroll]
        for b in 0..8u32 {
            if comptime![cfg.ptx_ballot] {
                // The lanes whose bit equals this unit's, through the `#define` above (32-lane
                // planes: one word). With `mask_tests`, the mask is a value the compiler cannot
                // fold, as below.
                let mut one = u32::new(1);
                if comptime![mask_tests] {
                    one = plane_lanes[0] & 1u32;
                }
                let matching = plane_shuffle(d & (one << b), 0u32);
                lanes[0] &= matching;
            } else if comptime![mask_tests] {
                // `plane_lanes[0] & 1` is 1, as a value the compiler cannot fold: the test
                // stays `d & mask`, which ptxas turns into predicates set straight from the
                // digit (`R2P`: three instructions per ballot), where a literal mask is
                // rewritten as shift, and, compare (six). Measured on the H200 (one run,
                // alternated; BENCHMARKS.md at 52581a0, 2026-12-01 (H200), "The row sort's
                // ballots from bit masks"): the in-cube row sort [16384, 4096] 1.80 -> 1.51 ms; the
                // device-wide scatter, whose ranking interleaves with its global loads, got
                // slower (1.86 -> 1.99 ms a pass), so each kernel chooses.
                let one = plane_lanes[0] & 1u32;
                let set = (d & (one << b)) != 0u32;
                let ballot = plane_ballot(set);
                // All ones where the bit is 0: keep the lanes whose bit equals this unit's.
                let other = select(set, 0u32, 0xffff_ffffu32);
                #[unroll]
                for k in 0..words {
                    lanes[k as usize] &= ballot[k as usize] ^ other;
                }
            } else {
                // Spelled out, not shared with the branch above: on the H200 the u32 sort got
                // 10-12 % slower when these statements went through a helper or a shared `set`
                // variable (the same 2026-12-01 record as above), as the driver's JIT compiled
                // the rewritten CUDA C++ differently. `bit - 1` (all ones where the bit is 0)
                // instead of a select on `bit == 1`: the scatter of full tiles ran 1.35 ms
                // instead of 1.43 (BENCHMARKS.md at 52581a0, 2026-12-02 (H200), "One scatter
                // pass, the generated CUDA edited by hand").
                let bit = (d >> b) & 1u32;
                let ballot = plane_ballot(bit != 0u32);
                // Keep the lanes whose bit equals this unit's.
                let other = bit - 1u32;
                #[unroll]
                for k in 0..words {
                    lanes[k as usize] &= ballot[k as usize] ^ other;
                }
            }
        }
        if comptime![cfg.ptx_ballot] {
            comment!("*/\n#undef __shfl_sync\n/*");
        }
        let mut below = 0u32;
        let mut count = 0u32;
        let mut leader = 0u32;
        // A u32 flag: the flag is set under a runtime condition inside an unrolled loop, and
        // it must stay a runtime variable (a bool initialised from a literal may not).
        let mut found = u32::new(0);
        #[unroll]
        for k in 0..words {
            let m = lanes[k as usize];
            below += (m & lanes_below[k as usize]).count_ones();
            count += m.count_ones();
            if m != 0u32 && found == 0u32 {
                leader = 32u32 * k + m.trailing_zeros();
                found = 1u32;
            }
        }
        let slot = counter_slot(d * planes + plane, at);
        let mut old = 0u32;
        if below == 0u32 {
            old = counters[slot];
            counters[slot] = old + count;
        }
        let base = plane_shuffle(old, leader);
        if comptime![cfg.plane_sync] {
            // Orders this chunk's counter updates before the next chunk's reads (other lanes
            // may lead the same digit next).
            sync_plane();
        }
        // The digit rides above the rank in the plane (< 2^24 keys): `digits` dies here.
        ranks[i as usize] = (base + below) | (d << 24u32);
    }
    sync_cube();

    let mut sum = 0u32;
    for k in 0..per {
        sum += counters[counter_slot(own + k, at)];
    }
    let cs = if comptime![layout.scan_in_counters] {
        cube_exclusive_scan_at::<u32, Add>(
            count_item::<u32>(sum),
            counters,
            scan_i,
            comptime![at + match_counter_slots(&cfg)],
            comptime![cfg.threads],
            false,
            true,
        )
    } else {
        cube_exclusive_scan::<u32, Add>(
            count_item::<u32>(sum),
            scan_v,
            scan_i,
            comptime![cfg.threads],
            false,
            true,
        )
    };
    let mut run = cs.exclusive.value;
    for k in 0..per {
        let slot = counter_slot(own + k, at);
        let c = counters[slot];
        counters[slot] = run;
        run += c;
    }
    sync_cube();

    #[unroll]
    for i in 0..items {
        let r = ranks[i as usize];
        ranks[i as usize] =
            (r & 0xff_ffffu32) + counters[counter_slot((r >> 24u32) * planes + plane, at)];
    }
    if comptime![write_starts] {
        let rounds = comptime![RADIX.div_ceil(cfg.threads)];
        #[unroll]
        for r in 0..rounds {
            let d = r * comptime![cfg.threads] + UNIT_POS;
            if d < RADIX {
                starts[d as usize] = counters[counter_slot(d * planes, at)];
            }
        }
    }
}
