//! The CPU path's large output vectors, with transparent huge pages asked for on Linux.
//!
//! A fresh vector's memory is mapped on its first write, a page fault per 4 KiB page; for
//! outputs of many MiB that costs as much as the op itself. On the 2-core CI machine a fresh
//! 64 MiB vector took 32-66 ms to fill against 5-8.5 ms for the same copy into one already
//! touched (`benches/results/cpu/ops.json`, `copy_f32_2^24`). NumPy asks the kernel for
//! transparent huge pages (`madvise(MADV_HUGEPAGE)`, 2 MiB pages) on its large arrays; these
//! helpers do the same. Same machine, same hour (2026-12-07), criterion medians of 2^24 elements on 2
//! threads, without against with the advice: select 18.8 -> 13.1 ms, nonzero 32.0 -> 24.0,
//! unique_consecutive 59.9 -> 35.7, argsort 310 -> 292, reduce_by_key 23.8 -> 25.0 (its outputs
//! are below the threshold). Where the kernel's `transparent_hugepage` setting is `never` (or
//! on other systems) the advice does nothing.

use bytemuck::Zeroable;

/// The smallest vector, in bytes, given the advice. (NumPy advises from 4 MiB; here
/// `reduce_by_key` of 2^24 f32 in runs of 16, whose two outputs are 4 MiB each, took 27-28 ms
/// with the advice from 4 MiB against 23 without: small, often reused blocks are better left to
/// the allocator.)
const HUGE_MIN_BYTES: usize = 16 << 20;

/// A huge page on x86-64 and aarch64 Linux with 4 KiB base pages.
#[cfg(target_os = "linux")]
const HUGE_PAGE: usize = 2 << 20;

/// An empty vector with room for `n` elements, huge pages asked for its memory.
pub(crate) fn with_capacity<T>(n: usize) -> Vec<T> {
    let v = Vec::with_capacity(n);
    advise(&v);
    v
}

/// `n` zeroed elements, huge pages asked for their memory. (The allocator's zeroed memory of
/// this size is freshly mapped, so its pages are not touched before the advice.)
pub(crate) fn zeroed<T: Zeroable + Clone>(n: usize) -> Vec<T> {
    let v = vec![T::zeroed(); n];
    advise(&v);
    v
}

/// A copy of `data` in a new vector, huge pages asked for its memory.
pub(crate) fn copied<T: Copy>(data: &[T]) -> Vec<T> {
    let mut v = with_capacity(data.len());
    v.extend_from_slice(data);
    v
}

/// Asks for huge pages over the whole 2 MiB pages inside `v`'s allocation.
fn advise<T>(v: &Vec<T>) {
    let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
    if bytes < HUGE_MIN_BYTES {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let start = v.as_ptr() as usize;
        let first = start.next_multiple_of(HUGE_PAGE);
        let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
        if end > first {
            // SAFETY: the range lies inside `v`'s allocation and is page-aligned; the advice
            // changes how its pages are mapped, not their contents, and a failure (EINVAL
            // where the kernel has no transparent huge pages) leaves the memory as it was.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_helpers_give_the_vectors_asked_for() {
        for n in [0usize, 1, 1000, (HUGE_MIN_BYTES / 4) + 12_345] {
            let z: Vec<u32> = zeroed(n);
            assert_eq!(z.len(), n);
            assert!(z.iter().all(|&x| x == 0));
            let w: Vec<u64> = with_capacity(n);
            assert!(w.is_empty() && w.capacity() >= n);
            let data: Vec<u32> = (0..n as u32).collect();
            assert_eq!(copied(&data), data);
        }
    }
}
