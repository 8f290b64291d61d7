//! The kernel IR: lowering of captured kernels, type inference, and the validator's rules.

mod common;

use common::kernels::*;
use cudajit::core::ast::BinaryOp;
use cudajit::core::ir::{
    Block, EntryPoint, Expression, Function, FunctionArgument, Handle, Literal, LoopId, Module,
    Statement, Type, TypeInner,
};
use cudajit::core::valid::{validate, ExprType, ValidationErrorKind};
use cudajit::core::{Scalar, Span};
use cudajit::prelude::*;
use cudajit::Specialization;

#[kernel]
fn accumulate(x: &[f32], out: &mut [f32]) {
    let mut acc = 0.0;
    for i in 0..x.len() {
        acc += x[i];
    }
    let count = 0;
    out[0] = acc + count as f32;
}

#[test]
fn every_test_kernel_lowers_and_validates() {
    for kernel in [
        saxpy::KERNEL.captured(),
        int_ops::KERNEL.captured(),
        casts::KERNEL.captured(),
        loops::KERNEL.captured(),
        transpose::KERNEL.captured(),
        bools::KERNEL.captured(),
        scale_strided::KERNEL.captured(),
        apply_ops::KERNEL.captured(),
        tuples::KERNEL.captured(),
    ] {
        let (module, info) = kernel
            .lower(&Specialization::default())
            .unwrap_or_else(|e| panic!("{}: {e}", kernel.name));
        assert_eq!(module.entry_points.len(), 1);
        let function = &module.functions[module.entry_points[0].function];
        assert_eq!(
            info.function(module.entry_points[0].function)
                .expression_types()
                .len(),
            function.expressions.len()
        );
    }
}

#[test]
fn literals_take_the_type_of_their_context_like_rustc() {
    let (module, _) = accumulate::KERNEL
        .captured()
        .lower(&Specialization::default())
        .unwrap();
    let function = &module.functions[module.entry_points[0].function];
    let local_type = |name: &str| {
        let (_, local) = function
            .locals
            .iter()
            .find(|(_, l)| l.name == name)
            .unwrap();
        module.types[local.ty].inner.clone()
    };
    // `let mut acc = 0.0; acc += x[i]` makes `acc` an f32, as rustc infers.
    assert_eq!(local_type("acc"), TypeInner::Scalar(Scalar::F32));
    // `let count = 0;` with no other constraint defaults to i32.
    assert_eq!(local_type("count"), TypeInner::Scalar(Scalar::I32));
    // The `for` variable indexes a slice, so it is a usize.
    assert_eq!(local_type("i"), TypeInner::Scalar(Scalar::Usize));
}

/// A module with one kernel `k(x: &[f32], y: &mut [f32])` whose body `build` fills in.
fn kernel_module(build: impl FnOnce(&mut Module, &mut Function)) -> Module {
    let mut module = Module::default();
    let f32_ty = module.types.insert(Type {
        inner: TypeInner::Scalar(Scalar::F32),
    });
    let ro = module.types.insert(Type {
        inner: TypeInner::Slice {
            base: f32_ty,
            mutable: false,
        },
    });
    let rw = module.types.insert(Type {
        inner: TypeInner::Slice {
            base: f32_ty,
            mutable: true,
        },
    });
    let mut function = Function {
        name: "k".into(),
        ..Function::default()
    };
    for (name, ty) in [("x", ro), ("y", rw)] {
        function.arguments.push(FunctionArgument {
            name: name.into(),
            ty,
            span: Span::default(),
        });
    }
    build(&mut module, &mut function);
    let function = module.functions.append(function);
    module.entry_points.push(EntryPoint {
        symbol: "k".into(),
        function,
        max_threads: None,
    });
    module
}

fn lit(function: &mut Function, literal: Literal) -> Handle<Expression> {
    function.add_expression(Expression::Literal(literal), Span::default())
}

fn element(function: &mut Function, argument: u32) -> Handle<Expression> {
    let base = function.add_expression(Expression::FunctionArgument(argument), Span::default());
    let index = lit(
        function,
        Literal::Int {
            bits: 0,
            ty: Scalar::Usize,
        },
    );
    function.add_expression(Expression::ElementPointer { base, index }, Span::default())
}

fn rejection(module: &Module) -> ValidationErrorKind {
    validate(module)
        .expect_err("the validator must reject this module")
        .kind
}

#[test]
fn a_valid_hand_built_module_passes_with_types() {
    let module = kernel_module(|_, f| {
        let source = element(f, 0);
        let value = f.add_expression(Expression::Load { pointer: source }, Span::default());
        let target = element(f, 1);
        f.body.push(
            Statement::Store {
                pointer: target,
                value,
            },
            Span::default(),
        );
    });
    let info = validate(&module).expect("valid");
    let types = info
        .function(module.entry_points[0].function)
        .expression_types();
    assert!(types.contains(&ExprType::Scalar(Scalar::F32)));
}

#[test]
fn stores_through_shared_slices_are_rejected() {
    let module = kernel_module(|_, f| {
        let target = element(f, 0);
        let value = lit(
            f,
            Literal::Float {
                value: 1.0,
                ty: Scalar::F32,
            },
        );
        f.body.push(
            Statement::Store {
                pointer: target,
                value,
            },
            Span::default(),
        );
    });
    assert_eq!(rejection(&module), ValidationErrorKind::StoreToImmutable);
}

