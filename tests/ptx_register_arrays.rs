//! `ptx!` with register arrays: a local array as one operand number standing for its whole
//! register list (`{$0}`), read-only (`arr`) or read and written in place (`&mut arr`, in/out
//! operands: how `wgmma.mma_async` takes its accumulators). On any machine: the NVVM IR's
//! constraints and the PTX's operand lists; a `$N` past the last operand is an error at the
//! `ptx!`. On a GPU: the values that come back. The same through the array parameters of
//! `#[device]` functions (`&mut [u32; N]` in/out, `&[u32; 2]` read), a const generic
//! length among them: how a typed wrapper hands its caller's accumulators to `wgmma`.
//! On the simulator, a branch on a const generic compiles only where it is taken, so an
//! instance never reads the `ptx!` of another length.

mod common;

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::prelude::*;
use cudajit::{Arch, LaunchConfig, Specialization};

/// Packs two words into a u64 from a read-only array, then adds to an in/out array in
/// place: `pair` holds (lo, hi) of `x[t] + added[t]` afterwards.
#[kernel]
fn pack_and_add(x: &[u64], added: &[u64], packed: &mut [u64], pairs: &mut [u32]) {
    let t = thread_idx().x as usize;
    let mut halves = [0u32; 2];
    // `mov.b64 {lo, hi}, x`: the array's two registers written.
    ptx!("mov.b64 {$0}, $1;", &mut halves, x[t]);
    // `mov.b64 d, {lo, hi}`: read back from the array's registers.
    packed[t] = ptx!(u64: "mov.b64 $0, {$1};", halves);
    // In and out: the instruction reads the pair and replaces it.
    ptx!(
        "{\n.reg .b64 t;\nmov.b64 t, {$0};\nadd.u64 t, t, $1;\nmov.b64 {$0}, t;\n}",
        &mut halves,
        added[t]
    );
    pairs[2 * t] = halves[0];
    pairs[2 * t + 1] = halves[1];
}

/// `mov.b64 {lo, hi}, x` into the caller's array (a `&mut` array parameter is in/out).
#[device]
fn split_into<const N: usize>(halves: &mut [u32; N], x: u64) {
    ptx!("mov.b64 {$0}, $1;", halves, x);
}

/// `mov.b64 d, {lo, hi}` from the caller's array (a `&` array parameter is read).
#[device]
fn joined(halves: &[u32; 2]) -> u64 {
    ptx!(u64: "mov.b64 $0, {$1};", halves)
}

/// Adds `a` to the pair in place.
#[device]
fn add_in_place(halves: &mut [u32; 2], a: u64) {
    ptx!(
        "{\n.reg .b64 t;\nmov.b64 t, {$0};\nadd.u64 t, t, $1;\nmov.b64 {$0}, t;\n}",
        halves,
        a
    );
}

/// [`pack_and_add`] through the device functions above.
#[kernel]
fn pack_and_add_in_device_fns(x: &[u64], added: &[u64], packed: &mut [u64], pairs: &mut [u32]) {
    let t = thread_idx().x as usize;
    let mut halves = [0u32; 2];
    split_into::<2>(&mut halves, x[t]);
    packed[t] = joined(&halves);
    add_in_place(&mut halves, added[t]);
    pairs[2 * t] = halves[0];
    pairs[2 * t + 1] = halves[1];
}

/// `$3` of a `ptx!` with three operands.
#[kernel]
fn operand_past_the_end(out: &mut [u32]) {
    let mut acc = [0u32; 4];
    ptx!("mov.b32 $3, $1;", &mut acc, 7u32);
    out[0] = acc[0];
}

#[test]
fn register_arrays_are_operand_lists_tied_in_place() {
    let ir = pack_and_add::KERNEL.nvvm_ir().unwrap();
    // The in/out pair: two outputs, two inputs tied to them (in argument order), then the
    // u64 input, which the template's `$1` became `$4` for.
    assert!(ir.contains("mov.b64 {$0, $1}, $4;"), "{ir}");
    assert!(
        ir.contains("\"=r,=r,0,1,l,~{memory}\""),
        "no tied in/out constraints in\n{ir}"
    );
    // The read-only pair: two plain inputs after the scalar result.
    assert!(ir.contains("\"=l,r,r,~{memory}\""), "{ir}");
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let ptx = linked_ptx(
        pack_and_add::KERNEL.captured(),
        &Specialization::default(),
        Arch::SM_90,
        &CompileOptions::default(),
    )
    .unwrap();
    let lists = ptx
        .lines()
        .filter(|line| line.contains("mov.b64") && line.contains('{'))
        .count();
    assert!(lists >= 3, "{ptx}");
    assert!(!ptx.contains(".local"), "{ptx}");
}

