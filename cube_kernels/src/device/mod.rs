//! Launchable kernels (device-wide algorithms) and the state they share across cubes.
//!
//! - [`tile_state`]: the look-back status of each tile, published in 32-bit atomic words;
//! - [`lookback`]: decoupled look-back with the "decoupled fallback" rule (a cube that waits too
//!   long reduces the missing tile itself), so no runtime needs forward-progress guarantees;
//! - [`scan_rows`]: the scan kernel (one tile per cube; single-tile rows, look-back, or
//!   tile prefixes computed by a separate pass);
//! - [`reduce_tiles`]: tile aggregates, the first pass of reduce-then-scan;
//! - [`fill`]: fills a `u32` buffer (resets the look-back state);
//! - [`radix_histogram`], [`radix_scatter`]: the two kernels of one device-wide radix-sort digit
//!   pass (tile histograms → scan of the counts → stable scatter);
//! - [`radix_histogram_all`], [`radix_onesweep`]: the onesweep sort (every pass's digit totals
//!   in one read, then one kernel per pass: rank, look back over digit counts, scatter);
//! - [`radix_sort_rows`]: rows that fit one tile, sorted inside one cube each;
//! - [`search_sorted`]: searchsorted / bucketize.
//! - [`select`]: single-pass stream compaction (select, partition, nonzero, count);
//! - [`run_length`]: single-pass run-length encoding (reduce-by-key, unique-consecutive);
//!   [`run_length_heads`]: its tile for unique-consecutive, from the head mask alone;
//! - [`reduce`]: tile reductions of rows (whole buffers and any axis);
//! - [`histogram`]: bincount of integer keys (shared-memory bins, or global atomics);
//! - [`scatter`]: `out[index[i]] = src[i]` (inverse of a sort permutation, for unique).

pub mod fill;
pub mod histogram;
pub mod lookback;
pub mod radix_histogram;
pub mod radix_histogram_all;
pub mod radix_onesweep;
pub mod radix_scatter;
pub mod radix_select_rows;
pub mod radix_sort_rows;
pub mod reduce;
pub mod reduce_tiles;
pub mod run_length;
pub mod run_length_fixup;
pub mod run_length_heads;
pub mod scan_rows;
pub mod scatter;
pub mod search_sorted;
pub mod select;
pub mod tile_state;

pub use scan_rows::ScanMode;

use cubecl::prelude::*;

/// The row length in vectors: `n_vec`, or with `device_len` the smaller of `n_vec` (the
/// capacity) and the count `len[0]` that an earlier kernel left on the device.
#[cube]
pub fn row_length(len: &Array<u32>, n_vec: u32, #[comptime] device_len: bool) -> u32 {
    let mut n = n_vec;
    if comptime![device_len] {
        let c = len[0];
        if c < n_vec {
            n = c;
        }
    }
    n
}

/// Offsets (in vectors) of the start of `row` in the input and the output. `layout` holds
/// `[rank, shape.., in_strides.., out_strides.., in_offset]` of the dimensions other than the
/// scanned one.
#[cube]
pub fn row_offsets(row: u32, layout: &Array<u32>) -> (usize, usize) {
    let rank = layout[0] as usize;
    let mut rem = row as usize;
    let mut bin = layout[1 + 3 * rank] as usize;
    let mut bout = 0usize;
    for k in 0..rank {
        let d = rank - 1 - k;
        let size = layout[1 + d] as usize;
        let c = rem % size;
        rem /= size;
        bin += c * layout[1 + rank + d] as usize;
        bout += c * layout[1 + 2 * rank + d] as usize;
    }
    (bin, bout)
}