#[test]
fn operands_of_different_types_are_rejected() {
    let module = kernel_module(|_, f| {
        let left = lit(
            f,
            Literal::Float {
                value: 1.0,
                ty: Scalar::F32,
            },
        );
        let right = lit(
            f,
            Literal::Int {
                bits: 1,
                ty: Scalar::I32,
            },
        );
        let sum = f.add_expression(
            Expression::Binary {
                op: BinaryOp::Add,
                left,
                right,
            },
            Span::default(),
        );
        let target = element(f, 1);
        f.body.push(
            Statement::Store {
                pointer: target,
                value: sum,
            },
            Span::default(),
        );
    });
    assert!(matches!(
        rejection(&module),
        ValidationErrorKind::TypeMismatch { .. }
    ));
}

#[test]
fn forward_references_are_rejected() {
    let module = kernel_module(|_, f| {
        let later = Handle::new(5);
        f.add_expression(
            Expression::Cast {
                value: later,
                to: Scalar::F64,
            },
            Span::default(),
        );
    });
    assert!(matches!(
        rejection(&module),
        ValidationErrorKind::ForwardReference { .. }
    ));
}

#[test]
fn break_outside_its_loop_is_rejected() {
    let module = kernel_module(|_, f| {
        f.body
            .push(Statement::Break { target: LoopId(3) }, Span::default());
    });
    assert!(matches!(
        rejection(&module),
        ValidationErrorKind::BadLoopTarget { what: "break", .. }
    ));
}

#[test]
fn conditions_must_be_bool() {
    let module = kernel_module(|_, f| {
        let condition = lit(
            f,
            Literal::Int {
                bits: 1,
                ty: Scalar::U32,
            },
        );
        f.body.push(
            Statement::If {
                condition,
                accept: Block::new(),
                reject: Block::new(),
            },
            Span::default(),
        );
    });
    assert!(matches!(
        rejection(&module),
        ValidationErrorKind::TypeMismatch { .. }
    ));
}

#[test]
fn casts_follow_rust_rules() {
    let module = kernel_module(|_, f| {
        let value = lit(
            f,
            Literal::Float {
                value: 1.0,
                ty: Scalar::F32,
            },
        );
        f.add_expression(
            Expression::Cast {
                value,
                to: Scalar::Bool,
            },
            Span::default(),
        );
    });
    assert!(matches!(
        rejection(&module),
        ValidationErrorKind::BadCast { .. }
    ));
}

#[test]
fn kernels_cannot_return_values() {
    let mut module = kernel_module(|_, _| {});
    let u32_ty = module.types.insert(Type {
        inner: TypeInner::Scalar(Scalar::U32),
    });
    let entry = module.entry_points[0].function;
    let mut function = module.functions[entry].clone();
    function.result = Some(u32_ty);
    let mut fixed = Module {
        types: module.types.clone(),
        ..Module::default()
    };
    let handle = fixed.functions.append(function);
    fixed.entry_points.push(EntryPoint {
        symbol: "k".into(),
        function: handle,
        max_threads: None,
    });
    assert_eq!(rejection(&fixed), ValidationErrorKind::KernelReturnsValue);
}

#[kernel]
fn overwrite_ops(ops: &mut [Op]) {
    let i = global_index();
    if i < ops.len() {
        ops[i] = Op::Add;
    }
}

#[test]
fn enums_are_their_repr_and_cannot_be_written() {
    let (module, _) = apply_ops::KERNEL
        .captured()
        .lower(&Specialization::default())
        .unwrap();
    let function = &module.functions[module.entry_points[0].function];
    // `mode: Op` with `#[repr(u8)]` is passed as a `u8`.
    let mode = &function.arguments[0];
    assert_eq!(
        module.types[mode.ty].inner,
        TypeInner::Scalar(Scalar::U8),
        "{mode:?}"
    );
    let error = overwrite_ops::KERNEL
        .captured()
        .lower(&Specialization::default())
        .unwrap_err()
        .to_string();
    assert!(error.contains("kernels only read enums"), "{error}");
    assert!(error.contains("`Op`"), "{error}");
}

#[device]
fn halves(x: f32) -> (f32, f32) {
    (x * 0.5, x - x * 0.5)
}

#[device]
fn sum_pair(p: (f32, f32)) -> f32 {
    p.0 + p.1
}

/// A tuple bound without a pattern or type, passed on whole to a tuple parameter (the
/// macro cannot see it is a tuple; the lowering, with the signatures, passes its fields).
#[kernel]
fn unbound_tuple_passed_on(out: &mut [f32]) {
    if global_index() == 0 {
        let h = halves(out[0]);
        out[0] = sum_pair(h) + h.1;
    }
}

#[test]
fn a_returned_tuple_bound_to_a_name_is_passed_on_whole() {
    let stream = cudajit::Stream::simulator();
    let mut out = stream.clone_htod(&[3.0f32]).unwrap();
    unbound_tuple_passed_on::launch(&stream, LaunchConfig::for_elements(1), &mut out).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    assert_eq!(got[0], sum_pair(halves(3.0)) + halves(3.0).1);
}

/// A struct whose drop hook is a `#[device]` function, not an `#[extern_device]` one.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
#[device_drop(not_a_hook)]
struct Guarded {
    value: u32,
}

#[device]
#[allow(dead_code)] // only named by the drop hook, which lowering refuses
fn not_a_hook(value: u32) -> u32 {
    value
}

#[kernel]
fn uses_guarded(out: &mut [u32]) {
    let g = Guarded { value: 1 };
    out[0] = g.value;
}

#[test]
fn a_drop_hook_must_be_an_extern_function_taking_mut_self() {
    let error = uses_guarded::KERNEL
        .captured()
        .lower(&Specialization::default())
        .expect_err("a device function as a drop hook")
        .to_string();
    assert!(
        error.contains(
            "must be an `#[extern_device]` function `fn not_a_hook(value: &mut Guarded)`"
        ),
        "{error}"
    );
}
