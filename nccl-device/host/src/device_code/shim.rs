//! cudajit's C-ABI shim over NCCL's shipped `libnccl_device.ltoir` (2.31+): NVVM IR
//! (`shim_ltoir.ll`) defining the 2.28 bridge's `cudajit_nccl_*` functions, with the
//! bridge's C signatures ([`symbols::BRIDGE_2_28`]), on top of the `.ltoir`'s C++-mangled
//! functions ([`symbols::LTOIR_2_32`], [`symbols::LTOIR_2_31`]). Compiled by libNVVM
//! (`-gen-lto`) and linked before the `.ltoir`, it lets a kernel written against the bridge
//! ABI link against either library, with every call inlined.
//!
//! The barrier session of the `.ltoir` is 80 bytes, more than the bridge ABI's
//! [`symbols::BRIDGE_LSA_BARRIER_SESSION_BYTES`]: the shim keeps in the caller's buffer
//! only the part after the session's type-erased coop (see `shim_ltoir.ll`), and rebuilds
//! the coop at every call: the CTA's, a warp's, a thread's, or some lanes' or a warp
//! span's from the parameters its init stored in the buffer's bytes 56..60.
//!
//! With the 2.31 `.ltoir`, which has no session destroy, the shim leaves
//! `cudajit_nccl_lsa_barrier_destroy` (and the `_warp`, `_thread`, `_lanes` and
//! `_warp_span` destroys) out: a kernel ending a barrier session does not link
//! (the error names the symbol) rather than silently losing the barrier epoch, which would
//! stop the next kernel's barrier from synchronising. Kernels without LSA barrier sessions
//! (pointers, ranks) link against 2.31 too.
//!
//! Over the 2.32+ `.ltoir` the shim also defines the GIN functions of
//! [`symbols::SHIM_GIN`] (`cudajit_nccl_gin_*`: put, signal, wait, flush, read and reset
//! a signal), which the 2.28 bridge lacks; without GIN in the table (2.31) they are left
//! out like the destroy, so a kernel calling them fails to link naming the function.

use cudajit_codegen::toolchain::{NvvmModule, Toolchain, ToolchainError};
use cudajit_codegen::Arch;

use super::symbols::{self, ApiFunction, SymbolTable};

/// The shim's NVVM IR, with `@{nccl:NAME}` placeholders for the `.ltoir`'s symbols.
pub(super) const TEMPLATE: &str = include_str!("shim_ltoir.ll");

/// Bytes of the `.ltoir`'s `ncclLsaBarrierSession_C` (2.31, 2.32), as its
/// `ncclLsaBarrierSession_C_size()` returns; `shim_ltoir.ll` builds sessions of this size.
pub const LTOIR_LSA_BARRIER_SESSION_BYTES: usize = 80;

/// Bytes of `ncclCoopAny`, the head of that session, which the shim rebuilds instead of
/// storing; the rest must fit the bridge ABI's session buffer.
pub const LTOIR_COOP_ANY_BYTES: usize = 24;

const _: () = assert!(
    LTOIR_LSA_BARRIER_SESSION_BYTES - LTOIR_COOP_ANY_BYTES
        <= symbols::BRIDGE_LSA_BARRIER_SESSION_BYTES
);

/// Where `shim_ltoir.ll` keeps the parameters of a lanes or warp-span coop (one `i32`: the
/// lane mask, or `warp0 | nWarps << 8 | id << 16`) in the caller's session buffer: just
/// past the session's bytes, so they must fit too.
pub const SHIM_COOP_PARAM_OFFSET: usize = LTOIR_LSA_BARRIER_SESSION_BYTES - LTOIR_COOP_ANY_BYTES;

const _: () = assert!(SHIM_COOP_PARAM_OFFSET + 4 <= symbols::BRIDGE_LSA_BARRIER_SESSION_BYTES);

/// The `.ltoir` symbol of the session size getter (`size_t ncclLsaBarrierSession_C_size()`),
/// for checking [`LTOIR_LSA_BARRIER_SESSION_BYTES`].
pub const LTOIR_SESSION_SIZE_SYMBOL: &str = "_Z28ncclLsaBarrierSession_C_sizev";

