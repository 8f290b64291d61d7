// Mutual recursion, which kernels cannot run, is a build error: rustc reports the cycle of
// the functions' CALL_DEPTH constants, naming each function in it.
use cudajit::prelude::*;

#[device]
fn ping(n: u32) -> u32 { if n == 0 { 0 } else { pong(n - 1) + 1 } }

#[device]
fn pong(n: u32) -> u32 { if n == 0 { 0 } else { ping(n - 1) + 2 } }

#[kernel]
fn k1(y: &mut [u32]) {
    let i = global_index();
    if i < y.len() { y[i] = ping(i as u32); }
}

fn main() {}
