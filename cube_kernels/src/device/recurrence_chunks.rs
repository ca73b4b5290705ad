//! The linear recurrence `h[t] = a[t] h[t-1] + b[t]` in chunks, for accumulators the look-back
//! cannot carry (f64: the scans carry the multiplier in a 32-bit word, see
//! [`Affine`](crate::ops::Affine)).
//!
//! Three steps, no unit waiting on another: [`affine_chunks`] composes each chunk of `chunk`
//! consecutive steps into one pair `(A, B)` (`h -> A h + B`); the chunks' pairs form a shorter
//! recurrence of the same layout, which the host solves the same way (recursively, until a row
//! fits one chunk); [`affine_apply`] runs each chunk again from the state that enters it.
//!
//! Layout: a contiguous `[outer, len, inner]` tensor along its middle axis; element `(o, t, i)`
//! at `(o * len + t) * inner + i`. Unit `u` takes `i = u % inner` (adjacent units, adjacent
//! memory where `inner > 1`), chunk `(u / inner) % chunks` and `o = u / (inner * chunks)`. The
//! chunks' pairs are stored as `[outer, chunks, inner]`; `h0` (the state before the first step)
//! as `[outer, inner]`.
// `#[cube]` generates an undocumented module (and its items) beside each function.
#![allow(missing_docs)]

use cubecl::prelude::*;

/// Where unit `u` works: its chunk `c`, the offset `base` of its row's first step `(o, 0, i)`,
/// its row `o * inner + i` (its entry of `h0`), and its chunk's steps `[first, end)`.
#[derive(CubeType)]
struct Chunk {
    c: usize,
    base: usize,
    row: usize,
    first: usize,
    end: usize,
}

#[cube]
fn chunk_of(u: usize, len: u32, inner: u32, chunks: u32, #[comptime] chunk: u32) -> Chunk {
    let inner = inner as usize;
    let chunks = chunks as usize;
    let i = u % inner;
    let r = u / inner;
    let c = r % chunks;
    let o = r / chunks;
    let first = c * chunk as usize;
    let mut end = first + chunk as usize;
    if end > len as usize {
        end = len as usize;
    }
    Chunk {
        c,
        base: o * len as usize * inner + i,
        row: o * inner + i,
        first,
        end,
    }
}

/// The `k`-th step of a chunk `[first, end)` in the recurrence's order: from its last step
/// towards its first with `reverse`.
#[cube]
fn step_of(k: usize, first: usize, end: usize, #[comptime] reverse: bool) -> usize {
    if comptime![reverse] {
        end - 1 - (k - first)
    } else {
        k
    }
}

/// `agg_a`, `agg_b` `[outer, chunks, inner]`: the pair of each chunk of `a`, `b`
/// (`[outer, len, inner]`), composed in the recurrence's order (from the chunk's last step
/// towards its first with `reverse`). `units`: `outer * chunks * inner`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn affine_chunks<F: Float>(
    a: &Array<F>,
    b: &Array<F>,
    agg_a: &mut Array<F>,
    agg_b: &mut Array<F>,
    len: u32,
    inner: u32,
    chunks: u32,
    units: u32,
    #[comptime] chunk: u32,
    #[comptime] reverse: bool,
) {
    let u = CUBE_POS * CUBE_DIM as usize + UNIT_POS as usize;
    if u < units as usize {
        let ch = chunk_of(u, len, inner, chunks, chunk);
        let mut acc_a = F::from_int(1);
        let mut acc_b = F::from_int(0);
        for k in ch.first..ch.end {
            let at = ch.base + step_of(k, ch.first, ch.end, reverse) * inner as usize;
            let x = a[at];
            acc_a *= x;
            acc_b = x * acc_b + b[at];
        }
        // `(o, c, i)` of `[outer, chunks, inner]` is unit `u` itself.
        agg_a[u] = acc_a;
        agg_b[u] = acc_b;
    }
}

/// `out` `[outer, len, inner]`: each chunk of the recurrence run from the state entering it:
/// `h0` (`[outer, inner]`, or 0 without `has_h0`) for the row's first chunk (its last with
/// `reverse`), else the state `states` (`[outer, chunks, inner]`, the recurrence over the
/// chunks' pairs) holds after the chunk before it. `units`: `outer * chunks * inner`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn affine_apply<F: Float>(
    a: &Array<F>,
    b: &Array<F>,
    states: &Array<F>,
    h0: &Array<F>,
    out: &mut Array<F>,
    len: u32,
    inner: u32,
    chunks: u32,
    units: u32,
    #[comptime] chunk: u32,
    #[comptime] reverse: bool,
    #[comptime] has_h0: bool,
) {
    let u = CUBE_POS * CUBE_DIM as usize + UNIT_POS as usize;
    if u < units as usize {
        let ch = chunk_of(u, len, inner, chunks, chunk);
        let step = inner as usize;
        let boundary = if comptime![reverse] {
            ch.c + 1 == chunks as usize
        } else {
            ch.c == 0
        };
        let mut h = F::from_int(0);
        if boundary {
            if comptime![has_h0] {
                h = h0[ch.row];
            }
        } else if comptime![reverse] {
            h = states[u + step];
        } else {
            h = states[u - step];
        }
        for k in ch.first..ch.end {
            let at = ch.base + step_of(k, ch.first, ch.end, reverse) * step;
            h = a[at] * h + b[at];
            out[at] = h;
        }
    }
}
