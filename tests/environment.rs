//! Every environment variable cudajit reads: a bad value is an error naming the variable
//! and what it accepts, never a silent default; notices of long operations; the log
//! setting without a subscriber.
//!
//! Each case runs in a child process (this test binary, one ignored test), so the
//! variables are set for that process alone: no test mutates its own environment.

#[path = "common/child.rs"]
mod child;
#[path = "common/long_loop.rs"]
mod long_loop;

use cudajit::prelude::*;
use cudajit::{Arch, Stream};
use long_loop::count_to;

#[kernel]
fn fill(value: u32, out: &mut [u32]) {
    let i = global_index();
    if i < out.len() {
        out[i] = value;
    }
}

const CASE: &str = "CUDAJIT_TEST_ENV_CASE";

/// What a case does in the child: prints `RESULT: ok` or `RESULT: <the error>`.
#[test]
#[ignore = "run as a child process by the other tests"]
fn child_case() {
    let Ok(case) = std::env::var(CASE) else {
        return;
    };
    let outcome: Result<(), cudajit::Error> = (|| match case.as_str() {
        // `Stream::new()` reads CUDAJIT_BACKEND.
        "stream" => Stream::new().map(drop),
        // A simulated launch reads the simulator's variables.
        "simulate" => {
            let stream = Stream::simulator();
            let mut out = stream.alloc_zeros::<u32>(4)?;
            fill::launch(&stream, LaunchConfig::new(1, 4), 7, &mut out)
        }
        "simulate_long" => {
            let stream = Stream::simulator();
            let mut out = stream.alloc_zeros::<u32>(1)?;
            let n: u32 = std::env::var("COUNT").unwrap().parse().unwrap();
            count_to::launch(&stream, LaunchConfig::new(1, 1), n, &mut out)
        }
        // The compile's settings, read before any toolchain is needed.
        "options" => fill::KERNEL.options().map(drop),
        // NVVM IR needs no toolchain; the options come from the environment.
        "nvvm_ir" => fill::KERNEL.nvvm_ir().map(drop),
        "log_init" => cudajit::log::init().map_err(Into::into),
        "init_then_simulate" => {
            cudajit::log::init()?;
            let stream = Stream::simulator();
            let mut out = stream.alloc_zeros::<u32>(4)?;
            fill::launch(&stream, LaunchConfig::new(1, 4), 7, &mut out)
        }
        "compile" => fill::KERNEL.compile_for_arch(Arch::SM_90).map(drop),
        other => panic!("unknown case {other}"),
    })();
    match outcome {
        Ok(()) => println!("RESULT: ok"),
        Err(error) => println!("RESULT: {error}"),
    }
}

/// Runs `case` in a child with `vars` set and every variable the cases read unset
/// otherwise; returns its stdout and stderr.
fn run(case: &str, vars: &[(&str, &str)]) -> String {
    let mut removed: Vec<&str> = BAD_VALUES.iter().map(|(name, _)| *name).collect();
    removed.extend([
        "CUDAJIT_CACHE",
        "CUDAJIT_CACHE_MAX_BYTES",
        "CUDAJIT_CACHE_DIR",
    ]);
    let mut all = vec![(CASE, case)];
    all.extend_from_slice(vars);
    child::run("child_case", &all, &removed)
}

/// Each variable with a value it cannot take, the case that reads it and a word of what
/// it accepts that the error must show.
const BAD_VALUES: &[(&str, (&str, &str, &str))] = &[
    ("CUDAJIT_BACKEND", ("cpu2", "stream", "`sim`")),
    (
        "CUDAJIT_SIM_WATCHDOG_S",
        ("3O", "simulate", "0 turns the watchdog off"),
    ),
    (
        "CUDAJIT_SIM_WATCHDOG_S",
        ("-1", "simulate", "number of seconds"),
    ),
    (
        "CUDAJIT_SIM_WATCHDOG_S",
        ("NaN", "simulate", "number of seconds"),
    ),
    ("CUDAJIT_SIM_THREADS", ("all", "simulate", "whole number")),
    (
        "CUDAJIT_SIM_RACES",
        ("on", "simulate", "`shared`, `global`"),
    ),
    (
        "CUDAJIT_NOTICE_AFTER_S",
        ("soon", "simulate", "0 turns the notices off"),
    ),
    (
        "CUDAJIT_BOUNDS_CHECKS",
        ("yes please", "options", "`0`, `false`"),
    ),
    ("CUDAJIT_FMA", ("2", "nvvm_ir", "`0`, `false`")),
    ("CUDAJIT_LOG", ("cudajit=loud", "log_init", "a level")),
];

#[test]
fn a_bad_value_is_an_error_naming_the_variable_and_what_it_accepts() {
    for &(variable, (value, case, accepts)) in BAD_VALUES {
        let text = run(case, &[(variable, value)]);
        let result = text
            .lines()
            .find_map(|line| line.strip_prefix("RESULT: "))
            .unwrap_or_else(|| panic!("{variable}={value}: no result in\n{text}"));
        assert!(
            result.contains(&format!("{variable}=`{value}` is not valid")),
            "{variable}={value}: {result}"
        );
        assert!(result.contains(accepts), "{variable}={value}: {result}");
        // And a good value of the same variable is accepted.
        let good = match variable {
            "CUDAJIT_BACKEND" => "sim",
            "CUDAJIT_SIM_THREADS" => "2",
            "CUDAJIT_SIM_RACES" => "global",
            "CUDAJIT_BOUNDS_CHECKS" | "CUDAJIT_FMA" => "off",
            "CUDAJIT_LOG" => "debug",
            _ => "0",
        };
        let text = run(case, &[(variable, good)]);
        assert!(text.contains("RESULT: ok"), "{variable}={good}: {text}");
    }
}

