//! Prints the program of a seed, as the kernel and as the host function:
//! `cargo run -p cudajit-oracle-generator --example print -- SEED`.
fn main() {
    let seed = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let p = cudajit_oracle_generator::program(seed);
    for f in &p.option_fns {
        println!("{}", cudajit_oracle_generator::render::option_fn(f));
    }
    for f in &p.device_fns {
        println!("{}", cudajit_oracle_generator::render::device_fn(f));
    }
    println!(
        "{}",
        cudajit_oracle_generator::render::kernel(&p, &format!("p{seed}"))
    );
    println!(
        "{}",
        cudajit_oracle_generator::render::host(&p, &format!("p{seed}"))
    );
}
