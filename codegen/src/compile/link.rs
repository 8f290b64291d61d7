//! The link: NVVM IR → LTO-IR (libNVVM `-gen-lto`, with libdevice when the IR calls it)
//! → cubin (nvJitLink `-lto`, with the kernel's device libraries), checked to define the
//! kernel's entry. No driver is needed.

use std::time::{Duration, Instant};

use cudajit_core::external::{DeviceLibrary, LibraryError, LibraryKind};
use cudajit_core::lower::Specialization;
use cudajit_core::CapturedKernel;

use super::arch_target::{kernel_target, name_specific_instructions};
use super::lower::write_nvvm;
use super::missing_externs::name_missing_externs;
use super::{CompileError, CompileOptions};
use crate::cubin::{self, CubinError};
use crate::device_library::LibraryParts;
use crate::nvvm::NvvmIr;
use crate::target::Arch;
use crate::toolchain::{InputKind, LinkInput, NvvmModule, Toolchain};

/// The linked PTX of a captured kernel's specialisation (nvJitLink `-ptx`), with its device
/// libraries: to inspect what LTO made of calls into them. Bypasses the caches.
pub fn linked_ptx(
    captured: &'static CapturedKernel,
    spec: &Specialization,
    arch: Arch,
    options: &CompileOptions,
) -> Result<String, CompileError> {
    let kernel = captured.name.to_owned();
    let arch = kernel_target(captured, arch)?;
    let toolchain = Toolchain::global().map_err(|source| CompileError::Toolchain {
        kernel: kernel.clone(),
        source,
    })?;
    let entry = cudajit_core::lower::entry_symbol(captured.name, spec);
    let ir = write_nvvm(captured, spec, options, &entry)?;
    let libraries = captured.reachable_libraries();
    let (linked, _, _) = link_nvvm_ir(toolchain, &entry, &ir, arch, options, &libraries, true)
        .map_err(|e| name_missing_externs(e, captured, &ir, arch))
        .map_err(|e| name_specific_instructions(e, arch))?;
    Ok(linked.ptx.unwrap_or_default())
}

/// NVVM IR → cubin for `arch`, checking that the cubin defines `entry`.
pub fn compile_nvvm_ir(
    toolchain: &Toolchain,
    entry: &str,
    ir: &NvvmIr,
    arch: Arch,
    options: &CompileOptions,
) -> Result<(Vec<u8>, Duration, Duration), CompileError> {
    let (linked, nvvm_time, link_time) =
        link_nvvm_ir(toolchain, entry, ir, arch, options, &[], false)?;
    Ok((linked.cubin, nvvm_time, link_time))
}

