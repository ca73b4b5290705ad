//! CUDA C++ and Metal (MSL) source of every kernel of the compaction / run-length / reduce
//! family, generated without a device (as `tests/codegen.rs` does for the scan): each
//! `define_*` repeats what `#[cube(launch_unchecked)]` generates for `CubeKernel::define`,
//! minus the client. A variant passes when both compilers report no error and the source names
//! the kernel.

use crate::common::codegen;

use codegen::*;
use cubecl::prelude::*;
use cubeprim_kernels::cube::TileConfig;
use cubeprim_kernels::device::reduce::reduce_rows;
use cubeprim_kernels::device::run_length::{
    run_length, RunConfig, RunInputsExpand, RunOutputsExpand,
};
use cubeprim_kernels::device::run_length_fixup::run_length_fixup;
use cubeprim_kernels::device::select::{
    compact, CompactInputsExpand, CompactMetaExpand, CompactMode, CompactOutputsExpand, CountCarry,
    PassConfig,
};
use cubeprim_kernels::device::single_pass::{
    LookbackConfig, PassScalarsExpand, TileCarry, TileStateArgsExpand,
};
use cubeprim_kernels::ops::{Add, Max, Min, Mul, ScanOp};
use half::f16;

/// The tile state and the run-time scalars every single-pass kernel takes last.
fn single_pass_args(b: &mut KernelBuilder) -> (TileStateArgsExpand, PassScalarsExpand) {
    let state = output::<Atomic<u32>>(b);
    let view = output::<u32>(b);
    let scalars = PassScalarsExpand {
        n_host: u32_arg(b),
        epoch: u32_arg(b),
        counter_base: u32_arg(b),
    };
    (TileStateArgsExpand { state, view }, scalars)
}

fn define_compact<F: Numeric, T: Numeric, V: Numeric, X: Int, G: TileCarry>(
    name: &str,
    vec: usize,
    cfg: PassConfig,
    mode: CompactMode,
) -> KernelDefinition {
    use compact::{_F, _N, _T, _V, _X};
    type DF = DynamicScalar<_F>;
    type DT = DynamicScalar<_T>;
    type DV = DynamicScalar<_V>;
    type DX = DynamicScalar<_X>;
    type DN = DynamicSize<_N>;
    let (mut b, s) = settings(name, cfg.threads);
    register::<F, _F>(&mut b);
    register::<T, _T>(&mut b);
    register::<V, _V>(&mut b);
    register::<X, _X>(&mut b);
    b.scope.register_size::<DN>(vec);
    s.address_type.register(&mut b.scope);
    let flags = input::<Vector<DF, DN>>(&mut b);
    let data = input::<Vector<DT, DN>>(&mut b);
    let values = input::<Vector<DV, DN>>(&mut b);
    let out = output::<DT>(&mut b);
    let out_values = output::<DV>(&mut b);
    let out_index = output::<DX>(&mut b);
    let count = output::<u32>(&mut b);
    let len = input::<u32>(&mut b);
    let total = input::<u32>(&mut b);
    let shape = input::<u32>(&mut b);
    let (tiles, scalars) = single_pass_args(&mut b);
    compact::expand::<DF, DT, DV, DX, DN, G>(
        &mut b.scope,
        vec,
        CompactInputsExpand {
            flags,
            data,
            values,
        },
        CompactOutputsExpand {
            out,
            out_values,
            out_index,
            count,
        },
        CompactMetaExpand { len, total, shape },
        tiles,
        scalars,
        cfg,
        mode,
    );
    b.build(s)
}