#[test]
fn array_parameters_are_register_lists_in_registers() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let ptx = linked_ptx(
        pack_and_add_in_device_fns::KERNEL.captured(),
        &Specialization::default(),
        Arch::SM_90,
        &CompileOptions::default(),
    )
    .unwrap();
    let lists = ptx
        .lines()
        .filter(|line| line.contains("mov.b64") && line.contains('{'))
        .count();
    assert!(lists >= 3, "{ptx}");
    // The copies into and out of the register lists are register moves once inlined.
    assert!(!ptx.contains(".local"), "{ptx}");
}

#[test]
fn an_operand_number_past_the_end_names_the_count() {
    let error = operand_past_the_end::KERNEL
        .nvvm_ir()
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("`$3` names no operand of this `ptx!`: it has 2"),
        "{error}"
    );
    assert!(
        error.contains("a local array counting as one register list"),
        "{error}"
    );
}

/// Runs `pack_and_add` (or, with `through_device_fns`, `pack_and_add_in_device_fns`) on
/// `stream`: the packed words come back unchanged and each pair holds the halves of
/// `x + added`.
fn check_register_arrays(stream: &cudajit::Stream, through_device_fns: bool) {
    let x: Vec<u64> = (0..64u64)
        .map(|i| 0x0123_4567_89ab_cdef_u64.rotate_left(i as u32) ^ i)
        .collect();
    let added: Vec<u64> = (0..64u64).map(|i| i * 0x1_0000_0001 + 3).collect();
    let x_dev = stream.clone_htod(&x).unwrap();
    let added_dev = stream.clone_htod(&added).unwrap();
    let mut packed = stream.alloc_zeros::<u64>(64).unwrap();
    let mut pairs = stream.alloc_zeros::<u32>(128).unwrap();
    let config = LaunchConfig::new(1, 64);
    if through_device_fns {
        pack_and_add_in_device_fns::launch(
            stream,
            config,
            &x_dev,
            &added_dev,
            &mut packed,
            &mut pairs,
        )
    } else {
        pack_and_add::launch(stream, config, &x_dev, &added_dev, &mut packed, &mut pairs)
    }
    .unwrap();
    assert_eq!(stream.clone_dtoh(&packed).unwrap(), x);
    let pairs = stream.clone_dtoh(&pairs).unwrap();
    for t in 0..64 {
        let sum = x[t].wrapping_add(added[t]);
        assert_eq!(
            (pairs[2 * t], pairs[2 * t + 1]),
            (sum as u32, (sum >> 32) as u32),
            "thread {t}"
        );
    }
}

#[test]
fn gpu_register_arrays_carry_values_both_ways() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = cudajit::Stream::from_cuda(context.default_stream());
    check_register_arrays(&stream, false);
    check_register_arrays(&stream, true);
}

#[test]
fn register_arrays_carry_values_both_ways_on_the_simulator() {
    check_register_arrays(&cudajit::Stream::simulator(), false);
    check_register_arrays(&cudajit::Stream::simulator(), true);
}

/// A `ptx!` per length, chosen by a const generic: `N == 2` splits `x` into both words;
/// any other length counts its bits with `popc`, an instruction the simulator does not
/// run. An instance for 2 compiles only the branch known to be taken (as the GPU's
/// compiler folds the other away), so it runs on the simulator.
#[device]
fn words_of<const N: usize>(words: &mut [u32; N], x: u64) {
    if N == 2 {
        ptx!("mov.b64 {$0}, $1;", words, x);
    } else {
        words[0] = ptx!(u32: "popc.b64 $0, $1;", x);
    }
}

#[kernel]
fn words_by_length(x: &[u64], out: &mut [u32]) {
    let t = thread_idx().x as usize;
    let mut both = [0u32; 2];
    words_of::<2>(&mut both, x[t]);
    out[2 * t] = both[0];
    out[2 * t + 1] = both[1];
}

#[test]
fn a_branch_on_a_const_generic_compiles_only_where_taken_on_the_simulator() {
    let stream = cudajit::Stream::simulator();
    let x: Vec<u64> = (0..32u64).map(|i| (i << 40) | (0xdead_0000 + i)).collect();
    let dx = stream.clone_htod(&x).unwrap();
    let mut out = stream.alloc_zeros::<u32>(2 * 32).unwrap();
    words_by_length::launch(&stream, LaunchConfig::new(1, 32), &dx, &mut out).unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    for (t, &x) in x.iter().enumerate() {
        assert_eq!(
            out[2 * t..2 * t + 2],
            [x as u32, (x >> 32) as u32],
            "thread {t}"
        );
    }
}
