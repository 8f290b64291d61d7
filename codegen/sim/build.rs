//! Tells the simulator how it is being optimised: `OPT_LEVEL` is the level cargo builds this
//! package at, the profile's or a `[profile.dev.package.cudajit-sim]` override's (which
//! `cfg!(debug_assertions)` cannot tell apart from a plain debug build). A simulator built
//! at level 0 says so once, at its first launch (`src/build_notice.rs`).

fn main() {
    let level = std::env::var("OPT_LEVEL").unwrap_or_default();
    println!("cargo:rustc-env=CUDAJIT_SIM_OPT_LEVEL={level}");
    println!("cargo:rerun-if-changed=build.rs");
}