fn define_run_length<K: Numeric, V: Numeric, A: Numeric, W: Numeric, X: Int, O: ScanOp>(
    name: &str,
    vec: usize,
    cfg: PassConfig,
    run: RunConfig,
) -> KernelDefinition {
    use run_length::{_A, _K, _N, _V, _W, _X};
    type DK = DynamicScalar<_K>;
    type DV = DynamicScalar<_V>;
    type DA = DynamicScalar<_A>;
    type DW = DynamicScalar<_W>;
    type DX = DynamicScalar<_X>;
    type DN = DynamicSize<_N>;
    let (mut b, s) = settings(name, cfg.threads);
    register::<K, _K>(&mut b);
    register::<V, _V>(&mut b);
    register::<A, _A>(&mut b);
    register::<W, _W>(&mut b);
    register::<X, _X>(&mut b);
    b.scope.register_size::<DN>(vec);
    s.address_type.register(&mut b.scope);
    let keys = input::<Vector<DK, DN>>(&mut b);
    let values = input::<Vector<DV, DN>>(&mut b);
    let out_keys = output::<DK>(&mut b);
    let out_values = output::<DW>(&mut b);
    let inverse = output::<DX>(&mut b);
    let count = output::<u32>(&mut b);
    let len = input::<u32>(&mut b);
    let records = output::<u32>(&mut b);
    let (tiles, scalars) = single_pass_args(&mut b);
    run_length::expand::<DK, DV, DA, DW, DX, O, DN>(
        &mut b.scope,
        vec,
        RunInputsExpand { keys, values },
        RunOutputsExpand {
            out_keys,
            out_values,
            inverse,
            count,
        },
        len,
        records,
        tiles,
        scalars,
        cfg,
        run,
    );
    b.build(s)
}

fn define_run_length_fixup<W: Numeric>(
    name: &str,
    threads: u32,
    plane_ops: bool,
    device_len: bool,
) -> KernelDefinition {
    use run_length_fixup::_W;
    type DW = DynamicScalar<_W>;
    let (mut b, s) = settings(name, threads);
    register::<W, _W>(&mut b);
    s.address_type.register(&mut b.scope);
    let records = input::<u32>(&mut b);
    let lengths = output::<DW>(&mut b);
    let count = input::<u32>(&mut b);
    let len = input::<u32>(&mut b);
    let n = u32_arg(&mut b);
    let tile_elems = u32_arg(&mut b);
    run_length_fixup::expand::<DW>(
        &mut b.scope,
        records,
        lengths,
        count,
        len,
        n,
        tile_elems,
        threads,
        plane_ops,
        device_len,
    );
    b.build(s)
}

fn define_reduce_rows<T: Numeric, A: Numeric, U: Numeric, O: ScanOp>(
    name: &str,
    vec: usize,
    cfg: TileConfig,
    device_len: bool,
) -> KernelDefinition {
    use reduce_rows::{_A, _N, _T, _U};
    type DT = DynamicScalar<_T>;
    type DA = DynamicScalar<_A>;
    type DU = DynamicScalar<_U>;
    type DN = DynamicSize<_N>;
    let (mut b, s) = settings(name, cfg.threads);
    register::<T, _T>(&mut b);
    register::<A, _A>(&mut b);
    register::<U, _U>(&mut b);
    b.scope.register_size::<DN>(vec);
    s.address_type.register(&mut b.scope);
    let inp = input::<Vector<DT, DN>>(&mut b);
    let out = output::<DU>(&mut b);
    let layout = input::<u32>(&mut b);
    let len = input::<u32>(&mut b);
    let n_vec = u32_arg(&mut b);
    let tiles_per_row = u32_arg(&mut b);
    let num_tiles = u32_arg(&mut b);
    let in_stride = u32_arg(&mut b);
    let group = u32_arg(&mut b);
    reduce_rows::expand::<DT, DA, DU, O, DN>(
        &mut b.scope,
        vec,
        inp,
        out,
        layout,
        len,
        n_vec,
        tiles_per_row,
        num_tiles,
        in_stride,
        group,
        cfg,
        device_len,
    );
    b.build(s)
}

fn pass(
    vec: usize,
    plane_ops: bool,
    plain_reads: bool,
    device_len: bool,
    staged: bool,
    packed_flags: bool,
) -> PassConfig {
    PassConfig {
        threads: 256,
        vectors_per_thread: (32 / vec as u32).min(16),
        plane_ops,
        lookback: LookbackConfig {
            window: 32,
            windows: 8,
            spins: 16,
            plain_reads,
            plane_max: 32,
            // Both tile orders: by position where CUDA polls with plain loads, as planned.
            ordered: plain_reads,
        },
        device_len,
        staged,
        packed_flags,
        // Both forms are generated: the plane variants with the data prefetched.
        prefetch: plane_ops,
    }
}

const MODES: [CompactMode; 6] = [
    CompactMode::Select { values: false },
    CompactMode::Select { values: true },
    CompactMode::Partition { values: false },
    CompactMode::Partition { values: true },
    CompactMode::NonZero,
    CompactMode::Count,
];

