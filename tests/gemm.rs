//! The tensor-core GEMM of `examples/gemm/` and its CUDA C++ twin
//! (`benches/cuda/gemm_mma.cu`) as tests. On the CPU: every layout and output type compiles
//! for sm_90 to the intended instructions with nothing in local memory, and the twin
//! compiles with nvcc (skipped without the toolchain, unless CUDAJIT_REQUIRE_TOOLCHAIN=1).
//! On the CPU simulator: the mma.sync GEMM in every layout and output type against a host
//! GEMM, at sizes of one k-tile and of a wrapping pipeline. On a GPU: both sides match
//! cuBLAS, and cuBLAS the host, at small sizes that cover one k-tile, a partial band of
//! blocks and several bands (skipped without a GPU).

#[allow(dead_code)]
#[path = "../examples/gemm/main.rs"]
mod gemm;

mod common;

use cudajit::{bf16, Stream};
use gemm::measure::{launch_config, Bench, Element, Problem};
use gemm::options::{Algorithm, Layout, Output};

/// Where test `test` builds the twin: in the target directory, apart from other tests
/// and other runs.
fn twin_dir(test: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("gemm-twin-{test}-{}", std::process::id()))
}

#[test]
fn every_gemm_compiles_to_mma_ldmatrix_and_cp_async_in_registers() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    for layout in Layout::ALL {
        for output in Output::ALL {
            let ptx = gemm::cpu_check::ptx(layout, output).expect("compiling the GEMM");
            if let Err(error) = gemm::cpu_check::ptx_shape(&ptx, layout, output) {
                panic!("{} {}: {error}", layout.name(), output.name());
            }
            // C's stores: two f32 in one 8-byte store, or two bf16 in one 32-bit word.
            let store = match output {
                Output::F32 => "st.global.v2.f32",
                Output::Bf16 => "st.global.u32",
            };
            assert_eq!(
                ptx.matches(store).count(),
                64,
                "{} {}: {store}",
                layout.name(),
                output.name()
            );
        }
    }
}

/// The nvcc twin of `algorithm` built into a directory of `test`'s: the directory, and the
/// cubin (`None`, said why, where nvcc is missing and the toolchain optional).
fn twin_cubin(
    test: &str,
    algorithm: Algorithm,
) -> (std::path::PathBuf, Option<std::path::PathBuf>) {
    let dir = twin_dir(test);
    let cubin = match gemm::twin::build(&dir, algorithm) {
        Ok(path) => Some(path),
        Err(gemm::twin::BuildError::NoNvcc(why))
            if std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() != Ok("1") =>
        {
            eprintln!("the nvcc twin is not checked: {why}");
            None
        }
        Err(error) => panic!("the {} twin does not build: {error}", algorithm.name()),
    };
    (dir, cubin)
}

#[test]
fn the_cuda_twin_compiles_with_nvcc() {
    let dir = twin_dir("cpu");
    for algorithm in [Algorithm::Mma, Algorithm::Wgmma] {
        match gemm::twin::build(&dir, algorithm) {
            Ok(path) => assert!(path.is_file()),
            Err(gemm::twin::BuildError::NoNvcc(why))
                if std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() != Ok("1") =>
            {
                eprintln!("skipped: {why}");
            }
            Err(error) => panic!("the {} twin does not build: {error}", algorithm.name()),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Small integers in -4..=4, so every product and partial sum of a K ≤ 256 GEMM is exact in
/// f32 whatever the order of the additions: the simulator's C must equal the host's.
fn small_bf16(count: usize, seed: usize) -> Vec<bf16> {
    (0..count)
        .map(|i| bf16::from_f32(((i * 7 + seed * 13 + i / 5) % 9) as f32 - 4.0))
        .collect()
}

/// C = A·B on the host: A M×K row-major, B column by column (`b[n K + k]`) or, with
/// `b_row_major`, row by row (`b[k N + n]`).
fn host_gemm(
    a: &[bf16],
    b: &[bf16],
    (m, n, k): (usize, usize, usize),
    b_row_major: bool,
) -> Vec<f32> {
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k)
                .map(|l| {
                    let bv = if b_row_major {
                        b[l * n + j]
                    } else {
                        b[j * k + l]
                    };
                    a[i * k + l].to_f32() * bv.to_f32()
                })
                .sum();
        }
    }
    c
}

