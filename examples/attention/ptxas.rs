//! What ptxas made of a specialisation: its registers, stack frame and spills, from
//! nvJitLink's `-verbose` report of the same link cudajit does (NVVM IR → LTO-IR → cubin
//! for sm_90). The PTX shows the arrays the kernel keeps in registers (`.local` is absent
//! there), but only the register allocator, after it, knows whether they fit: a spill
//! appears here, as `spill stores`, and nowhere in the PTX.

use cudajit::codegen::compile::{nvvm_ir, CompileError};
use cudajit::codegen::toolchain::{InputKind, LinkInput, NvvmModule, Toolchain};
use cudajit::core::lower::Specialization;
use cudajit::core::CapturedKernel;

/// ptxas's resource use of one kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resources {
    /// Registers per thread.
    pub registers: u32,
    /// Bytes of stack frame per thread (local arrays and spills).
    pub stack_frame: u32,
    /// Bytes stored to and loaded from local memory by register spills.
    pub spill_stores: u32,
    pub spill_loads: u32,
}

impl Resources {
    /// Whether the kernel runs from registers and shared memory only.
    pub fn no_local_memory(&self) -> bool {
        self.stack_frame == 0 && self.spill_stores == 0 && self.spill_loads == 0
    }
}

impl std::fmt::Display for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} registers, {} bytes stack frame, {} bytes spill stores, {} bytes spill loads",
            self.registers, self.stack_frame, self.spill_stores, self.spill_loads
        )
    }
}

/// Links `captured`'s specialisation `spec` for sm_90 with `-verbose` and reads ptxas's
/// report of it.
pub fn resources(
    captured: &'static CapturedKernel,
    spec: &Specialization,
) -> Result<Resources, Box<dyn std::error::Error>> {
    let toolchain = Toolchain::global()?;
    let text = nvvm_ir(captured, spec).map_err(|e: CompileError| e.to_string())?;
    let mut modules = vec![NvvmModule::new("attention.ll", text.as_bytes())];
    // The log-sum-exp's `log2` comes from libdevice.
    if text.contains("@__nv_") {
        modules.push(NvvmModule::lazy(
            "libdevice.10.bc",
            toolchain.libdevice_bytes()?,
        ));
    }
    let ltoir = toolchain
        .nvvm()?
        .compile(&modules, &["-arch=compute_90", "-opt=3", "-gen-lto"])?;
    let linked = toolchain.nvjitlink()?.link(
        &[LinkInput {
            name: "attention.ltoir",
            kind: InputKind::LtoIr,
            bytes: &ltoir.result,
        }],
        &["-arch=sm_90", "-lto", "-verbose"],
        false,
    )?;
    parse(&linked.info_log)
        .ok_or_else(|| format!("no ptxas resource report in:\n{}", linked.info_log).into())
}

/// The numbers of ptxas's lines `… N bytes stack frame, N bytes spill stores, N bytes
/// spill loads` and `Used N registers, …` (the first function reported: the kernel is the
/// only one, every device function is inlined).
fn parse(log: &str) -> Option<Resources> {
    let number_before = |line: &str, what: &str| -> Option<u32> {
        let end = line.find(what)?;
        line[..end].split_whitespace().last()?.parse().ok()
    };
    let frame_line = log.lines().find(|l| l.contains("bytes stack frame"))?;
    let used_line = log.lines().find(|l| l.contains("registers"))?;
    Some(Resources {
        registers: number_before(used_line, " registers")?,
        stack_frame: number_before(frame_line, " bytes stack frame")?,
        spill_stores: number_before(frame_line, " bytes spill stores")?,
        spill_loads: number_before(frame_line, " bytes spill loads")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ptxas_s_report() {
        let log = "ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
                   ptxas info    : Function properties for k\n\
                   ptxas         .     8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n\
                   ptxas info    : Used 255 registers, used 1 barriers\n";
        assert_eq!(
            parse(log),
            Some(Resources {
                registers: 255,
                stack_frame: 8,
                spill_stores: 4,
                spill_loads: 12
            })
        );
        assert_eq!(parse("nothing"), None);
    }
}
