//! Primitives over one cube (block / workgroup).
//!
//! - [`cube_scan`]: exclusive scan of one item per unit (planes + shared memory, or shared
//!   memory alone where the runtime has no plane operations);
//! - [`tile_scan`]: a tile of `threads × vectors_per_thread` vectors: striped (coalesced) load,
//!   per-unit scan in registers, raking scan through shared memory;
//! - [`radix_rank`]: stable ranking of a tile by a radix digit (1-bit splits over cube scans).

mod config;
mod cube_scan;
mod radix_rank;
mod tile_scan;

pub use config::TileConfig;
pub use cube_scan::{cube_exclusive_scan, CubeScan};
pub use radix_rank::{radix_slot, radix_slots, tile_sort_by_digit, RadixConfig, DIGIT_BITS};
pub use tile_scan::{load_tile, tile_aggregate, write_tile, TileShared};
