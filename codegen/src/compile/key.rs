//! The keys of a kernel: the cubin cache's ([`cache_key`]) and the identity ranks of a
//! communicator agree on ([`launch_identity`]). Both start with the fields of
//! `kernel_fields`, written once, so the two lists cannot drift apart.

use cudajit_core::lower::Specialization;
use cudajit_core::CapturedKernel;

use super::CompileOptions;
use crate::cache::compiler_identity::{toolchain_fields, ToolchainFields};
use crate::cache::key::{encode, library_identity, short_hash, CacheKey, KeyBuilder, KeyParts};
use crate::device_library::LibraryParts;
use crate::target::Arch;
use crate::toolchain::Toolchain;

/// The version of the cubin key's composition, in its domain: a change of fields or of
/// their encoding bumps it, so entries of the old composition simply miss. Version 3:
/// BLAKE3 in place of SHA-256, and the front end's source fingerprint.
pub const CUBIN_KEY_FORMAT: u32 = 3;

/// The version of the launch identity's composition, in its domain (3: BLAKE3).
pub const LAUNCH_IDENTITY_FORMAT: u32 = 3;

/// The fields of everything that changes what a kernel does, shared by both keys: its
/// name and captured source, its specialisation, every device function it reaches (by
/// the hash its macro computed), the values of the Rust constants their bodies name and
/// the layouts of the structs it takes (both as rustc computed them).
fn kernel_fields(key: &mut KeyBuilder, captured: &'static CapturedKernel, spec: &Specialization) {
    key.field("kernel", captured.name.as_bytes())
        .field("source", captured.source_hash.as_bytes())
        .field_labelled(
            "specialisation",
            &encode::specialization(spec),
            &spec.describe(),
        );
    for function in captured.reachable().into_iter().skip(1) {
        key.field("device-function", function.source_hash.as_bytes());
    }
    // The values rustc gave the constants the bodies name: the captured text has only
    // their names.
    for function in captured.reachable() {
        for constant in (function.constants)() {
            let label = format!(
                "{}: {} = {:?}",
                function.name,
                constant.name,
                constant.literal()
            );
            key.field_labelled("constant", &constant.key_bytes(), &label);
        }
    }
    for layout in captured.reachable_structs() {
        let bytes = encode::struct_layout(layout);
        let label = format!("{} {}", layout.name, short_hash(&bytes));
        key.field_labelled("struct", &bytes, &label);
    }
}

/// The cache key of `captured` for `arch`: everything that changes the cubin. The
/// compiler libraries are named by their BLAKE3 hash and version, memoised in the cache
/// directory ([`crate::cache::compiler_identity`]), so a warm start neither hashes nor
/// loads them.
pub fn cache_key(
    captured: &'static CapturedKernel,
    spec: &Specialization,
    arch: Arch,
    options: &CompileOptions,
    toolchain: &Toolchain,
) -> KeyParts {
    let compilers = toolchain_fields(toolchain, crate::cache::memo_dir());
    cubin_key(captured, spec, arch, options, &compilers)
}

/// [`cache_key`] with the compiler libraries' fields given (`(tag, bytes, label)` as
/// [`toolchain_fields`] computes them).
pub fn cubin_key(
    captured: &'static CapturedKernel,
    spec: &Specialization,
    arch: Arch,
    options: &CompileOptions,
    compilers: &ToolchainFields,
) -> KeyParts {
    let mut key = KeyBuilder::new(&format!(
        "cudajit-cubin/key{CUBIN_KEY_FORMAT}/store{}/ast{}",
        crate::cache::store::STORE_FORMAT,
        cudajit_core::ast::FORMAT_VERSION
    ));
    key.field("cudajit", env!("CARGO_PKG_VERSION").as_bytes())
        .field("sources", source_fingerprints().as_bytes());
    kernel_fields(&mut key, captured, spec);
    // The device libraries its `#[extern_device]` functions link, by the content of
    // their parts for `arch`.
    for library in captured.reachable_libraries() {
        key.field_labelled(
            "device-library",
            &library_identity(library, arch),
            &format!("{} ({})", library.name(), library.origin_for(arch.number())),
        );
    }
    key.field("arch", arch.sm_name().as_bytes())
        .field(
            "nvvm-options",
            options.nvvm_options(arch).join(" ").as_bytes(),
        )
        .field(
            "link-options",
            options.link_options(arch).join(" ").as_bytes(),
        )
        .field(
            "checks",
            &[
                u8::from(options.bounds_checks),
                u8::from(options.debug_assertions),
            ],
        );
    for (tag, value, label) in compilers.iter() {
        key.field_labelled(tag, value, label);
    }
    key.parts()
}

