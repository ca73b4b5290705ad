//! Shared scaffolding of the codegen tests (`tests/codegen*.rs`): kernel definitions built by
//! hand as `#[cube(launch_unchecked)]` builds them for `CubeKernel::define` (cubecl-macros
//! 0.10, `generate/kernel.rs`), minus the client, then compiled to CUDA C++ and Metal (MSL) by
//! cubecl-cpp's compilers. Nothing here needs a device (`use crate::common::codegen;`).
#![allow(dead_code)]

use cubecl::ir::TargetProperties;
use cubecl::prelude::*;
use cubecl::Compiler;
use cubecl_cpp::cuda::{mma::CudaWmmaCompiler, CudaDialect};
use cubecl_cpp::shared::{CompilationOptions, CppCompiler, CppSupportedFeatures};
use cubecl_cpp::MslCompiler;
use std::sync::Mutex;

/// A plain (not in-place) array argument.
pub const ARRAY: ArrayCompilationArg = ArrayCompilationArg { inplace: None };

/// A kernel builder and the settings of kernel `name` with `threads` units per cube.
pub fn settings(name: &str, threads: u32) -> (KernelBuilder, KernelSettings) {
    let mut b = KernelBuilder::default();
    // The kernels use no MMA, so the default target serves CUDA and Metal alike.
    b.runtime_properties(TargetProperties::default());
    let s = KernelSettings::default()
        .kernel_name(name)
        .cube_dim(CubeDim::new_1d(threads))
        .address_type(AddressType::U32);
    (b, s)
}

/// A tile `UNITSxN` from the environment variable `var` (the dumps' tile overrides), if set
/// and well formed.
pub fn env_tile(var: &str) -> Option<(u32, u32)> {
    let t = std::env::var(var).ok()?;
    let (a, b) = t.split_once('x')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Registers `E` as the storage type of the kernel's generic parameter `M`.
pub fn register<E: CubePrimitive, M: 'static>(b: &mut KernelBuilder) {
    b.scope
        .register_type::<DynamicScalar<M>>(E::as_type_native_unchecked().storage_type());
}

/// A `u32` scalar parameter.
pub fn u32_arg(b: &mut KernelBuilder) -> <u32 as CubeType>::ExpandType {
    <u32 as LaunchArg>::expand(&Default::default(), b)
}

/// A read-only array parameter.
pub fn input<E: CubePrimitive>(b: &mut KernelBuilder) -> <Array<E> as CubeType>::ExpandType {
    <Array<E> as LaunchArg>::expand(&ARRAY, b)
}

/// A written array parameter.
pub fn output<E: CubePrimitive>(b: &mut KernelBuilder) -> <Array<E> as CubeType>::ExpandType {
    <Array<E> as LaunchArg>::expand_output(&ARRAY, b)
}

/// cubecl-cpp numbers temporaries with a global counter that each compilation resets: tests
/// running in parallel must not compile at the same time.
static COMPILER: Mutex<()> = Mutex::new(());

type CudaCompiler = CppCompiler<CudaDialect<CudaWmmaCompiler>>;

/// A kernel compiled by cubecl's CUDA C++ compiler, with what cubecl-cuda enables from sm_70 on
/// (the rest — clusters, elect_sync — is sm_90+); its name.
fn compile_cuda(
    def: KernelDefinition,
    mode: ExecutionMode,
) -> (<CudaCompiler as Compiler>::Representation, String) {
    let _guard = COMPILER.lock().unwrap_or_else(|e| e.into_inner());
    let name = def.options.kernel_name.clone();
    let opts = CompilationOptions {
        warp_size: 32,
        supports_features: CppSupportedFeatures {
            grid_constants: true,
            ..Default::default()
        },
    };
    let addr = AddressType::U32.unsigned_type();
    let kernel = CudaCompiler::default()
        .compile(def, &opts, mode, addr)
        .unwrap_or_else(|e| panic!("CUDA C++ of {name}: {e:?}"));
    (kernel, name)
}

/// CUDA C++ of a kernel ([`compile_cuda`]).
pub fn cuda_source(def: KernelDefinition, mode: ExecutionMode) -> String {
    let (kernel, name) = compile_cuda(def, mode);
    let src = kernel.to_string();
    // `CUBEPRIM_CODEGEN_DUMP=dir`: every kernel's CUDA C++ also goes to `dir/<name>.cu`, to
    // compare two builds' kernels (the same source, the same speed).
    if let Ok(dir) = std::env::var("CUBEPRIM_CODEGEN_DUMP") {
        std::fs::create_dir_all(&dir).expect("the dump directory");
        std::fs::write(format!("{dir}/{name}.cu"), &src).expect("a dump file");
    }
    src
}

/// Bytes of shared memory a kernel declares, as cubecl's CUDA C++ compiler lays it out (every
/// shared array at its aligned offset; wgpu validates WGSL's the same way against the
/// device's `max_compute_workgroup_storage_size`).
pub fn cuda_shared_bytes(def: KernelDefinition) -> usize {
    compile_cuda(def, ExecutionMode::Unchecked)
        .0
        .shared_memory_size()
}

/// MSL of a kernel.
pub fn msl_source(def: KernelDefinition, mode: ExecutionMode) -> String {
    let _guard = COMPILER.lock().unwrap_or_else(|e| e.into_inner());
    let name = def.options.kernel_name.clone();
    let addr = AddressType::U32.unsigned_type();
    MslCompiler::default()
        .compile(def, &CompilationOptions::default(), mode, addr)
        .unwrap_or_else(|e| panic!("MSL of {name}: {e:?}"))
        .to_string()
}

/// CUDA C++ and MSL of one kernel in `mode`; panics with the variant's name on a compiler
/// error or when a source does not name the kernel.
pub fn compile_both_in(
    mode: ExecutionMode,
    name: &str,
    define: impl Fn() -> KernelDefinition,
) -> (String, String) {
    let cuda = cuda_source(define(), mode);
    let msl = msl_source(define(), mode);
    for (lang, src) in [("CUDA C++", &cuda), ("MSL", &msl)] {
        assert!(
            src.contains(name),
            "{lang} of {name} does not name the kernel"
        );
    }
    (cuda, msl)
}

/// [`compile_both_in`] `Unchecked`, the mode of `launch_unchecked` (every cubeprim kernel).
pub fn compile_both(name: &str, define: impl Fn() -> KernelDefinition) -> (String, String) {
    compile_both_in(ExecutionMode::Unchecked, name, define)
}
