//! The fused attention of `examples/attention/kernels.rs` (mma.sync, ldmatrix.trans,
//! cp.async with zero fill, `ex2.approx`, quad shuffles) on the CPU simulator, against the
//! f64 host attention of `examples/attention/reference.rs`, at small shapes: bf16 and f16,
//! head dimensions 64, 128 and 256, 32-, 64- and 128-key tiles, sequences with a partial
//! last tile, grouped-query heads, causal and not. No GPU needed. Then what every form
//! compiles to for sm_90: the element type's MMAs, no local memory, no spills.

mod common;

#[allow(dead_code)]
#[path = "../examples/attention/kernels.rs"]
mod kernels;
#[allow(dead_code)]
#[path = "../examples/attention/ptxas.rs"]
mod ptxas;
#[allow(dead_code)]
#[path = "../examples/attention/reference.rs"]
mod reference;

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::core::Scalar;
use cudajit::{bf16, f16, Arch, Stream};
use kernels::{Element, Problem};

/// Runs one problem on `stream`; every output within the example's bounds.
fn check<T: Element + cudajit::BufferElement>(stream: &Stream, p: &Problem) {
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
    kernels::launch(stream, p, &dq, &dk, &dv, &mut o, &mut lse).unwrap();
    let (o, lse) = (
        stream.clone_dtoh(&o).unwrap(),
        stream.clone_dtoh(&lse).unwrap(),
    );
    let (worst_o, worst_lse, at) = reference::worst_errors(p, (&q, &k, &v), &o, &lse);
    let what = format!("{} {p:?}", T::NAME);
    assert!(
        worst_o <= reference::output_bound::<T>(),
        "{what}: o[{at}] is {worst_o:.2e} off the host's"
    );
    assert!(
        worst_lse <= reference::LSE_BOUND,
        "{what}: a log-sum-exp is {worst_lse:.2e} off the host's"
    );
}

fn problem(
    dim: usize,
    kv: usize,
    heads: usize,
    kv_heads: usize,
    seq: usize,
    causal: bool,
) -> Problem {
    Problem {
        dim,
        kv,
        batch: 1,
        heads,
        kv_heads,
        seq,
        causal,
    }
}

#[test]
fn bf16_attention_matches_the_host_on_the_simulator() {
    let stream = Stream::simulator();
    // Two query heads on one KV head (GQA); 80 rows: a full query tile of 64 and a
    // zero-filled, masked tail of 16 — with 64-key tiles a full and a partial one, with
    // 128-key tiles one partial tile that the causal mask cuts along the diagonal.
    for kv in [64, 128] {
        for causal in [false, true] {
            check::<bf16>(&stream, &problem(64, kv, 2, 1, 80, causal));
        }
    }
    check::<bf16>(&stream, &problem(128, 64, 1, 1, 64, false));
}

#[test]
fn f16_attention_matches_the_host_on_the_simulator() {
    let stream = Stream::simulator();
    check::<f16>(&stream, &problem(64, 64, 2, 1, 80, true));
    check::<f16>(&stream, &problem(128, 64, 1, 1, 64, false));
}

#[test]
fn head_dimension_256_matches_the_host_on_the_simulator() {
    let stream = Stream::simulator();
    // 32-key tiles: the causal pass over 80 rows masks two tiles of the second query tile
    // (keys 64..96 partly, and the zero-filled tail past 80).
    check::<bf16>(&stream, &problem(256, 32, 1, 1, 80, true));
    check::<f16>(&stream, &problem(256, 32, 1, 1, 40, false));
}

/// On the GPU, every form in both element types: batches of 2, GQA with 1 and 2 KV heads,
/// causal and not, sequences that are not multiples of any tile (100, 200, 257) and one
/// that is (256).
#[test]
fn every_form_and_element_type_matches_the_host_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = Stream::from_cuda(context.default_stream());
    for (dim, kv) in kernels::FORMS {
        for (batch, heads, kv_heads, seq, causal) in [
            (2, 4, 2, 200, true),
            (1, 2, 1, 100, false),
            (1, 2, 2, 257, true),
            (2, 4, 1, 256, false),
        ] {
            let p = Problem {
                dim,
                kv,
                batch,
                heads,
                kv_heads,
                seq,
                causal,
            };
            check::<bf16>(&stream, &p);
            check::<f16>(&stream, &p);
        }
    }
}

#[test]
fn a_form_the_kernel_lacks_is_an_error_naming_the_forms() {
    let stream = Stream::simulator();
    let p = problem(96, 64, 1, 1, 64, false);
    let x = stream.alloc_zeros::<bf16>(64 * 96).unwrap();
    let mut o = stream.alloc_zeros::<bf16>(64 * 96).unwrap();
    let mut lse = stream.alloc_zeros::<f32>(64).unwrap();
    let error = kernels::launch(&stream, &p, &x, &x, &x, &mut o, &mut lse).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("head dimension 96 with 64-key tiles")
            && error.to_string().contains("(256, 32)"),
        "{error}"
    );
}

/// Every form and element type for sm_90: the element type's MMA and pack instructions
/// only, and everything in registers — no `.local` in the PTX, and ptxas (nvJitLink's
/// `-verbose` report of the same link) neither spills nor keeps a stack frame.
#[test]
fn every_form_compiles_to_its_element_type_s_mmas_in_registers() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let captured = kernels::attention_fwd::KERNEL.captured();
    for (dim, kv) in kernels::FORMS {
        for (ty, mine, other) in [
            (Scalar::BF16, "bf16", "f16.f16"),
            (Scalar::F16, "f16", "bf16"),
        ] {
            let spec = kernels::specialization(ty, dim, kv);
            let what = format!("attention_fwd<{mine}, {dim}, {kv}>");
            let ptx = linked_ptx(captured, &spec, Arch::SM_90, &CompileOptions::default())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let mma = format!("mma.sync.aligned.m16n8k16.row.col.f32.{mine}.{mine}.f32");
            // S = Q Kᵀ and O += P V: (D + D) / 16 · KV / 8 MMAs per tile, unrolled — except
            // at D = 256, where LLVM keeps S's 16 k steps (Q read from shared memory each
            // time) a loop, unrolled by a factor of its choosing: P V's D · KV / 128 MMAs
            // and a whole number of k steps of KV / 8.
            let mmas = ptx.matches(&mma).count();
            if dim <= 128 {
                assert_eq!(mmas, dim * kv / 64, "{what}: {mma}");
            } else {
                let qk = mmas - dim * kv / 128;
                assert!(qk > 0 && qk.is_multiple_of(kv / 8), "{what}: {mmas} {mma}");
            }
            assert!(!ptx.contains(other), "{what}: `{other}` in the PTX");
            assert!(
                ptx.contains(&format!("cvt.rn.{mine}x2.f32")),
                "{what}: pack"
            );
            assert!(!ptx.contains(".local"), "{what}: local memory in the PTX");
            assert!(!ptx.contains("call"), "{what}: a call in the PTX");
            let used = ptxas::resources(captured, &spec).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(used.no_local_memory(), "{what}: {used}");
            assert!(used.registers <= 255, "{what}: {used}");
        }
    }
}
