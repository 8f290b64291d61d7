//! The NCCL device-library provider against the real libraries, on the CPU: a kernel in
//! NVVM IR calling the LSA pointer, team and LSA barrier functions is compiled by libNVVM
//! (`-gen-lto`), linked by nvJitLink (`-lto`) with the 2.32.3 wheel's
//! `libnccl_device.ltoir` and with the 2.28.3 bridge built by nvcc, and the linked PTX
//! must contain the kernel and no call to any of those functions (LTO inlined them).
//! A kernel calling a symbol the library lacks must fail with the provider's error.
//!
//! Needs NCCL wheels and CUDA headers from fetch-wheels.sh and the compiler wheels of
//! scripts/test.sh; skips (or, under CUDAJIT_REQUIRE_TOOLCHAIN=1, fails) without them.

mod common;

use std::time::Instant;

use cudajit_codegen::toolchain::{InputKind, LinkInput, NvvmModule, Toolchain};
use cudajit_codegen::Arch;
use cudajit_core::external::LibraryKind;
use cudajit_nccl::device_code::{
    bridge, shim, symbols, ApiFunction as F, DeviceCode, DeviceCodeError, Nvcc, Provenance,
};
use cudajit_nccl::discover::{locate, SearchEnv as NcclEnv};
use cudajit_nccl::NcclVersion;

use common::probe::{
    bridge_abi_kernel, call_targets, gin_abi_kernel, trailer, BRIDGE_CALLED, HEADER,
};

const ARCH: Arch = Arch::SM_90;

/// A kernel over the 2.28 bridge's C ABI: pointers and scalars only.
fn bridge_kernel(lib: &DeviceCode) -> String {
    bridge_abi_kernel(lib.symbols)
}

/// libNVVM `-gen-lto` of one module.
fn lto_ir(toolchain: &Toolchain, ir: &str) -> Vec<u8> {
    let nvvm = toolchain.nvvm().expect("libNVVM loads");
    let options = [format!("-arch={}", ARCH.compute_name()), "-gen-lto".into()];
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    nvvm.compile(&[NvvmModule::new("probe.ll", ir.as_bytes())], &options)
        .unwrap_or_else(|e| panic!("libNVVM rejected the probe kernel: {e}\n{ir}"))
        .result
}

struct Setup {
    toolchain: Toolchain,
    tools_env: cudajit_codegen::toolchain::SearchEnv,
}

fn setup() -> Option<Setup> {
    let tools_env = common::tools_env();
    match Toolchain::discover(&tools_env) {
        Ok(toolchain) => Some(Setup {
            toolchain,
            tools_env,
        }),
        Err(e) => {
            common::skip(&format!("no libNVVM/nvJitLink ({e})"));
            None
        }
    }
}

/// The installation of a cached wheel release and its version.
fn installation(version: &str) -> Option<(cudajit_nccl::discover::Installation, NcclVersion)> {
    let Some(dir) = common::release_dir(version) else {
        common::skip(&format!(
            "no NCCL {version} in {}",
            common::cache_root().display()
        ));
        return None;
    };
    let env = NcclEnv::isolated([("CUDAJIT_NCCL_LIBRARY", dir.join("lib/libnccl.so.2"))]);
    let inst = locate(&env).expect("the cached release is a complete installation");
    let v = NcclVersion::from_header(&inst.header().expect("headers beside the library"))
        .expect("nccl.h parses");
    Some((inst, v))
}

/// Checks the linked PTX: it has the kernel, none of `called` survives (an inlined
/// function whose address is not taken vanishes from the module: no definition,
/// declaration or call), and every call left satisfies `allowed`.
fn assert_inlined(ptx: &str, lib: &DeviceCode, called: &[F], allowed: impl Fn(&str) -> bool) {
    let symbols: Vec<&str> = called.iter().map(|f| lib.symbol(*f).unwrap()).collect();
    assert_symbols_inlined(ptx, &lib.version.to_string(), &symbols, allowed);
}

