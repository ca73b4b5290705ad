//! The criterion benches, one binary (each bench binary compiles its own copy of every kernel
//! launch it reaches; one binary compiles them once): the scans ([`scan`]) and the sorts
//! ([`sort`]), on the best device found against the CPU path. A filter picks a group:
//!
//! ```text
//! cargo bench --bench primitives                   # both, wgpu (lavapipe without a GPU)
//! cargo bench --features cuda --bench primitives   # CUDA first
//! cargo bench --bench primitives -- cumsum         # the scans only (`-- sort`: the sorts)
//! ```

mod scan;
mod sort;

criterion::criterion_group!(benches, scan::cumsum_f32, sort::sort_1m);
criterion::criterion_main!(benches);
