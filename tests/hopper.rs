//! Hopper's architecture-specific target (`sm_90a`) and TMA tensor maps: compiled to
//! cubins on the CPU; the GPU tests skip themselves without a GPU.

mod common;

use cudajit::codegen::compile::{linked_ptx, CompileError};
use cudajit::codegen::cubin;
use cudajit::prelude::*;
use cudajit::tensor::cluster::{
    cluster_ctarank, cluster_nctarank, cluster_sync, dsmem_load_u32, map_shared_rank,
};
use cudajit::{Arch, Error};

/// `wgmma.fence` exists only on `sm_90a`.
#[kernel(arch = "sm_90a")]
fn wgmma_fence_declared() {
    ptx!("wgmma.fence.sync.aligned;");
}

/// The same instruction in a kernel that does not declare the target.
#[kernel]
fn wgmma_fence_undeclared() {
    ptx!("wgmma.fence.sync.aligned;");
}

/// A kernel with portable instructions only.
#[kernel]
fn portable(x: &mut [u32]) {
    let i = global_index();
    if i < x.len() {
        x[i] += 1;
    }
}

#[test]
fn a_declared_kernel_compiles_to_an_sm_90a_cubin() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    // Asked for the H200's own architecture, the kernel gets its `a` target.
    for asked in [Arch::SM_90, Arch::SM_90A] {
        let compiled = wgmma_fence_declared::KERNEL
            .compile_for_arch(asked)
            .unwrap();
        assert_eq!(compiled.arch, Arch::SM_90A);
        let info = cubin::inspect(&compiled.cubin).unwrap();
        assert!(info.has_function(&compiled.entry));
    }
    let ptx = linked_ptx(
        wgmma_fence_declared::KERNEL.captured(),
        &Default::default(),
        Arch::SM_90,
        &Default::default(),
    )
    .unwrap();
    assert!(ptx.contains(".target sm_90a"), "{ptx}");
    assert!(ptx.contains("wgmma.fence.sync.aligned"), "{ptx}");
}

#[test]
fn sm_90_and_sm_90a_cubins_are_different_targets() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let plain = portable::KERNEL.compile_for_arch(Arch::SM_90).unwrap();
    let specific = portable::KERNEL.compile_for_arch(Arch::SM_90A).unwrap();
    assert_ne!(
        plain.key, specific.key,
        "the cache key must tell them apart"
    );
    // ptxas records its target in the cubin's `.note.nv.tkinfo` (`-arch sm_90a `).
    let records = |bytes: &[u8], option: &str| {
        bytes
            .windows(option.len())
            .any(|window| window == option.as_bytes())
    };
    assert!(records(&plain.cubin, "-arch sm_90 "));
    assert!(records(&specific.cubin, "-arch sm_90a "));
    assert!(!records(&plain.cubin, "-arch sm_90a"));
}

#[test]
fn an_undeclared_specific_instruction_names_the_fix() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let error = wgmma_fence_undeclared::KERNEL
        .compile_for_arch(Arch::SM_90)
        .unwrap_err();
    let Error::Compile(CompileError::NeedsSpecificArch {
        instructions,
        specific,
        ..
    }) = &error
    else {
        panic!("expected NeedsSpecificArch, got {error}");
    };
    assert_eq!(instructions, &["wgmma.fence"]);
    assert_eq!(*specific, Arch::SM_90A);
    let message = error.to_string();
    assert!(message.contains("`wgmma_fence_undeclared`"), "{message}");
    assert!(
        message.contains("#[kernel(arch = \"sm_90a\")]"),
        "{message}"
    );
    // Compiled for sm_90a explicitly, it links.
    let compiled = wgmma_fence_undeclared::KERNEL
        .compile_for_arch(Arch::SM_90A)
        .unwrap();
    assert_eq!(compiled.arch, Arch::SM_90A);
}

