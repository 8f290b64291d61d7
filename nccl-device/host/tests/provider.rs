//! `provide_for_loaded_nccl` as the provider of a `cudajit_core` device library, end to
//! end on the CPU: the process's NCCL is the cached 2.32.3 wheel, and codegen links a
//! kernel written against the bridge's C ABI (`cudajit_nccl_*`) with the parts provided
//! for sm_90 (cudajit's shim, then `libnccl_device.ltoir`); LTO inlines every call.
//!
//! One test, because `LoadedNccl::global()` and the codegen toolchain are per process and read
//! the environment this test sets. Needs what tests/device_code.rs needs.

mod common;

use cudajit_codegen::compile::{library_identity, link_nvvm_ir, CompileOptions};
use cudajit_codegen::device_library::LibraryParts;
use cudajit_codegen::nvvm::NvvmIr;
use cudajit_codegen::toolchain::Toolchain;
use cudajit_codegen::Arch;
use cudajit_core::external::{DeviceLibrary, LibraryKind};
use cudajit_nccl::device_code::{provide_for_loaded_nccl, symbols};

use common::probe::{bridge_abi_kernel, call_targets, BRIDGE_CALLED};

static NCCL: DeviceLibrary = DeviceLibrary::provided("nccl", provide_for_loaded_nccl);

#[test]
fn the_loaded_nccl_provides_the_bridge_abi() {
    let Some(dir) = common::release_dir("2.32.3") else {
        common::skip("no NCCL 2.32.3 cached");
        return;
    };
    let nvjitlink =
        common::cache_root().join("nvjitlink-13.5.37/nvidia/cu13/lib/libnvJitLink.so.13");
    if !nvjitlink.is_file() {
        common::skip(&format!("no {}", nvjitlink.display()));
        return;
    }
    // Before anything reads them: the process's NCCL, the nvJitLink that reads its
    // .ltoir, and the compiler wheels of scripts/test.sh.
    std::env::set_var("CUDAJIT_NCCL_LIBRARY", dir.join("lib/libnccl.so.2"));
    std::env::set_var("CUDAJIT_NVJITLINK", &nvjitlink);
    if let Some(tools) = common::tools_env().var("CUDAJIT_TOOLS_DIR") {
        std::env::set_var("CUDAJIT_TOOLS_DIR", tools);
    }
    let toolchain = match Toolchain::global() {
        Ok(toolchain) => toolchain,
        Err(e) => {
            common::skip(&format!("no libNVVM/nvJitLink ({e})"));
            return;
        }
    };
    assert_eq!(
        toolchain.nvjitlink().unwrap().version(),
        (13, 5),
        "CUDAJIT_NVJITLINK not used"
    );

    let provided = NCCL.parts(90).unwrap_or_else(|e| panic!("{e}"));
    let kinds: Vec<LibraryKind> = provided.parts.iter().map(|p| p.kind).collect();
    assert_eq!(kinds, [LibraryKind::LtoIr, LibraryKind::LtoIr]);
    assert_eq!(provided.parts[1].name, "libnccl_device.ltoir");
    assert!(
        provided.origin.contains("NCCL 2.32.3") && provided.origin.contains("shim"),
        "{}",
        provided.origin
    );
    // The cache key's identity: the name, then both parts.
    let identity = library_identity(&NCCL, Arch::SM_90);
    assert!(identity.starts_with(b"nccl/LtoIr:"));
    assert_eq!(identity.iter().filter(|&&b| b == b'/').count(), 3);

    let ir = NvvmIr::handwritten(bridge_abi_kernel(&symbols::BRIDGE_2_28));
    let (linked, _, link) = link_nvvm_ir(
        toolchain,
        "probe",
        &ir,
        Arch::SM_90,
        &CompileOptions::default(),
        &[&NCCL],
        true,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("NCCL 2.32.3 through the provider: nvJitLink {link:?}");
    let ptx = linked.ptx.unwrap();
    for f in BRIDGE_CALLED {
        let symbol = symbols::BRIDGE_2_28.get(*f).unwrap().symbol;
        assert!(!ptx.contains(symbol), "{symbol} left in the PTX");
        let mangled = symbols::LTOIR_2_32.get(*f).unwrap().symbol;
        assert!(!ptx.contains(mangled), "{mangled} left in the PTX");
    }
    // Only NCCL's type-erased ncclCoopAny calls remain (see tests/device_code.rs).
    let others: Vec<String> = call_targets(&ptx)
        .into_iter()
        .filter(|t| !t.starts_with('%') && !t.starts_with("_ZN11ncclCoopAny"))
        .collect();
    assert!(others.is_empty(), "calls left: {others:?}");
}
