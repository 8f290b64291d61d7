//! Every program of the build (`CUDAJIT_ORACLE_SEEDS`, default a fixed set) compiled by
//! cudajit, run on the CPU simulator (and on a GPU when there is one), and compared bit for
//! bit with the same program compiled by rustc and run on the host.

use cudajit::Stream;
use cudajit_oracle::{compare, run_host, run_kernel, Inputs, PROGRAMS};

#[test]
fn kernels_agree_with_rustc() {
    // The GPU rounds every float operation as Rust does only without FMA contraction.
    std::env::set_var("CUDAJIT_FMA", "0");
    let mut streams = vec![("simulator", Stream::simulator())];
    match cudajit::default_context() {
        Ok(context) => streams.push(("GPU", Stream::from_cuda(context.default_stream()))),
        Err(error) => eprintln!("no GPU ({error}): the programs run on the simulator only"),
    }
    let mut failures = Vec::new();
    let mut agreed = vec![0usize; streams.len()];
    for program in PROGRAMS {
        let inputs = Inputs::new(program);
        let want = run_host(program, &inputs);
        for (k, (name, stream)) in streams.iter().enumerate() {
            match run_kernel(program, stream, &inputs) {
                Ok(got) => {
                    let differences = compare(&want, &got, 8);
                    if differences.is_empty() {
                        agreed[k] += 1;
                    } else {
                        failures.push(format!(
                            "program {} on the {name} disagrees with rustc:\n  {}\n{}",
                            program.seed,
                            differences.join("\n  "),
                            program.source
                        ));
                    }
                }
                Err(error) => failures.push(format!(
                    "program {} failed on the {name}: {error}\n{}",
                    program.seed, program.source
                )),
            }
        }
    }
    for (k, (name, _)) in streams.iter().enumerate() {
        println!(
            "{name}: {} of {} programs agree with rustc",
            agreed[k],
            PROGRAMS.len()
        );
    }
    assert!(!PROGRAMS.is_empty(), "no programs were generated");
    assert!(
        failures.is_empty(),
        "{} failures:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
