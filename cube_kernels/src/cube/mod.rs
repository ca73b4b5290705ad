//! Primitives over one cube (block / workgroup).
//!
//! - `cube_scan`: exclusive scan of one item per unit (planes + shared memory, or shared
//!   memory alone where the runtime has no plane operations);
//! - `tile_scan`: a tile of `threads × vectors_per_thread` vectors: striped (coalesced) load,
//!   per-unit scan in registers, raking scan through shared memory;
//! - `staged_tile_scan`: the same tile scanned in shared memory (striped load into a staging
//!   buffer, blocked per-unit folds there, one cube scan), for look-back tiles;
//! - `radix_rank`: stable ranking of a tile by a radix digit (1-bit splits over cube scans).
//! - `radix_rank_match`: the same by an 8-bit digit with plane ballots (runtimes with
//!   plane operations).
//! - `tile_reduction`: the combination of one tile (unit folds + one cube-wide scan);
//! - `segmented_scan`: the run-length (segmented) combine and its cube-wide exclusive scan;
//! - `shared_counters`: clearing the shared atomic counters a cube counts digits into;
//! - `shared_order`: which shared array sits at byte 0, whatever order the optimiser allocates in.

mod config;
mod cube_scan;
mod radix_rank;
mod radix_rank_match;
mod segmented_scan;
mod shared_counters;
mod shared_order;
mod staged_tile_scan;
mod tile_reduction;
mod tile_scan;

pub use config::TileConfig;
pub use cube_scan::{cube_exclusive_scan, cube_exclusive_scan_at, CubeScan};
pub use radix_rank::{radix_slot, radix_slots, tile_sort_by_digit, RadixConfig, DIGIT_BITS};
pub use radix_rank_match::{match_counter_slots, tile_rank_match, warp_striped_pos, RankLayout};
pub use segmented_scan::{
    combine_runs, cube_exclusive_segmented_scan, cube_exclusive_segmented_scan_with,
};
pub use shared_counters::clear_shared_counters;
pub use shared_order::lead_shared;
pub use staged_tile_scan::{
    load_tile_staged, tile_aggregate_staged, write_tile_staged, StagedTile,
};
pub use tile_reduction::tile_reduce;
pub use tile_scan::{load_tile, tile_aggregate, write_tile, TileShared};