#[test]
fn the_cache_settings_are_errors_of_the_compile() {
    // The compile reads the cache's settings once it has a toolchain, so this runs where
    // `compile_for_arch` can.
    if let Err(error) = cudajit::codegen::toolchain::Toolchain::global() {
        assert!(
            std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() != Ok("1"),
            "{error}"
        );
        eprintln!("skipped: no NVIDIA toolchain");
        return;
    }
    for (variable, value) in [("CUDAJIT_CACHE_MAX_BYTES", "lots"), ("CUDAJIT_CACHE", "of")] {
        let dir = std::env::temp_dir().join(format!("cudajit-env-test-{}", std::process::id()));
        let text = run(
            "compile",
            &[
                (variable, value),
                ("CUDAJIT_CACHE_DIR", dir.to_str().unwrap()),
            ],
        );
        assert!(
            text.contains(&format!("{variable}=`{value}` is not valid")),
            "{variable}={value}: {text}"
        );
    }
}

#[test]
fn a_long_simulated_launch_prints_one_notice() {
    let text = run(
        "simulate_long",
        &[("CUDAJIT_NOTICE_AFTER_S", "0.2"), ("COUNT", "200000000")],
    );
    let notices: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("still running after"))
        .collect();
    assert_eq!(notices.len(), 1, "{text}");
    assert!(
        notices[0].contains("kernel `count_to`: simulating on the CPU — still running after 0.2 s"),
        "{text}"
    );
    // A short launch prints none, and `0` turns notices off.
    let quick = run("simulate", &[("CUDAJIT_NOTICE_AFTER_S", "0.2")]);
    assert!(!quick.contains("still running"), "{quick}");
    let off = run(
        "simulate_long",
        &[("CUDAJIT_NOTICE_AFTER_S", "0"), ("COUNT", "20000000")],
    );
    assert!(!off.contains("still running"), "{off}");
}

#[test]
fn the_log_setting_without_a_subscriber_says_so_and_init_logs_the_simulator() {
    // No subscriber: one line saying the setting is unheard, and how to fix it.
    let unheard = run("simulate", &[("CUDAJIT_LOG", "trace")]);
    assert!(unheard.contains("RESULT: ok"), "{unheard}");
    assert_eq!(
        unheard.matches("cudajit::log::init()").count(),
        1,
        "{unheard}"
    );
    // With `cudajit::log::init()` the simulator's path logs at trace level.
    let logged = run("init_then_simulate", &[("CUDAJIT_LOG", "trace")]);
    assert!(logged.contains("RESULT: ok"), "{logged}");
    assert!(
        logged.contains("kernel `fill`: simulating grid"),
        "{logged}"
    );
    assert!(
        logged.contains("prepared for the CPU simulator"),
        "{logged}"
    );
    assert!(!logged.contains("has no tracing subscriber"), "{logged}");
}

/// `fn main() -> Result<(), cudajit::Error>` prints the error with `{:?}`: the readable,
/// multi-line message, not the structure on one line; `{:#?}` keeps the structure.
#[test]
fn errors_print_their_message_for_main_and_their_structure_for_alternate_debug() {
    use cudajit::codegen::compile::CompileError;
    use cudajit::codegen::toolchain::{SearchEnv, Toolchain};
    let missing = Toolchain::discover(&SearchEnv::isolated(Vec::<(String, String)>::new()))
        .expect_err("nothing to find in an empty environment");
    let error = cudajit::Error::Compile(CompileError::Toolchain {
        kernel: "saxpy".into(),
        source: missing,
    });
    let shown = format!("{error:?}");
    assert_eq!(shown, error.to_string());
    assert!(shown.starts_with("kernel `saxpy`: "), "{shown}");
    assert!(
        shown.lines().count() > 3,
        "one line per place searched: {shown}"
    );
    assert!(!shown.contains("Toolchain {"), "{shown}");
    let structure = format!("{error:#?}");
    assert!(
        structure.starts_with("Compile(\n    Toolchain {\n"),
        "{structure}"
    );
}

/// A program's own subscriber (here a scoped one) sees cudajit's events inside its spans,
/// with no `cudajit::log::init()`: the simulator's launch at trace level, in `simulate`.
#[test]
fn a_programs_own_subscriber_sees_cudajits_spans_and_events() {
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let captured = Captured::default();
    let writer = captured.clone();
    let filter: tracing_subscriber::filter::Targets = "cudajit=trace".parse().unwrap();
    let subscriber = tracing_subscriber::layer::SubscriberExt::with(
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish(),
        filter,
    );
    tracing::subscriber::with_default(subscriber, || {
        let stream = Stream::simulator();
        let mut out = stream.alloc_zeros::<u32>(4).unwrap();
        fill::launch(&stream, LaunchConfig::new(1, 4), 7, &mut out).unwrap();
    });
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let launch = text
        .lines()
        .find(|line| line.contains("kernel `fill`: simulated 4 threads"))
        .unwrap_or_else(|| panic!("no launch event in\n{text}"));
    assert!(launch.contains("simulate{kernel=\"fill\"}"), "{launch}");
}