/// The fingerprints of the sources that decide the generated code: the code generator's
/// (`build.rs`) and the language front end's ([`cudajit_core::SOURCE_FINGERPRINT`]).
fn source_fingerprints() -> String {
    format!(
        "codegen {} core {}",
        env!("CUDAJIT_SOURCE_FINGERPRINT"),
        cudajit_core::SOURCE_FINGERPRINT
    )
}

/// The identity ranks of a communicator agree on before a kernel's first launch
/// (`cudajit::nccl::device::DevComm`): the kernel's name and captured source, every
/// device function it reaches, the layouts of the structs it takes and its
/// specialisation. Unlike [`cache_key`] it leaves out the GPU architecture, the
/// toolchain, the device libraries' builds and the checks of the build, which may differ
/// between ranks running the same kernel; anything that changes what the kernel does is in.
pub fn launch_identity(captured: &'static CapturedKernel, spec: &Specialization) -> CacheKey {
    let mut key = KeyBuilder::new(&format!(
        "cudajit-launch-identity/{LAUNCH_IDENTITY_FORMAT}/ast{}",
        cudajit_core::ast::FORMAT_VERSION
    ));
    kernel_fields(&mut key, captured, spec);
    key.finish()
}

#[cfg(test)]
mod tests {
    //! Key stability: each input changed in turn changes the key; the same inputs give the
    //! same key; what is not an input (where the source was written, its JSON) does not.

    use super::*;
    use cudajit_core::external::{DeviceLibrary, LibraryKind};
    use cudajit_core::ir::Literal;
    use cudajit_core::layout::{FieldLayout, StructLayout};
    use cudajit_core::{CapturedFunction, ConstantValue, Scalar};

    static LIBRARY_A: DeviceLibrary =
        DeviceLibrary::embedded("lib", LibraryKind::Fatbin, b"version A");
    static LIBRARY_B: DeviceLibrary =
        DeviceLibrary::embedded("lib", LibraryKind::Fatbin, b"version B");

    const FUNCTION: CapturedFunction = CapturedFunction {
        name: "helper",
        source: "{}",
        source_hash: "helper-hash",
        file: "helper.rs",
        callees: CapturedFunction::no_callees,
        structs: CapturedFunction::no_structs,
        library: None,
        constants: || {
            const CONSTANTS: &[ConstantValue] = &[ConstantValue::of("TILE", &32usize)];
            CONSTANTS
        },
        specific_arch: None,
    };
    static HELPER: CapturedFunction = FUNCTION;
    static HELPER_EDITED: CapturedFunction = CapturedFunction {
        source_hash: "helper-hash-2",
        ..FUNCTION
    };
    static EXTERN_A: CapturedFunction = CapturedFunction {
        name: "external",
        library: Some(|| &LIBRARY_A),
        ..FUNCTION
    };
    static EXTERN_B: CapturedFunction = CapturedFunction {
        name: "external",
        library: Some(|| &LIBRARY_B),
        ..FUNCTION
    };

