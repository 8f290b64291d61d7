// A wgmma without its transpose flags names the generics it takes.
use cudajit::prelude::*;
use cudajit::tensor::wgmma::wgmma;

#[kernel(arch = "sm_90a")]
fn tile(a: u64, b: u64, out: &mut [f32]) {
    let mut acc = [0.0f32; 64];
    wgmma::<bf16, false>(&mut acc, a, b, false);
    out[0] = acc[0];
}

fn main() {}