/// (M, N, K) on the simulator, small for CI's debug build: one block over one k-tile; one
/// block over 3 k-tiles (every stage of the 3-stage pipeline, the prologue's both loads);
/// two block rows (the band order's second row).
const SIM_SIZES: [(usize, usize, usize); 3] = [(128, 128, 64), (128, 128, 192), (256, 128, 64)];

#[test]
fn gemms_match_the_host_on_the_simulator() {
    let stream = Stream::simulator();
    for (index, dims) in SIM_SIZES.into_iter().enumerate() {
        let (m, n, k) = dims;
        let a = small_bf16(m * k, index);
        let b = small_bf16(k * n, index + 1);
        let da = stream.clone_htod(&a).unwrap();
        let db = stream.clone_htod(&b).unwrap();
        for layout in Layout::ALL {
            let expected = host_gemm(&a, &b, dims, layout.b_row_major());
            let config = launch_config(m, n);
            let (mu, nu, ku) = (m as u32, n as u32, k as u32);
            let what = format!("{m}x{n}x{k} {}", layout.name());
            let mut c = stream.alloc_zeros::<f32>(m * n).unwrap();
            let mut c16 = stream.alloc_zeros::<bf16>(m * n).unwrap();
            if layout.b_row_major() {
                gemm::kernels::gemm_bf16::launch::<true>(
                    &stream, config, mu, nu, ku, &da, &db, &mut c,
                )
                .unwrap();
                gemm::kernels::gemm_bf16_to_bf16::launch::<true>(
                    &stream, config, mu, nu, ku, &da, &db, &mut c16,
                )
                .unwrap();
            } else {
                gemm::kernels::gemm_bf16::launch::<false>(
                    &stream, config, mu, nu, ku, &da, &db, &mut c,
                )
                .unwrap();
                gemm::kernels::gemm_bf16_to_bf16::launch::<false>(
                    &stream, config, mu, nu, ku, &da, &db, &mut c16,
                )
                .unwrap();
            }
            let c = stream.clone_dtoh(&c).unwrap();
            assert!(c.iter().any(|&x| x.abs() > 8.0), "{what}: trivial C");
            for (i, (&got, &want)) in c.iter().zip(&expected).enumerate() {
                assert_eq!(got, want, "{what} f32: C[{}][{}]", i / n, i % n);
            }
            let c16 = stream.clone_dtoh(&c16).unwrap();
            for (i, (&got, &want)) in c16.iter().zip(&expected).enumerate() {
                assert_eq!(
                    got,
                    bf16::from_f32(want),
                    "{what} bf16: C[{}][{}]",
                    i / n,
                    i % n
                );
            }
        }
    }
}

/// (M, N, K): one block and one k-tile (the prologue's second load skipped); a 3 × 3 grid
/// of blocks (a partial band) over 3 k-tiles; 9 block rows (a full band of 8, then 1).
const GPU_SIZES: [(usize, usize, usize); 3] = [(128, 128, 64), (384, 384, 192), (1152, 256, 128)];

fn check_all<C: Element>(bench: &Bench, output: Output) {
    for (m, n, k) in GPU_SIZES {
        let mut problem = Problem::<C>::new(&bench.stream, m, n, k).expect("operands");
        let (cudajit, nvcc) = bench.check(&mut problem).expect("running the GEMMs");
        let what = format!("{m}x{n}x{k} {} C {}", bench.layout.name(), output.name());
        assert!(cudajit.correct, "cudajit {what}: {cudajit:?}");
        if let Some(nvcc) = nvcc {
            assert!(nvcc.correct, "nvcc twin {what}: {nvcc:?}");
        }
        // The results are not trivially equal to zero.
        assert!(cudajit.max_value > 1.0, "{what}: {cudajit:?}");
    }
}

