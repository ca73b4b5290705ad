//! CPU implementation of every op: the reference the tests compare against, and the path used
//! where no device is found. O(n), same semantics as the kernels (f16 / bf16 accumulate in f32,
//! integer sums and products wrap, NaN propagates through max / min, ties pick the later element).

mod scan;
mod sort;

pub use scan::{scan, scan_with_indices, ScanElement};
pub use sort::{
    argsort_rows, argsort_rows_bits, key_bits, permute_rows, searchsorted, sort_rows, top_k_rows,
    SortElement,
};

/// Row-major copy of a strided view of `all`.
pub fn gather<E: Copy>(all: &[E], shape: &[usize], strides: &[usize], offset: usize) -> Vec<E> {
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        let off: usize = offset + idx.iter().zip(strides).map(|(i, s)| i * s).sum::<usize>();
        out.push(all[off]);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}
