//! The kernel language a Rust programmer expects, on the CPU simulator: every kernel of
//! `tests/common/language.rs` against its CPU reference, what the constants it names
//! lower to (literals, part of the cache key) and its PTX (no local memory). No GPU
//! needed; the PTX checks need the NVIDIA toolchain.

mod common;

use common::cases::{self, Values};
use common::iteration::*;
use common::language::*;
use cudajit::codegen::compile::{cache_key, linked_ptx, CompileOptions};
use cudajit::core::lower::Specialization;
use cudajit::core::{CapturedFunction, ConstantValue};
use cudajit::{Arch, Stream};

fn sim() -> Stream {
    Stream::simulator()
}

#[test]
fn a_module_level_const_sizes_a_shared_tile() {
    let outputs = cases::transpose_const_tile_case(&sim()).unwrap();
    let (rows, cols) = cases::CONST_TILE_MATRIX;
    let input: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.5 - 3.0).collect();
    assert_eq!(
        outputs[0].values,
        Values::F32(transpose_ref(rows, cols, &input))
    );
}

#[test]
fn module_body_and_std_constants_have_rusts_values() {
    let outputs = cases::named_constants_case(&sim()).unwrap();
    let (x, ints) = named_constants_inputs();
    let (floats, wide, shifted, flags) = named_constants_ref(&x, &ints);
    assert_eq!(outputs[0].values, Values::F32(floats));
    assert_eq!(outputs[1].values, Values::F64(wide));
    assert_eq!(outputs[2].values, Values::I32(shifted));
    assert_eq!(outputs[3].values, Values::U32(flags));
}

#[test]
fn constants_are_recorded_with_rustcs_values() {
    let captured = named_constants::KERNEL.captured();
    let constants = (captured.constants)();
    let value = |name: &str| {
        constants
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("{name} not recorded: {constants:?}"))
    };
    assert_eq!(value("SCALE").bits, u64::from(0.5f32.to_bits()));
    assert_eq!(value("limits::BIAS").bits, u64::from((-7i32) as u32));
    assert_eq!(value("STEPS").bits, 3);
    assert_eq!(
        value("HALF_PI").bits,
        u64::from((core::f32::consts::PI / 2.0).to_bits())
    );
    assert_eq!(value("i32::MIN").bits, 0x8000_0000);
    assert_eq!(value("std::f32::consts::E").ty, cudajit::core::Scalar::F32);
    // Each name once, however often the body uses it.
    let mut names: Vec<&str> = constants.iter().map(|c| c.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), constants.len(), "{constants:?}");
}

#[test]
fn constants_become_literals_in_the_ir() {
    let ir = transpose_const_tile::KERNEL.nvvm_ir().expect("lowering");
    // 16 x 17 floats of shared memory.
    assert!(ir.contains("[272 x float]"), "{ir}");
}

/// `transpose_const_tile` as if `TILE` were 32.
fn with_tile_32() -> &'static CapturedFunction {
    static TILE_32: [ConstantValue; 1] = [ConstantValue::of("TILE", &32usize)];
    Box::leak(Box::new(CapturedFunction {
        constants: || &TILE_32,
        ..*transpose_const_tile::KERNEL.captured()
    }))
}

#[test]
fn a_constants_value_is_part_of_the_cache_key() {
    let Some(toolchain) = common::toolchain_or_skip() else {
        return;
    };
    let key = |captured| {
        cache_key(
            captured,
            &Specialization::default(),
            Arch::SM_90,
            &CompileOptions::default(),
            toolchain,
        )
        .key
    };
    let as_written = transpose_const_tile::KERNEL.captured();
    let edited = with_tile_32();
    assert_eq!(key(as_written), key(as_written));
    assert_ne!(key(edited), key(as_written));
    // And the edited value is what the kernel compiles with: 32 x 33 floats.
    let (module, _) = edited.lower(&Specialization::default()).expect("lowering");
    assert!(format!("{module:?}").contains("1056"), "{module:?}");
}