/// NVVM IR → cubin (and PTX if `want_ptx`) for `arch`, linked with `libraries`,
/// checking that the cubin defines `entry`.
pub fn link_nvvm_ir(
    toolchain: &Toolchain,
    entry: &str,
    ir: &NvvmIr,
    arch: Arch,
    options: &CompileOptions,
    libraries: &[&'static DeviceLibrary],
    want_ptx: bool,
) -> Result<(crate::toolchain::Linked, Duration, Duration), CompileError> {
    let error = |source| CompileError::Toolchain {
        kernel: entry.to_owned(),
        source,
    };
    let started = Instant::now();
    let nvvm_options = options.nvvm_options(arch);
    let nvvm_args: Vec<&str> = nvvm_options.iter().map(String::as_str).collect();
    // libdevice is added lazily, and only when the kernel calls one of its functions (the
    // writer says which it declared): libNVVM then links just the functions used.
    let text = &ir.text;
    let libdevice = if ir.needs_libdevice() {
        Some(toolchain.libdevice_bytes().map_err(error)?)
    } else {
        None
    };
    let mut modules = vec![NvvmModule::new(entry, text.as_bytes())];
    if let Some(libdevice) = libdevice {
        modules.push(NvvmModule::lazy("libdevice.10.bc", libdevice));
    }
    crate::dump::nvvm_ir(entry, arch, text);
    let step = crate::progress::Step::new(format!("libNVVM: compiling `{entry}` for {arch}"));
    let ltoir = toolchain
        .nvvm()
        .and_then(|nvvm| nvvm.compile(&modules, &nvvm_args))
        .map_err(error)?;
    step.finish();
    let nvvm_time = started.elapsed();

    let started = Instant::now();
    let link_options = options.link_options(arch);
    let link_args: Vec<&str> = link_options.iter().map(String::as_str).collect();
    // Every part of every library, for `arch`, in the libraries' order.
    let provided = libraries
        .iter()
        .map(|library| library.parts(arch.number()))
        .collect::<Result<Vec<_>, LibraryError>>()
        .map_err(|source| CompileError::Library {
            kernel: entry.to_owned(),
            source,
        })?;
    let mut inputs = vec![LinkInput {
        name: entry,
        kind: InputKind::LtoIr,
        bytes: &ltoir.result,
    }];
    for part in provided.iter().flat_map(|library| &library.parts) {
        inputs.push(LinkInput {
            name: &part.name,
            kind: input_kind(part.kind),
            bytes: &part.bytes,
        });
    }
    let input_bytes = inputs.iter().map(|i| i.bytes.len()).sum();
    let step = crate::progress::Step::sized(
        format!("nvJitLink: linking `{entry}` for {arch}"),
        input_bytes,
    );
    let linked = toolchain
        .nvjitlink()
        .and_then(|linker| linker.link(&inputs, &link_args, want_ptx))
        .map_err(error)?;
    step.finish();
    let link_time = started.elapsed();
    crate::dump::linked(toolchain, entry, arch, &inputs, &link_args, &linked.cubin);

    let info = cubin::inspect(&linked.cubin).map_err(|source| CompileError::Cubin {
        kernel: entry.to_owned(),
        source,
    })?;
    if !info.has_function(entry) {
        return Err(CompileError::Cubin {
            kernel: entry.to_owned(),
            source: CubinError("the kernel's entry point is missing"),
        });
    }
    Ok((linked, nvvm_time, link_time))
}

/// nvJitLink's input kind for a device library.
fn input_kind(kind: LibraryKind) -> InputKind {
    match kind {
        LibraryKind::LtoIr => InputKind::LtoIr,
        LibraryKind::Fatbin => InputKind::Fatbin,
        LibraryKind::Ptx => InputKind::Ptx,
        LibraryKind::Cubin => InputKind::Cubin,
    }
}

#[cfg(test)]
mod tests {
    //! Provided device libraries through the real libNVVM and nvJitLink (skipped without
    //! NVIDIA's wheels unless `CUDAJIT_REQUIRE_TOOLCHAIN=1`).

    use super::*;
    use crate::cache::key::library_identity;
    use crate::toolchain::ToolchainError;
    use cudajit_core::external::{LibraryPart, ProvidedLibrary};
    use std::sync::OnceLock;

    const HEADER: &str = r#"target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
"#;

    /// The toolchain of `CUDAJIT_TOOLS_DIR`, or `None` (printed) to skip.
    fn toolchain() -> Option<&'static Toolchain> {
        static TOOLCHAIN: OnceLock<Option<Toolchain>> = OnceLock::new();
        let found = TOOLCHAIN.get_or_init(|| {
            let env = crate::toolchain::SearchEnv::from_process();
            Toolchain::discover(&env).ok()
        });
        if found.is_none() {
            assert!(
                std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() != Ok("1"),
                "no libNVVM/nvJitLink and CUDAJIT_REQUIRE_TOOLCHAIN=1"
            );
            eprintln!("skipped: no libNVVM/nvJitLink (set CUDAJIT_TOOLS_DIR)");
        }
        found.as_ref()
    }

    /// A provider that compiles `provided_twice` with libNVVM `-gen-lto` for the SM asked.
    fn twice_provider(sm: u32) -> Result<ProvidedLibrary, String> {
        let toolchain = toolchain().ok_or("no toolchain")?;
        let source = format!(
            "{HEADER}define float @provided_twice(float %x) {{\n  %y = fmul float %x, 2.0\n  \
             ret float %y\n}}\n!nvvmir.version = !{{!0}}\n!0 = !{{i32 2, i32 0}}\n"
        );
        let arch = format!("-arch=compute_{sm}");
        let ltoir = toolchain
            .nvvm()
            .and_then(|nvvm| {
                nvvm.compile(
                    &[NvvmModule::new("twice.ll", source.as_bytes())],
                    &[arch.as_str(), "-gen-lto"],
                )
            })
            .map_err(|e| e.to_string())?
            .result;
        Ok(ProvidedLibrary {
            origin: format!("compiled by the test for sm_{sm}"),
            parts: vec![LibraryPart {
                name: "twice.ltoir".into(),
                kind: LibraryKind::LtoIr,
                bytes: ltoir,
            }],
        })
    }

    fn refusing_provider(sm: u32) -> Result<ProvidedLibrary, String> {
        Err(format!(
            "no library for sm_{sm} here; install one (fix: set TWICE_DIR)"
        ))
    }

    static TWICE: DeviceLibrary = DeviceLibrary::provided("twice", twice_provider);
    static REFUSING: DeviceLibrary = DeviceLibrary::provided("refusing", refusing_provider);

    /// A kernel storing `callee(*p)` to `*p` (in `@llvm.used`, else LTO drops it).
    fn kernel_calling(callee: &str) -> NvvmIr {
        NvvmIr::handwritten(format!(
            "{HEADER}define void @calls_twice(float* %p) {{\n  %x = load float, float* %p\n  \
             %y = call float @{callee}(float %x)\n  store float %y, float* %p\n  ret void\n}}\n\
             declare float @{callee}(float)\n\
             @llvm.used = appending global [1 x i8*] [i8* bitcast (void (float*)* @calls_twice \
             to i8*)], section \"llvm.metadata\"\n\
             !nvvm.annotations = !{{!0}}\n!0 = !{{void (float*)* @calls_twice, !\"kernel\", i32 1}}\n\
             !nvvmir.version = !{{!1}}\n!1 = !{{i32 2, i32 0}}\n"
        ))
    }

    #[test]
    fn a_provided_lto_ir_part_links_inlines_and_keys_the_cache() {
        let Some(toolchain) = toolchain() else { return };
        let options = CompileOptions::default();
        let (linked, _, _) = link_nvvm_ir(
            toolchain,
            "calls_twice",
            &kernel_calling("provided_twice"),
            Arch::SM_90,
            &options,
            &[&TWICE],
            true,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let ptx = linked.ptx.unwrap();
        assert!(ptx.contains(".entry calls_twice"), "{ptx}");
        assert!(!ptx.contains("provided_twice"), "not inlined:\n{ptx}");

        // The identity holds the hash of the part provided for that architecture.
        let sm90 = library_identity(&TWICE, Arch::SM_90);
        let part = &TWICE.parts(90).unwrap().parts[0];
        let mut expected = b"twice/LtoIr:".to_vec();
        expected.extend_from_slice(blake3::hash(&part.bytes).as_bytes());
        expected.push(b'/');
        assert_eq!(sm90, expected);
        assert_eq!(library_identity(&TWICE, Arch::SM_90), sm90);
        // Another architecture, other parts (compiled for compute_80), another identity.
        assert_ne!(library_identity(&TWICE, Arch::SM_80), sm90);
        assert_eq!(TWICE.origin_for(90), "compiled by the test for sm_90");
    }

    #[test]
    fn a_provider_error_is_a_library_compile_error() {
        let Some(toolchain) = toolchain() else { return };
        let error = link_nvvm_ir(
            toolchain,
            "calls_twice",
            &kernel_calling("provided_twice"),
            Arch::SM_90,
            &CompileOptions::default(),
            &[&REFUSING],
            false,
        )
        .expect_err("a refusing provider cannot link");
        assert!(matches!(error, CompileError::Library { .. }), "{error:?}");
        let text = error.to_string();
        for needle in [
            "kernel `calls_twice`",
            "device library `refusing`",
            "provided at run time for sm_90",
            "no library for sm_90 here; install one (fix: set TWICE_DIR)",
        ] {
            assert!(text.contains(needle), "`{needle}` missing from: {text}");
        }
        // The identity of a failing library carries the reason and is not memoised.
        let identity = library_identity(&REFUSING, Arch::SM_90);
        assert!(String::from_utf8_lossy(&identity).contains("no library for sm_90"));
    }

    #[test]
    fn a_symbol_no_part_defines_is_reported_unresolved() {
        let Some(toolchain) = toolchain() else { return };
        let error = link_nvvm_ir(
            toolchain,
            "calls_twice",
            &kernel_calling("provided_thrice"),
            Arch::SM_90,
            &CompileOptions::default(),
            &[&TWICE],
            false,
        )
        .expect_err("an undefined symbol cannot link");
        let CompileError::Toolchain {
            source: ToolchainError::NvJitLinkFailed(failure),
            ..
        } = &error
        else {
            panic!("expected an nvJitLink failure, got {error:?}");
        };
        assert_eq!(
            failure.unresolved_symbols(),
            vec!["provided_thrice".to_owned()]
        );
    }
}