#[test]
fn a_declared_kernel_refuses_other_compute_capabilities() {
    for arch in [Arch::SM_80, Arch::new(10, 0)] {
        let error = wgmma_fence_declared::KERNEL
            .compile_for_arch(arch)
            .unwrap_err();
        assert!(
            matches!(error, Error::Compile(CompileError::ArchMismatch { .. })),
            "{error}"
        );
        let message = error.to_string();
        assert!(message.contains("compute capability 9.0"), "{message}");
        assert!(message.contains(&arch.to_string()), "{message}");
    }
}

/// On an H100/H200 the declared kernel loads and runs (an `sm_90a` cubin).
#[test]
fn gpu_a_declared_kernel_runs_on_hopper() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    if context.compute_capability().unwrap() != (9, 0) {
        eprintln!("skipped: not a compute capability 9.0 GPU");
        return;
    }
    let stream = context.default_stream();
    wgmma_fence_declared::launch(&stream, LaunchConfig::for_elements(128)).unwrap();
    stream.synchronize().unwrap();
    let loaded = wgmma_fence_declared::KERNEL.compile(&context).unwrap();
    assert_eq!(loaded.compiled().arch, Arch::SM_90A);
}

// ---- TMA: a tensor map encoded on the host, a 2-D box loaded into shared memory ----

use cudajit::tensor_map::{TensorMapElement, TensorMapError, TENSOR_MAP_BYTES};
use cudajit::{TensorMap, TensorMapLayout};

/// Box of the TMA test: 32 columns × 8 rows of f32, one element per thread.
const BOX_W: u32 = 32;
const BOX_H: u32 = 8;

/// One block loads the box at column `x0`, row `y0` of the tensor `map` describes into
/// shared memory with `cp.async.bulk.tensor`, waits on an mbarrier for its bytes, and
/// writes it to `out`. The map is in global memory (its 128 bytes copied there), as TMA
/// allows for a map the device never modifies.
#[kernel]
fn tma_load_box(map: &[u64], x0: u32, y0: u32, out: &mut [f32]) {
    // TMA writes to 128-byte-aligned shared memory: the box starts at the first such
    // address of a slightly larger array.
    let tile = shared_array::<f32>(256 + 32);
    let barrier = shared_array::<u64>(1);
    let t = thread_idx().x as usize;
    let bar = shared_address(&barrier[0]);
    let skip = (((128 - shared_address(&tile[0]) % 128) % 128) / 4) as usize;
    if t == 0 {
        ptx!("mbarrier.init.shared::cta.b64 [$0], 1;", bar);
        // Make the initialised barrier visible to the async proxy that completes it.
        ptx!("fence.proxy.async.shared::cta;");
    }
    sync_threads();
    if t == 0 {
        // The map was written by a host-to-device copy, through the generic proxy; TMA
        // reads it through the tensormap proxy, which sees those bytes only after this
        // fence (CUDA programming guide, "Using TMA to transfer multi-dimensional arrays":
        // `.sys` scope for a map the host copied). Without it the copy may read a stale
        // descriptor.
        ptx!(
            "fence.proxy.tensormap::generic.acquire.sys [$0], 128;",
            global_address(&map[0])
        );
        // The whole box's bytes (TMA writes the fill of out-of-bounds elements too).
        ptx!(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;",
            bar,
            1024u32
        );
        ptx!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];",
            shared_address(&tile[skip]),
            global_address(&map[0]),
            x0,
            y0,
            bar
        );
    }
    let mut done = 0u32;
    while done == 0 {
        done = ptx!(
            u32: "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2;\n\tselp.u32 $0, 1, 0, p;\n}",
            bar,
            0u32
        );
    }
    out[t] = tile[skip + t];
}

