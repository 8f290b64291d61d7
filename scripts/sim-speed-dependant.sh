#!/usr/bin/env bash
# The CPU simulator's speed as a program depending on cudajit sees it: a fresh `cargo init`
# project with a path dependency on this checkout, running SAXPY over 1 Mi elements on the
# simulator (1 Mi threads; the best of 5 launches after one that prepares the kernel) in
# three builds: a debug build as cargo makes it, a debug build with the simulator alone
# optimised (`[profile.dev.package.cudajit-sim] opt-level = 3`, the README's advice), and a
# release build; on one host thread and on every core. Prints one line per build;
# docs/simulator.md has the figures.
#
#   scripts/sim-speed-dependant.sh [DIR]      (default: target/sim-speed-dependant)
#
# CARGO_TARGET_DIR is honoured (share it with the checkout's to reuse compiled crates);
# CUDAJIT_PATH names another checkout to depend on (to compare two versions).
set -euo pipefail

repo=${CUDAJIT_PATH:-$(cd "$(dirname "$0")/.." && pwd)}
dir=${1:-$repo/target/sim-speed-dependant}
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
cargo init --quiet --bin --vcs none --name sim_speed
cat >> Cargo.toml <<EOF
cudajit = { path = "$repo" }
EOF
cat > src/main.rs <<'EOF'
use cudajit::prelude::*;
use cudajit::{SimOptions, SimStream};

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] += a * x[i];
    }
}

/// The best of 5 launches (after one that prepares the kernel) on `workers` host threads
/// (0: every core), in seconds, the result checked.
fn best_of_five(workers: usize, x: &[f32], y0: &[f32]) -> Result<(usize, f64), cudajit::Error> {
    let options = SimOptions {
        workers,
        ..SimOptions::default()
    };
    let threads = options.resolved_workers();
    let stream = SimStream::with_options(options);
    let n = x.len();
    let dx = stream.clone_htod(x)?;
    let mut dy = stream.clone_htod(y0)?;
    saxpy::launch(&stream, LaunchConfig::for_elements(n), 2.0, &dx, &mut dy)?;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        stream.memcpy_htod(y0, &mut dy)?;
        saxpy::launch(&stream, LaunchConfig::for_elements(n), 2.0, &dx, &mut dy)?;
        let report = stream.last_report().expect("a report of the launch");
        best = best.min(report.elapsed.as_secs_f64());
    }
    let y = stream.clone_dtoh(&dy)?;
    assert!(y.iter().zip(y0).zip(x).all(|((y, y0), x)| *y == y0 + 2.0 * x));
    Ok((threads, best))
}

fn main() -> Result<(), cudajit::Error> {
    let n = 1 << 20;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let y0: Vec<f32> = (0..n).map(|i| (i % 777) as f32).collect();
    let mut line = String::from("SAXPY 1 Mi:");
    for workers in [1, 0] {
        let (threads, best) = best_of_five(workers, &x, &y0)?;
        line += &format!(
            " {threads} host thread(s) {:.0} ms = {:.2} M threads/s;",
            best * 1e3,
            n as f64 / best / 1e6
        );
    }
    println!("{}", line.trim_end_matches(';'));
    Ok(())
}
EOF
run() {
    local label=$1
    shift
    local started=$SECONDS
    cargo build --quiet "$@"
    local built=$((SECONDS - started))
    printf '%-34s (built in %3d s) ' "$label" "$built"
    cargo run --quiet "$@" 2>/dev/null
}
run "debug"
run "debug, cudajit-sim opt-level 3" --config 'profile.dev.package.cudajit-sim.opt-level=3'
run "release" --release
