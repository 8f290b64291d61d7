// A kernel, a generic kernel and a device function that the macros reject, used the way
// working ones are: only the rejections are reported, not their call sites.
use cudajit::prelude::*;

#[kernel]
fn fill(y: &mut [f32], value: f32) {
    let i = global_index();
    if i < "hello".len() {
        y[i] = value;
    }
}

#[kernel]
fn window<const W: usize>(#[comptime] scale: u32, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if let Some(v) = x.first() {
        y[i] = v * scale as f32 + W as f32;
    }
}

#[device]
fn twice(v: f32) -> f32 {
    let _label = "twice";
    v * 2.0
}

#[kernel]
fn apply(y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = twice(y[i]);
    }
}

fn main() -> Result<(), cudajit::Error> {
    let stream = cudajit::SimStream::new();
    let x = stream.clone_htod(&[1.0f32; 4])?;
    let mut y = stream.clone_htod(&[0.0f32; 4])?;
    fill::launch(&stream, LaunchConfig::for_elements(4), &mut y, 1.0)?;
    window::launch::<4>(&stream, LaunchConfig::for_elements(4), 2, &x, &mut y)?;
    apply::launch(&stream, LaunchConfig::for_elements(4), &mut y)?;
    let context = cudajit::default_context()?;
    fill::compile(&context)?;
    window::compile::<4>(&context, 2)?;
    println!("{}", fill::KERNEL.captured().name);
    Ok(())
}