/// The same load with the map as a grid-constant kernel parameter, as CUTLASS passes it:
/// TMA reads the descriptor in parameter memory, where the launch put it (no copy to
/// global memory, no fence).
#[kernel]
fn tma_load_box_param(map: TensorMap, x0: i32, y0: i32, out: &mut [f32]) {
    let tile = shared_array::<f32>(256 + 32);
    let barrier = shared_array::<u64>(1);
    let t = thread_idx().x as usize;
    let bar = shared_address(&barrier[0]);
    let skip = (((128 - shared_address(&tile[0]) % 128) % 128) / 4) as usize;
    if t == 0 {
        ptx!("mbarrier.init.shared::cta.b64 [$0], 1;", bar);
        ptx!("fence.proxy.async.shared::cta;");
    }
    sync_threads();
    if t == 0 {
        ptx!(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;",
            bar,
            1024u32
        );
        ptx!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];",
            shared_address(&tile[skip]),
            tensor_map_address(&map),
            x0,
            y0,
            bar
        );
    }
    let mut done = 0u32;
    while done == 0 {
        done = ptx!(
            u32: "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2;\n\tselp.u32 $0, 1, 0, p;\n}",
            bar,
            0u32
        );
    }
    out[t] = tile[skip + t];
}

#[test]
fn a_tensor_map_parameter_is_grid_constant_in_nvvm_ir() {
    let ir = tma_load_box_param::KERNEL.nvvm_ir().unwrap();
    assert!(
        ir.contains("define void @tma_load_box_param(%cudajit.TensorMap* byval align 64 %arg0.map, i32 %arg1.x0, "),
        "{ir}"
    );
    assert!(
        ir.contains("%cudajit.TensorMap = type { [16 x i64] }"),
        "{ir}"
    );
    // `!{.. @tma_load_box_param, !"kernel", i32 1, !"grid_constant", !N}`, `!N = !{i32 1}`:
    // the first NVVM parameter (1-based) is grid-constant.
    let annotation = ir
        .lines()
        .find(|line| {
            line.contains("@tma_load_box_param, !\"kernel\", i32 1, !\"grid_constant\", !")
        })
        .unwrap_or_else(|| panic!("no grid_constant annotation in\n{ir}"));
    let node = annotation.rsplit('!').next().unwrap().trim_end_matches('}');
    assert!(ir.contains(&format!("!{node} = !{{i32 1}}")), "{ir}");
    assert!(
        ir.contains("ptrtoint %cudajit.TensorMap* %arg0.map to i64"),
        "{ir}"
    );
    // Kernels without a map keep the plain annotation.
    let plain = portable::KERNEL.nvvm_ir().unwrap();
    assert!(!plain.contains("grid_constant"), "{plain}");
}

/// A map copied into a local would leave parameter memory (and TMA's reach).
#[kernel]
fn tensor_map_copied(map: TensorMap, out: &mut [u64]) {
    let copy = map;
    out[0] = tensor_map_address(&copy);
}

#[test]
fn a_tensor_map_used_as_a_value_is_an_error_at_its_use() {
    let error = tensor_map_copied::KERNEL.nvvm_ir().unwrap_err().to_string();
    assert!(
        error.contains(
            "`map` is a tensor map, which kernels use only as `tensor_map_address(&map)`"
        ),
        "{error}"
    );
    // At the use, `map` of `let copy = map;`.
    let line = 1 + include_str!("hopper.rs")
        .lines()
        .position(|l| l == "    let copy = map;")
        .unwrap();
    assert!(error.contains(&format!("hopper.rs:{line}:16")), "{error}");
}

