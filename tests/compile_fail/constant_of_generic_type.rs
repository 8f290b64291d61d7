use cudajit::prelude::*;

#[kernel]
fn saturate<T: Int>(x: &[T], y: &mut [T]) {
    let i = global_index();
    if i < y.len() && x[i] != T::MAX {
        y[i] = x[i];
    }
}

fn main() {}