    const FIELDS: [FieldLayout; 1] = [FieldLayout {
        name: "x",
        ty: cudajit_core::layout::FieldType::Scalar(Scalar::F32),
        offset: 0,
    }];
    static FIELDS_F32: [FieldLayout; 1] = FIELDS;
    static FIELDS_I32: [FieldLayout; 1] = [FieldLayout {
        ty: cudajit_core::layout::FieldType::Scalar(Scalar::I32),
        ..FIELDS[0]
    }];
    const LAYOUT: StructLayout = StructLayout {
        name: "Point",
        fields: &FIELDS_F32,
        size: 4,
        align: 4,
        enum_repr: None,
        variants: &[],
        drop: None,
        methods: cudajit_core::methods::MethodTable::NONE,
        args: &[],
    };
    static POINT: StructLayout = LAYOUT;
    static POINT_I32: StructLayout = StructLayout {
        fields: &FIELDS_I32,
        ..LAYOUT
    };

    const KERNEL: CapturedFunction = CapturedFunction {
        name: "kernel",
        source: "{}",
        source_hash: "kernel-hash",
        file: "kernel.rs",
        callees: || {
            static CALLEES: [&CapturedFunction; 2] = [&HELPER, &EXTERN_A];
            &CALLEES
        },
        structs: || {
            static STRUCTS: [&StructLayout; 1] = [&POINT];
            &STRUCTS
        },
        library: None,
        constants: CapturedFunction::no_constants,
        specific_arch: None,
    };

    /// Every input of the cubin key at once.
    #[derive(Clone)]
    struct Inputs {
        captured: CapturedFunction,
        spec: Specialization,
        arch: Arch,
        options: CompileOptions,
        compilers: ToolchainFields,
    }

    fn base() -> Inputs {
        Inputs {
            captured: KERNEL,
            spec: Specialization {
                types: vec![("T".to_owned(), Scalar::F32)],
                structs: Vec::new(),
                consts: vec![(
                    "N".to_owned(),
                    Literal::Int {
                        bits: 4,
                        ty: Scalar::U32,
                    },
                )],
            },
            arch: Arch::SM_90,
            options: CompileOptions::default(),
            compilers: vec![("libnvvm", b"nvvm digest".to_vec(), "13.0.88".to_owned())],
        }
    }

