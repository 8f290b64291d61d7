//! The kernel argument ABI (`cudajit::core::abi`) holds its two sides together: the
//! launcher `#[kernel]` generates packs one argument per word the ABI gives each parameter,
//! and the kernel's NVVM IR declares one parameter per word, of the type the ABI chose.

use cudajit::core::abi::{self, ArgWord, ParamClass};
use cudajit::core::ast::ParamType;
use cudajit::core::ir::Literal;
use cudajit::core::Scalar;
use cudajit::prelude::*;
use cudajit::Specialization;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Step {
    dt: f32,
    generation: u64,
}

#[derive(Clone, Copy, PartialEq, DeviceCopy)]
#[repr(u8)]
enum Mode {
    Scale = 1,
    Keep = 2,
}

/// One parameter of every kind a kernel takes; `rounds` is compiled in, not passed.
#[allow(clippy::too_many_arguments)] // one of each kind
#[kernel]
fn abi_probe(
    x: &[f32],
    y: &mut [f32],
    flag: bool,
    step: Step,
    #[comptime] rounds: u32,
    scale: f32,
    mode: Mode,
    map: TensorMap,
) {
    let i = global_index();
    if flag && i < y.len() && i < x.len() && mode == Mode::Scale {
        for _ in 0..rounds {
            y[i] = x[i] * step.dt * scale + step.generation as f32;
        }
        y[i] += (tensor_map_address(&map) % 2) as f32;
    }
}

/// The words the ABI gives the captured parameters, in order.
fn words_of_captured_parameters() -> Vec<ArgWord> {
    let source = abi_probe::KERNEL
        .captured()
        .parse()
        .expect("the captured syntax parses");
    source
        .params
        .iter()
        .filter(|param| !param.comptime)
        .flat_map(|param| {
            let class = ParamClass::of_captured(&param.ty)
                .unwrap_or_else(|| panic!("`{}` is a kernel parameter", param.name));
            abi::words(class).iter().copied()
        })
        .collect()
}

/// The kernel's parameter list in its NVVM IR, one entry per parameter.
fn nvvm_parameters() -> Vec<String> {
    let rounds = Specialization {
        types: vec![],
        structs: Vec::new(),
        consts: vec![(
            "rounds".into(),
            Literal::Int {
                bits: 2,
                ty: Scalar::U32,
            },
        )],
    };
    let ir = abi_probe::KERNEL
        .nvvm_ir_with(&rounds)
        .expect("lowering abi_probe");
    let define = ir
        .lines()
        .find(|line| line.starts_with("define void @"))
        .unwrap_or_else(|| panic!("no kernel definition in\n{ir}"));
    let open = define.find('(').expect("a parameter list");
    let close = define.rfind(')').expect("a parameter list");
    define[open + 1..close]
        .split(", ")
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_launcher_packs_the_words_of_the_abi() {
    use ArgWord::*;
    let expected = [
        SlicePointer { mutable: false },
        SliceLength,
        SlicePointer { mutable: true },
        SliceLength,
        BoolByte,
        Value,
        Value,
        Value,
        TensorMap,
    ];
    assert_eq!(words_of_captured_parameters(), expected);
    assert_eq!(abi_probe::ARGUMENT_WORDS, expected);
    assert!(matches!(
        abi_probe::KERNEL.captured().parse().unwrap().params[0].ty,
        ParamType::Slice { mutable: false, .. }
    ));
}

#[test]
fn the_nvvm_ir_declares_one_parameter_per_word_of_the_abis_type() {
    let parameters = nvvm_parameters();
    assert_eq!(
        parameters,
        [
            "float* noalias readonly %arg0.x.ptr",
            "i64 %arg0.x.len",
            "float* noalias %arg1.y.ptr",
            "i64 %arg1.y.len",
            "i8 %arg2.flag",
            "%struct.Step* byval align 8 %arg3.step",
            "float %arg4.scale",
            "i8 %arg5.mode",
            "%cudajit.TensorMap* byval align 64 %arg6.map",
        ]
    );
    assert_eq!(parameters.len(), abi_probe::ARGUMENT_WORDS.len());
    // Each declared parameter is of the kind and width its word says.
    let bits = |scalar: Scalar| format!("i{} ", 8 * scalar.size_bytes());
    for (word, parameter) in abi_probe::ARGUMENT_WORDS.iter().zip(&parameters) {
        let fits = match word {
            ArgWord::SlicePointer { mutable: false } => {
                parameter.contains("* noalias readonly ") && parameter.ends_with(".ptr")
            }
            ArgWord::SlicePointer { mutable: true } => {
                parameter.contains("* noalias ")
                    && !parameter.contains("readonly")
                    && parameter.ends_with(".ptr")
            }
            ArgWord::SliceLength => {
                parameter.starts_with(&bits(abi::SLICE_LENGTH)) && parameter.ends_with(".len")
            }
            ArgWord::BoolByte => parameter.starts_with(&bits(abi::BOOL_BYTE)),
            ArgWord::Value => !parameter.ends_with(".ptr") && !parameter.ends_with(".len"),
            ArgWord::TensorMap => {
                parameter.contains(&format!("byval align {} ", abi::TENSOR_MAP_ALIGN))
            }
        };
        assert!(fits, "{parameter} is not passed as {word:?}");
    }
}
