//! A simulator compiled without optimisations (a dependant's debug build, what `cargo run`
//! and `cargo test` make) runs kernels several times slower than an optimised one, and
//! nothing would say so: the first simulated launch of such a build says it once, on
//! stderr, with the one profile setting that optimises the simulator alone.
//! `CUDAJIT_NOTICE_AFTER_S=0`, which turns cudajit's notices off, turns this one off too
//! (the variable's other values are the compile's and launch's notices' business, which
//! report a bad one).

use std::sync::Once;

use cudajit_core::EnvVar;

/// The optimisation level cargo built this crate at (`build.rs`).
const OPT_LEVEL: &str = env!("CUDAJIT_SIM_OPT_LEVEL");

/// The profile setting that optimises the simulator alone, as the notice gives it.
pub const PROFILE_OVERRIDE: &str = "[profile.dev.package.cudajit-sim]\nopt-level = 3";

static SAID: Once = Once::new();

/// Whether this simulator was built without optimisations.
pub fn unoptimised() -> bool {
    OPT_LEVEL == "0"
}

/// At a launch: the notice, the first time in the process, if the simulator is unoptimised
/// and notices are not turned off.
pub(crate) fn at_launch() {
    if unoptimised() {
        SAID.call_once(|| {
            let off = EnvVar::process("CUDAJIT_NOTICE_AFTER_S")
                .seconds(Some("0 turns the notices off"))
                .is_ok_and(|delay| delay.is_some_and(|d| d.is_zero()));
            if !off {
                eprintln!("{}", notice());
            }
        });
    }
}

/// The notice's text.
fn notice() -> String {
    let setting = PROFILE_OVERRIDE.replace('\n', "\n    ");
    format!(
        "cudajit: the CPU simulator was compiled without optimisations (a debug build), \
         which runs kernels about 5 times slower; to optimise it alone, keeping the rest of \
         the debug build, add to your Cargo.toml (the workspace's, if it has one):\n\n    \
         {setting}\n"
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
