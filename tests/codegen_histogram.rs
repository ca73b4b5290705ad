//! Metal (MSL) and CUDA C++ source of the histogram kernels, of unique's inverse scatter and of
//! the candle adapter's index narrowing (i64 / i32 to u32), generated without a device (as
//! tests/codegen_sort.rs does): each `define_*` repeats what `#[cube(launch_unchecked)]`
//! generates for `CubeKernel::define`, minus the client. A variant
//! passes when both compilers report no error, the source names the kernel and, for the
//! histograms, uses the atomic add.

use crate::common::codegen;

use codegen::*;
use cubecl::prelude::*;
use cubeprim_kernels::device::histogram::{histogram_global, histogram_shared};
use cubeprim_kernels::device::index::index_to_u32;
use cubeprim_kernels::device::scatter::scatter_by_index;

const THREADS: u32 = 256;

/// `smem_bins`: `Some(words)` for the shared-memory kernel, `None` for the global one.
fn define_histogram(
    name: &str,
    smem_bins: Option<usize>,
    device_len: bool,
    wide: bool,
) -> KernelDefinition {
    let (mut b, s) = settings(name, THREADS);
    s.address_type.register(&mut b.scope);
    let keys = <Array<u32> as LaunchArg>::expand(&ARRAY, &mut b);
    let out = <Array<Atomic<u32>> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let len = <Array<u32> as LaunchArg>::expand(&ARRAY, &mut b);
    let (n, bins, items) = (u32_arg(&mut b), u32_arg(&mut b), u32_arg(&mut b));
    match smem_bins {
        Some(words) => histogram_shared::expand(
            &mut b.scope,
            keys,
            out,
            len,
            n,
            bins,
            items,
            words,
            device_len,
            wide,
        ),
        None => histogram_global::expand(
            &mut b.scope,
            keys,
            out,
            len,
            n,
            bins,
            items,
            device_len,
            wide,
        ),
    }
    b.build(s)
}

/// The builder of kernel `name` with its element type `DT` (the kernel's generic) as `T`.
fn typed<T: Numeric, DT: 'static>(name: &str) -> (KernelBuilder, KernelSettings) {
    let (mut b, s) = settings(name, THREADS);
    b.scope
        .register_type::<DT>(T::as_type_native_unchecked().storage_type());
    s.address_type.register(&mut b.scope);
    (b, s)
}

fn define_scatter<T: Numeric>(name: &str) -> KernelDefinition {
    use scatter_by_index::_T;
    type DT = DynamicScalar<_T>;
    let (mut b, s) = typed::<T, DT>(name);
    let src = <Array<DT> as LaunchArg>::expand(&ARRAY, &mut b);
    let index = <Array<u32> as LaunchArg>::expand(&ARRAY, &mut b);
    let out = <Array<DT> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let n = u32_arg(&mut b);
    scatter_by_index::expand::<DT>(&mut b.scope, src, index, out, n);
    b.build(s)
}

#[test]
fn histogram_kernels() {
    let mut count = 0;
    for smem in [Some(256usize), Some(5120), None] {
        for (device_len, wide) in [(false, false), (true, false), (false, true)] {
            let name = format!(
                "histogram_{}_d{}_w{}",
                smem.map_or("global".to_string(), |w| format!("shared{w}")),
                device_len as u8,
                wide as u8
            );
            let (cuda, msl) =
                compile_both(&name, || define_histogram(&name, smem, device_len, wide));
            assert!(
                cuda.contains("atomicAdd"),
                "{name}: no atomicAdd in CUDA C++"
            );
            assert!(
                msl.contains("atomic_fetch_add"),
                "{name}: no atomic add in MSL"
            );
            if smem.is_some() {
                assert!(
                    cuda.contains("__shared__"),
                    "{name}: no shared memory in CUDA"
                );
                assert!(
                    msl.contains("threadgroup"),
                    "{name}: no threadgroup memory in MSL"
                );
            }
            count += 1;
        }
    }
    assert_eq!(count, 9);
}

#[test]
fn unique_inverse_scatter_kernels() {
    compile_both("scatter_by_index_i32", || {
        define_scatter::<i32>("scatter_by_index_i32")
    });
    compile_both("scatter_by_index_i64", || {
        define_scatter::<i64>("scatter_by_index_i64")
    });
}

fn define_index_to_u32<T: Numeric>(name: &str) -> KernelDefinition {
    use index_to_u32::_T;
    type DT = DynamicScalar<_T>;
    let (mut b, s) = typed::<T, DT>(name);
    let src = <Array<DT> as LaunchArg>::expand(&ARRAY, &mut b);
    let out = <Array<u32> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let n = u32_arg(&mut b);
    index_to_u32::expand::<DT>(&mut b.scope, src, out, n);
    b.build(s)
}

#[test]
fn candle_index_narrowing_kernels() {
    type Def = fn(&str) -> KernelDefinition;
    for (name, def, cuda_in, msl_in) in [
        (
            "index_to_u32_i32",
            define_index_to_u32::<i32> as Def,
            "const int32*",
            "const device int *",
        ),
        (
            "index_to_u32_i64",
            define_index_to_u32::<i64>,
            "const int64*",
            "const device long *",
        ),
    ] {
        let (cuda, msl) = compile_both(name, || def(name));
        // Reads the index dtype, writes u32 through a conversion.
        for (lang, src, input, output, cast) in [
            ("CUDA C++", &cuda, cuda_in, "uint32* buffer_1", "= uint32("),
            ("MSL", &msl, msl_in, "device uint * buffer_1", "= uint("),
        ] {
            for want in [input, output, cast] {
                assert!(src.contains(want), "{name}: no `{want}` in {lang}\n{src}");
            }
        }
    }
}
