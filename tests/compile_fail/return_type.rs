use cudajit::prelude::*;

// The body diverges so that the function itself is valid Rust.
#[kernel]
fn spin(flag: &mut [u32]) -> u32 {
    loop {
        flag[0] = 1;
    }
}

fn main() {}
