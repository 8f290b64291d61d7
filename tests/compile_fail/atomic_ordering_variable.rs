use cudajit::prelude::*;

#[kernel]
fn publish(flag: &mut [u32], order: u32) {
    let ordering = if order == 0 { Ordering::Relaxed } else { Ordering::Release };
    atomic_store(&mut flag[0], 1, ordering, Scope::Device);
}

fn main() {}
