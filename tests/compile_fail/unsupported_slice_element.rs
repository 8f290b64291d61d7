use cudajit::prelude::*;

#[kernel]
fn mark(words: &[String], y: &mut [f32]) {
    let i = global_index();
    if i < words.len() {
        y[i] = 1.0;
    }
}

fn main() {}