#[test]
fn gemms_match_cublas_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let (dir, cubin) = twin_cubin("gpu", Algorithm::Mma);
    let stream = context.default_stream();
    for layout in Layout::ALL {
        for output in Output::ALL {
            let twin = cubin.as_ref().map(|path| {
                gemm::twin::Twin::load(
                    &context,
                    stream.clone(),
                    path,
                    Algorithm::Mma,
                    layout,
                    output,
                )
                .expect("loading the twin")
            });
            let bench =
                Bench::new(stream.clone(), twin, layout, Algorithm::Mma, 1).expect("cuBLAS");
            match output {
                Output::F32 => check_all::<f32>(&bench, output),
                Output::Bf16 => check_all::<bf16>(&bench, output),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_hopper_gemm_compiles_to_tma_wgmma_and_setmaxnreg_in_registers() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    for form in gemm::cpu_check::HopperForm::ALL {
        let (layout, fp8) = (form.layout, form.fp8);
        let ptx = gemm::cpu_check::hopper_ptx(form).expect("compiling the Hopper GEMM");
        if let Err(error) = gemm::cpu_check::hopper_ptx_shape(&ptx, form) {
            panic!("gemm_wgmma {form:?}: {error}");
        }
        // The accumulators are one in/out register list of 128 f32, written back by 64
        // two-float stores in the epilogue; NN's wgmma reads B transposed.
        let wgmma = ptx
            .lines()
            .find(|line| line.contains("wgmma.mma_async"))
            .expect("a wgmma");
        assert_eq!(wgmma.matches("%f").count(), 128, "{wgmma}");
        let trans_b = match (layout.b_row_major(), fp8) {
            (_, true) => "p, 1, 1;", // no transpose flags: FP8 is K-major only
            (true, false) => "0, 1;",
            (false, false) => "0, 0;",
        };
        assert!(wgmma.trim_end().ends_with(trans_b), "{wgmma}");
        assert_eq!(ptx.matches("st.global.v2.f32").count(), 64);
        gemm::hopper::gemm_wgmma::KERNEL
            .compile_for_arch_with(cudajit::Arch::SM_90A, &form.specialization())
            .expect("an sm_90a cubin");
    }
    // bf16 C: the same main loop, each pair of accumulators rounded into one 32-bit store.
    let form = gemm::cpu_check::HopperForm::ALL[0];
    let ptx = gemm::cpu_check::hopper_ptx_for(form, Output::Bf16).expect("the bf16-output form");
    if let Err(error) = gemm::cpu_check::hopper_ptx_shape(&ptx, form) {
        panic!("gemm_wgmma bf16 output: {error}");
    }
    assert_eq!(ptx.matches("cvt.rn.bf16x2.f32").count(), 64, "{ptx}");
    assert_eq!(ptx.matches("st.global.u32").count(), 64);
    assert_eq!(ptx.matches("st.global.v2.f32").count(), 0);
}

/// C = A·B on the host for the Hopper GEMM's operands given as f32 values (bf16 or e4m3
/// decoded).
fn host_gemm_f32(
    a: &[f32],
    b: &[f32],
    (m, n, k): (usize, usize, usize),
    b_row_major: bool,
) -> Vec<f32> {
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k)
                .map(|l| {
                    a[i * k + l]
                        * if b_row_major {
                            b[l * n + j]
                        } else {
                            b[j * k + l]
                        }
                })
                .sum();
        }
    }
    c
}

/// e4m3 of a small integer (|x| ≤ 4): exponent bias 7, three mantissa bits.
fn e4m3_of_small(x: f32) -> u8 {
    let sign = if x < 0.0 { 0x80 } else { 0 };
    sign | [0x00, 0x38, 0x40, 0x44, 0x48][x.abs() as usize]
}

