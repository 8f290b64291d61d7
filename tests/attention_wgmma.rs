//! The FlashAttention-3-style forward pass of `examples/attention/hopper.rs` (TMA 3-D
//! loads over mbarrier rings, wgmma from descriptors and with P as the register-A
//! operand, `setmaxnreg`, the consumers' ping-pong turns on named barriers) on the CPU
//! simulator, against the f64 host attention of `examples/attention/reference.rs`, at
//! small shapes: head dimensions 64 and 128, bf16 and f16, a sequence that is not a
//! multiple of the 128-row tiles, grouped-query heads, batches of 1 and 2, causal and not.
//! No GPU needed; the GPU twin skips itself without an H100/H200.

#[allow(dead_code)]
#[path = "../examples/attention/hopper.rs"]
mod hopper;
#[allow(dead_code)]
#[path = "../examples/attention/kernels.rs"]
mod kernels;
#[allow(dead_code)]
#[path = "../examples/attention/reference.rs"]
mod reference;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

use cudajit::{bf16, f16, BufferElement, Stream};
use kernels::{Element, Problem};

/// Runs one problem on `stream`; every output within the bounds of the example's
/// reference (those of `tests/attention.rs`).
fn check<T: Element + BufferElement>(stream: &Stream, p: &Problem) {
    let q = reference::random::<T>(1, p.batch * p.heads * p.seq * p.dim);
    let k = reference::random::<T>(2, p.batch * p.kv_heads * p.seq * p.dim);
    let v = reference::random::<T>(3, k.len());
    let (dq, dk, dv) = (
        stream.clone_htod(&q).unwrap(),
        stream.clone_htod(&k).unwrap(),
        stream.clone_htod(&v).unwrap(),
    );
    let mut o = stream.alloc_zeros::<T>(q.len()).unwrap();
    let mut lse = stream
        .alloc_zeros::<f32>(p.batch * p.heads * p.seq)
        .unwrap();
    let shape = (p.batch, p.heads, p.kv_heads, p.seq, p.dim);
    let what = format!("{} {p:?}", T::NAME);
    hopper::launch(stream, shape, p.causal, &dq, &dk, &dv, &mut o, &mut lse)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let (o, lse) = (
        stream.clone_dtoh(&o).unwrap(),
        stream.clone_dtoh(&lse).unwrap(),
    );
    let (worst_o, worst_lse, at) = reference::worst_errors(p, (&q, &k, &v), &o, &lse);
    assert!(
        worst_o <= reference::output_bound::<T>(),
        "{what}: o[{at}] is {worst_o:.2e} off the host's"
    );
    assert!(
        worst_lse <= reference::LSE_BOUND,
        "{what}: a log-sum-exp is {worst_lse:.2e} off the host's"
    );
}

/// The problems: 200 rows are a full 128-row tile and a zero-filled, masked tail of 72 (two
/// K/V tiles, so both stages of the rings and both ping-pong turns run); GQA with two
/// query heads on one KV head; a batch of 2 over the 3-D tensor maps' outer dimension.
fn every_form(stream: &Stream) {
    let problem = |dim, batch, heads, kv_heads, seq, causal| Problem {
        dim,
        // The mma.sync kernel's KV tile: not this kernel's (128 keys at every dimension).
        kv: 128,
        batch,
        heads,
        kv_heads,
        seq,
        causal,
    };
    check::<bf16>(stream, &problem(64, 1, 2, 1, 200, false));
    check::<f16>(stream, &problem(64, 1, 2, 1, 200, true));
    check::<bf16>(stream, &problem(128, 2, 1, 1, 200, true));
    check::<f16>(stream, &problem(128, 1, 1, 1, 256, false));
}

#[test]
fn the_wgmma_attention_matches_the_host_on_the_simulator() {
    every_form(&Stream::simulator());
}

/// The same problems on an H100/H200, through the portable stream and `encode_buffer`.
#[test]
fn gpu_the_wgmma_attention_matches_the_host() {
    let Ok(context) = cudajit::default_context() else {
        eprintln!("skipped: no GPU");
        return;
    };
    if context.compute_capability().unwrap() != (9, 0) {
        eprintln!("skipped: the wgmma attention runs on compute capability 9.0 (sm_90a)");
        return;
    }
    every_form(&Stream::from_cuda(context.default_stream()));
}
