//! The kernels of the LSA examples against NCCL 2.32.3's shipped `libnccl_device.ltoir`, on
//! the CPU: the provider links cudajit's C-ABI shim and the `.ltoir` (nvJitLink 13.5.37,
//! the first that reads it), and every call of NCCL's API inlines. Only the calls of the
//! `.ltoir`'s type-erased `ncclCoopAny` remain (its vtable is a mutable static LTO cannot
//! fold; docs/nccl.md), and the shim keeps the 80-byte session in local memory.
//!
//! The GIN functions (put, signal, wait, flush, read and reset a signal) are linked the
//! same way, on the CPU only: the GPU machine has no NIC, and 2.28 has no GIN.
//!
//! A process loads one NCCL: this file is its own test binary. Needs the wheels of
//! nccl-device/scripts/fetch-wheels.sh (2.32.3 and nvJitLink 13.5.37) and the compiler
//! wheels of scripts/test.sh; skips without them (fails under `CUDAJIT_REQUIRE_TOOLCHAIN=1`).

mod common;

#[path = "../examples/lsa/kernels.rs"]
mod kernels;

/// A kernel calling every GIN function of `cudajit::nccl::device`; linked, never run
/// (no NIC on the GPU machine, and 2.28 has no GIN).
mod gin {
    use cudajit::nccl::device::{self as nccl, DevComm, Window};
    use cudajit::prelude::*;

    /// Thread 0 of each CTA puts `bytes` bytes of its window to the next world rank
    /// twice (with signal 0, then without), bumps that rank's signal 1, flushes, waits
    /// for its own signals 0 and 1 from the previous rank, stores signal 0 and resets it.
    #[kernel]
    pub fn gin_ring(comm: DevComm, window: Window, bytes: usize, out: &mut [u64]) {
        let peer = (nccl::rank(&comm) + 1) % nccl::nranks(&comm);
        let context = (block_idx().x % 4) as i32;
        if thread_idx().x == 0 {
            nccl::gin_put(&comm, context, peer, window, bytes, window, 0, bytes, 0);
            nccl::gin_put(
                &comm,
                context,
                peer,
                window,
                2 * bytes,
                window,
                0,
                bytes,
                0xffff_ffff, // nccl::GIN_NO_SIGNAL: kernels cannot name constants yet
            );
            nccl::gin_signal(&comm, context, peer, 1);
            nccl::gin_flush(&comm, context);
            nccl::gin_wait_signal(&comm, context, 0, 1);
            nccl::gin_wait_signal(&comm, context, 1, 1);
            out[block_idx().x as usize] = nccl::gin_read_signal(&comm, context, 0);
            nccl::gin_reset_signal(&comm, context, 0);
        }
        sync_threads();
    }
}

use cudajit::core::Scalar;
use cudajit::Specialization;

#[test]
fn the_example_kernels_link_against_the_2_32_ltoir() {
    let Some(()) = common::ltoir_2_32::ltoir_or_skip() else {
        return;
    };
    let f32_spec = Specialization {
        types: vec![("T".to_owned(), Scalar::F32)],
        structs: Vec::new(),
        consts: Vec::new(),
    };
    // The coops' initialisers (ncclCoopAnyInit*) inline too: only the methods of the
    // type-erased ncclCoopAny remain (tests/common/ltoir_2_32.rs's checks). The peer reads
    // of the other cooperative groups' sessions copy element by element.
    let plain = Specialization::default;
    for (captured, spec, moves_rows) in [
        (kernels::peer_read::KERNEL.captured(), plain(), true),
        (kernels::peer_read_warps::KERNEL.captured(), plain(), false),
        (
            kernels::peer_read_warp_spans::KERNEL.captured(),
            plain(),
            false,
        ),
        (
            kernels::peer_read_half_warps::KERNEL.captured(),
            plain(),
            false,
        ),
        (
            kernels::peer_read_threads::KERNEL.captured(),
            plain(),
            false,
        ),
        (
            kernels::all_reduce_two_shot::KERNEL.captured(),
            f32_spec,
            true,
        ),
    ] {
        common::ltoir_2_32::link_and_check(captured, &spec, Some(moves_rows));
    }

    // GIN: every function links through the shim and inlines; only the thread coop's
    // ncclCoopAny methods (direct and through its vtable) and __assertfail of the GIN
    // backends' asserts remain. (GIN's own code moves 16-byte vectors: not checked.)
    let captured = gin::gin_ring::KERNEL.captured();
    let spec = Specialization::default();
    let ptx = common::ltoir_2_32::link_and_check(captured, &spec, None);
    let entry = cudajit::core::lower::entry_symbol(captured.name, &spec);
    let table = &cudajit::nccl::device_code::symbols::LTOIR_GIN_ENTRIES;
    for symbol in ["ncclGin"]
        .into_iter()
        .chain(table.iter().map(|e| e.symbol))
    {
        assert!(!ptx.contains(symbol), "{entry}: {symbol} not inlined");
    }
    let mut left: Vec<&str> = ptx
        .lines()
        .filter(|l| l.contains(".func"))
        .map(str::trim)
        .collect();
    left.sort_unstable();
    left.dedup();
    eprintln!("{entry}: functions left in the linked PTX: {left:?}");
}
