//! The kernels of the cudajit-vs-nvcc benchmark (`examples/kernel_bench/`) as tests:
//! every kernel compiles for `sm_90` (skipped without the NVIDIA toolchain), and on a GPU
//! every kernel matches its CPU reference at small and awkward sizes (skipped without a
//! GPU). With `CUDAJIT_BENCH_CUBIN` set to the nvcc build of `benches/cuda/kernels.cu`,
//! the CUDA C++ twins are checked too.

#[allow(dead_code)]
#[path = "../examples/kernel_bench/main.rs"]
mod kernel_bench;

#[test]
fn benchmark_kernels_compile_for_sm90() {
    // As tests/common's `toolchain_or_skip` (not shared: this file only needs the two
    // skips): a missing toolchain skips, unless CUDAJIT_REQUIRE_TOOLCHAIN=1.
    if let Err(error) = cudajit::codegen::toolchain::Toolchain::global() {
        if std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() == Ok("1") {
            panic!("the NVIDIA toolchain is required (CUDAJIT_REQUIRE_TOOLCHAIN=1): {error}");
        }
        eprintln!("skipped: no NVIDIA toolchain ({error}); run scripts/test.sh to install it");
        return;
    }
    let compiled = kernel_bench::kernels::compile_all(cudajit::Arch::SM_90).expect("compiling");
    assert_eq!(compiled.len(), 9, "{compiled:?}");
    assert!(compiled.iter().all(|(_, bytes)| *bytes > 0));
}

#[test]
fn benchmark_kernels_match_their_cpu_references() {
    let context = match cudajit::default_context() {
        Ok(context) => context,
        Err(error) => {
            eprintln!("skipped: {error}");
            return;
        }
    };
    let options = kernel_bench::options::Options::defaults();
    let env = kernel_bench::measure::Env::new(context, &options).expect("benchmark environment");
    for name in kernel_bench::options::KERNEL_NAMES {
        if let Err(error) = kernel_bench::bench::check_small(&env, name) {
            panic!("{name}: {error}");
        }
    }
}
