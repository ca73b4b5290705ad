//! Metal (MSL) and CUDA C++ source of every kernel variant, generated without a device.
//!
//! Each `define_*` below repeats what `#[cube(launch_unchecked)]` generates for
//! `CubeKernel::define` (cubecl-macros 0.10, `generate/kernel.rs`), minus the client: register
//! the generic types, declare the parameters in order, expand the body, build. The sources are
//! then compiled by cubecl-cpp's CUDA and MSL compilers; a variant passes when the compiler
//! reports no error and the source names the kernel. Nothing here runs on hardware.
//!
//! When a kernel's parameters change, its `define_*` must follow: where a wgpu device exists,
//! `hand_definitions_match_the_macro` compares `define_scan_rows` with the macro's own.

use crate::common::codegen;

use codegen::*;
use cubecl::prelude::*;
use cubeprim_kernels::cube::TileConfig;
use cubeprim_kernels::device::scan_rows::{
    ScanInputsCompilationArg, ScanInputsExpand, ScanMetaCompilationArg, ScanMetaExpand,
    ScanOutputsCompilationArg, ScanOutputsExpand, ScanScalarsCompilationArg, ScanScalarsExpand,
};
use cubeprim_kernels::device::single_pass::{
    LookbackConfig, TileStateArgsCompilationArg, TileStateArgsExpand,
};
use cubeprim_kernels::device::ScanMode;
use cubeprim_kernels::device::{fill::fill_u32, reduce_tiles::reduce_tiles, scan_rows::scan_rows};
use cubeprim_kernels::ops::{Add, Max, Min, Mul, ScanOp};
use half::f16;

fn define_scan_rows<T: Numeric, A: Numeric, X: Int, O: ScanOp>(
    name: &str,
    vec: usize,
    cfg: TileConfig,
    mode: ScanMode,
    device_len: bool,
) -> KernelDefinition {
    use scan_rows::{_A, _N, _T, _X};
    type DT = DynamicScalar<_T>;
    type DA = DynamicScalar<_A>;
    type DX = DynamicScalar<_X>;
    type DN = DynamicSize<_N>;
    let (mut b, s) = settings(name, cfg.threads);
    register::<T, _T>(&mut b);
    register::<A, _A>(&mut b);
    register::<X, _X>(&mut b);
    b.scope.register_size::<DN>(vec);
    s.address_type.register(&mut b.scope);
    let input = <Array<Vector<DT, DN>> as LaunchArg>::expand(&ARRAY, &mut b);
    let mul = <Array<Vector<DT, DN>> as LaunchArg>::expand(&ARRAY, &mut b);
    let init = <Array<DT> as LaunchArg>::expand(&ARRAY, &mut b);
    let output = <Array<Vector<DT, DN>> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let indices = <Array<Vector<DX, DN>> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let state = <Array<Atomic<u32>> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let state_view = <Array<u32> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let prefixes = <Array<DA> as LaunchArg>::expand(&ARRAY, &mut b);
    let layout = <Array<u32> as LaunchArg>::expand(&ARRAY, &mut b);
    let len = <Array<u32> as LaunchArg>::expand(&ARRAY, &mut b);
    let n_vec = u32_arg(&mut b);
    let tiles_per_row = u32_arg(&mut b);
    let num_tiles = u32_arg(&mut b);
    let in_stride = u32_arg(&mut b);
    let out_stride = u32_arg(&mut b);
    let epoch = u32_arg(&mut b);
    let counter_base = u32_arg(&mut b);
    scan_rows::expand::<DT, DA, DX, O, DN>(
        &mut b.scope,
        vec,
        ScanInputsExpand { input, mul, init },
        ScanOutputsExpand { output, indices },
        TileStateArgsExpand {
            state,
            view: state_view,
        },
        ScanMetaExpand {
            prefixes,
            layout,
            len,
        },
        ScanScalarsExpand {
            n_vec,
            tiles_per_row,
            num_tiles,
            in_stride,
            out_stride,
            epoch,
            counter_base,
        },
        cfg,
        mode,
        device_len,
        false,
    );
    b.build(s)
}

