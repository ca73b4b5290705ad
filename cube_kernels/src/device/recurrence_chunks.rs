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
//!
//! A chunk is `chunk` consecutive steps, so where `inner` is small, adjacent units of those
//! kernels read memory `chunk * inner` elements apart, each a few bytes of its own sector.
//! [`affine_chunks_staged`] and [`affine_apply_staged`] serve that case: a cube of `units` units
//! takes `units / inner` consecutive chunks of the `[outer, chunks]` enumeration (each with its
//! `inner` columns; together one contiguous block of memory, across rows where rows are short),
//! loads the block's `a` and `b` into shared memory with coalesced loads (consecutive units,
//! consecutive elements), and each unit composes or runs one column of one chunk from there;
//! `affine_apply_staged` writes the states over `b` in shared memory and stores the block back
//! coalesced. The shared layout XORs a chunk's step with the chunk's index so that the units
//! reading the same step of their chunks at once hit different banks. Every load and store is
//! bounded by the block, which stops at the last chunk.
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

/// The state entering chunk `c` (of `chunks`) of unit `u`'s row: `h0[row]` (or 0 without
/// `has_h0`) for the row's first chunk in the recurrence's order, else the state after the chunk
/// before it, `states[u ∓ step]` (`[outer, chunks, inner]`, `step` = `inner`).
#[cube]
#[allow(clippy::too_many_arguments)]
fn entry_state<F: Float>(
    states: &Array<F>,
    h0: &Array<F>,
    c: usize,
    chunks: u32,
    u: usize,
    step: usize,
    row: usize,
    #[comptime] reverse: bool,
    #[comptime] has_h0: bool,
) -> F {
    let boundary = if comptime![reverse] {
        c + 1 == chunks as usize
    } else {
        c == 0
    };
    let mut h = F::from_int(0);
    if boundary {
        if comptime![has_h0] {
            h = h0[row];
        }
    } else if comptime![reverse] {
        h = states[u + step];
    } else {
        h = states[u - step];
    }
    h
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
        let mut h = entry_state::<F>(states, h0, ch.c, chunks, u, step, ch.row, reverse, has_h0);
        for k in ch.first..ch.end {
            let at = ch.base + step_of(k, ch.first, ch.end, reverse) * step;
            h = a[at] * h + b[at];
            out[at] = h;
        }
    }
}

/// A staged cube's block: chunks `[g0, g1)` of the `[outer, chunks]` enumeration (each chunk
/// with all `inner` columns: `chunk * inner` contiguous elements, fewer for a row's last), held
/// in memory at `[start, stop)` (consecutive chunks are adjacent in memory, across rows too).
#[derive(CubeType)]
struct Block {
    g0: usize,
    g1: usize,
    start: usize,
    stop: usize,
}

/// Where chunk `g` of the `[outer, chunks]` enumeration starts in memory (`n` for `g` = the
/// number of chunks).
#[cube]
fn chunk_start(g: usize, len: u32, inner: u32, chunks: u32, #[comptime] chunk: u32) -> usize {
    let o = g / chunks as usize;
    let c = g - o * chunks as usize;
    (o * len as usize + c * chunk as usize) * inner as usize
}

/// The block of cube `CUBE_POS`: `per_cube` chunks from `CUBE_POS * per_cube`, none past
/// `tiles` (`outer * chunks`).
#[cube]
fn block_of(
    len: u32,
    inner: u32,
    chunks: u32,
    tiles: u32,
    per_cube: u32,
    #[comptime] chunk: u32,
) -> Block {
    let tiles = tiles as usize;
    let mut g0 = CUBE_POS * per_cube as usize;
    if g0 > tiles {
        g0 = tiles;
    }
    let mut g1 = g0 + per_cube as usize;
    if g1 > tiles {
        g1 = tiles;
    }
    Block {
        g0,
        g1,
        start: chunk_start(g0, len, inner, chunks, chunk),
        stop: chunk_start(g1, len, inner, chunks, chunk),
    }
}