/// `packed`: byte flags, four to a `u32` word (`F` = u32).
fn compact_variants<F: Numeric, T: Numeric>(dtype: &str, packed: bool) -> usize {
    let mut count = 0;
    for (m, &mode) in MODES.iter().enumerate() {
        for vec in [1usize, 4] {
            for plane_ops in [false, true] {
                let cfg = pass(
                    vec,
                    plane_ops,
                    plane_ops,
                    m % 2 == 0,
                    m < 2 || m == 4,
                    packed,
                );
                let name = format!("compact_{dtype}_m{m}_v{vec}_p{}", plane_ops as u8);
                let (cuda, msl) = compile_both(&name, || {
                    if packed {
                        define_compact::<F, T, u32, i64, CountCarry<true>>(&name, vec, cfg, mode)
                    } else {
                        define_compact::<F, T, u32, i64, CountCarry<false>>(&name, vec, cfg, mode)
                    }
                });
                if plane_ops {
                    assert!(cuda.contains("__shfl"), "{name}: no shuffle in CUDA C++");
                    assert!(msl.contains("simd_shuffle"), "{name}: no shuffle in MSL");
                }
                count += 1;
            }
        }
    }
    count
}

/// The look-back's deep fold ([`DEEP_FOLD`], set for every runtime but CUDA) compiles in both
/// languages and both look-back variants, and a kernel without it holds no copy of it.
#[test]
fn compact_with_and_without_the_deep_fold() {
    use cubeprim_kernels::device::lookback::DEEP_FOLD;
    for plane_ops in [false, true] {
        let mut sources = Vec::new();
        for deep in [false, true] {
            let mut cfg = pass(4, plane_ops, plane_ops, false, true, false);
            if deep {
                cfg.lookback.spins |= DEEP_FOLD;
            }
            let name = format!("compact_deep{}_p{}", deep as u8, plane_ops as u8);
            let mode = CompactMode::Select { values: false };
            let (cuda, _msl) = compile_both(&name, || {
                define_compact::<u32, f32, u32, i64, CountCarry<false>>(&name, 4, cfg, mode)
            });
            sources.push(cuda.replace(&name, "compact"));
        }
        assert!(
            sources[1].len() > sources[0].len(),
            "plane ops {plane_ops}: the deep fold adds no code ({} against {} bytes)",
            sources[1].len(),
            sources[0].len()
        );
    }
}

#[test]
fn compact_all_modes() {
    assert_eq!(compact_variants::<f32, u32>("f32", false), 24);
    assert_eq!(compact_variants::<u32, f16>("u32", false), 24);
    assert_eq!(compact_variants::<i32, u64>("i32", false), 24);
    assert_eq!(compact_variants::<u32, f32>("u8", true), 24);
}

fn run_length_variants<K: Numeric, V: Numeric, A: Numeric, O: ScanOp>(name0: &str) -> usize {
    let mut count = 0;
    for ones in [false, true] {
        for vec in [1usize, 4] {
            for plane_ops in [false, true] {
                // Staged (the tile of the H200: 4 vectors of 4 per unit) and unstaged.
                let staged = plane_ops == (vec == 4);
                let mut cfg = pass(vec, plane_ops, plane_ops, vec == 1, staged, false);
                if staged {
                    cfg.vectors_per_thread = 16 / vec as u32;
                }
                let run = RunConfig {
                    ones,
                    inverse: ones != staged,
                    write_values: ones == staged || !ones,
                };
                let name = format!(
                    "run_length_{name0}_o{}_v{vec}_p{}_s{}",
                    ones as u8, plane_ops as u8, staged as u8
                );
                if ones {
                    compile_both(&name, || {
                        define_run_length::<K, u32, u32, i64, i64, Add>(&name, vec, cfg, run)
                    });
                } else {
                    compile_both(&name, || {
                        define_run_length::<K, V, A, V, i32, O>(&name, vec, cfg, run)
                    });
                }
                count += 1;
            }
        }
    }
    count
}