fn define_reduce_tiles<T: Numeric, A: Numeric, O: ScanOp>(
    name: &str,
    vec: usize,
    cfg: TileConfig,
    device_len: bool,
) -> KernelDefinition {
    use reduce_tiles::{_A, _N, _T};
    type DT = DynamicScalar<_T>;
    type DA = DynamicScalar<_A>;
    type DN = DynamicSize<_N>;
    let (mut b, s) = settings(name, cfg.threads);
    register::<T, _T>(&mut b);
    register::<A, _A>(&mut b);
    b.scope.register_size::<DN>(vec);
    s.address_type.register(&mut b.scope);
    let input = <Array<Vector<DT, DN>> as LaunchArg>::expand(&ARRAY, &mut b);
    let aggregates = <Array<DA> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let layout = <Array<u32> as LaunchArg>::expand(&ARRAY, &mut b);
    let len = <Array<u32> as LaunchArg>::expand(&ARRAY, &mut b);
    let n_vec = u32_arg(&mut b);
    let tiles_per_row = u32_arg(&mut b);
    let num_tiles = u32_arg(&mut b);
    let in_stride = u32_arg(&mut b);
    reduce_tiles::expand::<DT, DA, O, DN>(
        &mut b.scope,
        vec,
        input,
        aggregates,
        layout,
        len,
        n_vec,
        tiles_per_row,
        num_tiles,
        in_stride,
        cfg,
        device_len,
    );
    b.build(s)
}

fn define_fill_u32() -> KernelDefinition {
    let (mut b, s) = settings("fill_u32", 256);
    s.address_type.register(&mut b.scope);
    let buf = <Array<u32> as LaunchArg>::expand_output(&ARRAY, &mut b);
    let value = u32_arg(&mut b);
    fill_u32::expand(&mut b.scope, buf, value);
    b.build(s)
}

/// One cfg per mode: a short single tile, or the long-row tile of look-back / reduce-then-scan.
fn tile(mode: ScanMode, variant: usize, indexed: bool, plane_ops: bool) -> TileConfig {
    let (threads, vectors_per_thread) = match mode {
        ScanMode::SingleTile => (32, 2),
        _ => (256, 4),
    };
    TileConfig {
        threads,
        vectors_per_thread,
        reverse: variant & 1 == 1,
        exclusive: variant & 2 == 2,
        indexed,
        plane_ops,
        // The look-back parks unindexed tiles in shared memory.
        stage: matches!(mode, ScanMode::Lookback(_)) && !indexed,
        // Asynchronous copies are CUDA's alone: see `lookback_async_copy_cuda`.
        async_copy: false,
    }
}

const fn lookback(plain_reads: bool) -> ScanMode {
    ScanMode::Lookback(LookbackConfig {
        window: 32,
        windows: 8,
        spins: 16,
        plain_reads,
        // NVIDIA warps and Apple SIMD groups are 32 wide.
        plane_max: 32,
        // Tile ids from the cube position where CUDA polls with plain loads, as the planner
        // picks both there; tickets otherwise.
        ordered: plain_reads,
    })
}

const MODES: [ScanMode; 4] = [
    ScanMode::SingleTile,
    lookback(false),
    lookback(true),
    ScanMode::Prefixed,
];

/// Every mode × indexed × vector width × plane ops × (reverse, exclusive) for one dtype and
/// operator. Returns the number of kernels compiled.
fn scan_rows_variants<T: Numeric, A: Numeric, O: ScanOp>(dtype: &str, op: &str) -> usize {
    let selection = matches!(op, "max" | "min");
    let mut count = 0;
    for (m, &mode) in MODES.iter().enumerate() {
        for indexed in [false, true] {
            // Indices exist for max / min only, and reduce-then-scan does not track them.
            if indexed && (!selection || mode == ScanMode::Prefixed) {
                continue;
            }
            for vec in [1usize, 4] {
                for plane_ops in [false, true] {
                    // Four consecutive variants cover (reverse, exclusive).
                    let cfg = tile(mode, count, indexed, plane_ops);
                    let name = format!(
                        "scan_rows_{dtype}_{op}_m{m}_i{}_v{vec}_p{}_r{}_e{}",
                        indexed as u8, plane_ops as u8, cfg.reverse as u8, cfg.exclusive as u8
                    );
                    // A device-resident length is scanned unvectorised.
                    let dl = vec == 1 && plane_ops;
                    if indexed {
                        // The index type is i64 where the runtime has it, else i32.
                        compile_both(&name, || {
                            define_scan_rows::<T, A, i64, O>(&name, vec, cfg, mode, dl)
                        });
                    }
                    let (cuda, msl) = compile_both(&name, || {
                        define_scan_rows::<T, A, i32, O>(&name, vec, cfg, mode, dl)
                    });
                    if plane_ops {
                        assert!(cuda.contains("__shfl"), "{name}: no shuffle in CUDA C++");
                        assert!(msl.contains("simd_shuffle"), "{name}: no shuffle in MSL");
                    }
                    count += 1;
                }
            }
        }
    }
    count
}