/// (M, N, K) of the Hopper GEMM on the simulator: one block over one k-tile; one block
/// over 5 k-tiles (the ring of 4 wraps: the empty barriers' second phase).
const HOPPER_SIM_SIZES: [(usize, usize, usize); 2] = [(128, 256, 64), (128, 256, 320)];

/// The TMA + wgmma GEMM (warp-specialised over mbarriers, 384 threads) on the simulator:
/// TN and NN in bf16, TN in e4m3, equal to a host GEMM (small integers: exact).
#[test]
fn the_hopper_gemm_matches_the_host_on_the_simulator() {
    use cudajit::tensor_map::{TensorMapElement, TensorMapLayout, TensorMapSwizzle};
    use cudajit::TensorMap;
    use gemm::hopper::{gemm_wgmma, SHARED_BYTES, THREADS, TILE_M, TILE_N};
    let stream = cudajit::SimStream::new();
    let swizzled = |element, inner: usize, outer: usize, box_inner: u32, box_outer: u32| {
        TensorMapLayout::tiled(
            element,
            &[inner as u64, outer as u64],
            &[box_inner, box_outer],
        )
        .with_swizzle(TensorMapSwizzle::B128)
    };
    for (index, dims) in HOPPER_SIM_SIZES.into_iter().enumerate() {
        let (m, n, k) = dims;
        let config =
            cudajit::LaunchConfig::new(((n / TILE_N) as u32, (m / TILE_M) as u32, 1), THREADS)
                .with_shared_mem(SHARED_BYTES);
        let a16 = small_bf16(m * k, index);
        let b16 = small_bf16(k * n, index + 1);
        let (a, b): (Vec<f32>, Vec<f32>) = (
            a16.iter().map(|x| x.to_f32()).collect(),
            b16.iter().map(|x| x.to_f32()).collect(),
        );
        let da = stream.clone_htod(&a16).unwrap();
        let db = stream.clone_htod(&b16).unwrap();
        for b_row_major in [false, true] {
            let a_map =
                TensorMap::encode_sim(&swizzled(TensorMapElement::Bf16, k, m, 64, 128), &da)
                    .unwrap();
            let b_layout = if b_row_major {
                swizzled(TensorMapElement::Bf16, n, k, 64, 64)
            } else {
                swizzled(TensorMapElement::Bf16, k, n, 64, 256)
            };
            let b_map = TensorMap::encode_sim(&b_layout, &db).unwrap();
            let mut c = stream.alloc_zeros::<f32>(m * n).unwrap();
            let (nu, ku) = (n as u32, k as u32);
            if b_row_major {
                gemm_wgmma::launch::<f32, true, false, false, false, false>(
                    &stream, config, a_map, b_map, nu, ku, &mut c,
                )
                .unwrap();
            } else {
                gemm_wgmma::launch::<f32, false, false, false, false, false>(
                    &stream, config, a_map, b_map, nu, ku, &mut c,
                )
                .unwrap();
            }
            let c = stream.clone_dtoh(&c).unwrap();
            let expected = host_gemm_f32(&a, &b, dims, b_row_major);
            assert!(c.iter().any(|&x| x.abs() > 8.0), "{m}x{n}x{k}: trivial C");
            for (i, (&got, &want)) in c.iter().zip(&expected).enumerate() {
                assert_eq!(
                    got,
                    want,
                    "wgmma {m}x{n}x{k} NN {b_row_major}: C[{}][{}]",
                    i / n,
                    i % n
                );
            }
        }
        // e4m3, TN: k-tiles of 128, so K a multiple of 128.
        let k8 = 128 * (index + 1);
        let dims8 = (m, n, k8);
        let a8: Vec<f32> = small_bf16(m * k8, index + 2)
            .iter()
            .map(|x| x.to_f32())
            .collect();
        let b8: Vec<f32> = small_bf16(k8 * n, index + 3)
            .iter()
            .map(|x| x.to_f32())
            .collect();
        let da8 = stream
            .clone_htod(&a8.iter().map(|&x| e4m3_of_small(x)).collect::<Vec<u8>>())
            .unwrap();
        let db8 = stream
            .clone_htod(&b8.iter().map(|&x| e4m3_of_small(x)).collect::<Vec<u8>>())
            .unwrap();
        let a_map =
            TensorMap::encode_sim(&swizzled(TensorMapElement::U8, k8, m, 128, 128), &da8).unwrap();
        let b_map =
            TensorMap::encode_sim(&swizzled(TensorMapElement::U8, k8, n, 128, 256), &db8).unwrap();
        let mut c = stream.alloc_zeros::<f32>(m * n).unwrap();
        gemm_wgmma::launch::<f32, false, true, false, false, false>(
            &stream, config, a_map, b_map, n as u32, k8 as u32, &mut c,
        )
        .unwrap();
        let c = stream.clone_dtoh(&c).unwrap();
        let expected = host_gemm_f32(&a8, &b8, dims8, false);
        for (i, (&got, &want)) in c.iter().zip(&expected).enumerate() {
            assert_eq!(
                got,
                want,
                "wgmma e4m3 {m}x{n}x{k8}: C[{}][{}]",
                i / n,
                i % n
            );
        }
    }
}