/// Every function of the `.ltoir` the shim calls.
pub(super) const CALLED: &[ApiFunction] = &[
    ApiFunction::LsaPointer,
    ApiFunction::PeerPointer,
    ApiFunction::LocalPointer,
    ApiFunction::Rank,
    ApiFunction::NRanks,
    ApiFunction::LsaRank,
    ApiFunction::LsaSize,
    ApiFunction::LsaRankToWorld,
    ApiFunction::CoopInitCta,
    ApiFunction::CoopInitWarp,
    ApiFunction::CoopInitLanes,
    ApiFunction::CoopInitWarpSpan,
    ApiFunction::LsaBarrierHandle,
    ApiFunction::LsaBarrierInit,
    ApiFunction::LsaBarrierArrive,
    ApiFunction::LsaBarrierWait,
    ApiFunction::LsaBarrierSync,
    ApiFunction::LsaBarrierDestroy,
    ApiFunction::CoopInitThread,
    ApiFunction::GinInit,
    ApiFunction::GinPut,
    ApiFunction::GinSignal,
    ApiFunction::GinWaitSignal,
    ApiFunction::GinFlush,
    ApiFunction::GinReadSignal,
    ApiFunction::GinResetSignal,
];

/// Sections of `shim_ltoir.ll` (between `; BEGIN name` and `; END name` lines) left out
/// when the table lacks the function: the session destroy (2.32+) and GIN (2.32+).
const OPTIONAL_SECTIONS: &[(&str, ApiFunction)] = &[
    ("lsa_barrier_destroy", ApiFunction::LsaBarrierDestroy),
    ("lsa_barrier_destroy_warp", ApiFunction::LsaBarrierDestroy),
    ("lsa_barrier_destroy_coops", ApiFunction::LsaBarrierDestroy),
    ("gin", ApiFunction::GinPut),
];

/// Why the shim could not be made.
#[derive(Clone, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum ShimError {
    /// The table lacks a function the shim needs (other than the session destroy).
    #[error(
        "cudajit's shim over {generation} needs `{function}`, which that table does not map; \
         this NCCL release's .ltoir is not supported by this cudajit. Fix: use NCCL 2.31 or \
         2.32 (nvidia-nccl-cu13), or 2.28 with its headers"
    )]
    Unmapped {
        /// The table's generation.
        generation: &'static str,
        /// The function.
        function: ApiFunction,
    },
    /// libNVVM rejected the shim (a cudajit bug, or a libNVVM too old for NVVM IR 2.0).
    #[error(
        "libNVVM could not compile cudajit's NCCL shim for {arch}: {source}. Fix: use the \
         libNVVM of CUDA 12.x/13.x (CUDAJIT_NVVM, CUDAJIT_TOOLS_DIR); if it is one, report \
         this as a cudajit bug"
    )]
    Compile {
        /// The architecture.
        arch: Arch,
        /// libNVVM's error (boxed: it is large, and this error travels inside
        /// `DeviceCodeError`).
        #[source]
        source: Box<ToolchainError>,
    },
}

/// The shim's NVVM IR over the `.ltoir` that `table` describes: every placeholder replaced
/// by its symbol; without the session destroy if the table lacks it (2.31).
pub fn source(table: &SymbolTable) -> Result<String, ShimError> {
    let mut text = TEMPLATE.to_owned();
    for &(section, function) in OPTIONAL_SECTIONS {
        if table.get(function).is_some() {
            continue;
        }
        let begin_marker = format!("; BEGIN {section}\n");
        let end_marker = format!("; END {section}\n");
        let begin = text
            .find(&begin_marker)
            .expect("shim_ltoir.ll marks the section");
        let end = text
            .find(&end_marker)
            .expect("shim_ltoir.ll marks the section");
        text.replace_range(begin..end + end_marker.len(), "");
    }
    for &function in CALLED {
        let placeholder = format!("@{{nccl:{}}}", function.name());
        if !text.contains(&placeholder) {
            continue;
        }
        let entry = table.get(function).ok_or(ShimError::Unmapped {
            generation: table.generation,
            function,
        })?;
        text = text.replace(&placeholder, &format!("@{}", entry.symbol));
    }
    debug_assert!(
        !text.contains("@{nccl:"),
        "a placeholder without a function"
    );
    Ok(text)
}