fn scan_rows_all_ops<T: Numeric, A: Numeric>(dtype: &str) -> usize {
    scan_rows_variants::<T, A, Add>(dtype, "add")
        + scan_rows_variants::<T, A, Mul>(dtype, "mul")
        + scan_rows_variants::<T, A, Max>(dtype, "max")
        + scan_rows_variants::<T, A, Min>(dtype, "min")
}

#[test]
fn scan_rows_f32() {
    assert_eq!(scan_rows_all_ops::<f32, f32>("f32"), 88);
}

#[test]
fn scan_rows_f16_accumulating_in_f32() {
    assert_eq!(scan_rows_all_ops::<f16, f32>("f16"), 88);
}

#[test]
fn scan_rows_i32() {
    assert_eq!(scan_rows_all_ops::<i32, i32>("i32"), 88);
}

#[test]
fn scan_rows_u32() {
    assert_eq!(scan_rows_all_ops::<u32, u32>("u32"), 88);
}

fn reduce_tiles_variants<T: Numeric, A: Numeric>(dtype: &str) {
    fn one<T: Numeric, A: Numeric, O: ScanOp>(dtype: &str, op: &str) {
        for vec in [1usize, 4] {
            for plane_ops in [false, true] {
                let cfg = tile(ScanMode::Prefixed, 0, false, plane_ops);
                let name = format!("reduce_tiles_{dtype}_{op}_v{vec}_p{}", plane_ops as u8);
                let dl = vec == 1;
                compile_both(&name, || {
                    define_reduce_tiles::<T, A, O>(&name, vec, cfg, dl)
                });
            }
        }
    }
    one::<T, A, Add>(dtype, "add");
    one::<T, A, Mul>(dtype, "mul");
    one::<T, A, Max>(dtype, "max");
    one::<T, A, Min>(dtype, "min");
}

#[test]
fn reduce_tiles_all() {
    reduce_tiles_variants::<f32, f32>("f32");
    reduce_tiles_variants::<f16, f32>("f16");
    reduce_tiles_variants::<i32, i32>("i32");
    reduce_tiles_variants::<u32, u32>("u32");
}

#[test]
fn fill_u32_source() {
    // `fill_u32` is launched with bounds checks (`#[cube(launch)]`).
    let (cuda, msl) = compile_both_in(ExecutionMode::Checked, "fill_u32", define_fill_u32);
    assert!(cuda.contains("__global__"));
    assert!(msl.contains("[[kernel]]"));
}