/// The shared slot of element `e` (flat, inside `blk`): step `k` of column `i` of the block's
/// chunk `tt` sits at `(tt * chunk + (k ^ (tt % chunk))) * inner + i`. The XOR spreads the
/// units that read step `k` of their chunks at once (stride `chunk * inner`) over the banks.
#[cube]
fn staged_slot(
    e: usize,
    g0: usize,
    len: u32,
    inner: u32,
    chunks: u32,
    #[comptime] chunk: u32,
    #[comptime] unit_inner: bool,
) -> usize {
    let mut q = e;
    let mut i = 0usize;
    if comptime![!unit_inner] {
        q = e / inner as usize;
        i = e - q * inner as usize;
    }
    let o = q / len as usize;
    let t = q - o * len as usize;
    let c = t / chunk as usize;
    let k = t % chunk as usize;
    let tt = o * chunks as usize + c - g0;
    (tt * chunk as usize + (k ^ (tt % chunk as usize))) * inner as usize + i
}

/// Loads `a` and `b` of `blk` into `sh_a`, `sh_b` ([`staged_slot`]): unit `t` loads the
/// block's elements `m * units + t` (consecutive units, consecutive elements), then the cube
/// waits for all of them.
#[cube]
#[allow(clippy::too_many_arguments)]
fn stage<F: Float>(
    a: &Array<F>,
    b: &Array<F>,
    sh_a: &mut SharedMemory<F>,
    sh_b: &mut SharedMemory<F>,
    blk: &Block,
    len: u32,
    inner: u32,
    chunks: u32,
    #[comptime] chunk: u32,
    #[comptime] units: u32,
    #[comptime] unit_inner: bool,
) {
    // The block holds at most `units / inner` chunks of `chunk * inner` elements.
    #[unroll]
    for m in 0..chunk {
        let e = blk.start + (m * units + UNIT_POS) as usize;
        if e < blk.stop {
            let s = staged_slot(e, blk.g0, len, inner, chunks, chunk, unit_inner);
            sh_a[s] = a[e];
            sh_b[s] = b[e];
        }
    }
    sync_cube();
}

/// What unit `UNIT_POS` of a staged cube composes: column `i` of the block's chunk `tt`, i.e.
/// chunk `g = g0 + tt` (`(o, c)`: `o = g / chunks`, `c = g % chunks`), whose pair is entry
/// `g * inner + i` of `[outer, chunks, inner]`; `steps` steps from shared slot `base`.
#[derive(CubeType)]
struct StagedChunk {
    valid: bool,
    g: usize,
    c: usize,
    o: usize,
    i: usize,
    sw: usize,
    base: usize,
    steps: usize,
}

#[cube]
fn staged_chunk(
    blk: &Block,
    len: u32,
    inner: u32,
    chunks: u32,
    per_cube: u32,
    #[comptime] chunk: u32,
) -> StagedChunk {
    let tt = (UNIT_POS / inner) as usize;
    let i = (UNIT_POS % inner) as usize;
    let g = blk.g0 + tt;
    let valid = tt < per_cube as usize && g < blk.g1;
    let o = g / chunks as usize;
    let c = g - o * chunks as usize;
    let first = c * chunk as usize;
    let mut steps = 0usize;
    if valid {
        steps = len as usize - first;
        if steps > chunk as usize {
            steps = chunk as usize;
        }
    }
    StagedChunk {
        valid,
        g,
        c,
        o,
        i,
        sw: tt % chunk as usize,
        base: tt * chunk as usize * inner as usize + i,
        steps,
    }
}

