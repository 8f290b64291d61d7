// Kernel bodies are linted like any function: an unused variable is reported at its span
// (denied here, so that it shows as an error), a clean kernel reports nothing.
#![deny(warnings)]

use cudajit::prelude::*;

#[kernel]
fn clean(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = 2.0 * x[i];
    }
}

#[kernel]
fn unused(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    let scale = 2.0f32;
    if i < y.len() {
        y[i] = x[i];
    }
}

fn main() {}
