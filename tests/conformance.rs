//! The conformance table of docs/language.md ("Conformance"), kept true mechanically.
//!
//! Every row of the table has an id and a status: "yes", "yes, with limits: …" or
//! "no — write instead: …". This test reads the table and
//!
//! - for each "yes" and "limits" row runs its example, a `#[device]` function of the
//!   group's module under `tests/conformance/`, in one kernel per group on the CPU
//!   simulator (and on a GPU when there is one), and compares every result with rustc's:
//!   the very same function called on the host (a `#[device]` function is a host function
//!   too, as in `tests/rust_fidelity.rs`);
//! - for each "no" row checks that a build-time refusal exists, a case of
//!   `tests/compile_fail/` (which `tests/compile_fail.rs` compiles against its snapshot),
//!   and that its message names the alternative the row gives;
//! - fails when a row has no example or an example has no row, and when the table's
//!   status of a row and the kind of its example disagree.

// The examples are written as the construct each row names, not always clippy's way
// (`a = a * 2.0` is the assignment row, `x[i] / x[i]` makes a NaN, a `let` before the tail
// is what a kernel needs for `[v; N]`).
#![allow(
    clippy::assign_op_pattern,
    clippy::cast_nan_to_int,
    clippy::eq_op,
    clippy::let_and_return,
    clippy::manual_clamp,
    clippy::manual_swap,
    clippy::map_clone,
    clippy::needless_late_init,
    clippy::neg_cmp_op_on_partial_ord,
    clippy::precedence,
    clippy::redundant_slicing
)]

mod common;

use std::collections::BTreeMap;

use cudajit::Stream;

/// One example: the row's id and the function the kernel of its group calls for each
/// element (`x` the input, `i` the element's index); on the host it is rustc's answer.
pub struct Row {
    pub id: &'static str,
    pub example: fn(&[f32], usize) -> f64,
}

/// One group of rows: a kernel that writes every example's result for element `i` to
/// `out[slot * n + i]`, and the examples as a list in the same order, so a row cannot be
/// run without being listed, nor listed without being run.
macro_rules! group {
    ($kernel:ident, $rows:ident { $($id:literal => $example:ident,)* }) => {
        #[kernel]
        #[allow(unused_assignments)]
        fn $kernel(x: &[f32], out: &mut [f64]) {
            let i = global_index();
            if i < x.len() {
                let mut slot = 0usize;
                $(
                    out[slot * x.len() + i] = $example(x, i);
                    slot += 1;
                )*
            }
        }

        pub const $rows: &[$crate::Row] = &[$($crate::Row { id: $id, example: $example }),*];

        /// Runs the group's kernel on `stream` and gives each row's results per element.
        pub fn run(stream: &cudajit::Stream, x: &[f32]) -> Result<Vec<Vec<f64>>, String> {
            let n = x.len();
            let dx = stream.clone_htod(x).unwrap();
            // NaN where no example wrote: a row the kernel skipped cannot match rustc.
            let mut out = stream.clone_htod(&vec![f64::NAN; $rows.len() * n]).unwrap();
            $kernel::launch(stream, LaunchConfig::for_elements(n), &dx, &mut out)
                .map_err(|e| e.to_string())?;
            let got = stream.clone_dtoh(&out).unwrap();
            Ok(got.chunks(n).map(|c| c.to_vec()).collect())
        }
    };
}

#[path = "conformance/expressions.rs"]
mod expressions;
#[path = "conformance/float_methods.rs"]
mod float_methods;
#[path = "conformance/int_methods.rs"]
mod int_methods;
#[path = "conformance/items.rs"]
mod items;
#[path = "conformance/iterators.rs"]
mod iterators;
#[path = "conformance/patterns.rs"]
mod patterns;
#[path = "conformance/refused.rs"]
mod refused;
#[path = "conformance/statements.rs"]
mod statements;
#[path = "conformance/values.rs"]
mod values;

/// A group: its name, its rows, its runner.
type Group = (
    &'static str,
    &'static [Row],
    fn(&Stream, &[f32]) -> Result<Vec<Vec<f64>>, String>,
);

const GROUPS: &[Group] = &[
    ("expressions", expressions::ROWS, expressions::run),
    ("statements", statements::ROWS, statements::run),
    ("patterns", patterns::ROWS, patterns::run),
    ("items", items::ROWS, items::run),
    ("int_methods", int_methods::ROWS, int_methods::run),
    ("float_methods", float_methods::ROWS, float_methods::run),
    ("values", values::ROWS, values::run),
    ("iterators", iterators::ROWS, iterators::run),
];

/// What the table says of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Yes,
    Limits,
    No,
}