#[test]
fn a_tensor_map_parameter_is_read_in_place_by_the_bulk_tensor_copy() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    for arch in [Arch::SM_90, Arch::SM_90A] {
        let ptx = linked_ptx(
            tma_load_box_param::KERNEL.captured(),
            &Default::default(),
            arch,
            &Default::default(),
        )
        .unwrap();
        let param = "tma_load_box_param_param_0";
        assert!(
            ptx.contains(&format!(".param .align 64 .b8 {param}[128]")),
            "{arch}: no 128-byte, 64-byte-aligned map parameter in\n{ptx}"
        );
        // The copy's map operand is the generic address of the parameter itself, as nvcc
        // writes it for a `__grid_constant__` map (`mov.b64 %rd3, .._param_0;
        // cvta.param.u64 %rd6, %rd3;`), not of a copy in local memory.
        let copy = ptx
            .lines()
            .find(|line| line.contains("cp.async.bulk.tensor.2d"))
            .unwrap_or_else(|| panic!("{arch}: no bulk tensor copy in\n{ptx}"));
        let map_register = copy
            .split("], [")
            .nth(1)
            .and_then(|operand| operand.split(',').next())
            .unwrap_or_else(|| panic!("{arch}: no map operand in `{copy}`"))
            .trim();
        // The source operand of the `opcode` instruction that defines `register`.
        let definition = |register: &str, opcode: &str| {
            ptx.lines().find_map(|line| {
                let operands = line.trim().strip_prefix(opcode)?.trim_end_matches(';');
                let (destination, source) = operands.split_once(',')?;
                (destination.trim() == register).then(|| source.trim().to_owned())
            })
        };
        let symbol = definition(map_register, "cvta.param.u64")
            .and_then(|address| definition(&address, "mov.b64"));
        assert_eq!(
            symbol.as_deref(),
            Some(param),
            "{arch}: `{map_register}` of `{copy}` is not the parameter's address in\n{ptx}"
        );
        assert!(!ptx.contains(".local"), "{arch}: local memory in\n{ptx}");
        assert!(!ptx.contains("call."), "{arch}: a call in\n{ptx}");
        let compiled = tma_load_box_param::KERNEL.compile_for_arch(arch).unwrap();
        assert_eq!(compiled.arch, arch);
    }
}

#[test]
fn a_tma_load_compiles_to_bulk_tensor_copies_without_local_memory() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    for arch in [Arch::SM_90, Arch::SM_90A] {
        let ptx = linked_ptx(
            tma_load_box::KERNEL.captured(),
            &Default::default(),
            arch,
            &Default::default(),
        )
        .unwrap();
        for expected in [
            "fence.proxy.tensormap::generic.acquire.sys",
            "mbarrier.init.shared::cta.b64",
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
            "mbarrier.try_wait.parity.shared::cta.b64",
        ] {
            assert!(ptx.contains(expected), "{arch}: no `{expected}` in\n{ptx}");
        }
        assert!(!ptx.contains(".local"), "{arch}: local memory in\n{ptx}");
        assert!(!ptx.contains("call."), "{arch}: a call in\n{ptx}");
        let compiled = tma_load_box::KERNEL.compile_for_arch(arch).unwrap();
        assert_eq!(compiled.arch, arch);
    }
}

/// The host's expectation of the box at (`x0`, `y0`) of a `w` × `h` tensor of `data`:
/// zeros outside the tensor (the map's zero fill).
fn expected_box(data: &[f32], w: u32, h: u32, x0: i32, y0: i32) -> Vec<f32> {
    let (w, h) = (i64::from(w), i64::from(h));
    (0..i64::from(BOX_H))
        .flat_map(|r| (0..i64::from(BOX_W)).map(move |c| (i64::from(x0) + c, i64::from(y0) + r)))
        .map(|(x, y)| {
            if (0..w).contains(&x) && (0..h).contains(&y) {
                data[(y * w + x) as usize]
            } else {
                0.0
            }
        })
        .collect()
}