/// [`affine_chunks`] with `a` and `b` staged in shared memory (coalesced loads, for small
/// `inner`): cube `CUBE_POS` takes `per_cube` consecutive chunks of the `[outer, chunks]`
/// enumeration (`units / inner`; `tiles = outer * chunks` in all), each with its `inner`
/// columns. Launched with `units` units per cube.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn affine_chunks_staged<F: Float>(
    a: &Array<F>,
    b: &Array<F>,
    agg_a: &mut Array<F>,
    agg_b: &mut Array<F>,
    len: u32,
    inner: u32,
    chunks: u32,
    tiles: u32,
    per_cube: u32,
    #[comptime] chunk: u32,
    #[comptime] units: u32,
    #[comptime] reverse: bool,
    #[comptime] unit_inner: bool,
) {
    let mut sh_a = SharedMemory::<F>::new(comptime![(units * chunk) as usize]);
    let mut sh_b = SharedMemory::<F>::new(comptime![(units * chunk) as usize]);
    let blk = block_of(len, inner, chunks, tiles, per_cube, chunk);
    stage::<F>(
        a, b, &mut sh_a, &mut sh_b, &blk, len, inner, chunks, chunk, units, unit_inner,
    );
    let ch = staged_chunk(&blk, len, inner, chunks, per_cube, chunk);
    if ch.valid {
        let step = inner as usize;
        let mut acc_a = F::from_int(1);
        let mut acc_b = F::from_int(0);
        if ch.steps == chunk as usize {
            #[unroll]
            for k in 0..chunk {
                let s = comptime![if reverse { chunk - 1 - k } else { k }];
                let at = ch.base + ((s as usize) ^ ch.sw) * step;
                let x = sh_a[at];
                acc_a *= x;
                acc_b = x * acc_b + sh_b[at];
            }
        } else {
            for k in 0..ch.steps {
                let at = ch.base + (step_of(k, 0, ch.steps, reverse) ^ ch.sw) * step;
                let x = sh_a[at];
                acc_a *= x;
                acc_b = x * acc_b + sh_b[at];
            }
        }
        let u = ch.g * step + ch.i;
        agg_a[u] = acc_a;
        agg_b[u] = acc_b;
    }
}

/// [`affine_apply`] with `a` and `b` staged as in [`affine_chunks_staged`]; each unit writes
/// its states over its `b` in shared memory, and the cube stores the block from there
/// (coalesced).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub fn affine_apply_staged<F: Float>(
    a: &Array<F>,
    b: &Array<F>,
    states: &Array<F>,
    h0: &Array<F>,
    out: &mut Array<F>,
    len: u32,
    inner: u32,
    chunks: u32,
    tiles: u32,
    per_cube: u32,
    #[comptime] chunk: u32,
    #[comptime] units: u32,
    #[comptime] reverse: bool,
    #[comptime] has_h0: bool,
    #[comptime] unit_inner: bool,
) {
    let mut sh_a = SharedMemory::<F>::new(comptime![(units * chunk) as usize]);
    let mut sh_b = SharedMemory::<F>::new(comptime![(units * chunk) as usize]);
    let blk = block_of(len, inner, chunks, tiles, per_cube, chunk);
    stage::<F>(
        a, b, &mut sh_a, &mut sh_b, &blk, len, inner, chunks, chunk, units, unit_inner,
    );
    let ch = staged_chunk(&blk, len, inner, chunks, per_cube, chunk);
    if ch.valid {
        let step = inner as usize;
        let u = ch.g * step + ch.i;
        let row = ch.o * step + ch.i;
        let mut h = entry_state::<F>(states, h0, ch.c, chunks, u, step, row, reverse, has_h0);
        if ch.steps == chunk as usize {
            #[unroll]
            for k in 0..chunk {
                let s = comptime![if reverse { chunk - 1 - k } else { k }];
                let at = ch.base + ((s as usize) ^ ch.sw) * step;
                h = sh_a[at] * h + sh_b[at];
                sh_b[at] = h;
            }
        } else {
            for k in 0..ch.steps {
                let at = ch.base + (step_of(k, 0, ch.steps, reverse) ^ ch.sw) * step;
                h = sh_a[at] * h + sh_b[at];
                sh_b[at] = h;
            }
        }
    }
    sync_cube();
    #[unroll]
    for m in 0..chunk {
        let e = blk.start + (m * units + UNIT_POS) as usize;
        if e < blk.stop {
            out[e] = sh_b[staged_slot(e, blk.g0, len, inner, chunks, chunk, unit_inner)];
        }
    }
}