/// The clustered form on the simulator: the two blocks of a cluster of 2 take the two
/// 128-row tiles of a 256 × 256 C over 2 k-tiles, each loading half of B's tile and
/// multicasting it into both blocks' shared memory, and releasing buffers on both blocks'
/// `empty` barriers; equal to the host GEMM (small integers: exact).
#[test]
fn the_clustered_hopper_gemm_matches_the_host_on_the_simulator() {
    use cudajit::tensor_map::{TensorMapElement, TensorMapLayout, TensorMapSwizzle};
    use cudajit::TensorMap;
    use gemm::hopper::{gemm_wgmma, SHARED_BYTES, THREADS, TILE_M, TILE_N};
    let stream = cudajit::SimStream::new();
    let swizzled = |inner: usize, outer: usize, box_outer: u32| {
        TensorMapLayout::tiled(
            TensorMapElement::Bf16,
            &[inner as u64, outer as u64],
            &[64, box_outer],
        )
        .with_swizzle(TensorMapSwizzle::B128)
    };
    let dims = (256, 256, 128);
    let (m, n, k) = dims;
    let a16 = small_bf16(m * k, 5);
    let b16 = small_bf16(k * n, 6);
    let (a, b): (Vec<f32>, Vec<f32>) = (
        a16.iter().map(|x| x.to_f32()).collect(),
        b16.iter().map(|x| x.to_f32()).collect(),
    );
    let da = stream.clone_htod(&a16).unwrap();
    let db = stream.clone_htod(&b16).unwrap();
    let a_map = TensorMap::encode_sim(&swizzled(k, m, TILE_M as u32), &da).unwrap();
    // Each block of a cluster loads half of B's 256-row tile.
    let b_map = TensorMap::encode_sim(&swizzled(k, n, TILE_N as u32 / 2), &db).unwrap();
    let (tiles_n, tiles_m) = ((n / TILE_N) as u32, (m / TILE_M) as u32);
    let config = cudajit::LaunchConfig::new((2 * tiles_n, tiles_m / 2, 1), THREADS)
        .with_cluster((2, 1, 1))
        .with_shared_mem(SHARED_BYTES);
    let mut c = stream.alloc_zeros::<f32>(m * n).unwrap();
    gemm_wgmma::launch::<f32, false, false, true, false, false>(
        &stream, config, a_map, b_map, n as u32, k as u32, &mut c,
    )
    .unwrap();
    let c = stream.clone_dtoh(&c).unwrap();
    let expected = host_gemm_f32(&a, &b, dims, false);
    assert!(c.iter().any(|&x| x.abs() > 8.0), "trivial C");
    for (i, (&got, &want)) in c.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "clustered wgmma: C[{}][{}]", i / n, i % n);
    }
}