#[test]
fn constant_kernels_keep_no_local_memory() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    for captured in [
        transpose_const_tile::KERNEL.captured(),
        named_constants::KERNEL.captured(),
    ] {
        let ptx = linked_ptx(
            captured,
            &Specialization::default(),
            Arch::SM_90,
            &CompileOptions::default(),
        )
        .expect("linking to PTX");
        assert!(
            !ptx.contains(".local"),
            "{}: local memory:\n{ptx}",
            captured.name
        );
        assert!(!ptx.contains("call."), "{}: a call:\n{ptx}", captured.name);
    }
}

#[test]
fn array_literals_patterns_and_loops_over_arrays() {
    let outputs = cases::array_forms_case(&sim()).unwrap();
    let x = cases::iteration_inputs(cases::ARRAY_FORMS_LEN, 5);
    let (filtered, totals, ends) = array_forms_ref(&x);
    assert_eq!(outputs[0].values, Values::F32(filtered));
    assert_eq!(outputs[1].values, Values::F32(totals));
    assert_eq!(outputs[2].values, Values::I32(ends));
}

#[test]
fn iterator_loops_visit_what_rusts_iterators_visit() {
    let outputs = cases::iterator_loops_case(&sim()).unwrap();
    let (na, nb, nout) = cases::ITERATOR_LENGTHS;
    let a = cases::iteration_inputs(na, 11);
    let b = cases::iteration_inputs(nb, 12);
    let (out, hashes) = iterator_loops_ref(&a, &b, nout);
    assert_eq!(outputs[0].values, Values::F32(out));
    assert_eq!(outputs[1].values, Values::U32(hashes));
}

#[test]
fn get_with_if_let_while_let_let_else_and_loop_values() {
    let outputs = cases::option_forms_case(&sim()).unwrap();
    let (nx, ny) = cases::OPTION_LENGTHS;
    let x = cases::iteration_inputs(nx, 21);
    let (y, runs, found) = option_forms_ref(&x, ny);
    assert_eq!(outputs[0].values, Values::F32(y));
    assert_eq!(outputs[1].values, Values::U32(runs));
    assert_eq!(outputs[2].values, Values::U32(found));
}

/// What CUDA C++ would compile these to: registers, no local memory, no calls.
#[test]
fn array_and_iterator_kernels_keep_no_local_memory() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    for captured in [
        array_forms::KERNEL.captured(),
        iterator_loops::KERNEL.captured(),
        option_forms::KERNEL.captured(),
    ] {
        let ptx = linked_ptx(
            captured,
            &Specialization::default(),
            Arch::SM_90,
            &CompileOptions::default(),
        )
        .expect("linking to PTX");
        assert!(
            !ptx.contains(".local"),
            "{}: local memory:\n{ptx}",
            captured.name
        );
        assert!(!ptx.contains("call."), "{}: a call:\n{ptx}", captured.name);
    }
}

mod constexpr {
    use cudajit::prelude::*;

    /// `if` on a `bool` const generic lowers only the branch taken (C++'s `if constexpr`):
    /// the other may hold what this specialisation cannot run, here inline PTX the
    /// simulator does not know.
    #[kernel]
    pub fn constexpr_branch<const GPU_ONLY: bool>(out: &mut [u32]) {
        let t = thread_idx().x as usize;
        let value = if GPU_ONLY {
            ptx!(u32: "mov.u32 $0, %smid;")
        } else {
            7
        };
        if !GPU_ONLY {
            out[t] = value + 1;
        } else {
            ptx!("membar.gl;");
            out[t] = value;
        }
    }

