//! A simulator compiled without optimisations (a dependant's debug build, what `cargo run`
//! and `cargo test` make) runs kernels several times slower than an optimised one, and
//! nothing would say so: the first simulated launch of such a build says it once, on
//! stderr, with the one profile setting that optimises the simulator alone.

use std::sync::Once;

/// The optimisation level cargo built this crate at (`build.rs`).
const OPT_LEVEL: &str = env!("CUDAJIT_SIM_OPT_LEVEL");

/// The profile setting that optimises the simulator alone, as the notice gives it.
pub const PROFILE_OVERRIDE: &str = "[profile.dev.package.cudajit-sim]\nopt-level = 3";

static SAID: Once = Once::new();

/// Whether this simulator was built without optimisations.
pub fn unoptimised() -> bool {
    OPT_LEVEL == "0"
}

/// At a launch: the notice, the first time in the process, if the simulator is unoptimised.
pub(crate) fn at_launch() {
    if unoptimised() {
        SAID.call_once(|| eprintln!("{}", notice()));
    }
}

/// The notice's text.
fn notice() -> String {
    let setting = PROFILE_OVERRIDE.replace('\n', "\n    ");
    format!(
        "cudajit: the CPU simulator was compiled without optimisations (a debug build), \
         which runs kernels about 6 times slower; to optimise it alone, keeping the rest of \
         the debug build, add to the Cargo.toml of the workspace:\n\n    {setting}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notice_gives_the_setting() {
        let text = notice();
        assert!(
            text.contains("[profile.dev.package.cudajit-sim]\n    opt-level = 3"),
            "{text}"
        );
    }

    #[test]
    fn the_build_script_passes_cargos_level() {
        assert!(
            ["0", "1", "2", "3", "s", "z"].contains(&OPT_LEVEL),
            "OPT_LEVEL {OPT_LEVEL:?}"
        );
    }
}
