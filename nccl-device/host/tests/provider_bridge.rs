//! `provide_for_loaded_nccl` with NCCL 2.28.3 as the process's NCCL: the provided library
//! is the bridge fatbin, built by nvcc into a temporary cache, and codegen links the
//! bridge-ABI kernel with it, every call inlined. The 2.32.3 case is tests/provider.rs;
//! each needs its own process (`LoadedNccl::global()`).

mod common;

use cudajit_codegen::compile::{link_nvvm_ir, CompileOptions};
use cudajit_codegen::device_library::LibraryParts;
use cudajit_codegen::nvvm::NvvmIr;
use cudajit_codegen::toolchain::Toolchain;
use cudajit_codegen::Arch;
use cudajit_core::external::{DeviceLibrary, LibraryKind};
use cudajit_nccl::device_code::{provide_for_loaded_nccl, symbols};

use common::probe::{bridge_abi_kernel, call_targets, BRIDGE_CALLED};

static NCCL: DeviceLibrary = DeviceLibrary::provided("nccl", provide_for_loaded_nccl);

#[test]
fn the_loaded_nccl_2_28_provides_the_bridge() {
    let Some(dir) = common::release_dir("2.28.3") else {
        common::skip("no NCCL 2.28.3 cached");
        return;
    };
    let cache = std::env::temp_dir().join(format!("cudajit-nccl-provider-{}", std::process::id()));
    std::env::set_var("CUDAJIT_NCCL_LIBRARY", dir.join("lib/libnccl.so.2"));
    std::env::set_var("CUDAJIT_CACHE_DIR", &cache);
    std::env::remove_var("CUDAJIT_CACHE");
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
    let provided = match NCCL.parts(90) {
        Ok(provided) => provided,
        Err(e) if e.message.contains("nvcc") || e.message.contains("cuda_runtime.h") => {
            common::skip(&e.to_string());
            return;
        }
        Err(e) => panic!("{e}"),
    };
    assert_eq!(provided.parts.len(), 1);
    assert_eq!(provided.parts[0].kind, LibraryKind::Fatbin);
    assert!(
        provided.origin.contains("NCCL 2.28.3")
            && provided.origin.contains("bridge")
            && provided.origin.contains(&cache.display().to_string()),
        "{}",
        provided.origin
    );

    let ir = NvvmIr::handwritten(bridge_abi_kernel(&symbols::BRIDGE_2_28));
    let (linked, _, _) = link_nvvm_ir(
        toolchain,
        "probe",
        &ir,
        Arch::SM_90,
        &CompileOptions::default(),
        &[&NCCL],
        true,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let ptx = linked.ptx.unwrap();
    for f in BRIDGE_CALLED {
        let symbol = symbols::BRIDGE_2_28.get(*f).unwrap().symbol;
        assert!(!ptx.contains(symbol), "{symbol} left in the PTX");
    }
    assert_eq!(call_targets(&ptx), Vec::<String>::new(), "calls left");
    let _ = std::fs::remove_dir_all(&cache);
}
