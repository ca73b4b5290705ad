//! Launchable kernels (device-wide algorithms) and the state they share across cubes.
//!
//! - [`single_pass`]: the single-pass layer every look-back kernel uses (its constants, the
//!   tile ticket, publishing a tile, a tile's look-back), over:
//! - [`tile_state`]: the look-back status of each tile, published in 32-bit atomic words;
//! - [`lookback`]: decoupled look-back with the "decoupled fallback" rule (a cube that waits too
//!   long reduces the missing tile itself), so no runtime needs forward-progress guarantees;
//! - [`scan_rows`]: the scan kernel (one tile per cube; single-tile rows, look-back, or
//!   tile prefixes computed by a separate pass);
//! - [`reduce_tiles`]: tile aggregates, the first pass of reduce-then-scan;
//! - [`fill`]: fills a `u32` buffer (resets the look-back state);
//! - [`radix_histogram`], [`radix_scatter`]: the two kernels of one device-wide radix-sort digit
//!   pass (tile histograms → scan of the counts → stable scatter);
//! - [`radix_sort_rows`]: rows that fit one tile, sorted inside one cube each;
//! - [`search_sorted`]: searchsorted / bucketize.
//! - [`select`]: single-pass stream compaction (select, partition, nonzero, count);
//! - [`run_length`]: single-pass run-length encoding (reduce-by-key, unique-consecutive);
//!   [`run_length_heads`]: its tile for unique-consecutive, from the head mask alone;
//! - [`reduce`]: tile reductions of rows (whole buffers and any axis);
//! - [`recurrence_chunks`]: the linear recurrence in chunks, for f64 (no look-back);
//! - [`histogram`]: bincount of integer keys (shared-memory bins, or global atomics);
//! - [`scatter`]: `out[index[i]] = src[i]` (inverse of a sort permutation, for unique);
//! - [`index`]: index outputs narrowed to u32 (the candle adapter's index dtype).

/// Fills a `u32` buffer with one value (resets the look-back state).
pub mod copy;
pub mod fill;
pub mod histogram;
pub mod index;
pub mod lookback;
pub mod radix_histogram;
pub mod radix_scatter;
pub mod radix_select_rows;
pub mod radix_sort_rows;
pub mod recurrence_chunks;
pub mod reduce;
pub mod reduce_tiles;
mod rows;
pub mod run_length;
pub mod run_length_fixup;
pub mod run_length_heads;
pub mod scan_rows;
pub mod scatter;
pub mod search_sorted;
pub mod select;
pub mod single_pass;
pub mod tile_state;

pub use rows::{row_length, row_offsets};
pub use scan_rows::ScanMode;
