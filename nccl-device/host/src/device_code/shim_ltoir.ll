; cudajit's C-ABI shim over NCCL's shipped libnccl_device.ltoir (2.31+).
;
; Defines the `cudajit_nccl_*` functions of the 2.28 bridge (bridge_2_28.cu), with the same
; C signatures (windows and addresses as integers, the communicator and session as
; pointers, scalars), by calling the C++-mangled functions of the
; .ltoir, which take NCCL's objects by value (ncclCoopAny, ncclTeam, the barrier and
; multimem handles). Kernels written against the bridge ABI thus link against either
; library. libNVVM compiles this text with -gen-lto; nvJitLink's -lto then inlines the shim
; into the kernel and the .ltoir's functions into the shim.
;
; A global named `{nccl:NAME}` stands for the .ltoir symbol of cudajit's device function NAME
; (symbols.rs, one table per NCCL generation); shim.rs substitutes them.
;
; Aggregates travel by value as NVVM's C++ front end passes them (the ABI the .ltoir probe
; of tests/device_code.rs was link-tested with): ncclCoopAny { Storage (16 bytes,
; pointer-aligned), VTable const* } = 24 bytes, ncclTeam { nRanks, rank, stride },
; ncclLsaBarrierHandle { bufHandle, nBarriers }, ncclMultimemHandle { mcBasePtr }; bool is i8;
; cuda::memory_order is i32 with cuda::memory_order's values, as the bridge takes it.
;
; The LSA barrier session. The .ltoir's ncclLsaBarrierSession_C wraps
; ncclLsaBarrierSession<ncclCoopAny>: { ncclCoopAny coop (24); ncclDevComm const& comm (8);
; ncclTeam team (12); ncclLsaBarrierHandle handle (8); int index; bool multimem;
; ncclMultimemHandle mmHandle (at 64); uint32_t epoch } = 80 bytes, align 8
; (lsa_barrier__types.h, coop.h of 2.32.3; the size is the .ltoir's own
; ncclLsaBarrierSession_C_size(), checked by tests/device_code.rs). That does NOT fit the
; bridge ABI's 64-byte session buffer. But the first 24 bytes, the type-erased coop, are
; always the same CTA coop, which ncclCoopAnyInitCta rebuilds: so the caller's buffer holds
; only the session's bytes [24, 80) (56 bytes), and each shim function assembles the full
; session in a local, calls NCCL, and writes the 56 bytes back. After inlining the local is
; scalarised or stays in the thread's local memory; the session holds no pointer to itself,
; so moving it between calls is sound.

target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

%coop_storage = type { [16 x i8] }
%coop_vtable = type { i32 (i8*)*, i32 (i8*)*, void (i8*)* }
%coop = type { %coop_storage, %coop_vtable* }
%team = type { i32, i32, i32 }
%bar = type { i32, i32 }
%mm = type { i8* }
%comm = type opaque
%session = type opaque

; ---- LSA pointers

define i64 @cudajit_nccl_lsa_pointer(i64 %window, i64 %offset, i32 %lsa_peer) alwaysinline {
  %w = inttoptr i64 %window to i8*
  %p = call i8* @{nccl:lsa_pointer}(i8* %w, i64 %offset, i32 %lsa_peer)
  %a = ptrtoint i8* %p to i64
  ret i64 %a
}

define i64 @cudajit_nccl_peer_pointer(i64 %window, i64 %offset, i32 %peer) alwaysinline {
  %w = inttoptr i64 %window to i8*
  %p = call i8* @{nccl:peer_pointer}(i8* %w, i64 %offset, i32 %peer)
  %a = ptrtoint i8* %p to i64
  ret i64 %a
}

define i64 @cudajit_nccl_local_pointer(i64 %window, i64 %offset) alwaysinline {
  %w = inttoptr i64 %window to i8*
  %p = call i8* @{nccl:local_pointer}(i8* %w, i64 %offset)
  %a = ptrtoint i8* %p to i64
  ret i64 %a
}

; ---- Teams

define i32 @cudajit_nccl_rank(i8* %comm) alwaysinline {
  %c = bitcast i8* %comm to %comm*
  %r = call i32 @{nccl:rank}(%comm* %c)
  ret i32 %r
}

define i32 @cudajit_nccl_nranks(i8* %comm) alwaysinline {
  %c = bitcast i8* %comm to %comm*
  %r = call i32 @{nccl:nranks}(%comm* %c)
  ret i32 %r
}

define i32 @cudajit_nccl_lsa_rank(i8* %comm) alwaysinline {
  %c = bitcast i8* %comm to %comm*
  %r = call i32 @{nccl:lsa_rank}(%comm* %c)
  ret i32 %r
}

