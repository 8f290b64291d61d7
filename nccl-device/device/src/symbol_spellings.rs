//! The device API's spellings of cudajit's C ABI over NCCL agree with its one table,
//! `cudajit_nccl::device_code::symbols`: the `#[extern_device]` `link_name`s of `api.rs`
//! are exactly [`c_abi_symbols`], and `session.rs`'s are some of them. Why a check and not
//! generation: see `symbols.rs`.

use cudajit_nccl::device_code::symbols::{c_abi_symbols, spelling_mismatch as mismatch};

/// Every `#[link_name = "..."]` of `text` (Rust source).
fn link_names(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("#[link_name = \""))
        .filter_map(|rest| rest.split('"').next())
        .collect()
}

#[test]
fn the_facade_links_exactly_the_c_abi() {
    let found = link_names(include_str!("api.rs"));
    assert!(
        found.len() > 30,
        "the parser found too few link names: {found:?}"
    );
    if let Some(message) = mismatch("nccl-device/device/src/api.rs", found, c_abi_symbols()) {
        panic!("{message}");
    }
}

/// `session.rs` declares the CTA barrier functions again, on the session type instead of
/// `[u64; 8]`: its link names are held to the same table (five of its names, nothing else).
#[test]
fn the_session_links_only_names_of_the_table() {
    let found = link_names(include_str!("session.rs"));
    let table: std::collections::BTreeSet<&str> = c_abi_symbols().collect();
    let unknown: Vec<&&str> = found
        .iter()
        .filter(|name| !table.contains(**name))
        .collect();
    assert!(
        found.len() == 5 && unknown.is_empty(),
        "nccl-device/device/src/session.rs links {found:?}; not in symbols.rs's table: {unknown:?}"
    );
}