/// [`assert_inlined`] for linker symbols; `label` names the PTX file kept under
/// `CUDAJIT_NCCL_TEST_PTX_DIR`.
fn assert_symbols_inlined(ptx: &str, label: &str, called: &[&str], allowed: impl Fn(&str) -> bool) {
    // For reading what LTO made of the calls: CUDAJIT_NCCL_TEST_PTX_DIR=<dir>.
    if let Some(dir) = std::env::var_os("CUDAJIT_NCCL_TEST_PTX_DIR") {
        let file = std::path::Path::new(&dir).join(format!("probe-{label}.ptx"));
        std::fs::write(&file, ptx).unwrap();
    }
    assert!(
        ptx.contains(".entry probe"),
        "the linked PTX lacks the kernel:\n{ptx}"
    );
    for symbol in called {
        assert!(
            !ptx.contains(symbol),
            "{symbol} was not inlined: it is still in the linked PTX"
        );
    }
    let calls = call_targets(ptx);
    let unexpected: Vec<&String> = calls.iter().filter(|t| !allowed(t)).collect();
    assert!(
        unexpected.is_empty(),
        "calls left in the linked PTX: {unexpected:?}"
    );
}

#[test]
fn bridge_2_28_links_and_inlines() {
    let Some(setup) = setup() else { return };
    let Some((inst, version)) = installation("2.28.3") else {
        return;
    };
    let cache = std::env::temp_dir().join(format!("cudajit-nccl-bridge-{}", std::process::id()));
    let mut vars: Vec<(String, std::ffi::OsString)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v)))
        .filter(|(k, _)| k != "CUDAJIT_CACHE" && k != "CUDAJIT_CACHE_DIR")
        .collect();
    vars.push(("CUDAJIT_CACHE_DIR".into(), cache.clone().into()));
    if let Some(tools) = setup.tools_env.var("CUDAJIT_TOOLS_DIR") {
        vars.push(("CUDAJIT_TOOLS_DIR".into(), tools.to_owned()));
    }
    let env = cudajit_codegen::toolchain::SearchEnv::from_pairs(vars);

    let started = Instant::now();
    let lib = match DeviceCode::provide(&inst, version, ARCH, &env) {
        Err(e @ DeviceCodeError::NvccNotFound { .. })
        | Err(e @ DeviceCodeError::CudaHeadersNotFound { .. }) => {
            common::skip(&e.to_string());
            return;
        }
        other => other.expect("the 2.28.3 bridge builds"),
    };
    let cold = started.elapsed();
    assert_eq!(lib.provenance, Provenance::Bridge);
    assert_eq!(lib.kind, InputKind::Fatbin);
    assert!(
        lib.path.starts_with(&cache),
        "bridge not in the cache: {}",
        lib.path.display()
    );

    // Same key: the cached fatbin, no nvcc run.
    let started = Instant::now();
    let again = DeviceCode::provide(&inst, version, ARCH, &env).unwrap();
    let warm = started.elapsed();
    assert_eq!(again.path, lib.path);
    // Another architecture is another entry.
    let sm80 = DeviceCode::provide(&inst, version, Arch::SM_80, &env).unwrap();
    assert_ne!(sm80.path, lib.path);

    let kernel = lto_ir(&setup.toolchain, &bridge_kernel(&lib));
    let nvjitlink = setup.toolchain.nvjitlink().unwrap();
    let started = Instant::now();
    let linked = lib
        .link(
            nvjitlink,
            &[LinkInput {
                name: "probe.ltoir",
                kind: InputKind::LtoIr,
                bytes: &kernel,
            }],
            ARCH,
            true,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let link = started.elapsed();
    eprintln!(
        "NCCL 2.28.3 bridge: nvcc build {cold:?}, cached lookup {warm:?}, nvJitLink (cubin + PTX) {link:?}"
    );
    assert!(!linked.cubin.is_empty());
    // The bridge instantiates NCCL's templates with ncclCoopCta: nothing is left to call.
    assert_inlined(linked.ptx.as_deref().unwrap(), &lib, BRIDGE_CALLED, |_| {
        false
    });

    // The bridge checks ncclDevComm's size against the host bindings: a wrong one is
    // refused by nvcc, with the command and the assertion in our error.
    let nvcc = Nvcc::locate(&env).unwrap();
    let include = inst.include_dir.as_deref().unwrap();
    let real = cudajit_nccl::sys::layout::select(version)
        .unwrap()
        .generation
        .dev_comm
        .size;
    let err = bridge::build(&nvcc, include, version, ARCH, Some(real + 8), &cache)
        .expect_err("a wrong ncclDevComm size must not compile");
    let text = err.to_string();
    assert!(
        matches!(err, DeviceCodeError::BridgeCompile { .. })
            && text.contains("differs from the host bindings")
            && text.contains(&format!("-DCUDAJIT_DEV_COMM_BYTES={}", real + 8)),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&cache);
}