define i32 @cudajit_nccl_lsa_size(i8* %comm) alwaysinline {
  %c = bitcast i8* %comm to %comm*
  %r = call i32 @{nccl:lsa_size}(%comm* %c)
  ret i32 %r
}

; ncclTeamLsa(comm) = { comm.lsaSize, comm.lsaRank, 1 } (core__funcs.h).
define internal %team @cudajit_nccl_shim_team_lsa(%comm* %c) alwaysinline {
  %size = call i32 @{nccl:lsa_size}(%comm* %c)
  %rank = call i32 @{nccl:lsa_rank}(%comm* %c)
  %t0 = insertvalue %team undef, i32 %size, 0
  %t1 = insertvalue %team %t0, i32 %rank, 1
  %t2 = insertvalue %team %t1, i32 1, 2
  ret %team %t2
}

define i32 @cudajit_nccl_lsa_rank_to_world(i8* %comm, i32 %lsa_rank) alwaysinline {
  %c = bitcast i8* %comm to %comm*
  %team = call %team @cudajit_nccl_shim_team_lsa(%comm* %c)
  %r = call i32 @{nccl:lsa_rank_to_world}(%comm* %c, %team %team, i32 %lsa_rank)
  ret i32 %r
}

; ---- LSA barrier sessions (see the top of the file for the storage)

; A CTA coop, by value.
define internal %coop @cudajit_nccl_shim_cta() alwaysinline {
  %slot = alloca %coop, align 8
  call void @{nccl:coop_init_cta}(%coop* %slot)
  %coop = load %coop, %coop* %slot, align 8
  ret %coop %coop
}

; The full session in `full` (80 bytes): a fresh CTA coop, then the caller's 56 bytes.
define internal void @cudajit_nccl_shim_enter(i8* %saved, i8* %full) alwaysinline {
  %coop = call %coop @cudajit_nccl_shim_cta()
  %coop_slot = bitcast i8* %full to %coop*
  store %coop %coop, %coop* %coop_slot, align 8
  %state = getelementptr i8, i8* %full, i64 24
  call void @llvm.memcpy.p0i8.p0i8.i64(i8* align 8 %state, i8* align 16 %saved, i64 56, i1 false)
  ret void
}

; The session's bytes [24, 80) back into the caller's buffer.
define internal void @cudajit_nccl_shim_leave(i8* %saved, i8* %full) alwaysinline {
  %state = getelementptr i8, i8* %full, i64 24
  call void @llvm.memcpy.p0i8.p0i8.i64(i8* align 16 %saved, i8* align 8 %state, i64 56, i1 false)
  ret void
}