    /// Comparisons of constants fold too, in a generic device function: for 16-bit `T`
    /// (`WIDTH` 8) the `vload4` branch would be refused (a vector of 8 bytes of `u16` is
    /// fine, but `vload8` of `u32` is 32 bytes), and for 32-bit `T` the `vload8` one, so each
    /// instance must see only its own branch.
    #[device]
    pub fn vector_sum<T: DeviceScalar + core::ops::Add<Output = T>, const WIDTH: usize>(
        x: &[T],
        v: usize,
    ) -> T {
        if WIDTH == 8 && WIDTH > 4 {
            let (a, b, c, d, e, f, g, h) = vload8(x, v);
            a + b + c + d + e + f + g + h
        } else if WIDTH != 4 {
            let (a, b) = vload2(x, v);
            a + b
        } else {
            let (a, b, c, d) = vload4(x, v);
            a + b + c + d
        }
    }

    #[kernel]
    pub fn vector_sums<T: DeviceScalar + core::ops::Add<Output = T>, const WIDTH: usize>(
        x: &[T],
        out: &mut [T],
    ) {
        let v = thread_idx().x as usize;
        if v * WIDTH < x.len() {
            out[v] = vector_sum::<T, WIDTH>(x, v);
        }
    }
}
use constexpr::{constexpr_branch, vector_sums};

#[test]
fn comparisons_of_constants_keep_only_the_branch_taken() {
    let stream = sim();
    let config = cudajit::LaunchConfig::new(1, 32);
    let x16: Vec<u16> = (0..64u16).collect();
    let x32: Vec<u32> = (0..64u32).map(|i| i * 3).collect();
    let x64: Vec<u64> = (0..64u64).map(|i| i << 33).collect();
    let (d16, d32, d64) = (
        stream.clone_htod(&x16).unwrap(),
        stream.clone_htod(&x32).unwrap(),
        stream.clone_htod(&x64).unwrap(),
    );
    let mut o16 = stream.alloc_zeros::<u16>(8).unwrap();
    let mut o32 = stream.alloc_zeros::<u32>(16).unwrap();
    let mut o64 = stream.alloc_zeros::<u64>(32).unwrap();
    vector_sums::launch::<u16, 8>(&stream, config, &d16, &mut o16).unwrap();
    vector_sums::launch::<u32, 4>(&stream, config, &d32, &mut o32).unwrap();
    vector_sums::launch::<u64, 2>(&stream, config, &d64, &mut o64).unwrap();
    // Vector loads are intrinsics the host cannot run: the reference sums the same elements.
    let host16: Vec<u16> = x16.chunks(8).map(|c| c.iter().sum()).collect();
    let host32: Vec<u32> = x32.chunks(4).map(|c| c.iter().sum()).collect();
    let host64: Vec<u64> = x64.chunks(2).map(|c| c.iter().sum()).collect();
    assert_eq!(stream.clone_dtoh(&o16).unwrap(), host16);
    assert_eq!(stream.clone_dtoh(&o32).unwrap(), host32);
    assert_eq!(stream.clone_dtoh(&o64).unwrap(), host64);
}

#[test]
fn a_constant_condition_lowers_only_the_branch_taken() {
    let stream = sim();
    let mut out = stream.alloc_zeros::<u32>(32).unwrap();
    constexpr_branch::launch::<false>(&stream, cudajit::LaunchConfig::new(1, 32), &mut out)
        .unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), vec![8; 32]);
    let ir = constexpr_branch::KERNEL
        .nvvm_ir_with(&cudajit::Specialization {
            types: Vec::new(),
            structs: Vec::new(),
            consts: vec![(
                "GPU_ONLY".to_owned(),
                cudajit::core::ir::Literal::Bool(false),
            )],
        })
        .unwrap();
    assert!(!ir.contains("asm sideeffect"), "{ir}");
    let gpu = constexpr_branch::KERNEL
        .nvvm_ir_with(&cudajit::Specialization {
            types: Vec::new(),
            structs: Vec::new(),
            consts: vec![(
                "GPU_ONLY".to_owned(),
                cudajit::core::ir::Literal::Bool(true),
            )],
        })
        .unwrap();
    assert!(gpu.contains("%smid") && gpu.contains("membar.gl"), "{gpu}");
}
