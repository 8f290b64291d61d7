//! The reshard kernels (`cudajit::nccl::m2n::kernels`) linked on the CPU
//! against NCCL 2.32.3's shipped `libnccl_device.ltoir` through cudajit's shim
//! (nvJitLink 13.5.37): every NCCL call inlines, but the methods of the `.ltoir`'s
//! type-erased `ncclCoopAny` (docs/nccl.md). The shim keeps the barrier session in local
//! memory (and a copy of the communicator), but the run copy loops use none:
//! no basic block that moves 16-byte vectors of global memory touches local memory or
//! calls.
//!
//! A process loads one NCCL: this file is its own test binary. Needs the wheels of
//! nccl-device/scripts/fetch-wheels.sh (2.32.3 and nvJitLink 13.5.37) and the compiler
//! wheels of scripts/test.sh; skips without them (fails under `CUDAJIT_REQUIRE_TOOLCHAIN=1`).

mod common;
mod m2n_kernels;

#[test]
fn the_reshard_kernels_link_against_the_2_32_ltoir() {
    common::ltoir_2_32::link_each_against_2_32_ltoir(m2n_kernels::every_kernel);
}