/// A kernel over the 2.32.3 `.ltoir`'s C++ ABI. Class-type arguments travel as LLVM
/// aggregates by value, as NVVM's C++ front end passes them (`ncclCoopAny` 24 bytes,
/// `ncclTeam` 12, `ncclLsaBarrierHandle` 8, `ncclMultimemHandle` 8); references and
/// `this`-like session pointers are pointers; `bool` is `i1 zeroext`.
fn ltoir_kernel(lib: &DeviceCode) -> String {
    let s = |f| lib.symbol(f).unwrap();
    // 2.31's library has no session destroy (see symbols::LTOIR_2_31).
    let (destroy_call, destroy_decl) = match lib.symbol(F::LsaBarrierDestroy) {
        Ok(d) => (
            format!("call void @{d}(%session* %sp)"),
            format!("declare void @{d}(%session*)"),
        ),
        Err(_) => (String::new(), String::new()),
    };
    format!(
        "{HEADER}
%coop_storage = type {{ [16 x i8] }}
%coop_vtable = type {{ i32 (i8*)*, i32 (i8*)*, void (i8*)* }}
%coop = type {{ %coop_storage, %coop_vtable* }}
%team = type {{ i32, i32, i32 }}
%bar = type {{ i32, i32 }}
%mm = type {{ i8* }}
%comm = type opaque
%session = type opaque

define void @probe(%comm* %c, i8* %window, float** %out, i32* %ranks) {{
entry:
  %coop_slot = alloca %coop, align 8
  %storage = alloca [256 x i8], align 16
  %sp = bitcast [256 x i8]* %storage to %session*
  call void @{coop_init}(%coop* %coop_slot)
  %coop = load %coop, %coop* %coop_slot, align 8
  %lsa_rank = call i32 @{lsa_rank}(%comm* %c)
  %lsa_size = call i32 @{lsa_size}(%comm* %c)
  %rank = call i32 @{rank}(%comm* %c)
  %nranks = call i32 @{nranks}(%comm* %c)
  %t0 = insertvalue %team undef, i32 %lsa_size, 0
  %t1 = insertvalue %team %t0, i32 %lsa_rank, 1
  %team = insertvalue %team %t1, i32 1, 2
  %handle = call %bar @{handle}(%comm* %c)
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  call void @{init}(%session* %sp, %coop %coop, %comm* %c, %team %team, %bar %handle, i32 %cta, i8 0, %mm zeroinitializer)
  call void @{arrive}(%session* %sp, %coop %coop, i32 0)
  call void @{wait}(%session* %sp, %coop %coop, i32 2)
  call void @{sync}(%session* %sp, %coop %coop, i32 3)
  {destroy_call}
  %next0 = add i32 %lsa_rank, 1
  %next = srem i32 %next0, %lsa_size
  %world = call i32 @{to_world}(%comm* %c, %team %team, i32 %next)
  %p = call i8* @{lsa_pointer}(i8* %window, i64 64, i32 %next)
  %q = call i8* @{peer_pointer}(i8* %window, i64 64, i32 %world)
  %pf = bitcast i8* %p to float*
  %qf = bitcast i8* %q to float*
  store float* %pf, float** %out
  %out1 = getelementptr float*, float** %out, i64 1
  store float* %qf, float** %out1
  %sum0 = add i32 %rank, %nranks
  %sum = add i32 %sum0, %world
  store i32 %sum, i32* %ranks
  ret void
}}
declare void @{coop_init}(%coop*)
declare %bar @{handle}(%comm*)
declare void @{init}(%session*, %coop, %comm*, %team, %bar, i32, i8, %mm)
declare void @{arrive}(%session*, %coop, i32)
declare void @{wait}(%session*, %coop, i32)
declare void @{sync}(%session*, %coop, i32)
{destroy_decl}
declare i32 @{lsa_rank}(%comm*)
declare i32 @{lsa_size}(%comm*)
declare i32 @{rank}(%comm*)
declare i32 @{nranks}(%comm*)
declare i32 @{to_world}(%comm*, %team, i32)
declare i8* @{lsa_pointer}(i8*, i64, i32)
declare i8* @{peer_pointer}(i8*, i64, i32)
{trailer}",
        coop_init = s(F::CoopInitCta),
        handle = s(F::LsaBarrierHandle),
        init = s(F::LsaBarrierInit),
        arrive = s(F::LsaBarrierArrive),
        wait = s(F::LsaBarrierWait),
        sync = s(F::LsaBarrierSync),
        lsa_rank = s(F::LsaRank),
        lsa_size = s(F::LsaSize),
        rank = s(F::Rank),
        nranks = s(F::NRanks),
        to_world = s(F::LsaRankToWorld),
        lsa_pointer = s(F::LsaPointer),
        peer_pointer = s(F::PeerPointer),
        trailer = trailer("void (%comm*, i8*, float**, i32*)*"),
    )
}