/// `CUBEPRIM_DUMP=dir cargo test --test suite codegen::dump` writes one variant's sources for
/// reading.
#[test]
fn dump() {
    let Ok(dir) = std::env::var("CUBEPRIM_DUMP") else {
        return;
    };
    let cfg = tile(MODES[1], 0, true, true);
    let name = "scan_rows_f32_max_lookback";
    let (cuda, msl) = compile_both(name, || {
        define_scan_rows::<f32, f32, i32, Max>(name, 4, cfg, MODES[1], false)
    });
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(format!("{dir}/{name}.cu"), cuda).unwrap();
    std::fs::write(format!("{dir}/{name}.metal"), msl).unwrap();
    // The 1-D f32 cumsum of the H200 bench: the long tile (or CUBEPRIM_DUMP_TILE=UNITSxVECTORS)
    // of vec4, plain polling loads.
    let (threads, vpt) = env_tile("CUBEPRIM_DUMP_TILE").unwrap_or(cubeprim::scan::LONG_TILE);
    let stage = std::env::var("CUBEPRIM_DUMP_STAGE").as_deref() != Ok("0");
    let cfg = TileConfig {
        threads,
        vectors_per_thread: vpt,
        reverse: false,
        exclusive: false,
        indexed: false,
        plane_ops: true,
        stage,
        // Asynchronous copies, as the plan has them on CUDA sm_80+ (`ScanTuning::async_copy`);
        // CUBEPRIM_DUMP_ASYNC=0: plain loads.
        async_copy: stage && std::env::var("CUBEPRIM_DUMP_ASYNC").as_deref() != Ok("0"),
    };
    let mode = ExecutionMode::Unchecked;
    // The plan's look-back on CUDA: plain polling loads, tiles by position, SPINS_CUDA.
    let plan_lookback = ScanMode::Lookback(LookbackConfig {
        window: 32,
        windows: cubeprim::scan::WINDOWS,
        spins: cubeprim::scan::SPINS_CUDA,
        plain_reads: true,
        plane_max: 32,
        ordered: true,
    });
    let name = "scan_rows_f32_add_lookback";
    let cuda = cuda_source(
        define_scan_rows::<f32, f32, i32, Add>(name, 4, cfg, plan_lookback, false),
        mode,
    );
    std::fs::write(format!("{dir}/{name}.cu"), cuda).unwrap();
    // The same tile reading its prefix from `prefixes` (reduce-then-scan's last pass): the
    // look-back scan's time without the look-back.
    let name = "scan_rows_f32_add_prefixed";
    let cuda = cuda_source(
        define_scan_rows::<f32, f32, i32, Add>(name, 4, cfg, ScanMode::Prefixed, false),
        mode,
    );
    std::fs::write(format!("{dir}/{name}.cu"), cuda).unwrap();
}

/// The staged look-back tile with asynchronous copies (CUDA sm_80+), as the plan picks it for
/// sums and extrema of 4- and 8-byte types: the copies are 16-byte `cp.async`s completed on a
/// cube barrier, inclusive and exclusive, for `f32` and `i64` (CUDA C++ only: no other
/// target has them).
#[test]
fn lookback_async_copy_cuda() {
    fn one<T: Numeric, O: ScanOp>(name: &str, vec: usize, exclusive: bool) {
        let cfg = TileConfig {
            exclusive,
            async_copy: true,
            ..tile(lookback(true), 0, false, true)
        };
        let cuda = cuda_source(
            define_scan_rows::<T, T, i32, O>(name, vec, cfg, lookback(true), false),
            ExecutionMode::Unchecked,
        );
        assert!(cuda.contains(name), "{name}: kernel not named");
        assert!(
            cuda.contains("__cp_async_shared_global<16>"),
            "{name}: no 16-byte asynchronous copy"
        );
        assert!(
            cuda.contains("__cp_async_arrive"),
            "{name}: copies not committed"
        );
        // The copies' barrier is never at byte 0, where the H200 ran this kernel 19 % slower
        // (BENCHMARKS.md at 52581a0, 2026-12-03 (H200), "a fixed shared layout"): the tile's
        // scan scratch is there (`lead_shared`). cubecl-opt places the other arrays in a hash
        // set's order, which differs from one expansion to the next, so eight expansions of
        // each kernel are checked: without `lead_shared` the barrier came first in about one
        // expansion in nine (nine arrays), and all 24 would have missed it with a chance of
        // about 6 %.
        let again = (1..8).map(|_| {
            cuda_source(
                define_scan_rows::<T, T, i32, O>(name, vec, cfg, lookback(true), false),
                ExecutionMode::Unchecked,
            )
        });
        for (k, src) in std::iter::once(cuda).chain(again).enumerate() {
            let first = src
                .lines()
                .find(|l| l.contains("dynamic_shared_mem[0])"))
                .unwrap_or_else(|| panic!("{name}: nothing at byte 0"));
            assert!(
                !first.contains("cuda::barrier"),
                "{name}, expansion {k}: the copies' barrier at byte 0: {first}"
            );
            assert!(
                src.lines()
                    .any(|l| l.contains("cuda::barrier") && l.contains("dynamic_shared_mem[")),
                "{name}, expansion {k}: no shared barrier"
            );
        }
    }
    one::<f32, Add>("scan_rows_f32_add_async", 4, false);
    one::<f32, Max>("scan_rows_f32_max_async_excl", 4, true);
    one::<i64, Add>("scan_rows_i64_add_async", 2, false);
}

