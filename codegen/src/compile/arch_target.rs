//! Which target a kernel is compiled for: the GPU's own architecture, or its
//! architecture-specific form (`sm_90a`) for a kernel declared `#[kernel(arch = "sm_90a")]`;
//! and a link that failed because a kernel used such instructions without saying so,
//! named for the user.

use cudajit_core::CapturedKernel;

use super::CompileError;
use crate::target::Arch;
use crate::toolchain::ToolchainError;

/// The target `captured` is compiled for when asked for `arch`: `arch` itself, or, for a
/// kernel that needs `sm_XYa`, that target when `arch` has compute capability `X.Y` (so a
/// launch on an H200, whose architecture is `sm_90`, builds the `sm_90a` cubin). Any other
/// compute capability cannot run an `sm_XYa` cubin: an error.
pub fn kernel_target(captured: &CapturedKernel, arch: Arch) -> Result<Arch, CompileError> {
    let Some(required) = captured.specific_arch else {
        return Ok(arch);
    };
    if (arch.major, arch.minor) == (required.major, required.minor) {
        Ok(arch.specific())
    } else {
        Err(CompileError::ArchMismatch {
            kernel: captured.name.to_owned(),
            required: required.to_string(),
            major: required.major,
            minor: required.minor,
            arch,
        })
    }
}

/// ptxas's words for an instruction the target lacks:
/// `Instruction 'wgmma.fence' not supported on .target 'sm_90'`.
const UNSUPPORTED_MARKER: &str = "not supported on .target '";

/// A link failure of a portable target whose log says an instruction is not supported
/// there, as [`CompileError::NeedsSpecificArch`]: the instruction exists on the `a`
/// target, which the kernel must ask for. Other errors pass through.
pub(crate) fn name_specific_instructions(error: CompileError, arch: Arch) -> CompileError {
    let CompileError::Toolchain {
        kernel,
        source: ToolchainError::NvJitLinkFailed(failure),
    } = &error
    else {
        return error;
    };
    if arch.is_specific() || !failure.error_log.contains(UNSUPPORTED_MARKER) {
        return error;
    }
    let instructions: Vec<String> = failure
        .error_log
        .lines()
        .filter(|line| line.contains(UNSUPPORTED_MARKER))
        .filter_map(|line| line.split('\'').nth(1))
        .map(str::to_owned)
        .fold(Vec::new(), |mut unique, name| {
            if !unique.contains(&name) {
                unique.push(name);
            }
            unique
        });
    CompileError::NeedsSpecificArch {
        kernel: kernel.clone(),
        instructions,
        arch,
        specific: arch.specific(),
        log: failure.error_log.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::LinkFailure;
    use cudajit_core::{CapturedFunction, SpecificArch};

    const PLAIN: CapturedFunction = CapturedFunction {
        name: "k",
        source: "{}",
        source_hash: "h",
        file: "k.rs",
        callees: CapturedFunction::no_callees,
        structs: CapturedFunction::no_structs,
        library: None,
        constants: CapturedFunction::no_constants,
        specific_arch: None,
    };
    const HOPPER: CapturedFunction = CapturedFunction {
        specific_arch: Some(SpecificArch { major: 9, minor: 0 }),
        ..PLAIN
    };

    #[test]
    fn a_kernel_without_requirement_keeps_the_architecture() {
        for arch in [Arch::SM_80, Arch::SM_90, Arch::SM_90A] {
            assert_eq!(kernel_target(&PLAIN, arch).unwrap(), arch);
        }
    }

    #[test]
    fn a_kernel_needing_sm_90a_gets_it_on_9_0_only() {
        assert_eq!(kernel_target(&HOPPER, Arch::SM_90).unwrap(), Arch::SM_90A);
        assert_eq!(kernel_target(&HOPPER, Arch::SM_90A).unwrap(), Arch::SM_90A);
        for arch in [Arch::SM_80, Arch::new(10, 0), Arch::new(12, 0).specific()] {
            let message = kernel_target(&HOPPER, arch).unwrap_err().to_string();
            assert!(message.contains("`k`"), "{message}");
            assert!(message.contains("sm_90a"), "{message}");
            assert!(message.contains(&arch.to_string()), "{message}");
        }
    }

    fn link_failure(log: &str) -> CompileError {
        CompileError::Toolchain {
            kernel: "k".into(),
            source: ToolchainError::NvJitLinkFailed(Box::new(LinkFailure {
                function: "nvJitLinkComplete",
                status: "NVJITLINK_ERROR_PTX_COMPILE",
                code: 4,
                error_log: log.into(),
                info_log: String::new(),
                inputs: vec![],
                options: vec![],
            })),
        }
    }

    #[test]
    fn an_unsupported_instruction_names_the_specific_target() {
        let log = "ptxas error   : Instruction 'wgmma.fence' not supported on .target 'sm_90'\n\
                   ptxas error   : Instruction 'wgmma.fence' not supported on .target 'sm_90'\n";
        let named = name_specific_instructions(link_failure(log), Arch::SM_90);
        let CompileError::NeedsSpecificArch { instructions, .. } = &named else {
            panic!("{named}");
        };
        assert_eq!(instructions, &["wgmma.fence"]);
        let message = named.to_string();
        assert!(message.contains("arch = \"sm_90a\""), "{message}");
        assert!(message.contains("Arch::SM_90A"), "{message}");
        // Other failures, and failures of the specific target itself, pass through.
        let other = name_specific_instructions(link_failure("ptxas fatal: syntax"), Arch::SM_90);
        assert!(matches!(other, CompileError::Toolchain { .. }));
        let specific = name_specific_instructions(link_failure(log), Arch::SM_90A);
        assert!(matches!(specific, CompileError::Toolchain { .. }));
    }
}