/// The persistent form on the simulator: one block walks the two tiles of a 256 × 256 C over
/// 3 k-tiles each, so the ring of 4 wraps in the middle of the second tile and the stage and
/// phase counters must carry on across tiles; equal to the host GEMM.
#[test]
fn the_persistent_hopper_gemm_walks_its_tiles_on_the_simulator() {
    use cudajit::tensor_map::{TensorMapElement, TensorMapLayout, TensorMapSwizzle};
    use cudajit::TensorMap;
    use gemm::hopper::{gemm_wgmma, SHARED_BYTES, THREADS};
    let stream = cudajit::SimStream::new();
    let (m, n, k) = (256usize, 256usize, 192usize);
    let a16 = small_bf16(m * k, 7);
    let b16 = small_bf16(k * n, 8);
    let (a, b): (Vec<f32>, Vec<f32>) = (
        a16.iter().map(|x| x.to_f32()).collect(),
        b16.iter().map(|x| x.to_f32()).collect(),
    );
    let (da, db) = (
        stream.clone_htod(&a16).unwrap(),
        stream.clone_htod(&b16).unwrap(),
    );
    let map = |inner: usize, outer: usize, box_outer: u32, buffer| {
        let layout = TensorMapLayout::tiled(
            TensorMapElement::Bf16,
            &[inner as u64, outer as u64],
            &[64, box_outer],
        )
        .with_swizzle(TensorMapSwizzle::B128);
        TensorMap::encode_sim(&layout, buffer).unwrap()
    };
    let (a_map, b_map) = (map(k, m, 128, &da), map(k, n, 256, &db));
    let mut c = stream.alloc_zeros::<f32>(m * n).unwrap();
    let config = cudajit::LaunchConfig::new((1, 1, 1), THREADS).with_shared_mem(SHARED_BYTES);
    gemm_wgmma::launch::<f32, false, false, false, false, true>(
        &stream, config, a_map, b_map, n as u32, k as u32, &mut c,
    )
    .unwrap();
    let c = stream.clone_dtoh(&c).unwrap();
    assert_eq!(c, host_gemm_f32(&a, &b, (m, n, k), false));
}

/// (M, N, K) of the Hopper GEMM: one block and one k-tile; 3 × 2 blocks over 5 k-tiles (the
/// ring of 4 wraps: every buffer refilled once, the empty barriers' second phase); 9 block
/// rows (a band of 8, then 1) over 9 k-tiles.
const HOPPER_SIZES: [(usize, usize, usize); 3] =
    [(128, 256, 64), (384, 512, 320), (1152, 256, 576)];

