//! NCCL's device API in `#[kernel]`s, on the CPU: the kernels of the LSA examples lowered
//! to NVVM IR, then linked by nvJitLink against the device library of a real NCCL
//! release (the 2.28.3 wheel, the release of the GPU machine: cudajit's bridge built by
//! nvcc over its headers), with every NCCL call inlined and the barrier session and
//! communicator kept out of local memory.
//!
//! Needs the compiler wheels of scripts/test.sh and the NCCL wheels of
//! nccl-device/scripts/fetch-wheels.sh; skips without them (fails under
//! `CUDAJIT_REQUIRE_TOOLCHAIN=1`).

mod common;

#[path = "../examples/lsa/kernels.rs"]
mod kernels;

use std::path::PathBuf;
use std::sync::OnceLock;

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::{Arch, Specialization};

const RELEASE: &str = "2.28.3";

/// Points `LoadedNccl::global()` at the cached 2.28.3 wheel (once, before anything loads NCCL);
/// `None` after printing why the test is skipped.
fn nccl_or_skip() -> Option<()> {
    static READY: OnceLock<Result<(), String>> = OnceLock::new();
    common::toolchain_or_skip()?;
    let ready = READY.get_or_init(|| {
        let root = std::env::var_os("CUDAJIT_NCCL_HEADERS_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                    .join(".cache/cudajit-tools/nccl")
            })
            .join(RELEASE);
        if !root.join(".complete").is_file() {
            return Err(format!(
                "no NCCL {RELEASE} wheel in {} (nccl-device/scripts/fetch-wheels.sh)",
                root.display()
            ));
        }
        // SAFETY: set once, before any thread of this process reads it (all reads go
        // through this OnceLock first).
        unsafe {
            std::env::set_var(
                "CUDAJIT_NCCL_LIBRARY",
                root.join("nvidia/nccl/lib/libnccl.so.2"),
            )
        };
        Ok(())
    });
    match ready {
        Ok(()) => Some(()),
        Err(e) if std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() == Ok("1") => {
            panic!("CUDAJIT_REQUIRE_TOOLCHAIN=1 but {e}")
        }
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// The linked PTX of a kernel: no call into NCCL or a helper may remain, and nothing may
/// live in local memory (the session and the communicator stay in registers and
/// parameters).
fn check_inlined(name: &str, ptx: &str) {
    assert!(ptx.contains(&format!(".entry {name}")), "{ptx}");
    assert!(
        !ptx.contains("cudajit_nccl_"),
        "an NCCL call was not inlined:\n{ptx}"
    );
    // The only functions left are the device-side assertion's report (`assert!` on the
    // LSA team size, a cold path): every NCCL and helper call is inlined.
    for line in ptx.lines().filter(|l| l.contains(".func")) {
        assert!(
            line.contains("vprintf") || line.contains("__assertfail"),
            "a function call remains ({line}):\n{ptx}"
        );
    }
    assert!(!ptx.contains("__local_depot"), "local memory used:\n{ptx}");
}

#[test]
fn nvvm_ir_passes_comm_session_and_window_as_c_does() {
    let ir = kernels::peer_read::KERNEL
        .nvvm_ir()
        .expect("lowering peer_read");
    for needle in [
        "declare i32 @cudajit_nccl_lsa_rank(i8*)",
        "declare void @cudajit_nccl_lsa_barrier_init(i8*, i8*, i32)",
        "declare void @cudajit_nccl_lsa_barrier_sync(i8*, i32)",
        "declare i64 @cudajit_nccl_lsa_pointer(i64, i64, i32)",
        "byval align 16",
    ] {
        assert!(ir.contains(needle), "{needle} not in:\n{ir}");
    }
}

/// Whether `ptx` has a 16-byte vector access `op` (`ld.global`, `st.global`; `.nc` too).
fn sixteen_byte(ptx: &str, op: &str) -> bool {
    ptx.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with(op)
            && [
                ".v4.f32", ".v4.u32", ".v4.b32", ".v4.s32", ".v2.u64", ".v2.f64",
            ]
            .iter()
            .any(|v| line.contains(v))
    })
}

fn spec(ty: Option<cudajit::core::Scalar>) -> Specialization {
    Specialization {
        types: ty.map(|t| ("T".to_owned(), t)).into_iter().collect(),
        structs: Vec::new(),
        consts: Vec::new(),
    }
}

#[test]
fn the_example_kernels_link_against_the_bridge_with_every_call_inlined() {
    use cudajit::core::Scalar;
    let Some(()) = nccl_or_skip() else {
        return;
    };
    let kernels = [
        (kernels::peer_read::KERNEL.captured(), None),
        (kernels::peer_read_warps::KERNEL.captured(), None),
        (kernels::peer_read_warp_spans::KERNEL.captured(), None),
        (kernels::peer_read_half_warps::KERNEL.captured(), None),
        (kernels::peer_read_threads::KERNEL.captured(), None),
        (
            kernels::all_reduce_one_shot::KERNEL.captured(),
            Some(Scalar::F32),
        ),
        (
            kernels::all_reduce_one_shot::KERNEL.captured(),
            Some(Scalar::I32),
        ),
        (
            kernels::all_reduce_two_shot::KERNEL.captured(),
            Some(Scalar::F32),
        ),
        (
            kernels::all_reduce_two_shot::KERNEL.captured(),
            Some(Scalar::I32),
        ),
        (kernels::all_reduce_one_shot_bf16::KERNEL.captured(), None),
        (kernels::all_reduce_two_shot_bf16::KERNEL.captured(), None),
        (kernels::all_gather::KERNEL.captured(), Some(Scalar::F32)),
        (
            kernels::all_reduce_two_shot_push::KERNEL.captured(),
            Some(Scalar::F32),
        ),
        (kernels::all_to_all::KERNEL.captured(), Some(Scalar::I32)),
        (
            kernels::all_reduce_one_shot_64::KERNEL.captured(),
            Some(Scalar::F64),
        ),
        (
            kernels::all_reduce_one_shot_16::KERNEL.captured(),
            Some(Scalar::F16),
        ),
    ];
    for (captured, ty) in kernels {
        let spec = spec(ty);
        let ptx = linked_ptx(captured, &spec, Arch::SM_90, &CompileOptions::default())
            .unwrap_or_else(|e| panic!("linking {}: {e}", captured.name));
        let entry = cudajit::core::lower::entry_symbol(captured.name, &spec);
        check_inlined(&entry, &ptx);
        // LSA data moves as 16-byte vectors of global memory (but for the kernels of the
        // other cooperative groups' sessions, which copy element by element).
        if captured.name.starts_with("peer_read_") {
            continue;
        }
        assert!(
            sixteen_byte(&ptx, "ld.global"),
            "{entry}: no 16-byte vector load\n{ptx}"
        );
        assert!(
            sixteen_byte(&ptx, "st.global"),
            "{entry}: no 16-byte vector store\n{ptx}"
        );
    }
}
