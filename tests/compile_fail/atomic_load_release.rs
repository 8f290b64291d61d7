use cudajit::prelude::*;

#[kernel]
fn wait(flag: &[u32], out: &mut [u32]) {
    out[0] = atomic_load(&flag[0], Ordering::Release, Scope::Device);
}

fn main() {}