#[test]
fn gpu_a_tma_load_brings_the_box_into_shared_memory() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    if context.compute_capability().unwrap().0 < 9 {
        eprintln!("skipped: TMA needs compute capability 9.0 or later");
        return;
    }
    let stream = context.default_stream();
    // 100 columns (400-byte rows, a multiple of 16) × 40 rows.
    let (w, h) = (100u32, 40u32);
    let data: Vec<f32> = (0..w * h).map(|i| i as f32 * 0.5 - 7.0).collect();
    let tensor = stream.clone_htod(&data).unwrap();
    let layout = TensorMapLayout::tiled(
        TensorMapElement::F32,
        &[u64::from(w), u64::from(h)],
        &[BOX_W, BOX_H],
    );
    let map = TensorMap::encode(&layout, &tensor).unwrap();
    assert_eq!(map.as_bytes().len(), TENSOR_MAP_BYTES);
    assert!(map.as_bytes().iter().any(|&b| b != 0));
    let map_in_global = stream.clone_htod(&map.raw().opaque).unwrap();
    // Inside, at the edge (partly out of bounds in x and y), and far out. The box's x
    // (innermost) start times the element size is a multiple of 16 bytes: TMA stops with
    // an illegal instruction otherwise (measured on the H200, docs/tensor-cores.md).
    for (x0, y0) in [(0, 0), (36, 5), (80, 36), (96, 39)] {
        let mut out = stream.alloc_zeros::<f32>(256).unwrap();
        tma_load_box::launch(
            &stream,
            LaunchConfig::new(1, 256),
            &map_in_global,
            x0,
            y0,
            &mut out,
        )
        .unwrap();
        let got = stream.clone_dtoh(&out).unwrap();
        assert_eq!(
            got,
            expected_box(&data, w, h, x0 as i32, y0 as i32),
            "box at ({x0}, {y0})"
        );
    }
}

/// The box loads of the test above, with the map as a grid-constant kernel parameter.
#[test]
fn gpu_a_tma_load_from_a_grid_constant_map_brings_the_box_into_shared_memory() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    if context.compute_capability().unwrap().0 < 9 {
        eprintln!("skipped: TMA needs compute capability 9.0 or later");
        return;
    }
    let stream = context.default_stream();
    let (w, h) = (100u32, 40u32);
    let data: Vec<f32> = (0..w * h).map(|i| i as f32 * 0.5 - 7.0).collect();
    let tensor = stream.clone_htod(&data).unwrap();
    let layout = TensorMapLayout::tiled(
        TensorMapElement::F32,
        &[u64::from(w), u64::from(h)],
        &[BOX_W, BOX_H],
    );
    let map = TensorMap::encode(&layout, &tensor).unwrap();
    for (x0, y0) in [(0, 0), (36, 5), (80, 36), (96, 39), (100, 40), (-4, -3)] {
        let mut out = stream.alloc_zeros::<f32>(256).unwrap();
        tma_load_box_param::launch(&stream, LaunchConfig::new(1, 256), map, x0, y0, &mut out)
            .unwrap();
        let got = stream.clone_dtoh(&out).unwrap();
        assert_eq!(
            got,
            expected_box(&data, w, h, x0, y0),
            "box at ({x0}, {y0})"
        );
    }
}

/// The simulator refuses a map the driver encoded (for GPU memory) and names the fix.
#[test]
fn gpu_a_driver_tensor_map_is_refused_by_the_simulator() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let tensor = stream.alloc_zeros::<f32>(64 * 64).unwrap();
    let layout = TensorMapLayout::tiled(TensorMapElement::F32, &[64, 64], &[BOX_W, BOX_H]);
    let map = TensorMap::encode(&layout, &tensor).unwrap();
    assert!(!map.is_sim());
    let sim = cudajit::SimStream::new();
    let mut out = sim.alloc_zeros::<f32>(256).unwrap();
    let error = tma_load_box_param::launch(&sim, LaunchConfig::new(1, 256), map, 0, 0, &mut out)
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("tensor map encoded by the CUDA driver"),
        "{message}"
    );
    assert!(message.contains("encode_sim"), "{message}");
}