/// The run-length tile planned for a device's limits declares no more shared memory than the
/// device has: the staged tile gets what the pass's scans and look-back leave. (With a fixed
/// reserve of 12 KiB, 64-bit keys with 64-bit values on 48 KiB with plane operations, as an
/// NVIDIA card's Vulkan driver reports, planned 50 236 bytes: wgpu refused the kernel, which
/// never ran, and `reduce_by_key` returned a count it never wrote.)
#[test]
fn run_length_tiles_fit_the_shared_memory_they_are_planned_for() {
    use cubeprim::runs::{run_length_tile, PassLimits};
    fn check<K: Numeric, V: Numeric, A: Numeric>(limits: PassLimits, run: RunConfig) -> usize {
        let (ks, vs, acc) = (size_of::<K>(), size_of::<V>(), size_of::<A>());
        let mut checked = 0;
        for cap in [1usize, 65536] {
            let values = (!run.ones).then_some(vs);
            // Counts accumulate in u32.
            let acc = if run.ones { 4 } else { acc };
            let tuning = Default::default();
            let (vec, threads, vpt, staged) =
                run_length_tile(limits, &tuning, cap, ks, values, acc, run);
            let cfg = PassConfig {
                threads,
                vectors_per_thread: vpt,
                plane_ops: limits.plane_ops,
                lookback: LookbackConfig {
                    window: 32,
                    windows: 8,
                    spins: 16 | cubeprim_kernels::device::lookback::DEEP_FOLD,
                    plain_reads: false,
                    plane_max: limits.plane_max,
                    ordered: false,
                },
                device_len: false,
                staged,
                packed_flags: false,
                prefetch: true,
            };
            let name = format!("run_length_fit_k{ks}_v{vs}_a{acc}_{}", limits.shared);
            let bytes = if run.ones {
                cuda_shared_bytes(define_run_length::<K, u32, u32, i64, i64, Add>(
                    &name, vec, cfg, run,
                ))
            } else {
                cuda_shared_bytes(define_run_length::<K, V, A, V, i32, Add>(
                    &name, vec, cfg, run,
                ))
            };
            assert!(
                bytes <= limits.shared,
                "{name} (cap {cap}, {limits:?}, {run:?}): {threads} x {vpt} x {vec}, staged \
                 {staged}: {bytes} bytes of shared memory"
            );
            checked += 1;
        }
        checked
    }
    let mut n = 0;
    for (shared, plane_ops, plane_max) in [
        (16 * 1024, false, 1),
        (32 * 1024, false, 1),
        (32 * 1024, true, 32),
        (48 * 1024, true, 32),
        (48 * 1024, true, 64),
        (64 * 1024, true, 32),
        (100 * 1024, true, 32),
        (227 * 1024, true, 32),
    ] {
        let limits = PassLimits {
            shared,
            max_units: 1024,
            plane_ops,
            plane_max,
        };
        for run in [
            // reduce_by_key; unique_consecutive with inverse and counts; counts only.
            RunConfig {
                ones: false,
                inverse: false,
                write_values: true,
            },
            RunConfig {
                ones: true,
                inverse: true,
                write_values: true,
            },
            RunConfig {
                ones: true,
                inverse: false,
                write_values: true,
            },
        ] {
            n += check::<u32, u32, u32>(limits, run);
            n += check::<u64, u64, u64>(limits, run);
            n += check::<u64, f32, f32>(limits, run);
            n += check::<u32, f64, f64>(limits, run);
        }
    }
    assert_eq!(n, 8 * 3 * 4 * 2);
    // The check can fail: the tile of the former fixed reserve (8 KiB more staged, 4 vectors
    // of one u64 per unit) does not fit 48 KiB.
    let cfg = PassConfig {
        threads: 512,
        vectors_per_thread: 4,
        plane_ops: true,
        lookback: LookbackConfig {
            window: 32,
            windows: 8,
            spins: 16,
            plain_reads: false,
            plane_max: 32,
            ordered: false,
        },
        device_len: false,
        staged: true,
        packed_flags: false,
        prefetch: true,
    };
    let run = RunConfig {
        ones: false,
        inverse: false,
        write_values: true,
    };
    let bytes = cuda_shared_bytes(define_run_length::<u64, u64, u64, u64, i32, Add>(
        "run_length_overflow",
        1,
        cfg,
        run,
    ));
    assert!(bytes > 48 * 1024, "{bytes} bytes");
}

