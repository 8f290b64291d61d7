//! A failed bounds check names the same place on both back ends: the GPU's message (a
//! `printf` format compiled into the NVVM IR) and the simulator's report give the same
//! `file:line:column` and the same function, a device function's own included.
//!
//! The CPU tests read the message out of the NVVM IR (no toolchain needed); the GPU test
//! runs the kernels with `CUDAJIT_BOUNDS_CHECKS=1` and reads the driver's output (skipped
//! without a GPU).

#[path = "common/child.rs"]
mod child;

use cudajit::codegen::compile::{nvvm_ir_with, CompileOptions};
use cudajit::prelude::*;
use cudajit::{Error, SimError, Specialization, Stream};

/// Reads one element past the end in its last thread, in the kernel's own body.
#[kernel]
fn past_the_end(values: &[i32], out: &mut [i32]) {
    let i = global_index();
    if i < out.len() {
        out[i] = values[i + 1];
    }
}

/// The same read, inside a device function.
#[device]
fn next_of(values: &[i32], i: usize) -> i32 {
    values[i + 1]
}

#[kernel]
fn past_the_end_in_device(values: &[i32], out: &mut [i32]) {
    let i = global_index();
    if i < out.len() {
        out[i] = next_of(values, i);
    }
}

/// A sub-slice that runs past the end in its last thread.
#[kernel]
fn range_past_the_end(values: &[i32], out: &mut [i32]) {
    let i = global_index();
    if i < out.len() {
        let pair = &values[i..i + 2];
        out[i] = pair[0];
    }
}

const THREADS: u32 = 64;

/// The 1-based line of this file holding `needle` (once).
fn line_of(needle: &str) -> u32 {
    let source = include_str!("check_locations.rs");
    let mut lines = source
        .lines()
        .enumerate()
        // The needle itself, quoted in a test, is not the line looked for.
        .filter(|(_, line)| line.contains(needle) && !line.contains(&format!("\"{needle}\"")));
    let (index, _) = lines
        .next()
        .unwrap_or_else(|| panic!("`{needle}` not found"));
    assert!(lines.next().is_none(), "`{needle}` found twice");
    index as u32 + 1
}

/// The simulator's report of a kernel's failed check.
fn simulated_failure(
    launch: impl FnOnce(&Stream, &cudajit::Buffer<i32>, &mut cudajit::Buffer<i32>) -> Result<(), Error>,
) -> Box<cudajit::simulator::SimSite> {
    let stream = Stream::simulator();
    let values = stream.clone_htod(&vec![7i32; THREADS as usize]).unwrap();
    let mut out = stream.alloc_zeros::<i32>(THREADS as usize).unwrap();
    let error = launch(&stream, &values, &mut out).expect_err("the last thread reads past the end");
    match error {
        Error::Simulator(SimError::OutOfBounds { site, .. })
        | Error::Simulator(SimError::RangeOutOfBounds { site, .. }) => site,
        other => panic!("expected an out-of-bounds report, got {other}"),
    }
}

/// What the GPU's message names, in the simulator's words.
fn gpu_site(site: &cudajit::simulator::SimSite) -> String {
    let mut text = format!("kernel `{}`, at {}", site.kernel, site.location);
    if site.function != site.kernel {
        text.push_str(&format!(" in `{}`", site.function));
    }
    text
}

fn checked_ir(kernel: &'static cudajit::Kernel) -> String {
    let checked = CompileOptions {
        bounds_checks: true,
        ..CompileOptions::default()
    };
    nvvm_ir_with(kernel.captured(), &Specialization::default(), &checked).unwrap()
}

fn config() -> LaunchConfig {
    LaunchConfig::new(1, THREADS)
}

/// The simulator reports `site` at `needle`'s line and `column` in `function`, and the
/// GPU's message (`what` after the place) in the NVVM IR of `kernel` names the same.
fn assert_same_place(
    site: &cudajit::simulator::SimSite,
    kernel: &'static cudajit::Kernel,
    (needle, column, function): (&str, u32, &str),
    what: &str,
) {
    let line = line_of(needle);
    let place = format!("check_locations.rs:{line}:{column}");
    assert!(site.location.ends_with(&place), "{place}: {site:?}");
    assert_eq!(site.function, function);
    let ir = checked_ir(kernel);
    let expected = format!("{}: {what}", gpu_site(site));
    assert!(ir.contains(&expected), "expected `{expected}` in\n{ir}");
    assert!(!ir.contains(":0:1"), "no unknown positions: {ir}");
}