/// The grid-constant map's box loads on the simulator, with a map over a simulator buffer:
/// inside, across the edges and outside (zero fill), against the host.
#[test]
fn a_tma_load_brings_the_box_into_shared_memory_on_the_simulator() {
    let sim = cudajit::SimStream::new();
    let (w, h) = (100u32, 40u32);
    let data: Vec<f32> = (0..w * h).map(|i| i as f32 * 0.5 - 7.0).collect();
    let tensor = sim.clone_htod(&data).unwrap();
    let layout = TensorMapLayout::tiled(
        TensorMapElement::F32,
        &[u64::from(w), u64::from(h)],
        &[BOX_W, BOX_H],
    );
    let map = TensorMap::encode_sim(&layout, &tensor).unwrap();
    assert!(map.is_sim());
    for (x0, y0) in [(0, 0), (36, 5), (80, 36), (96, 39), (100, 40), (-4, -3)] {
        let mut out = sim.alloc_zeros::<f32>(256).unwrap();
        tma_load_box_param::launch(&sim, LaunchConfig::new(1, 256), map, x0, y0, &mut out).unwrap();
        assert_eq!(
            sim.clone_dtoh(&out).unwrap(),
            expected_box(&data, w, h, x0, y0),
            "box at ({x0}, {y0})"
        );
    }
    // The box's innermost start must be 16-byte aligned: x = 33 is 132 bytes in.
    let mut out = sim.alloc_zeros::<f32>(256).unwrap();
    let error = tma_load_box_param::launch(&sim, LaunchConfig::new(1, 256), map, 33, 0, &mut out)
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("not a multiple of 16")
            && message.contains("CUDA_ERROR_ILLEGAL_INSTRUCTION"),
        "{message}"
    );
    eprintln!("reported: {message}");
    // A map over a buffer too small for its tensor is refused before any launch.
    let small = sim.alloc_zeros::<f32>(64 * 63).unwrap();
    let square = TensorMapLayout::tiled(TensorMapElement::F32, &[64, 64], &[32, 8]);
    assert!(matches!(
        TensorMap::encode_sim(&square, &small),
        Err(TensorMapError::BufferTooSmall { .. })
    ));
}

/// A map made for the simulator is refused by a GPU launch, naming the fix.
#[test]
fn gpu_a_simulator_tensor_map_is_refused_by_a_gpu_launch() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let sim = cudajit::SimStream::new();
    let tensor = sim.alloc_zeros::<f32>(64 * 64).unwrap();
    let layout = TensorMapLayout::tiled(TensorMapElement::F32, &[64, 64], &[BOX_W, BOX_H]);
    let map = TensorMap::encode_sim(&layout, &tensor).unwrap();
    let stream = context.default_stream();
    let mut out = stream.alloc_zeros::<f32>(256).unwrap();
    let error = tma_load_box_param::launch(&stream, LaunchConfig::new(1, 256), map, 0, 0, &mut out)
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("made for the CPU simulator"), "{message}");
    assert!(message.contains("TensorMap::encode"), "{message}");
}

/// The portable constructor picks the encoding of the buffer's backend.
#[test]
fn a_tensor_map_of_a_portable_buffer_follows_its_backend() {
    let stream = cudajit::Stream::simulator();
    let data: Vec<f32> = (0..64 * 16).map(|i| i as f32).collect();
    let tensor = stream.clone_htod(&data).unwrap();
    let layout = TensorMapLayout::tiled(TensorMapElement::F32, &[64, 16], &[BOX_W, BOX_H]);
    let map = TensorMap::encode_buffer(&layout, &tensor).unwrap();
    assert!(map.is_sim());
    let mut out = stream.alloc_zeros::<f32>(256).unwrap();
    tma_load_box_param::launch(&stream, LaunchConfig::new(1, 256), map, 32, 8, &mut out).unwrap();
    assert_eq!(
        stream.clone_dtoh(&out).unwrap(),
        expected_box(&data, 64, 16, 32, 8)
    );
}

