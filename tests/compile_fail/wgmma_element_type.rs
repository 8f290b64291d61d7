// A wgmma of an element type the tensor cores do not multiply is rustc's error at the call.
use cudajit::prelude::*;
use cudajit::tensor::wgmma::wgmma;

#[kernel(arch = "sm_90a")]
fn tile(a: u64, b: u64, out: &mut [f32]) {
    let mut acc = [0.0f32; 64];
    wgmma::<f32, false, false>(&mut acc, a, b, false);
    out[0] = acc[0];
}

fn main() {}