/// The nvJitLink that reads the 2.31+ `.ltoir` (fetch-wheels.sh caches it), unless
/// `CUDAJIT_NVJITLINK` already names one.
fn toolchain_for_ltoir(setup: &Setup) -> Option<Toolchain> {
    if std::env::var_os("CUDAJIT_NVJITLINK").is_some() {
        return Some(Toolchain::discover(&setup.tools_env).unwrap());
    }
    let lib = common::cache_root().join("nvjitlink-13.5.37/nvidia/cu13/lib/libnvJitLink.so.13");
    if !lib.is_file() {
        common::skip(&format!(
            "no {} (fetch-wheels.sh 2.32.3 fetches it)",
            lib.display()
        ));
        return None;
    }
    let mut vars: Vec<(String, std::ffi::OsString)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v)))
        .collect();
    if let Some(tools) = setup.tools_env.var("CUDAJIT_TOOLS_DIR") {
        vars.push(("CUDAJIT_TOOLS_DIR".into(), tools.to_owned()));
    }
    vars.push(("CUDAJIT_NVJITLINK".into(), lib.into()));
    let env = cudajit_codegen::toolchain::SearchEnv::from_pairs(vars);
    Some(Toolchain::discover(&env).unwrap())
}

/// Releases whose `.ltoir` the link test covers: 2.32.3, or `CUDAJIT_NCCL_LTOIR_VERSIONS`.
fn ltoir_versions() -> Vec<String> {
    std::env::var("CUDAJIT_NCCL_LTOIR_VERSIONS")
        .unwrap_or_else(|_| "2.32.3".into())
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

fn ltoir_of(setup: &Setup, release: &str) -> Option<DeviceCode> {
    let (inst, version) = installation(release)?;
    if inst.device_library.is_none() {
        common::skip(&format!(
            "the cached {release} lacks libnccl_device.ltoir (rerun fetch-wheels.sh {release})"
        ));
        return None;
    }
    let lib = DeviceCode::provide(&inst, version, ARCH, &setup.tools_env).unwrap();
    assert_eq!(lib.provenance, Provenance::Shipped);
    assert_eq!(lib.kind, InputKind::LtoIr);
    assert!(!lib.bytes().is_empty(), "an empty .ltoir");
    Some(lib)
}

#[test]
fn ltoir_links_and_inlines() {
    let Some(setup) = setup() else { return };
    let Some(toolchain) = toolchain_for_ltoir(&setup) else {
        return;
    };
    for release in ltoir_versions() {
        let Some(lib) = ltoir_of(&setup, &release) else {
            continue;
        };
        link_ltoir_and_check(&setup, &toolchain, &lib);
    }
}

fn link_ltoir_and_check(setup: &Setup, toolchain: &Toolchain, lib: &DeviceCode) {
    let kernel = lto_ir(&setup.toolchain, &ltoir_kernel(lib));
    let mut called: Vec<F> = BRIDGE_CALLED
        .iter()
        .copied()
        .filter(|f| lib.symbol(*f).is_ok())
        .collect();
    called.extend([F::CoopInitCta, F::LsaBarrierHandle]);
    let nvjitlink = toolchain.nvjitlink().unwrap();
    let started = Instant::now();
    let linked = lib
        .link(
            nvjitlink,
            &[LinkInput {
                name: "probe.ltoir",
                kind: InputKind::LtoIr,
                bytes: &kernel,
            }],
            ARCH,
            true,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "NCCL {} .ltoir ({} bytes), nvJitLink {:?}: cubin + PTX {:?}",
        lib.version,
        lib.bytes().len(),
        nvjitlink.version(),
        started.elapsed()
    );
    assert!(!linked.cubin.is_empty());
    // The .ltoir's barrier takes a type-erased ncclCoopAny whose vtable is a mutable
    // static, so LTO cannot resolve its thread_rank/size/sync: those calls (direct to
    // `ncclCoopAny::*<ncclCoopCta>`, or through a register) are NCCL's and stay.
    let ptx = linked.ptx.as_deref().unwrap();
    assert_inlined(ptx, lib, &called, |t| {
        t.starts_with('%') || t.starts_with("_ZN11ncclCoopAny")
    });
    eprintln!(
        "NCCL {} .ltoir: {} ncclCoopAny calls left after LTO",
        lib.version,
        call_targets(ptx).len()
    );
}

#[test]
fn an_nvjitlink_older_than_the_ltoir_is_our_error() {
    let Some(setup) = setup() else { return };
    let nvjitlink = setup.toolchain.nvjitlink().unwrap();
    if nvjitlink.version() != (13, 0) {
        // Not a missing prerequisite: a newer default nvJitLink simply reads the .ltoir.
        eprintln!(
            "SKIPPED: the default nvJitLink is {:?}, not the 13.0 that cannot read the 2.32.3 .ltoir",
            nvjitlink.version()
        );
        return;
    }
    let Some(lib) = ltoir_of(&setup, "2.32.3") else {
        return;
    };
    let kernel = lto_ir(&setup.toolchain, &ltoir_kernel(&lib));
    let input = LinkInput {
        name: "probe.ltoir",
        kind: InputKind::LtoIr,
        bytes: &kernel,
    };
    let err = lib
        .link(nvjitlink, &[input], ARCH, false)
        .expect_err("nvJitLink 13.0 cannot read 2.32.3's LTO-IR");
    let DeviceCodeError::NvJitLinkTooOld {
        nvjitlink_version, ..
    } = &err
    else {
        panic!("expected NvJitLinkTooOld, got: {err}");
    };
    assert_eq!(nvjitlink_version, "13.0");
    let text = err.to_string();
    for needle in [
        "NCCL 2.32.3",
        "libnccl_device.ltoir",
        "Fix:",
        "CUDAJIT_NVJITLINK",
    ] {
        assert!(text.contains(needle), "`{needle}` missing from: {text}");
    }
}

/// The bridge kernel with one more call, to `symbol`, which the bridge does not define.
fn kernel_calling(lib: &DeviceCode, symbol: &str) -> String {
    bridge_kernel(lib)
        .replace(
            "  ret void\n",
            &format!("  %extra = call i8* @{symbol}(i8* %window, i64 0, i32 0)\n  store i8 0, i8* %extra\n  ret void\n"),
        )
        .replacen(
            "declare void @",
            &format!("declare i8* @{symbol}(i8*, i64, i32)\ndeclare void @"),
            1,
        )
}

#[test]
fn a_symbol_the_library_lacks_is_named_in_our_error() {
    let Some(setup) = setup() else { return };
    let Some((inst, version)) = installation("2.28.3") else {
        return;
    };
    let lib = match DeviceCode::provide(&inst, version, ARCH, &setup.tools_env) {
        Err(e @ DeviceCodeError::NvccNotFound { .. })
        | Err(e @ DeviceCodeError::CudaHeadersNotFound { .. }) => {
            common::skip(&e.to_string());
            return;
        }
        other => other.expect("the 2.28.3 bridge builds"),
    };
    // A plausible bridge name for a function the 2.28 bridge does not have (GIN arrived
    // in 2.28.9). Not a C++-mangled NCCL name: the bridge's LTO-IR also carries the
    // inline functions of nccl_device.h it instantiated, under their mangled names.
    let absent = "cudajit_nccl_gin_put";
    let kernel = lto_ir(&setup.toolchain, &kernel_calling(&lib, absent));
    let err = lib
        .link(
            setup.toolchain.nvjitlink().unwrap(),
            &[LinkInput {
                name: "probe.ltoir",
                kind: InputKind::LtoIr,
                bytes: &kernel,
            }],
            ARCH,
            false,
        )
        .expect_err("a call to an undefined symbol must not link");
    let DeviceCodeError::MissingSymbols { missing, path, .. } = &err else {
        panic!("expected MissingSymbols, got: {err}");
    };
    assert_eq!(missing.len(), 1, "{err}");
    assert_eq!(missing[0].symbol, absent);
    // The shim's GIN table names it: GIN is only over the 2.32+ .ltoir.
    assert_eq!(missing[0].function.as_deref(), Some("gin_put"));
    assert_eq!(path, &lib.path);
    let text = err.to_string();
    for needle in [
        "device function `gin_put` (symbol `cudajit_nccl_gin_put`; GIN is provided only by \
         NCCL 2.32+'s libnccl_device.ltoir",
        "NCCL 2.28.3",
        &lib.path.display().to_string(),
        "cudajit bridge over NCCL 2.28",
        "Fix:",
    ] {
        assert!(text.contains(needle), "`{needle}` missing from: {text}");
    }
}

/// Links the bridge-ABI kernel `ir` with `lib`'s shim and `lib` (a `.ltoir`).
fn link_through_shim(
    setup: &Setup,
    toolchain: &Toolchain,
    lib: &DeviceCode,
    ir: &str,
    want_ptx: bool,
) -> Result<cudajit_codegen::toolchain::Linked, Box<DeviceCodeError>> {
    let kernel = lto_ir(&setup.toolchain, ir);
    let shim = lib
        .shim(&setup.toolchain, ARCH)
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("a .ltoir has a shim");
    let inputs = [
        LinkInput {
            name: "probe.ltoir",
            kind: InputKind::LtoIr,
            bytes: &kernel,
        },
        LinkInput {
            name: "cudajit_nccl_shim.ltoir",
            kind: InputKind::LtoIr,
            bytes: &shim,
        },
    ];
    lib.link(toolchain.nvjitlink().unwrap(), &inputs, ARCH, want_ptx)
        .map_err(Box::new)
}

/// The bridge kernel (the `cudajit_nccl_*` C ABI) links against the `.ltoir` through the
/// shim, and LTO leaves no call to the bridge functions nor to the `.ltoir` functions the
/// shim calls: only NCCL's own ncclCoopAny calls remain, as with a C++-ABI kernel.
#[test]
fn the_bridge_abi_links_against_the_ltoir_through_the_shim() {
    let Some(setup) = setup() else { return };
    let Some(toolchain) = toolchain_for_ltoir(&setup) else {
        return;
    };
    for release in ltoir_versions() {
        let Some(lib) = ltoir_of(&setup, &release) else {
            continue;
        };
        if lib.symbol(F::LsaBarrierDestroy).is_err() {
            continue; // 2.31: see the_2_31_shim_leaves_the_session_destroy_undefined
        }
        let started = Instant::now();
        let linked = link_through_shim(
            &setup,
            &toolchain,
            &lib,
            &bridge_abi_kernel(&symbols::BRIDGE_2_28),
            true,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        eprintln!(
            "NCCL {} .ltoir through the shim: libNVVM + nvJitLink (cubin + PTX) {:?}",
            lib.version,
            started.elapsed()
        );
        assert!(!linked.cubin.is_empty());
        let mut gone: Vec<&str> = BRIDGE_CALLED
            .iter()
            .map(|f| symbols::BRIDGE_2_28.get(*f).unwrap().symbol)
            .collect();
        gone.extend(
            BRIDGE_CALLED
                .iter()
                .chain(&[F::CoopInitCta, F::LsaBarrierHandle])
                .map(|f| lib.symbol(*f).unwrap()),
        );
        let ptx = linked.ptx.as_deref().unwrap();
        assert_symbols_inlined(ptx, &format!("shim-{}", lib.version), &gone, |t| {
            t.starts_with('%') || t.starts_with("_ZN11ncclCoopAny")
        });
        assert!(
            !ptx.contains("cudajit_nccl"),
            "a shim function survived LTO"
        );

        // As a cudajit_core DeviceLibrary takes it: the shim, then the .ltoir.
        let provided = lib.parts(&setup.toolchain, ARCH).unwrap();
        assert_eq!(provided.parts.len(), 2);
        assert_eq!(provided.parts[0].kind, LibraryKind::LtoIr);
        assert_eq!(provided.parts[1].kind, LibraryKind::LtoIr);
        assert_eq!(provided.parts[1].bytes, lib.bytes());
        assert_eq!(provided.parts[1].name, "libnccl_device.ltoir");
        for needle in [
            lib.version.to_string(),
            lib.path.display().to_string(),
            "shim".to_owned(),
        ] {
            assert!(
                provided.origin.contains(&needle),
                "`{needle}` missing from {}",
                provided.origin
            );
        }
    }
}

/// The 2.31 `.ltoir` has no session destroy: the shim leaves
/// `cudajit_nccl_lsa_barrier_destroy` undefined, so the bridge kernel fails to link with
/// that function named, and links once it no longer ends its session.
#[test]
fn the_2_31_shim_leaves_the_session_destroy_undefined() {
    if common::release_dir("2.31.2").is_none() {
        // Not a prerequisite of the test suite (fetch-wheels.sh 2.31.2 fetches it).
        eprintln!("SKIPPED: no NCCL 2.31.2 cached (fetch-wheels.sh 2.31.2)");
        return;
    }
    let Some(setup) = setup() else { return };
    let Some(toolchain) = toolchain_for_ltoir(&setup) else {
        return;
    };
    let Some(lib) = ltoir_of(&setup, "2.31.2") else {
        return;
    };
    let kernel = bridge_abi_kernel(&symbols::BRIDGE_2_28);
    let err = link_through_shim(&setup, &toolchain, &lib, &kernel, false)
        .expect_err("2.31 has no session destroy");
    let DeviceCodeError::MissingSymbols { missing, .. } = &*err else {
        panic!("expected MissingSymbols, got: {err}");
    };
    assert_eq!(missing.len(), 1, "{err}");
    assert_eq!(missing[0].symbol, "cudajit_nccl_lsa_barrier_destroy");
    assert_eq!(missing[0].function.as_deref(), Some("lsa_barrier_destroy"));

    let destroy = "  call void @cudajit_nccl_lsa_barrier_destroy(i8* %sp)\n";
    assert!(kernel.contains(destroy));
    let linked = link_through_shim(&setup, &toolchain, &lib, &kernel.replace(destroy, ""), true)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!linked.ptx.unwrap().contains("cudajit_nccl"));
    let origin = lib.parts(&setup.toolchain, ARCH).unwrap().origin;
    assert!(
        origin.contains("no LSA barrier session destroy"),
        "{origin}"
    );
}

/// The `.ltoir`'s `ncclLsaBarrierSession_C` is the size `shim_ltoir.ll` builds sessions
/// of: a kernel storing `ncclLsaBarrierSession_C_size()` is linked and LTO folds the call
/// to a constant in the PTX.
#[test]
fn the_ltoir_session_has_the_size_the_shim_assumes() {
    let Some(setup) = setup() else { return };
    let Some(toolchain) = toolchain_for_ltoir(&setup) else {
        return;
    };
    let mut releases = ltoir_versions();
    if common::release_dir("2.31.2").is_some() && !releases.iter().any(|r| r == "2.31.2") {
        releases.push("2.31.2".into());
    }
    for release in releases {
        let Some(lib) = ltoir_of(&setup, &release) else {
            continue;
        };
        let size = shim::LTOIR_SESSION_SIZE_SYMBOL;
        let ir = format!(
            "{HEADER}
define void @probe(i64* %out) {{
entry:
  %size = call i64 @{size}()
  store i64 %size, i64* %out
  ret void
}}
declare i64 @{size}()
@llvm.used = appending global [1 x i8*] [i8* bitcast (void (i64*)* @probe to i8*)], section \"llvm.metadata\"
!nvvm.annotations = !{{!0}}
!0 = !{{void (i64*)* @probe, !\"kernel\", i32 1}}
!nvvmir.version = !{{!1}}
!1 = !{{i32 2, i32 0}}
"
        );
        let kernel = lto_ir(&setup.toolchain, &ir);
        let linked = lib
            .link(
                toolchain.nvjitlink().unwrap(),
                &[LinkInput {
                    name: "probe.ltoir",
                    kind: InputKind::LtoIr,
                    bytes: &kernel,
                }],
                ARCH,
                true,
            )
            .unwrap_or_else(|e| panic!("{e}"));
        let ptx = linked.ptx.unwrap();
        assert!(
            !ptx.contains(size),
            "the size getter was not inlined:\n{ptx}"
        );
        let expected = shim::LTOIR_LSA_BARRIER_SESSION_BYTES;
        let stored: Vec<&str> = ptx
            .lines()
            .filter(|l| l.contains(&format!(", {expected};")))
            .collect();
        assert!(
            !stored.is_empty(),
            "NCCL {release}: no constant {expected} in the PTX of the size probe:\n{ptx}"
        );
        eprintln!("NCCL {release}: ncclLsaBarrierSession_C is {expected} bytes: {stored:?}");
    }
}

/// A kernel calling every GIN function of the shim's C ABI (put with and without a
/// signal, signal, flush, wait, read, reset) links against the 2.32+ `.ltoir` through the
/// shim, on the CPU (no NIC needed), and LTO leaves no call of the shim's GIN functions nor
/// of the `.ltoir`'s GIN entry points; what remains is listed.
#[test]
fn gin_links_against_the_ltoir_through_the_shim() {
    let Some(setup) = setup() else { return };
    let Some(toolchain) = toolchain_for_ltoir(&setup) else {
        return;
    };
    for release in ltoir_versions() {
        let Some(lib) = ltoir_of(&setup, &release) else {
            continue;
        };
        if lib.symbol(F::GinPut).is_err() {
            continue; // 2.31: see the_2_31_shim_has_no_gin
        }
        let started = Instant::now();
        let linked = link_through_shim(&setup, &toolchain, &lib, &gin_abi_kernel(), true)
            .unwrap_or_else(|e| panic!("{e}"));
        eprintln!(
            "NCCL {} .ltoir, GIN through the shim: libNVVM + nvJitLink (cubin + PTX) {:?}",
            lib.version,
            started.elapsed()
        );
        assert!(!linked.cubin.is_empty());
        let ptx = linked.ptx.as_deref().unwrap();
        let mut gone: Vec<&str> = symbols::SHIM_GIN.entries.iter().map(|e| e.symbol).collect();
        gone.extend(symbols::LTOIR_GIN_ENTRIES.iter().map(|e| e.symbol));
        gone.extend([F::Rank, F::NRanks].map(|f| lib.symbol(f).unwrap()));
        let calls = call_targets(ptx);
        eprintln!(
            "NCCL {}: calls left in the GIN probe's PTX: {calls:?}",
            lib.version
        );
        assert_symbols_inlined(
            ptx,
            &format!("gin-{}", lib.version),
            &gone,
            gin_call_allowed,
        );
        assert!(
            !ptx.contains("cudajit_nccl"),
            "a shim function survived LTO"
        );
    }
}

/// Calls a linked GIN kernel may keep: indirect calls (`ncclCoopAny`'s vtable) and NCCL's
/// internal, non-API functions (`ncclCoopAny` methods, printf/assert of its error paths).
fn gin_call_allowed(target: &str) -> bool {
    target.starts_with('%')
        || target.starts_with("_ZN11ncclCoopAny")
        || target == "vprintf"
        || target == "__assertfail"
}

/// The 2.31 `.ltoir` has no GIN in our table: the shim leaves the `cudajit_nccl_gin_*`
/// functions out and a GIN kernel fails to link naming them.
#[test]
fn the_2_31_shim_has_no_gin() {
    if common::release_dir("2.31.2").is_none() {
        eprintln!("SKIPPED: no NCCL 2.31.2 cached (fetch-wheels.sh 2.31.2)");
        return;
    }
    let Some(setup) = setup() else { return };
    let Some(toolchain) = toolchain_for_ltoir(&setup) else {
        return;
    };
    let Some(lib) = ltoir_of(&setup, "2.31.2") else {
        return;
    };
    let err = link_through_shim(&setup, &toolchain, &lib, &gin_abi_kernel(), false)
        .expect_err("2.31 has no GIN in the shim");
    let DeviceCodeError::MissingSymbols { missing, .. } = &*err else {
        panic!("expected MissingSymbols, got: {err}");
    };
    let names: Vec<&str> = missing
        .iter()
        .filter_map(|m| m.function.as_deref())
        .collect();
    assert!(names.contains(&"gin_put"), "{err}");
    assert!(
        err.to_string()
            .contains("GIN is provided only by NCCL 2.32+"),
        "{err}"
    );
    let origin = lib.parts(&setup.toolchain, ARCH).unwrap().origin;
    assert!(origin.contains("cudajit_nccl_gin_*"), "{origin}");
}