; As the bridge's `ncclLsaBarrierSession<ncclCoopCta>(ncclCoopCta(), *comm, ncclTeamTagLsa(),
; index)`: the LSA team, the communicator's LSA barrier, unicast (multimem off, as NVLS must
; stay off on the GPU machines; the handle is then unused).
define void @cudajit_nccl_lsa_barrier_init(i8* %session, i8* %comm, i32 %index) alwaysinline {
  %full = alloca [80 x i8], align 16
  %sp = getelementptr [80 x i8], [80 x i8]* %full, i64 0, i64 0
  %s = bitcast i8* %sp to %session*
  %c = bitcast i8* %comm to %comm*
  %coop = call %coop @cudajit_nccl_shim_cta()
  %team = call %team @cudajit_nccl_shim_team_lsa(%comm* %c)
  %handle = call %bar @{nccl:lsa_barrier_handle}(%comm* %c)
  call void @{nccl:lsa_barrier_init}(%session* %s, %coop %coop, %comm* %c, %team %team, %bar %handle, i32 %index, i8 0, %mm zeroinitializer)
  call void @cudajit_nccl_shim_leave(i8* %session, i8* %sp)
  ret void
}

define void @cudajit_nccl_lsa_barrier_arrive(i8* %session, i32 %order) alwaysinline {
  %full = alloca [80 x i8], align 16
  %sp = getelementptr [80 x i8], [80 x i8]* %full, i64 0, i64 0
  call void @cudajit_nccl_shim_enter(i8* %session, i8* %sp)
  %s = bitcast i8* %sp to %session*
  %coop = call %coop @cudajit_nccl_shim_cta()
  call void @{nccl:lsa_barrier_arrive}(%session* %s, %coop %coop, i32 %order)
  call void @cudajit_nccl_shim_leave(i8* %session, i8* %sp)
  ret void
}

define void @cudajit_nccl_lsa_barrier_wait(i8* %session, i32 %order) alwaysinline {
  %full = alloca [80 x i8], align 16
  %sp = getelementptr [80 x i8], [80 x i8]* %full, i64 0, i64 0
  call void @cudajit_nccl_shim_enter(i8* %session, i8* %sp)
  %s = bitcast i8* %sp to %session*
  %coop = call %coop @cudajit_nccl_shim_cta()
  call void @{nccl:lsa_barrier_wait}(%session* %s, %coop %coop, i32 %order)
  call void @cudajit_nccl_shim_leave(i8* %session, i8* %sp)
  ret void
}

define void @cudajit_nccl_lsa_barrier_sync(i8* %session, i32 %order) alwaysinline {
  %full = alloca [80 x i8], align 16
  %sp = getelementptr [80 x i8], [80 x i8]* %full, i64 0, i64 0
  call void @cudajit_nccl_shim_enter(i8* %session, i8* %sp)
  %s = bitcast i8* %sp to %session*
  %coop = call %coop @cudajit_nccl_shim_cta()
  call void @{nccl:lsa_barrier_sync}(%session* %s, %coop %coop, i32 %order)
  call void @cudajit_nccl_shim_leave(i8* %session, i8* %sp)
  ret void
}

; BEGIN lsa_barrier_destroy
; Persists the barrier epoch for the next kernel (the session's destructor). The 2.31
; .ltoir has no ncclLsaBarrierSessionDestroy: shim.rs then leaves this function out, so a
; kernel that ends a session fails to link, naming this symbol, instead of silently
; losing the epoch (the next kernel's barrier would stop synchronising).
define void @cudajit_nccl_lsa_barrier_destroy(i8* %session) alwaysinline {
  %full = alloca [80 x i8], align 16
  %sp = getelementptr [80 x i8], [80 x i8]* %full, i64 0, i64 0
  call void @cudajit_nccl_shim_enter(i8* %session, i8* %sp)
  %s = bitcast i8* %sp to %session*
  call void @{nccl:lsa_barrier_destroy}(%session* %s)
  ret void
}

declare void @{nccl:lsa_barrier_destroy}(%session*)
; END lsa_barrier_destroy

; ---- LSA barrier sessions of a warp (ncclCoopWarp): as above, with the warp's coop

define internal %coop @cudajit_nccl_shim_warp() alwaysinline {
  %slot = alloca %coop, align 8
  call void @{nccl:coop_init_warp}(%coop* %slot)
  %coop = load %coop, %coop* %slot, align 8
  ret %coop %coop
}

define internal void @cudajit_nccl_shim_enter_warp(i8* %saved, i8* %full) alwaysinline {
  %coop = call %coop @cudajit_nccl_shim_warp()
  %coop_slot = bitcast i8* %full to %coop*
  store %coop %coop, %coop* %coop_slot, align 8
  %state = getelementptr i8, i8* %full, i64 24
  call void @llvm.memcpy.p0i8.p0i8.i64(i8* align 8 %state, i8* align 16 %saved, i64 56, i1 false)
  ret void
}

define void @cudajit_nccl_lsa_barrier_init_warp(i8* %session, i8* %comm, i32 %index) alwaysinline {
  %full = alloca [80 x i8], align 16
  %sp = getelementptr [80 x i8], [80 x i8]* %full, i64 0, i64 0
  %s = bitcast i8* %sp to %session*
  %c = bitcast i8* %comm to %comm*
  %coop = call %coop @cudajit_nccl_shim_warp()
  %team = call %team @cudajit_nccl_shim_team_lsa(%comm* %c)
  %handle = call %bar @{nccl:lsa_barrier_handle}(%comm* %c)
  call void @{nccl:lsa_barrier_init}(%session* %s, %coop %coop, %comm* %c, %team %team, %bar %handle, i32 %index, i8 0, %mm zeroinitializer)
  call void @cudajit_nccl_shim_leave(i8* %session, i8* %sp)
  ret void
}

define void @cudajit_nccl_lsa_barrier_arrive_warp(i8* %session, i32 %order) alwaysinline {
  %full = alloca [80 x i8], align 16
  %sp = getelementptr [80 x i8], [80 x i8]* %full, i64 0, i64 0
  call void @cudajit_nccl_shim_enter_warp(i8* %session, i8* %sp)
  %s = bitcast i8* %sp to %session*
  %coop = call %coop @cudajit_nccl_shim_warp()
  call void @{nccl:lsa_barrier_arrive}(%session* %s, %coop %coop, i32 %order)
  call void @cudajit_nccl_shim_leave(i8* %session, i8* %sp)
  ret void
}

define void @cudajit_nccl_lsa_barrier_wait_warp(i8* %session, i32 %order) alwaysinline {
  %full = alloca [80 x i8], align 16
  %sp = getelementptr [80 x i8], [80 x i8]* %full, i64 0, i64 0
  call void @cudajit_nccl_shim_enter_warp(i8* %session, i8* %sp)
  %s = bitcast i8* %sp to %session*
  %coop = call %coop @cudajit_nccl_shim_warp()
  call void @{nccl:lsa_barrier_wait}(%session* %s, %coop %coop, i32 %order)
  call void @cudajit_nccl_shim_leave(i8* %session, i8* %sp)
  ret void
}

define void @cudajit_nccl_lsa_barrier_sync_warp(i8* %session, i32 %order) alwaysinline {
  %full = alloca [80 x i8], align 16
  %sp = getelementptr [80 x i8], [80 x i8]* %full, i64 0, i64 0
  call void @cudajit_nccl_shim_enter_warp(i8* %session, i8* %sp)
  %s = bitcast i8* %sp to %session*
  %coop = call %coop @cudajit_nccl_shim_warp()
  call void @{nccl:lsa_barrier_sync}(%session* %s, %coop %coop, i32 %order)
  call void @cudajit_nccl_shim_leave(i8* %session, i8* %sp)
  ret void
}

; BEGIN lsa_barrier_destroy_warp
define void @cudajit_nccl_lsa_barrier_destroy_warp(i8* %session) alwaysinline {
  %full = alloca [80 x i8], align 16
  %sp = getelementptr [80 x i8], [80 x i8]* %full, i64 0, i64 0
  call void @cudajit_nccl_shim_enter_warp(i8* %session, i8* %sp)
  %s = bitcast i8* %sp to %session*
  call void @{nccl:lsa_barrier_destroy}(%session* %s)
  ret void
}
; END lsa_barrier_destroy_warp

declare void @{nccl:coop_init_warp}(%coop*)

; ---- LSA barrier sessions of the other cooperative groups: a thread (ncclCoopThread),
; some lanes of a warp (ncclCoopLanes) and consecutive warps of a CTA (ncclCoopWarpSpan).
; As above, the caller's buffer holds the session's bytes [24, 80) in its bytes [0, 56),
; and each call rebuilds the coop. The lanes' and warp span's coops have parameters (the
; lane mask; warp0, nWarps and id), which the kernel gives only at init: init stores them
; in the buffer's bytes [56, 60), which the session's bytes leave free, as one i32 (the
; lane mask; warp0 | nWarps << 8 | id << 16, as ncclCoopWarpSpan's 8-bit fields hold
; them), and every later call rebuilds the coop from it.

; A thread coop, by value (also the coop of the GIN calls below).
define internal %coop @cudajit_nccl_shim_thread() alwaysinline {
  %slot = alloca %coop, align 8
  call void @{nccl:coop_init_thread}(%coop* %slot)
  %coop = load %coop, %coop* %slot, align 8
  ret %coop %coop
}

; A lanes coop of `mask`, by value.
define internal %coop @cudajit_nccl_shim_lanes(i32 %mask) alwaysinline {
  %slot = alloca %coop, align 8
  call void @{nccl:coop_init_lanes}(%coop* %slot, i32 %mask)
  %coop = load %coop, %coop* %slot, align 8
  ret %coop %coop
}

; A warp span coop of the packed `span` (warp0 | nWarps << 8 | id << 16), by value.
define internal %coop @cudajit_nccl_shim_warp_span(i32 %span) alwaysinline {
  %slot = alloca %coop, align 8
  %warp0 = and i32 %span, 255
  %nw = lshr i32 %span, 8
  %nwarps = and i32 %nw, 255
  %i = lshr i32 %span, 16
  %id = and i32 %i, 255
  call void @{nccl:coop_init_warp_span}(%coop* %slot, i32 %warp0, i32 %nwarps, i32 %id)
  %coop = load %coop, %coop* %slot, align 8
  ret %coop %coop
}

; The coop's parameter in the caller's buffer (bytes [56, 60)).
define internal i32 @cudajit_nccl_shim_load_param(i8* %saved) alwaysinline {
  %p = getelementptr i8, i8* %saved, i64 56
  %q = bitcast i8* %p to i32*
  %v = load i32, i32* %q, align 8
  ret i32 %v
}

define internal void @cudajit_nccl_shim_store_param(i8* %saved, i32 %v) alwaysinline {
  %p = getelementptr i8, i8* %saved, i64 56
  %q = bitcast i8* %p to i32*
  store i32 %v, i32* %q, align 8
  ret void
}

; The full session in `full` (80 bytes): `coop`, then the caller's 56 bytes.
define internal void @cudajit_nccl_shim_enter_coop(i8* %saved, i8* %full, %coop %coop) alwaysinline {
  %coop_slot = bitcast i8* %full to %coop*
  store %coop %coop, %coop* %coop_slot, align 8
  %state = getelementptr i8, i8* %full, i64 24
  call void @llvm.memcpy.p0i8.p0i8.i64(i8* align 8 %state, i8* align 16 %saved, i64 56, i1 false)
  ret void
}

; A session of `coop` in the caller's buffer `session` (the LSA team, the communicator's
; LSA barrier, unicast: as cudajit_nccl_lsa_barrier_init).
define internal void @cudajit_nccl_shim_init_coop(i8* %session, i8* %comm, i32 %index, %coop %coop) alwaysinline {
  %full = alloca [80 x i8], align 16
  %sp = getelementptr [80 x i8], [80 x i8]* %full, i64 0, i64 0
  %s = bitcast i8* %sp to %session*
  %c = bitcast i8* %comm to %comm*
  %team = call %team @cudajit_nccl_shim_team_lsa(%comm* %c)
  %handle = call %bar @{nccl:lsa_barrier_handle}(%comm* %c)
  call void @{nccl:lsa_barrier_init}(%session* %s, %coop %coop, %comm* %c, %team %team, %bar %handle, i32 %index, i8 0, %mm zeroinitializer)
  call void @cudajit_nccl_shim_leave(i8* %session, i8* %sp)
  ret void
}

; Arrive (0), wait (1) or sync (2) on the session of `coop` in `session`.
define internal void @cudajit_nccl_shim_step_coop(i8* %session, i32 %order, %coop %coop, i32 %step) alwaysinline {
  %full = alloca [80 x i8], align 16
  %sp = getelementptr [80 x i8], [80 x i8]* %full, i64 0, i64 0
  call void @cudajit_nccl_shim_enter_coop(i8* %session, i8* %sp, %coop %coop)
  %s = bitcast i8* %sp to %session*
  switch i32 %step, label %sync [ i32 0, label %arrive
                                  i32 1, label %wait ]
arrive:
  call void @{nccl:lsa_barrier_arrive}(%session* %s, %coop %coop, i32 %order)
  br label %done
wait:
  call void @{nccl:lsa_barrier_wait}(%session* %s, %coop %coop, i32 %order)
  br label %done
sync:
  call void @{nccl:lsa_barrier_sync}(%session* %s, %coop %coop, i32 %order)
  br label %done
done:
  call void @cudajit_nccl_shim_leave(i8* %session, i8* %sp)
  ret void
}

define void @cudajit_nccl_lsa_barrier_init_thread(i8* %session, i8* %comm, i32 %index) alwaysinline {
  %coop = call %coop @cudajit_nccl_shim_thread()
  call void @cudajit_nccl_shim_init_coop(i8* %session, i8* %comm, i32 %index, %coop %coop)
  ret void
}

define void @cudajit_nccl_lsa_barrier_arrive_thread(i8* %session, i32 %order) alwaysinline {
  %coop = call %coop @cudajit_nccl_shim_thread()
  call void @cudajit_nccl_shim_step_coop(i8* %session, i32 %order, %coop %coop, i32 0)
  ret void
}

define void @cudajit_nccl_lsa_barrier_wait_thread(i8* %session, i32 %order) alwaysinline {
  %coop = call %coop @cudajit_nccl_shim_thread()
  call void @cudajit_nccl_shim_step_coop(i8* %session, i32 %order, %coop %coop, i32 1)
  ret void
}

define void @cudajit_nccl_lsa_barrier_sync_thread(i8* %session, i32 %order) alwaysinline {
  %coop = call %coop @cudajit_nccl_shim_thread()
  call void @cudajit_nccl_shim_step_coop(i8* %session, i32 %order, %coop %coop, i32 2)
  ret void
}

define void @cudajit_nccl_lsa_barrier_init_lanes(i8* %session, i8* %comm, i32 %lane_mask, i32 %index) alwaysinline {
  %coop = call %coop @cudajit_nccl_shim_lanes(i32 %lane_mask)
  call void @cudajit_nccl_shim_init_coop(i8* %session, i8* %comm, i32 %index, %coop %coop)
  call void @cudajit_nccl_shim_store_param(i8* %session, i32 %lane_mask)
  ret void
}

define void @cudajit_nccl_lsa_barrier_arrive_lanes(i8* %session, i32 %order) alwaysinline {
  %mask = call i32 @cudajit_nccl_shim_load_param(i8* %session)
  %coop = call %coop @cudajit_nccl_shim_lanes(i32 %mask)
  call void @cudajit_nccl_shim_step_coop(i8* %session, i32 %order, %coop %coop, i32 0)
  ret void
}

define void @cudajit_nccl_lsa_barrier_wait_lanes(i8* %session, i32 %order) alwaysinline {
  %mask = call i32 @cudajit_nccl_shim_load_param(i8* %session)
  %coop = call %coop @cudajit_nccl_shim_lanes(i32 %mask)
  call void @cudajit_nccl_shim_step_coop(i8* %session, i32 %order, %coop %coop, i32 1)
  ret void
}

define void @cudajit_nccl_lsa_barrier_sync_lanes(i8* %session, i32 %order) alwaysinline {
  %mask = call i32 @cudajit_nccl_shim_load_param(i8* %session)
  %coop = call %coop @cudajit_nccl_shim_lanes(i32 %mask)
  call void @cudajit_nccl_shim_step_coop(i8* %session, i32 %order, %coop %coop, i32 2)
  ret void
}

define void @cudajit_nccl_lsa_barrier_init_warp_span(i8* %session, i8* %comm, i32 %warp0, i32 %nwarps, i32 %id, i32 %index) alwaysinline {
  %w = and i32 %warp0, 255
  %n0 = and i32 %nwarps, 255
  %n = shl i32 %n0, 8
  %i0 = and i32 %id, 255
  %i = shl i32 %i0, 16
  %wn = or i32 %w, %n
  %span = or i32 %wn, %i
  %coop = call %coop @cudajit_nccl_shim_warp_span(i32 %span)
  call void @cudajit_nccl_shim_init_coop(i8* %session, i8* %comm, i32 %index, %coop %coop)
  call void @cudajit_nccl_shim_store_param(i8* %session, i32 %span)
  ret void
}

define void @cudajit_nccl_lsa_barrier_arrive_warp_span(i8* %session, i32 %order) alwaysinline {
  %span = call i32 @cudajit_nccl_shim_load_param(i8* %session)
  %coop = call %coop @cudajit_nccl_shim_warp_span(i32 %span)
  call void @cudajit_nccl_shim_step_coop(i8* %session, i32 %order, %coop %coop, i32 0)
  ret void
}

define void @cudajit_nccl_lsa_barrier_wait_warp_span(i8* %session, i32 %order) alwaysinline {
  %span = call i32 @cudajit_nccl_shim_load_param(i8* %session)
  %coop = call %coop @cudajit_nccl_shim_warp_span(i32 %span)
  call void @cudajit_nccl_shim_step_coop(i8* %session, i32 %order, %coop %coop, i32 1)
  ret void
}

define void @cudajit_nccl_lsa_barrier_sync_warp_span(i8* %session, i32 %order) alwaysinline {
  %span = call i32 @cudajit_nccl_shim_load_param(i8* %session)
  %coop = call %coop @cudajit_nccl_shim_warp_span(i32 %span)
  call void @cudajit_nccl_shim_step_coop(i8* %session, i32 %order, %coop %coop, i32 2)
  ret void
}

; The destroys: left out with the .ltoir's destroy (2.31), like the CTA's.
; BEGIN lsa_barrier_destroy_coops
define internal void @cudajit_nccl_shim_destroy_coop(i8* %session, %coop %coop) alwaysinline {
  %full = alloca [80 x i8], align 16
  %sp = getelementptr [80 x i8], [80 x i8]* %full, i64 0, i64 0
  call void @cudajit_nccl_shim_enter_coop(i8* %session, i8* %sp, %coop %coop)
  %s = bitcast i8* %sp to %session*
  call void @{nccl:lsa_barrier_destroy}(%session* %s)
  ret void
}

define void @cudajit_nccl_lsa_barrier_destroy_thread(i8* %session) alwaysinline {
  %coop = call %coop @cudajit_nccl_shim_thread()
  call void @cudajit_nccl_shim_destroy_coop(i8* %session, %coop %coop)
  ret void
}

define void @cudajit_nccl_lsa_barrier_destroy_lanes(i8* %session) alwaysinline {
  %mask = call i32 @cudajit_nccl_shim_load_param(i8* %session)
  %coop = call %coop @cudajit_nccl_shim_lanes(i32 %mask)
  call void @cudajit_nccl_shim_destroy_coop(i8* %session, %coop %coop)
  ret void
}

define void @cudajit_nccl_lsa_barrier_destroy_warp_span(i8* %session) alwaysinline {
  %span = call i32 @cudajit_nccl_shim_load_param(i8* %session)
  %coop = call %coop @cudajit_nccl_shim_warp_span(i32 %span)
  call void @cudajit_nccl_shim_destroy_coop(i8* %session, %coop %coop)
  ret void
}
; END lsa_barrier_destroy_coops

declare void @{nccl:coop_init_thread}(%coop*)
declare void @{nccl:coop_init_lanes}(%coop*, i32)
declare void @{nccl:coop_init_warp_span}(%coop*, i32, i32, i32)

; BEGIN gin
; ---- GIN (GPU-initiated networking): the .ltoir of 2.32+ only. shim.rs leaves this section
; out for a table without GIN (2.31), so a kernel calling GIN fails to link there, naming
; the cudajit_nccl_gin_* function.
;
; Each function builds GIN context `context` of the communicator in a local ncclGin_C
; (48 bytes, align 8; symbols.rs), as C++'s `ncclGin net(*comm, context)` does:
; ncclGin_C_init with the backend mask NCCL_GIN_BACKEND_MASK_ALL of the 2.32.3 headers (60:
; proxy, GDAKI, GPI, EFA-GDA) and GPU resource sharing. The handle only caches the
; communicator's GIN state for that context (signal shadows live in the communicator), so
; rebuilding it per call is what C++ kernels constructing `ncclGin` do, and inlines.
; Peers are world ranks (ncclTeamWorld), the coop the calling thread (ncclCoopThread, the
; C++ default of put and signal), releases as C++'s defaults (given thread_scope_thread = 10,
; required thread_scope_device = 1), no counter, no descriptor; signals are ncclGinSignalInc
; (0) by 1; waits, reads and flushes acquire (cuda::memory_order_acquire = 2), 64-bit.

; ncclTeamWorld(comm) = { comm.nRanks, comm.rank, 1 } (core__funcs.h).
define internal %team @cudajit_nccl_shim_team_world(%comm* %c) alwaysinline {
  %size = call i32 @{nccl:nranks}(%comm* %c)
  %rank = call i32 @{nccl:rank}(%comm* %c)
  %t0 = insertvalue %team undef, i32 %size, 0
  %t1 = insertvalue %team %t0, i32 %rank, 1
  %t2 = insertvalue %team %t1, i32 1, 2
  ret %team %t2
}

; GIN context `context` of `comm` into the 48 bytes at `net`.
define internal void @cudajit_nccl_shim_gin(i8* %net, i8* %comm, i32 %context) alwaysinline {
  %c = bitcast i8* %comm to %comm*
  call void @{nccl:gin_init}(i8* %net, i32 60, %comm* %c, i32 %context)
  ret void
}

; Puts `bytes` bytes at `src_offset` of this rank's part of `src_window` to `dst_offset` of
; world rank `peer`'s part of `dst_window`; once they landed, bumps the peer's signal
; `signal` by one, unless `signal` is 0xFFFFFFFF (GIN_NO_SIGNAL).
define void @cudajit_nccl_gin_put(i8* %comm, i32 %context, i32 %peer, i64 %dst_window, i64 %dst_offset, i64 %src_window, i64 %src_offset, i64 %bytes, i32 %signal) alwaysinline {
  %net = alloca [48 x i8], align 8
  %n = getelementptr [48 x i8], [48 x i8]* %net, i64 0, i64 0
  call void @cudajit_nccl_shim_gin(i8* %n, i8* %comm, i32 %context)
  %c = bitcast i8* %comm to %comm*
  %team = call %team @cudajit_nccl_shim_team_world(%comm* %c)
  %coop = call %coop @cudajit_nccl_shim_thread()
  %dw = inttoptr i64 %dst_window to i8*
  %sw = inttoptr i64 %src_window to i8*
  %has = icmp ne i32 %signal, -1
  %is_signal = zext i1 %has to i8
  %id = select i1 %has, i32 %signal, i32 0
  call void @{nccl:gin_put}(i8* %n, %team %team, i32 %peer, i8* %dw, i64 %dst_offset, i8* %sw, i64 %src_offset, i64 %bytes, i8 %is_signal, i32 %id, i32 0, i64 1, i8 0, i32 0, %coop %coop, i8 0, i8* null, i32 10, i32 1)
  ret void
}

; Bumps world rank `peer`'s signal `signal` by one, after this thread's earlier puts to it.
define void @cudajit_nccl_gin_signal(i8* %comm, i32 %context, i32 %peer, i32 %signal) alwaysinline {
  %net = alloca [48 x i8], align 8
  %n = getelementptr [48 x i8], [48 x i8]* %net, i64 0, i64 0
  call void @cudajit_nccl_shim_gin(i8* %n, i8* %comm, i32 %context)
  %c = bitcast i8* %comm to %comm*
  %team = call %team @cudajit_nccl_shim_team_world(%comm* %c)
  %coop = call %coop @cudajit_nccl_shim_thread()
  call void @{nccl:gin_signal}(i8* %n, %team %team, i32 %peer, i8 1, i32 %signal, i32 0, i64 1, %coop %coop, i8 0, i8* null, i32 10, i32 1)
  ret void
}

; Waits until this rank's signal `signal` is at least `least` (rolling 64-bit comparison).
define void @cudajit_nccl_gin_wait_signal(i8* %comm, i32 %context, i32 %signal, i64 %least) alwaysinline {
  %net = alloca [48 x i8], align 8
  %n = getelementptr [48 x i8], [48 x i8]* %net, i64 0, i64 0
  call void @cudajit_nccl_shim_gin(i8* %n, i8* %comm, i32 %context)
  %coop = call %coop @cudajit_nccl_shim_thread()
  call void @{nccl:gin_wait_signal}(i8* %n, %coop %coop, i32 %signal, i64 %least, i32 64, i32 2)
  ret void
}

; Waits until this thread's GIN operations on context `context` are locally complete
; (their source buffers may be reused).
define void @cudajit_nccl_gin_flush(i8* %comm, i32 %context) alwaysinline {
  %net = alloca [48 x i8], align 8
  %n = getelementptr [48 x i8], [48 x i8]* %net, i64 0, i64 0
  call void @cudajit_nccl_shim_gin(i8* %n, i8* %comm, i32 %context)
  %coop = call %coop @cudajit_nccl_shim_thread()
  call void @{nccl:gin_flush}(i8* %n, %coop %coop, i32 2)
  ret void
}

; This rank's signal `signal`.
define i64 @cudajit_nccl_gin_read_signal(i8* %comm, i32 %context, i32 %signal) alwaysinline {
  %net = alloca [48 x i8], align 8
  %n = getelementptr [48 x i8], [48 x i8]* %net, i64 0, i64 0
  call void @cudajit_nccl_shim_gin(i8* %n, i8* %comm, i32 %context)
  %v = call i64 @{nccl:gin_read_signal}(i8* %n, i32 %signal, i32 64, i32 2)
  ret i64 %v
}

; Resets this rank's signal `signal` to zero (no peer may be bumping it).
define void @cudajit_nccl_gin_reset_signal(i8* %comm, i32 %context, i32 %signal) alwaysinline {
  %net = alloca [48 x i8], align 8
  %n = getelementptr [48 x i8], [48 x i8]* %net, i64 0, i64 0
  call void @cudajit_nccl_shim_gin(i8* %n, i8* %comm, i32 %context)
  call void @{nccl:gin_reset_signal}(i8* %n, i32 %signal)
  ret void
}

declare void @{nccl:gin_init}(i8*, i32, %comm*, i32)
declare void @{nccl:gin_put}(i8*, %team, i32, i8*, i64, i8*, i64, i64, i8, i32, i32, i64, i8, i32, %coop, i8, i8*, i32, i32)
declare void @{nccl:gin_signal}(i8*, %team, i32, i8, i32, i32, i64, %coop, i8, i8*, i32, i32)
declare void @{nccl:gin_wait_signal}(i8*, %coop, i32, i64, i32, i32)
declare void @{nccl:gin_flush}(i8*, %coop, i32)
declare i64 @{nccl:gin_read_signal}(i8*, i32, i32, i32)
declare void @{nccl:gin_reset_signal}(i8*, i32)
; END gin

declare i8* @{nccl:lsa_pointer}(i8*, i64, i32)
declare i8* @{nccl:peer_pointer}(i8*, i64, i32)
declare i8* @{nccl:local_pointer}(i8*, i64)
declare i32 @{nccl:rank}(%comm*)
declare i32 @{nccl:nranks}(%comm*)
declare i32 @{nccl:lsa_rank}(%comm*)
declare i32 @{nccl:lsa_size}(%comm*)
declare i32 @{nccl:lsa_rank_to_world}(%comm*, %team, i32)
declare void @{nccl:coop_init_cta}(%coop*)
declare %bar @{nccl:lsa_barrier_handle}(%comm*)
declare void @{nccl:lsa_barrier_init}(%session*, %coop, %comm*, %team, %bar, i32, i8, %mm)
declare void @{nccl:lsa_barrier_arrive}(%session*, %coop, i32)
declare void @{nccl:lsa_barrier_wait}(%session*, %coop, i32)
declare void @{nccl:lsa_barrier_sync}(%session*, %coop, i32)
declare void @llvm.memcpy.p0i8.p0i8.i64(i8* nocapture, i8* nocapture readonly, i64, i1)

!nvvmir.version = !{!0}
!0 = !{i32 2, i32 0}
