use cudajit::prelude::*;

#[kernel]
extern "C" fn early_exit(n: u32) {
    if n == 0 {
        return;
    }
}

fn main() {}