    fn leak(captured: CapturedFunction) -> &'static CapturedFunction {
        Box::leak(Box::new(captured))
    }

    fn cubin(inputs: &Inputs) -> CacheKey {
        let captured = leak(inputs.captured);
        cubin_key(
            captured,
            &inputs.spec,
            inputs.arch,
            &inputs.options,
            &inputs.compilers,
        )
        .key
    }

    fn launch(inputs: &Inputs) -> CacheKey {
        launch_identity(leak(inputs.captured), &inputs.spec)
    }

    /// Each change of one input, named, with whether the launch identity must see it.
    fn changes() -> Vec<(&'static str, bool, Inputs)> {
        let change = |edit: &dyn Fn(&mut Inputs)| {
            let mut inputs = base();
            edit(&mut inputs);
            inputs
        };
        vec![
            (
                "kernel name",
                true,
                change(&|i| i.captured.name = "other_kernel"),
            ),
            (
                "captured source",
                true,
                change(&|i| i.captured.source_hash = "kernel-hash-2"),
            ),
            (
                "type parameter",
                true,
                change(&|i| i.spec.types[0].1 = Scalar::F64),
            ),
            (
                "constant",
                true,
                change(&|i| {
                    i.spec.consts[0].1 = Literal::Int {
                        bits: 8,
                        ty: Scalar::U32,
                    }
                }),
            ),
            (
                "a device function's source",
                true,
                change(&|i| {
                    i.captured.callees = || {
                        static CALLEES: [&CapturedFunction; 2] = [&HELPER_EDITED, &EXTERN_A];
                        &CALLEES
                    }
                }),
            ),
            (
                "one device function fewer",
                true,
                change(&|i| {
                    i.captured.callees = || {
                        static CALLEES: [&CapturedFunction; 1] = [&EXTERN_A];
                        &CALLEES
                    }
                }),
            ),
            (
                "a constant's value",
                true,
                change(&|i| {
                    i.captured.constants = || {
                        const CONSTANTS: &[ConstantValue] = &[ConstantValue::of("TILE", &64usize)];
                        CONSTANTS
                    }
                }),
            ),
            (
                "a device function's constant",
                true,
                change(&|i| {
                    i.captured.callees = || {
                        static HELPER_TILE_16: CapturedFunction = CapturedFunction {
                            constants: || {
                                const CONSTANTS: &[ConstantValue] =
                                    &[ConstantValue::of("TILE", &16usize)];
                                CONSTANTS
                            },
                            ..FUNCTION
                        };
                        static CALLEES: [&CapturedFunction; 2] = [&HELPER_TILE_16, &EXTERN_A];
                        &CALLEES
                    }
                }),
            ),
            (
                "a struct layout",
                true,
                change(&|i| {
                    i.captured.structs = || {
                        static STRUCTS: [&StructLayout; 1] = [&POINT_I32];
                        &STRUCTS
                    }
                }),
            ),
            (
                "a device library's bytes",
                false,
                change(&|i| {
                    i.captured.callees = || {
                        static CALLEES: [&CapturedFunction; 2] = [&HELPER, &EXTERN_B];
                        &CALLEES
                    }
                }),
            ),
            ("architecture", false, change(&|i| i.arch = Arch::SM_80)),
            (
                "architecture-specific features (sm_90a)",
                false,
                change(&|i| i.arch = Arch::SM_90A),
            ),
            (
                "optimisation level",
                false,
                change(&|i| i.options.opt_level = 2),
            ),
            ("fma", false, change(&|i| i.options.fma = false)),
            (
                "bounds checks",
                false,
                change(&|i| i.options.bounds_checks = true),
            ),
            (
                "debug assertions",
                false,
                change(&|i| i.options.debug_assertions = true),
            ),
            (
                "compiler library",
                false,
                change(&|i| i.compilers[0].1 = b"another nvvm digest".to_vec()),
            ),
        ]
    }

    #[test]
    fn the_same_inputs_give_the_same_keys() {
        assert_eq!(cubin(&base()), cubin(&base()));
        assert_eq!(launch(&base()), launch(&base()));
        // Not inputs: where the kernel was written and its captured JSON (its hash is).
        let mut moved = base();
        moved.captured.file = "elsewhere.rs";
        moved.captured.source = "{\"reformatted\": true}";
        assert_eq!(cubin(&moved), cubin(&base()));
        assert_eq!(launch(&moved), launch(&base()));
    }

    #[test]
    fn every_input_changes_the_cubin_key() {
        let base_key = cubin(&base());
        let mut seen = vec![base_key];
        for (what, _, inputs) in changes() {
            let key = cubin(&inputs);
            assert_ne!(
                key, base_key,
                "changing the {what} left the cubin key as it was"
            );
            assert!(
                !seen.contains(&key),
                "changing the {what} gave another change's key"
            );
            seen.push(key);
        }
    }

    #[test]
    fn the_launch_identity_changes_with_what_the_kernel_does_only() {
        let base_identity = launch(&base());
        for (what, changes_identity, inputs) in changes() {
            let identity = launch(&inputs);
            if changes_identity {
                assert_ne!(identity, base_identity, "changing the {what}");
            } else {
                assert_eq!(identity, base_identity, "changing the {what}");
            }
        }
    }

    #[test]
    fn entries_record_readable_components() {
        let KeyParts { components, .. } = cubin_key(
            leak(KERNEL),
            &base().spec,
            Arch::SM_90,
            &CompileOptions::default(),
            &base().compilers,
        );
        let value = |tag: &str| {
            components
                .iter()
                .find(|c| c.tag == tag)
                .map(|c| c.value.clone())
                .unwrap_or_default()
        };
        assert_eq!(value("specialisation"), "T=f32, N=4");
        assert!(
            value("struct").starts_with("Point blake3:"),
            "{components:?}"
        );
        assert_eq!(
            value("device-library"),
            "lib (embedded in the program, 9 bytes)"
        );
        assert_eq!(value("libnvvm"), "13.0.88");
        assert!(value("domain").starts_with("cudajit-cubin/key3/"));
    }
}
