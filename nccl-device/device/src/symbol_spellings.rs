//! The facade's spellings of cudajit's C ABI over NCCL agree with its one table,
//! `cudajit_nccl::device_code::symbols`: the `#[extern_device]` `link_name`s of
//! `device/api.rs` are exactly [`c_abi_symbols`], and the simulator's table holds exactly
//! the bridge's functions ([`BRIDGE_2_28`]; the simulator has no GIN). Why a check and not
//! generation: see `symbols.rs`.

use std::collections::BTreeSet;

use cudajit_nccl::device_code::symbols::{c_abi_symbols, BRIDGE_2_28};

/// `None` when `found` (the names spelled in `file`) is exactly `table`, else a message
/// naming what `file` lacks and what it has that the table does not.
fn mismatch<'a>(
    file: &str,
    found: impl IntoIterator<Item = &'a str>,
    table: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let found: BTreeSet<&str> = found.into_iter().collect();
    let table: BTreeSet<&str> = table.into_iter().collect();
    let missing: Vec<&str> = table.difference(&found).copied().collect();
    let extra: Vec<&str> = found.difference(&table).copied().collect();
    (!missing.is_empty() || !extra.is_empty()).then(|| {
        format!(
            "{file} disagrees with nccl-device/src/device_code/symbols.rs: missing \
             {missing:?}, not in the table {extra:?}"
        )
    })
}

/// Every `#[link_name = "..."]` of `text` (Rust source).
fn link_names(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("#[link_name = \""))
        .filter_map(|rest| rest.split('"').next())
        .collect()
}

#[test]
fn the_facade_links_exactly_the_c_abi() {
    let found = link_names(include_str!("device/api.rs"));
    assert!(
        found.len() > 30,
        "the parser found too few link names: {found:?}"
    );
    if let Some(message) = mismatch("src/nccl/device/api.rs", found, c_abi_symbols()) {
        panic!("{message}");
    }
}

#[test]
fn the_simulator_implements_exactly_the_bridge() {
    let table = BRIDGE_2_28.entries.iter().map(|e| e.symbol);
    if let Some(message) = mismatch("src/nccl/sim.rs's SYMBOLS", super::sim::SYMBOLS, table) {
        panic!("{message}");
    }
}

#[test]
fn a_mismatch_names_the_missing_and_the_extra_names() {
    assert_eq!(mismatch("f", ["a", "b"], ["b", "a"]), None);
    let message = mismatch("f.rs", ["a", "c"], ["a", "b"]).expect("they differ");
    assert!(message.contains(r#"missing ["b"]"#), "{message}");
    assert!(message.contains(r#"not in the table ["c"]"#), "{message}");
}
