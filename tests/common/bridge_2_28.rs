//! Kernels linked on the CPU against NCCL 2.28.3's device library (cudajit's bridge, built
//! by nvcc over the wheel's headers: the release of the GPU machine), the checks the MoE
//! and reshard link tests share.

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::core::CapturedKernel;
use cudajit::{Arch, Specialization};

const RELEASE: &str = "2.28.3";

/// Points `LoadedNccl::global()` at the cached 2.28.3 wheel; `None` after printing why the
/// test is skipped.
fn nccl_or_skip() -> Option<()> {
    super::toolchain_or_skip()?;
    let root = super::nccl_wheels().join(RELEASE);
    if !root.join(".complete").is_file() {
        return super::skipped_without(&format!(
            "no NCCL {RELEASE} wheel in {} (nccl-device/scripts/fetch-wheels.sh)",
            root.display()
        ));
    }
    // SAFETY: the only test of this binary sets it before anything reads it.
    unsafe {
        std::env::set_var(
            "CUDAJIT_NCCL_LIBRARY",
            root.join("nvidia/nccl/lib/libnccl.so.2"),
        )
    };
    Some(())
}

/// Whether `ptx` has a 16-byte access `op` (`ld.global`, `st.global`; `.nc` too).
fn sixteen_byte(ptx: &str, op: &str) -> bool {
    ptx.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with(op)
            && [
                ".v4.u32", ".v4.b32", ".v4.f32", ".v4.s32", ".v2.u64", ".v2.b64", ".v2.f64",
            ]
            .iter()
            .any(|v| line.contains(v))
    })
}

/// Links each of `kernels()` (kernel, specialisation, whether it moves 16-byte vectors)
/// against 2.28.3's bridge and checks it: every NCCL call inlined, no function left but
/// the cold reports, no local memory, and 16-byte loads and stores where rows move. Skips
/// without the wheels (fails under `CUDAJIT_REQUIRE_TOOLCHAIN=1`). Sets
/// `CUDAJIT_NCCL_LIBRARY`, so it is the only test of its binary: a process loads one NCCL.
pub fn link_each_against_2_28_bridge(
    kernels: impl FnOnce() -> Vec<(&'static CapturedKernel, Specialization, bool)>,
) {
    let Some(()) = nccl_or_skip() else {
        return;
    };
    for (captured, spec, moves_rows) in kernels() {
        let ptx = linked_ptx(captured, &spec, Arch::SM_90, &CompileOptions::default())
            .unwrap_or_else(|e| panic!("linking {}: {e}", captured.name));
        let entry = cudajit::core::lower::entry_symbol(captured.name, &spec);
        if let Some(dir) = std::env::var_os("CUDAJIT_NCCL_TEST_PTX_DIR") {
            let file = format!("{entry}-{RELEASE}.ptx");
            std::fs::write(std::path::Path::new(&dir).join(file), &ptx).unwrap();
        }
        assert!(ptx.contains(&format!(".entry {entry}")), "{ptx}");
        assert!(
            !ptx.contains("cudajit_nccl_"),
            "{entry}: an NCCL call was not inlined:\n{ptx}"
        );
        // Only the cold report of a failed bounds check may remain.
        for line in ptx.lines().filter(|l| l.contains(".func")) {
            assert!(
                line.contains("vprintf") || line.contains("__assertfail"),
                "{entry}: a function call remains ({line})"
            );
        }
        assert!(
            !ptx.contains("__local_depot"),
            "{entry}: local memory used:\n{ptx}"
        );
        assert!(
            !ptx.contains(".local"),
            "{entry}: local memory used:\n{ptx}"
        );
        if moves_rows {
            assert!(
                sixteen_byte(&ptx, "ld.global"),
                "{entry}: no 16-byte load\n{ptx}"
            );
            assert!(
                sixteen_byte(&ptx, "st.global"),
                "{entry}: no 16-byte store\n{ptx}"
            );
        }
    }
}