#[test]
fn run_length_fixup_variants() {
    for plane_ops in [false, true] {
        for device_len in [false, true] {
            let name = format!(
                "run_length_fixup_p{}_d{}",
                plane_ops as u8, device_len as u8
            );
            compile_both(&name, || {
                define_run_length_fixup::<i64>(&name, 256, plane_ops, device_len)
            });
            compile_both(&name, || {
                define_run_length_fixup::<i32>(&name, 64, plane_ops, device_len)
            });
        }
    }
}

#[test]
fn run_length_all_ops() {
    assert_eq!(run_length_variants::<i32, f32, f32, Add>("i32_f32_add"), 8);
    assert_eq!(run_length_variants::<f32, f16, f32, Max>("f32_f16_max"), 8);
    assert_eq!(run_length_variants::<u32, i32, i32, Min>("u32_i32_min"), 8);
    assert_eq!(run_length_variants::<f16, u32, u32, Mul>("f16_u32_mul"), 8);
}

/// `CUBEPRIM_DUMP=dir cargo test --test suite codegen_compact::dump` writes the CUDA C++ of the
/// run-length kernels of the H200 benchmark (unique_consecutive with counts of i32 keys,
/// reduce_by_key of i32 keys and f32 values: plane look-back, polling loads; staged tile of 8
/// vectors of 4 per unit), staged and unstaged, for `nvcc --resource-usage`.
#[test]
fn dump() {
    let Ok(dir) = std::env::var("CUBEPRIM_DUMP") else {
        return;
    };
    std::fs::create_dir_all(&dir).unwrap();
    for staged in [true, false] {
        let mut cfg = pass(4, true, true, false, staged, false);
        if staged {
            cfg.vectors_per_thread = 8;
        }
        let counts = RunConfig {
            ones: true,
            inverse: false,
            write_values: true,
        };
        let name = format!("run_length_unique_counts_i32_s{}", staged as u8);
        let (cuda, _) = compile_both(&name, || {
            define_run_length::<i32, u32, u32, i64, i64, Add>(&name, 4, cfg, counts)
        });
        std::fs::write(format!("{dir}/{name}.cu"), cuda).unwrap();
        let sums = RunConfig {
            ones: false,
            inverse: false,
            write_values: true,
        };
        let name = format!("run_length_reduce_by_key_i32_f32_s{}", staged as u8);
        let (cuda, _) = compile_both(&name, || {
            define_run_length::<i32, f32, f32, f32, i32, Add>(&name, 4, cfg, sums)
        });
        std::fs::write(format!("{dir}/{name}.cu"), cuda).unwrap();
    }
    // masked_select of f32 data with a u8 mask (staged, 8 vectors of 4 per unit), with and
    // without the data prefetched.
    for prefetch in [false, true] {
        let mut cfg = pass(4, true, true, false, true, true);
        cfg.prefetch = prefetch;
        let name = format!("compact_masked_select_u8_f32_pf{}", prefetch as u8);
        let mode = CompactMode::Select { values: false };
        let (cuda, _) = compile_both(&name, || {
            define_compact::<u32, f32, u32, i64, CountCarry<true>>(&name, 4, cfg, mode)
        });
        std::fs::write(format!("{dir}/{name}.cu"), cuda).unwrap();
    }
}

#[test]
fn reduce_rows_all_ops() {
    fn one<T: Numeric, A: Numeric, O: ScanOp>(name0: &str) {
        for vec in [1usize, 4] {
            for plane_ops in [false, true] {
                for device_len in [false, true] {
                    let cfg = TileConfig {
                        threads: 256,
                        vectors_per_thread: 8,
                        reverse: false,
                        exclusive: false,
                        indexed: false,
                        plane_ops,
                        stage: false,
                        async_copy: false,
                    };
                    let name = format!(
                        "reduce_rows_{name0}_v{vec}_p{}_d{}",
                        plane_ops as u8, device_len as u8
                    );
                    compile_both(&name, || {
                        define_reduce_rows::<T, A, T, O>(&name, vec, cfg, device_len)
                    });
                    compile_both(&name, || {
                        define_reduce_rows::<T, A, A, O>(&name, vec, cfg, device_len)
                    });
                }
            }
        }
    }
    one::<f32, f32, Add>("f32_add");
    one::<f16, f32, Add>("f16_add");
    one::<i32, i32, Mul>("i32_mul");
    one::<f32, f32, Max>("f32_max");
    one::<u32, u32, Min>("u32_min");
}