#[test]
fn the_hopper_gemm_matches_cublas_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    if context.compute_capability().unwrap() != (9, 0) {
        eprintln!("skipped: the wgmma GEMM runs on compute capability 9.0 (sm_90a)");
        return;
    }
    let (dir, cubin) = twin_cubin("gpu-hopper", Algorithm::Wgmma);
    let stream = context.default_stream();
    for layout in Layout::ALL {
        let twin = cubin.as_ref().map(|path| {
            gemm::twin::Twin::load(
                &context,
                stream.clone(),
                path,
                Algorithm::Wgmma,
                layout,
                Output::F32,
            )
            .expect("loading the twin")
        });
        let bench = Bench::new(stream.clone(), twin, layout, Algorithm::Wgmma, 1).expect("cuBLAS");
        for (m, n, k) in HOPPER_SIZES {
            let mut problem = Problem::<f32>::new(&bench.stream, m, n, k).expect("operands");
            let (cudajit, nvcc) = bench.check(&mut problem).expect("running the GEMMs");
            let what = format!("wgmma {} {m}x{n}x{k}", layout.name());
            assert!(cudajit.correct, "{what}: {cudajit:?}");
            assert!(cudajit.max_value > 1.0, "{what}: {cudajit:?}");
            if let Some(nvcc) = nvcc {
                assert!(nvcc.correct, "nvcc twin {what}: {nvcc:?}");
            }
            // C in bf16: the same kernel rounding its accumulators (no twin).
            let bench =
                Bench::new(stream.clone(), None, layout, Algorithm::Wgmma, 1).expect("cuBLAS");
            let mut problem = Problem::<bf16>::new(&bench.stream, m, n, k).expect("operands");
            let (cudajit, _) = bench.check(&mut problem).expect("running the GEMMs");
            assert!(cudajit.correct, "{what} bf16 C: {cudajit:?}");
        }
    }
    // The persistent form: one block per SM walking the tiles (fewer tiles than SMs in
    // HOPPER_SIZES; 512 tiles over the 132 SMs of an H200 at 4096 × 4096).
    let mut bench =
        Bench::new(stream.clone(), None, Layout::Tn, Algorithm::Wgmma, 1).expect("cuBLAS");
    bench.persistent = true;
    for (m, n, k) in HOPPER_SIZES.into_iter().chain([(4096, 4096, 256)]) {
        let mut problem = Problem::<f32>::new(&bench.stream, m, n, k).expect("operands");
        let (cudajit, _) = bench.check(&mut problem).expect("running the GEMMs");
        let what = format!("persistent wgmma {m}x{n}x{k}");
        assert!(cudajit.correct, "{what}: {cudajit:?}");
        assert!(cudajit.max_value > 1.0, "{what}: {cudajit:?}");
    }
    // The clustered form: two blocks of a cluster sharing B by multicast. One cluster over
    // one k-tile; 2 × 2 clusters over 5 k-tiles (the ring wraps); 9 bands of 256 rows.
    let mut bench =
        Bench::new(stream.clone(), None, Layout::Tn, Algorithm::Wgmma, 1).expect("cuBLAS");
    bench.cluster = true;
    for (m, n, k) in [(256, 256, 64), (512, 512, 320), (2304, 256, 576)] {
        let mut problem = Problem::<f32>::new(&bench.stream, m, n, k).expect("operands");
        let (cudajit, _) = bench.check(&mut problem).expect("running the GEMMs");
        let what = format!("clustered wgmma {m}x{n}x{k}");
        assert!(cudajit.correct, "{what}: {cudajit:?}");
        assert!(cudajit.max_value > 1.0, "{what}: {cudajit:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The FP8 form against cuBLASLt's FP8 matmul (which the host checks): one block over one
/// 128-deep k-tile; 3 × 2 blocks over 5 k-tiles (the ring wraps).
#[test]
fn the_fp8_gemm_matches_cublaslt_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    if context.compute_capability().unwrap() != (9, 0) {
        eprintln!("skipped: the wgmma GEMM runs on compute capability 9.0 (sm_90a)");
        return;
    }
    let stream = context.default_stream();
    let bench = Bench::new(stream.clone(), None, Layout::Tn, Algorithm::Fp8, 1).expect("cuBLAS");
    let lt = gemm::fp8::Lt::new(stream).expect("cuBLASLt");
    for dims in [(128, 256, 128), (384, 512, 640)] {
        let row = gemm::fp8::measure(&bench, &lt, dims).expect("running the FP8 GEMMs");
        assert!(row.check.correct, "fp8 {dims:?}: {:?}", row.check);
        assert!(row.check.max_value > 1.0, "fp8 {dims:?}: {:?}", row.check);
    }
}

#[test]
fn e4m3_values_decode_as_the_format_defines() {
    use gemm::fp8::e4m3_to_f32;
    assert_eq!(e4m3_to_f32(0x38), 1.0); // exponent 7 (bias 7), mantissa 0
    assert_eq!(e4m3_to_f32(0x3c), 1.5);
    assert_eq!(e4m3_to_f32(0xc0), -2.0);
    assert_eq!(e4m3_to_f32(0x7e), 448.0); // the largest finite value
    assert_eq!(e4m3_to_f32(0x01), 2f32.powi(-9)); // the smallest subnormal
    for byte in gemm::fp8::random_e4m3(7, 1000) {
        let value = e4m3_to_f32(byte).abs();
        assert!((0.125..=3.75).contains(&value), "{byte:#x}: {value}");
    }
}