/// The shim over `table`'s `.ltoir`, compiled by libNVVM to LTO-IR for `arch`.
pub fn compile(
    toolchain: &Toolchain,
    table: &SymbolTable,
    arch: Arch,
) -> Result<Vec<u8>, ShimError> {
    let text = source(table)?;
    let options = [
        format!("-arch={}", arch.compute_name()),
        "-gen-lto".to_owned(),
    ];
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    toolchain
        .nvvm()
        .and_then(|nvvm| {
            nvvm.compile(
                &[NvvmModule::new("cudajit_nccl_shim.ll", text.as_bytes())],
                &options,
            )
        })
        .map(|output| output.result)
        .map_err(|source| ShimError::Compile {
            arch,
            source: Box::new(source),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placeholder_is_replaced() {
        for table in [&symbols::LTOIR_2_32, &symbols::LTOIR_2_31] {
            let text = source(table).unwrap();
            assert!(!text.contains("@{nccl:"), "{}", table.generation);
            for function in CALLED {
                if let Some(entry) = table.get(*function) {
                    assert!(text.contains(entry.symbol), "{function} unused");
                }
            }
        }
    }

    #[test]
    fn the_2_31_shim_has_no_destroy() {
        let text = source(&symbols::LTOIR_2_31).unwrap();
        assert!(!text.contains("cudajit_nccl_lsa_barrier_destroy"));
        // Every other session function stays.
        for group in ["", "_warp", "_thread", "_lanes", "_warp_span"] {
            for op in ["init", "arrive", "wait", "sync"] {
                let name = format!("define void @cudajit_nccl_lsa_barrier_{op}{group}(");
                assert!(text.contains(&name), "{name} missing from the 2.31 shim");
            }
        }
        let text = source(&symbols::LTOIR_2_32).unwrap();
        for group in ["", "_warp", "_thread", "_lanes", "_warp_span"] {
            let name =
                format!("define void @cudajit_nccl_lsa_barrier_destroy{group}(i8* %session)");
            assert!(text.contains(&name), "{name} missing from the 2.32 shim");
        }
    }

    #[test]
    fn the_coop_parameters_sit_past_the_session_bytes() {
        let offset = format!("getelementptr i8, i8* %saved, i64 {SHIM_COOP_PARAM_OFFSET}");
        assert_eq!(
            TEMPLATE.matches(&offset).count(),
            2,
            "load and store of the parameter"
        );
        let copied = format!("i64 {}, i1 false", SHIM_COOP_PARAM_OFFSET);
        assert!(
            TEMPLATE.contains(&copied),
            "the session's bytes are {copied}"
        );
    }

    #[test]
    fn gin_is_in_the_2_32_shim_only() {
        let text = source(&symbols::LTOIR_2_32).unwrap();
        for entry in symbols::SHIM_GIN.entries {
            assert!(
                text.contains(&format!("define void @{}(", entry.symbol))
                    || text.contains(&format!("define i64 @{}(", entry.symbol)),
                "{} missing",
                entry.symbol
            );
            let ltoir = symbols::LTOIR_2_32.get(entry.function).unwrap();
            assert!(text.contains(ltoir.symbol), "{} unused", ltoir.symbol);
        }
        let old = source(&symbols::LTOIR_2_31).unwrap();
        assert!(!old.contains("cudajit_nccl_gin"), "GIN in the 2.31 shim");
        assert!(!old.contains("ncclGin"), "GIN in the 2.31 shim");
    }

    #[test]
    fn the_shim_defines_every_bridge_function() {
        let text = source(&symbols::LTOIR_2_32).unwrap();
        for entry in symbols::BRIDGE_2_28.entries {
            assert!(
                text.contains(&format!(" @{}(", entry.symbol)),
                "{} missing",
                entry.symbol
            );
        }
    }

    #[test]
    fn a_table_without_a_needed_function_is_refused() {
        static PARTIAL: SymbolTable = SymbolTable {
            generation: "a test table",
            entries: &[],
        };
        let error = source(&PARTIAL).unwrap_err();
        assert!(error.to_string().contains("`lsa_pointer`"), "{error}");
    }
}
