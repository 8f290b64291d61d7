//! Probe kernels in NVVM IR over the NCCL device libraries, and reading linked PTX.

use cudajit_nccl::device_code::{ApiFunction as F, SymbolTable};

pub const HEADER: &str = r#"target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
"#;

/// The module trailer: the kernel in `@llvm.used` (else `-gen-lto` links drop it) and
/// in `!nvvm.annotations`. `ty` is the kernel's function pointer type.
pub fn trailer(ty: &str) -> String {
    format!(
        "@llvm.used = appending global [1 x i8*] [i8* bitcast ({ty} @probe to i8*)], section \"llvm.metadata\"\n\
         declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n\
         !nvvm.annotations = !{{!0}}\n\
         !0 = !{{{ty} @probe, !\"kernel\", i32 1}}\n\
         !nvvmir.version = !{{!1}}\n\
         !1 = !{{i32 2, i32 0}}\n"
    )
}

/// A kernel over the bridge's C ABI, with the names of `table` (the bridge's, which the
/// shim over a `.ltoir` defines too).
pub fn bridge_abi_kernel(table: &SymbolTable) -> String {
    let s = |f| table.get(f).unwrap().symbol;
    format!(
        "{HEADER}
define void @probe(i8* %comm, i8* %window, float** %out, i32* %ranks) {{
entry:
  %session = alloca [{bytes} x i8], align {align}
  %sp = getelementptr [{bytes} x i8], [{bytes} x i8]* %session, i64 0, i64 0
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  call void @{init}(i8* %sp, i8* %comm, i32 %cta)
  call void @{arrive}(i8* %sp, i32 0)
  call void @{wait}(i8* %sp, i32 2)
  call void @{sync}(i8* %sp, i32 3)
  call void @{destroy}(i8* %sp)
  %lsa_rank = call i32 @{lsa_rank}(i8* %comm)
  %lsa_size = call i32 @{lsa_size}(i8* %comm)
  %rank = call i32 @{rank}(i8* %comm)
  %nranks = call i32 @{nranks}(i8* %comm)
  %next0 = add i32 %lsa_rank, 1
  %next = srem i32 %next0, %lsa_size
  %world = call i32 @{to_world}(i8* %comm, i32 %next)
  %w = ptrtoint i8* %window to i64
  %p = call i64 @{lsa_pointer}(i64 %w, i64 64, i32 %next)
  %q = call i64 @{peer_pointer}(i64 %w, i64 64, i32 %world)
  %pf = inttoptr i64 %p to float*
  %qf = inttoptr i64 %q to float*
  store float* %pf, float** %out
  %out1 = getelementptr float*, float** %out, i64 1
  store float* %qf, float** %out1
  %sum0 = add i32 %rank, %nranks
  %sum = add i32 %sum0, %world
  store i32 %sum, i32* %ranks
  ret void
}}
declare void @{init}(i8*, i8*, i32)
declare void @{arrive}(i8*, i32)
declare void @{wait}(i8*, i32)
declare void @{sync}(i8*, i32)
declare void @{destroy}(i8*)
declare i32 @{lsa_rank}(i8*)
declare i32 @{lsa_size}(i8*)
declare i32 @{rank}(i8*)
declare i32 @{nranks}(i8*)
declare i32 @{to_world}(i8*, i32)
declare i64 @{lsa_pointer}(i64, i64, i32)
declare i64 @{peer_pointer}(i64, i64, i32)
{trailer}",
        bytes = cudajit_nccl::device_code::symbols::BRIDGE_LSA_BARRIER_SESSION_BYTES,
        align = cudajit_nccl::device_code::symbols::BRIDGE_LSA_BARRIER_SESSION_ALIGN,
        init = s(F::LsaBarrierInit),
        arrive = s(F::LsaBarrierArrive),
        wait = s(F::LsaBarrierWait),
        sync = s(F::LsaBarrierSync),
        destroy = s(F::LsaBarrierDestroy),
        lsa_rank = s(F::LsaRank),
        lsa_size = s(F::LsaSize),
        rank = s(F::Rank),
        nranks = s(F::NRanks),
        to_world = s(F::LsaRankToWorld),
        lsa_pointer = s(F::LsaPointer),
        peer_pointer = s(F::PeerPointer),
        trailer = trailer("void (i8*, i8*, float**, i32*)*"),
    )
}

