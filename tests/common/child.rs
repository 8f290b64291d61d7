//! Running one ignored test of this test binary in a child process, with variables set
//! for that process alone (a failed GPU assertion leaves its context unusable; a test
//! must not mutate its own, shared, environment).

use std::process::Command;

/// Runs the ignored test `test` of the current test binary with `vars` set and `removed`
/// unset; returns its stdout and stderr together.
pub fn run(test: &str, vars: &[(&str, &str)], removed: &[&str]) -> String {
    let mut command = Command::new(std::env::current_exe().expect("the test binary"));
    command.args(["--ignored", "--exact", test, "--nocapture"]);
    for name in removed {
        command.env_remove(name);
    }
    command.envs(vars.iter().copied());
    let output = command.output().expect("running the child test");
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
