//! The device-library sources that spell the tables' symbol names agree with
//! [`symbols`](super::symbols): `shim_ltoir.ll` defines exactly cudajit's C ABI and calls
//! exactly the `.ltoir` functions the shim maps, and `bridge_2_28.cu` defines exactly the
//! bridge's functions. (Why a check and not generation: see `symbols.rs`.)

use super::bridge;
use super::shim::{CALLED, TEMPLATE};
use super::symbols::{self, c_abi_symbols, spelling_mismatch as mismatch, LTOIR_2_32};

/// The functions `text` (NVVM IR) defines for callers: every `define` but the `internal`
/// helpers.
fn ll_definitions(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim_start)
        .filter(|line| line.starts_with("define ") && !line.starts_with("define internal "))
        .filter_map(|line| {
            let name = &line[line.find('@')? + 1..];
            Some(&name[..name.find('(')?])
        })
        .collect()
}

/// The `@{nccl:NAME}` placeholders of `text`: the `.ltoir` functions it calls.
fn ll_placeholders(text: &str) -> Vec<&str> {
    text.split("@{nccl:")
        .skip(1)
        .filter_map(|rest| rest.find('}').map(|end| &rest[..end]))
        .collect()
}

/// The `__device__` functions `text` (CUDA C++) defines with external linkage: every
/// declaration line starting with `__device__` (the helpers are `static __device__`).
fn cu_definitions(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim_start)
        .filter_map(|line| line.strip_prefix("__device__ "))
        .filter_map(|line| {
            let head = &line[..line.find('(')?];
            head.rsplit(|c: char| c.is_whitespace() || c == '*').next()
        })
        .collect()
}

#[test]
fn the_shim_defines_exactly_the_c_abi() {
    let found = ll_definitions(TEMPLATE);
    assert!(
        found.len() > 30,
        "the parser found too few definitions: {found:?}"
    );
    if let Some(message) = mismatch("shim_ltoir.ll", found, c_abi_symbols()) {
        panic!("{message}");
    }
}

#[test]
fn the_shim_calls_exactly_the_ltoir_functions_it_maps() {
    let names: Vec<&str> = CALLED.iter().map(|f| f.name()).collect();
    if let Some(message) = mismatch(
        "shim_ltoir.ll's @{nccl:NAME} placeholders",
        ll_placeholders(TEMPLATE),
        names.iter().copied(),
    ) {
        panic!("{message}");
    }
    let unmapped: Vec<&str> = CALLED
        .iter()
        .filter(|f| LTOIR_2_32.get(**f).is_none())
        .map(|f| f.name())
        .collect();
    assert!(
        unmapped.is_empty(),
        "the shim calls functions LTOIR_2_32 does not map: {unmapped:?}"
    );
}

#[test]
fn the_bridge_defines_exactly_its_table() {
    let found = cu_definitions(bridge::SOURCE);
    assert!(
        found.len() > 30,
        "the parser found too few definitions: {found:?}"
    );
    let table = symbols::BRIDGE_2_28.entries.iter().map(|e| e.symbol);
    if let Some(message) = mismatch("bridge_2_28.cu", found, table) {
        panic!("{message}");
    }
}

#[test]
fn a_mismatch_names_the_missing_and_the_extra_names() {
    assert_eq!(mismatch("f", ["a", "b"], ["b", "a"]), None);
    let message = mismatch("f.ll", ["a", "c"], ["a", "b"]).expect("they differ");
    assert!(message.contains("f.ll"), "{message}");
    assert!(message.contains(r#"missing ["b"]"#), "{message}");
    assert!(message.contains(r#"not in the table ["c"]"#), "{message}");
}