/// The rows of docs/language.md's "Conformance" section: id → (status, the row's text).
fn table() -> BTreeMap<String, (Status, String)> {
    let doc = include_str!("../docs/language.md");
    let start = doc
        .find("\n## Conformance\n")
        .expect("docs/language.md has a section `## Conformance`");
    let section = &doc[start + 1..];
    let end = section[3..].find("\n## ").map_or(section.len(), |e| e + 3);
    let mut rows = BTreeMap::new();
    for line in section[..end].lines() {
        let cells: Vec<&str> = line.split(" | ").collect();
        // | `id` | construct | status |
        let Some(id) = cells
            .first()
            .and_then(|c| c.strip_prefix("| `"))
            .and_then(|c| c.strip_suffix('`'))
        else {
            continue;
        };
        let status_cell = cells
            .last()
            .unwrap()
            .trim_end_matches(" |")
            .trim_end_matches('|');
        let status = if status_cell == "yes" {
            Status::Yes
        } else if status_cell.starts_with("yes, with limits: ") {
            Status::Limits
        } else if status_cell.starts_with("no — write instead: ") {
            Status::No
        } else {
            panic!("row `{id}`: the status is `yes`, `yes, with limits: …` or `no — write instead: …`, not `{status_cell}`");
        };
        let previous = rows.insert(id.to_string(), (status, line.to_string()));
        assert!(previous.is_none(), "row `{id}` appears twice in the table");
    }
    assert!(
        rows.len() > 100,
        "the conformance table has only {} rows",
        rows.len()
    );
    rows
}

/// 16 inputs: negative, zero, positive, fractions.
fn inputs() -> Vec<f32> {
    (0..16)
        .map(|i| ((i * 7 % 16) as f32 - 8.0) * 0.75)
        .collect()
}

/// Whether the device's `got` is rustc's `want`: bit for bit, except for the rows computed
/// by libdevice on a GPU, whose functions are each within 2 ulp of the correctly rounded
/// result (a sum of several of them within a few ulp of its largest term).
fn agrees(id: &str, got: f64, want: f64, on_gpu: bool) -> bool {
    if on_gpu && float_methods::LIBDEVICE.contains(&id) {
        // Equal values first: an infinity on both sides has no finite difference; NaN on both
        // sides agrees too (libdevice's NaN payload need not be the host's).
        return got == want
            || (got.is_nan() && want.is_nan())
            || (got - want).abs() <= 1e-5 * want.abs().max(1.0);
    }
    got.to_bits() == want.to_bits()
}

/// Runs every group on `stream` and compares each row with rustc's result.
fn check_examples(stream: &Stream, on_gpu: bool) {
    let x = inputs();
    let mut failures = Vec::new();
    let mut compared = 0;
    for (name, rows, run) in GROUPS {
        let got = match run(stream, &x) {
            Ok(got) => got,
            Err(error) => {
                failures.push(format!("group `{name}` failed: {error}"));
                continue;
            }
        };
        assert_eq!(got.len(), rows.len(), "group `{name}`");
        for (row, got) in rows.iter().zip(&got) {
            for (i, g) in got.iter().enumerate() {
                let Ok(want) = std::panic::catch_unwind(|| (row.example)(&x, i)) else {
                    failures.push(format!("row `{}`: the host's example panicked", row.id));
                    break;
                };
                compared += 1;
                if !agrees(row.id, *g, want, on_gpu) {
                    failures.push(format!(
                        "row `{}` (group `{name}`), element {i}: cudajit {g}, rustc {want}",
                        row.id
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let rows: usize = GROUPS.iter().map(|(_, rows, _)| rows.len()).sum();
    assert_eq!(
        compared,
        rows * x.len(),
        "every row is compared on every element"
    );
}

#[test]
fn table_and_examples_agree() {
    let table = table();
    let mut problems = Vec::new();
    let mut examples = BTreeMap::new();
    for (name, rows, _) in GROUPS {
        for row in *rows {
            if examples.insert(row.id, *name).is_some() {
                problems.push(format!("row `{}` has two examples", row.id));
            }
        }
    }
    let refusals: BTreeMap<&str, &refused::Refusal> =
        refused::REFUSED.iter().map(|r| (r.id, r)).collect();
    for (id, (status, _)) in &table {
        let example = examples.contains_key(id.as_str());
        let refusal = refusals.contains_key(id.as_str());
        match status {
            Status::Yes | Status::Limits if !example => problems.push(format!(
                "row `{id}` says it works but has no example in tests/conformance/"
            )),
            Status::No if !refusal => problems.push(format!(
                "row `{id}` says it is refused but has no refusal in tests/conformance/refused.rs"
            )),
            Status::Yes | Status::Limits if refusal => {
                problems.push(format!("row `{id}` says it works but is listed as refused"))
            }
            Status::No if example => problems.push(format!(
                "row `{id}` says it is refused but has an example that runs"
            )),
            _ => {}
        }
    }
    for id in examples.keys().chain(refusals.keys()) {
        if !table.contains_key(*id) {
            problems.push(format!(
                "`{id}` is tested but has no row in docs/language.md"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn refusals_name_the_alternative() {
    let table = table();
    let mut problems = Vec::new();
    for refusal in refused::REFUSED {
        problems.extend(refusal.check(&table[refusal.id].1));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn examples_on_the_simulator() {
    check_examples(&Stream::simulator(), false);
}

#[test]
fn examples_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    // Bit for bit: the GPU must round each operation as Rust does.
    std::env::set_var("CUDAJIT_FMA", "0");
    check_examples(&Stream::from_cuda(context.default_stream()), true);
}
