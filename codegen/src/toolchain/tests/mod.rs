//! Tests of the toolchain module: discovery against fake directory trees,
//! and real loading/compiling/linking against the NVIDIA wheels when present.

mod discovery;
mod fake_tree;
mod identity;
mod misc;
mod real;
mod site_packages;