#[test]
fn gpu_a_tensor_map_covers_only_its_buffer() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let small = stream.alloc_zeros::<f32>(64 * 63).unwrap();
    let layout = TensorMapLayout::tiled(TensorMapElement::F32, &[64, 64], &[32, 8]);
    assert_eq!(
        TensorMap::encode(&layout, &small).unwrap_err(),
        TensorMapError::BufferTooSmall {
            buffer_bytes: 64 * 63 * 4,
            extent_bytes: 64 * 64 * 4,
        }
    );
    let halves = stream.alloc_zeros::<u16>(64 * 64).unwrap();
    assert!(matches!(
        TensorMap::encode(&layout, &halves),
        Err(TensorMapError::ElementSize { .. })
    ));
    let bf16 = TensorMapLayout::tiled(TensorMapElement::Bf16, &[64, 64], &[64, 8]);
    TensorMap::encode(&bf16, &halves).unwrap();
}

/// Each block of a 2-block cluster writes a word, then reads its neighbour's through
/// distributed shared memory; block 0 of each cluster also reports the cluster's size.
#[kernel]
fn neighbours_word(out: &mut [u32], sizes: &mut [u32]) {
    let word = shared_array::<u32>(1);
    let rank = cluster_ctarank();
    if thread_idx().x == 0 {
        word[0] = 1000 * block_idx().x + 7;
    }
    cluster_sync();
    if thread_idx().x == 0 {
        let theirs = map_shared_rank(shared_address(&word[0]), rank ^ 1);
        out[block_idx().x as usize] = dsmem_load_u32(theirs);
        sizes[block_idx().x as usize] = cluster_nctarank();
    }
    cluster_sync();
}

#[test]
fn blocks_of_a_cluster_read_each_others_shared_memory_on_the_simulator() {
    let sim = cudajit::SimStream::new();
    let mut out = sim.alloc_zeros::<u32>(8).unwrap();
    let mut sizes = sim.alloc_zeros::<u32>(8).unwrap();
    neighbours_word::launch(
        &sim,
        LaunchConfig::new(8, 64).with_cluster((2, 1, 1)),
        &mut out,
        &mut sizes,
    )
    .unwrap();
    let want: Vec<u32> = (0..8u32).map(|b| 1000 * (b ^ 1) + 7).collect();
    assert_eq!(sim.clone_dtoh(&out).unwrap(), want);
    assert_eq!(sim.clone_dtoh(&sizes).unwrap(), vec![2; 8]);
}

#[test]
fn a_cluster_launch_is_checked_before_the_driver() {
    let uneven = LaunchConfig::new(7, 32).with_cluster((2, 1, 1));
    assert_eq!(
        uneven.check(1024, 0),
        Err(cudajit::LaunchConfigError::ClusterDoesNotDivideGrid {
            axis: "x",
            grid: 7,
            cluster: 2
        })
    );
    let large = LaunchConfig::new(16, 32).with_cluster((16, 1, 1));
    assert!(matches!(
        large.check(1024, 0),
        Err(cudajit::LaunchConfigError::ClusterTooLarge { blocks: 16, .. })
    ));
    let both = LaunchConfig::new(8, 32)
        .with_cluster((2, 1, 1))
        .cooperative();
    assert_eq!(
        both.check(1024, 0),
        Err(cudajit::LaunchConfigError::ClusterAndCooperative)
    );
}

#[test]
fn gpu_blocks_of_a_cluster_read_each_others_shared_memory() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    if context.compute_capability().unwrap().0 < 9 {
        eprintln!("skipped: clusters need compute capability 9.0 or later");
        return;
    }
    let stream = context.default_stream();
    let mut out = stream.alloc_zeros::<u32>(8).unwrap();
    let mut sizes = stream.alloc_zeros::<u32>(8).unwrap();
    neighbours_word::launch(
        &stream,
        LaunchConfig::new(8, 64).with_cluster((2, 1, 1)),
        &mut out,
        &mut sizes,
    )
    .unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let want: Vec<u32> = (0..8u32).map(|b| 1000 * (b ^ 1) + 7).collect();
    assert_eq!(got, want);
    assert_eq!(stream.clone_dtoh(&sizes).unwrap(), vec![2; 8]);
}
