//! The criterion benches, one binary (each bench binary compiles its own copy of every kernel
//! launch it reaches; one binary compiles them once): every family on the best device found
//! (CUDA with `--features cuda`, else wgpu) against the CPU path. One group per family; a filter
//! (a regex on `group/backend/case`) picks groups:
//!
//! | group              | module         | what                                                  |
//! |--------------------|----------------|-------------------------------------------------------|
//! | `cumsum_f32`       | [`scan`]       | `scan_into`: rows, and a 1-D look-back scan            |
//! | `sort_2^20`        | [`sort`]       | `sort_into`: u32 sort, f32 argsort                     |
//! | `reduce_f32`       | [`reduce`]     | `reduce_into`: whole-buffer sum, row sums             |
//! | `select_f32`       | [`select`]     | `select_into` (half set), `partition_into`, `nonzero_into` |
//! | `runs`             | [`runs`]       | `reduce_by_key_into`, `unique_consecutive`, `histogram_into`, `unique` |
//! | `top_k_f32`        | [`topk`]       | `top_k_into`: rows of 1024 and of 32768               |
//! | `searchsorted_f32` | [`topk`]       | `searchsorted_into`                                   |
//! | `recurrence_f32`   | [`recurrence`] | `linear_recurrence_into`: rows, `[batch, time, channels]` |
//! | `cpu_ops`          | [`cpu_ops`]    | the CPU path against plain sequential Rust: sorts, top-k, compaction, runs |
//!
//! ```text
//! cargo bench --bench primitives                   # all, wgpu (lavapipe without a GPU)
//! cargo bench --features cuda --bench primitives   # CUDA first
//! cargo bench --bench primitives -- cumsum         # the scans only
//! cargo bench --bench primitives -- '^sort'        # the sorts only (`sort` also matches searchsorted)
//! cargo bench --bench primitives -- 'reduce_f32|select_f32'
//! cargo bench --bench primitives -- /cpu/          # the CPU path of every group
//! ```
//!
//! Every bench checks its device result against the CPU path once before timing it.
//! `cargo test --benches` runs each bench once as a test (criterion's test mode); there the
//! family modules take small shapes (at most 2^14 elements, see [`common`]), so that the CI
//! step stays short; `cargo bench` takes 2^20 to 2^24 elements.

mod common;
mod cpu_ops;
mod recurrence;
mod reduce;
mod runs;
mod scan;
mod select;
mod sort;
mod topk;

criterion::criterion_group!(
    benches,
    scan::cumsum_f32,
    sort::sort_1m,
    reduce::reduce_f32,
    select::select_f32,
    runs::runs,
    topk::top_k,
    topk::searchsorted,
    recurrence::recurrence_f32,
    cpu_ops::cpu_ops,
);
criterion::criterion_main!(benches);
