use cudajit::prelude::*;

#[kernel(foo)]
fn fill(y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = 1.0;
    }
}


// Only the architecture-specific targets are a requirement.
#[kernel(arch = "sm_90")]
fn portable_target() {}

#[kernel(arch = sm_90a)]
fn not_a_string() {}

#[device(arch = "sm_90a")]
fn device_with_arch() {}

// A launch bound is a block size: 1 to 1024 threads.
#[kernel(max_threads = 2048)]
fn too_many_threads() {}

#[device(max_threads = 128)]
fn device_with_bound() {}

fn main() {}