/// The bridge functions the bridge kernel calls, all of which must be inlined.
pub const BRIDGE_CALLED: &[F] = &[
    F::LsaBarrierInit,
    F::LsaBarrierArrive,
    F::LsaBarrierWait,
    F::LsaBarrierSync,
    F::LsaBarrierDestroy,
    F::LsaRank,
    F::LsaSize,
    F::Rank,
    F::NRanks,
    F::LsaRankToWorld,
    F::LsaPointer,
    F::PeerPointer,
];

/// The target of every `call` in `ptx`: a symbol, or the register of an indirect call.
/// PTX spreads a call over several lines (`call.uni (retval0), target, (params);`), so
/// statements are split at `;` and the call is found inside them.
pub fn call_targets(ptx: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for stmt in ptx.split(';') {
        let Some(at) = stmt.match_indices("call").map(|(i, _)| i).find(|&i| {
            // The opcode, not `callseq` in a `// callseq N` comment.
            (i == 0 || stmt[..i].ends_with(|c: char| c.is_whitespace()))
                && stmt[i + 4..].starts_with(|c: char| c.is_whitespace() || c == '.')
        }) else {
            continue;
        };
        // Skip the opcode (`call`, `call.uni`) and a `(retval0),` return list.
        let mut rest = stmt[at..]
            .trim_start_matches(|c: char| !c.is_whitespace())
            .trim_start();
        if rest.starts_with('(') {
            let close = rest.find(')').map_or(rest.len(), |i| i + 1);
            rest = rest[close..]
                .trim_start()
                .trim_start_matches(',')
                .trim_start();
        }
        let target: String = rest
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != ',')
            .collect();
        targets.push(target);
    }
    targets
}

/// A kernel over the shim's GIN C ABI ([`cudajit_nccl::device_code::symbols::SHIM_GIN`]):
/// put with and without a signal, signal, wait, flush, read and reset, on GIN context 0
/// towards world rank `rank + 1`.
pub fn gin_abi_kernel() -> String {
    let s = |f| {
        cudajit_nccl::device_code::symbols::SHIM_GIN
            .get(f)
            .unwrap()
            .symbol
    };
    format!(
        "{HEADER}
define void @probe(i8* %comm, i8* %window, i64* %out) {{
entry:
  %rank = call i32 @{rank}(i8* %comm)
  %nranks = call i32 @{nranks}(i8* %comm)
  %next0 = add i32 %rank, 1
  %peer = srem i32 %next0, %nranks
  %w = ptrtoint i8* %window to i64
  call void @{put}(i8* %comm, i32 0, i32 %peer, i64 %w, i64 4096, i64 %w, i64 0, i64 4096, i32 3)
  call void @{put}(i8* %comm, i32 0, i32 %peer, i64 %w, i64 8192, i64 %w, i64 0, i64 64, i32 -1)
  call void @{signal}(i8* %comm, i32 0, i32 %peer, i32 3)
  call void @{flush}(i8* %comm, i32 0)
  call void @{wait}(i8* %comm, i32 0, i32 3, i64 2)
  %v = call i64 @{read}(i8* %comm, i32 0, i32 3)
  store i64 %v, i64* %out
  call void @{reset}(i8* %comm, i32 0, i32 3)
  ret void
}}
declare i32 @{rank}(i8*)
declare i32 @{nranks}(i8*)
declare void @{put}(i8*, i32, i32, i64, i64, i64, i64, i64, i32)
declare void @{signal}(i8*, i32, i32, i32)
declare void @{wait}(i8*, i32, i32, i64)
declare void @{flush}(i8*, i32)
declare i64 @{read}(i8*, i32, i32)
declare void @{reset}(i8*, i32, i32)
{trailer}",
        rank = "cudajit_nccl_rank",
        nranks = "cudajit_nccl_nranks",
        put = s(F::GinPut),
        signal = s(F::GinSignal),
        wait = s(F::GinWaitSignal),
        flush = s(F::GinFlush),
        read = s(F::GinReadSignal),
        reset = s(F::GinResetSignal),
        trailer = trailer("void (i8*, i8*, i64*)*"),
    )
}