#[test]
fn an_index_in_the_kernel_names_its_line_on_both_back_ends() {
    let site = simulated_failure(|s, v, o| past_the_end::launch(s, config(), v, o));
    assert_same_place(
        &site,
        &past_the_end::KERNEL,
        ("out[i] = values[i + 1];", 18, "past_the_end"),
        "index out of bounds: the len is %llu but the index is %llu",
    );
}

#[test]
fn an_index_in_a_device_function_names_the_function_and_its_line() {
    let site = simulated_failure(|s, v, o| past_the_end_in_device::launch(s, config(), v, o));
    assert_same_place(
        &site,
        &past_the_end_in_device::KERNEL,
        ("    values[i + 1]", 5, "next_of"),
        "index out of bounds",
    );
    // The device function is named after the place, the kernel before it.
    assert!(gpu_site(&site).starts_with("kernel `past_the_end_in_device`, at "));
    assert!(gpu_site(&site).ends_with(" in `next_of`"));
}

#[test]
fn a_sub_slice_names_its_line_on_both_back_ends() {
    let site = simulated_failure(|s, v, o| range_past_the_end::launch(s, config(), v, o));
    // A sub-slice bound to a name is taken where it is used, so its check is reported
    // there, on both back ends alike.
    assert_same_place(
        &site,
        &range_past_the_end::KERNEL,
        ("out[i] = pair[0];", 18, "range_past_the_end"),
        "range out of bounds",
    );
}

/// Run in a child process by `gpu_bounds_messages_name_the_simulators_place`: a failed
/// check leaves the CUDA context unusable.
#[test]
#[ignore = "run as a child process"]
fn child_bounds_case() {
    let Ok(case) = std::env::var("CUDAJIT_TEST_CASE") else {
        return;
    };
    let stream = Stream::gpu(0).unwrap();
    let values = stream.clone_htod(&vec![7i32; THREADS as usize]).unwrap();
    let mut out = stream.alloc_zeros::<i32>(THREADS as usize).unwrap();
    let launched = match case.as_str() {
        "kernel" => past_the_end::launch(&stream, config(), &values, &mut out),
        "device" => past_the_end_in_device::launch(&stream, config(), &values, &mut out),
        "range" => range_past_the_end::launch(&stream, config(), &values, &mut out),
        other => panic!("unknown case {other}"),
    };
    launched.unwrap();
    match stream.synchronize() {
        Ok(()) => println!("CASE {case}: completed"),
        Err(error) => println!("CASE {case}: synchronize failed: {error}"),
    }
}

#[test]
fn gpu_bounds_messages_name_the_simulators_place() {
    if let Err(error) = cudajit::default_context() {
        eprintln!("skipped: {error}");
        return;
    }
    let cases: [(&str, Box<cudajit::simulator::SimSite>, &str); 3] = [
        (
            "kernel",
            simulated_failure(|s, v, o| past_the_end::launch(s, config(), v, o)),
            "index out of bounds: the len is 64 but the index is 64",
        ),
        (
            "device",
            simulated_failure(|s, v, o| past_the_end_in_device::launch(s, config(), v, o)),
            "index out of bounds: the len is 64 but the index is 64",
        ),
        (
            "range",
            simulated_failure(|s, v, o| range_past_the_end::launch(s, config(), v, o)),
            "range out of bounds: the len is 64 but the range is 63..65",
        ),
    ];
    for (case, site, what) in cases {
        let text = child::run(
            "child_bounds_case",
            &[("CUDAJIT_TEST_CASE", case), ("CUDAJIT_BOUNDS_CHECKS", "1")],
            &[],
        );
        let expected = format!("{}: {what}", gpu_site(&site));
        assert!(
            text.contains(&expected),
            "case {case}: expected `{expected}` in\n{text}"
        );
        assert!(text.contains("CUDA_ERROR_ASSERT"), "case {case}: {text}");
    }
}