/// The lines of a source as a sorted multiset, with shared-memory offsets dropped: declarations
/// come out in hash-map order, which differs from one expansion to the next, and the offsets
/// follow the ids of the arrays, which two definitions of one kernel need not share.
fn normalized(src: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = src
        .lines()
        .map(|l| l.split("(&dynamic_shared_mem[").next().unwrap_or(l))
        .collect();
    lines.sort_unstable();
    lines
}

/// The hand-written definitions above are checked against the macro's own `CubeKernel::define`
/// where a wgpu device exists (lavapipe in CI): same MSL, variant by variant.
#[cfg(feature = "wgpu")]
#[test]
fn hand_definitions_match_the_macro() {
    use cubecl::wgpu::{WgpuDevice, WgpuRuntime};
    let client = std::panic::catch_unwind(|| {
        let c = WgpuRuntime::client(&WgpuDevice::default());
        let _ = c.properties();
        c
    });
    let client = match client {
        Ok(c) => c,
        Err(_) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true but no wgpu device")
        }
        Err(_) => return eprintln!("no wgpu device: comparison with the macro skipped"),
    };
    fn check<O: ScanOp>(client: &ComputeClient<WgpuRuntime>) {
        for (m, &mode) in MODES.iter().enumerate() {
            for vec in [1usize, 4] {
                for plane_ops in [false, true] {
                    let indexed = mode != ScanMode::Prefixed && vec == 4;
                    let dl = vec == 1 && plane_ops;
                    let cfg = tile(mode, m + vec, indexed, plane_ops);
                    let settings = KernelSettings::default()
                        .cube_dim(CubeDim::new_1d(cfg.threads))
                        .address_type(AddressType::U32);
                    let macro_def = scan_rows::ScanRows::<f16, f32, i32, O, WgpuRuntime>::new(
                        settings,
                        client.clone(),
                        ScanInputsCompilationArg {
                            input: ARRAY,
                            mul: ARRAY,
                            init: ARRAY,
                        },
                        ScanOutputsCompilationArg {
                            output: ARRAY,
                            indices: ARRAY,
                        },
                        TileStateArgsCompilationArg {
                            state: ARRAY,
                            view: ARRAY,
                        },
                        ScanMetaCompilationArg {
                            prefixes: ARRAY,
                            layout: ARRAY,
                            len: ARRAY,
                        },
                        ScanScalarsCompilationArg {
                            n_vec: (),
                            tiles_per_row: (),
                            num_tiles: (),
                            in_stride: (),
                            out_stride: (),
                            epoch: (),
                            counter_base: (),
                        },
                        vec,
                        cfg,
                        mode,
                        dl,
                        false,
                    )
                    .define();
                    let name = macro_def.options.kernel_name.clone();
                    let by_hand = define_scan_rows::<f16, f32, i32, O>(&name, vec, cfg, mode, dl);
                    let msl_macro = msl_source(macro_def, ExecutionMode::Unchecked);
                    let msl_hand = msl_source(by_hand, ExecutionMode::Unchecked);
                    assert!(
                        normalized(&msl_macro) == normalized(&msl_hand),
                        "{name}: the hand definition differs from the macro's"
                    );
                }
            }
        }
    }
    let cfg = tile(ScanMode::Prefixed, 0, false, true);
    let settings = KernelSettings::default()
        .cube_dim(CubeDim::new_1d(cfg.threads))
        .address_type(AddressType::U32);
    let macro_def = reduce_tiles::ReduceTiles::<f16, f32, Max, WgpuRuntime>::new(
        settings,
        client.clone(),
        ARRAY,
        ARRAY,
        ARRAY,
        ARRAY,
        (),
        (),
        (),
        (),
        4,
        cfg,
        false,
    )
    .define();
    let name = macro_def.options.kernel_name.clone();
    let by_hand = define_reduce_tiles::<f16, f32, Max>(&name, 4, cfg, false);
    assert!(
        normalized(&msl_source(macro_def, ExecutionMode::Unchecked))
            == normalized(&msl_source(by_hand, ExecutionMode::Unchecked)),
        "{name}: the hand definition differs from the macro's"
    );

    check::<Add>(&client);
    check::<Mul>(&client);
    check::<Max>(&client);
    check::<Min>(&client);
}
