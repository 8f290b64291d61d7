//! The report: the markdown table of times and throughputs against the targets, and the
//! table of registers, spills and shared memory of both implementations.

use std::fmt::Write as _;

use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::CudaFunction;

use super::kernels::kernel_list;
use super::measure::{Env, Stats, Times};
use super::options::Options;
use super::Result;

/// What a kernel's time is measured against.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Work {
    /// Bytes the algorithm must read and write: a bandwidth-bound kernel.
    Bytes(f64),
    /// Floating-point operations: a compute-bound kernel.
    Flops(f64),
}

pub(crate) struct Row {
    pub(crate) name: &'static str,
    pub(crate) size: String,
    pub(crate) launch: String,
    pub(crate) work: Work,
    pub(crate) outcome: std::result::Result<Times, String>,
}

const RATIO_TARGET: f64 = 1.05;
const BANDWIDTH_TARGET: f64 = 0.90;

pub(crate) fn results_table(rows: &[Row], copy_gbs: f64) -> String {
    let mut t = String::from(
        "| kernel | size | grid x block | cudajit ms | nvcc ms | cudajit / nvcc | cudajit throughput | nvcc throughput | ratio ≤ 1.05 | ≥ 90 % of copy |\n\
         | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |\n",
    );
    let throughput = |work: Work, ms: f64| match work {
        Work::Bytes(bytes) => {
            let gbs = bytes / ms / 1e6;
            format!("{gbs:.0} GB/s ({:.1} %)", 100.0 * gbs / copy_gbs)
        }
        Work::Flops(flops) => format!("{:.1} TFLOP/s", flops / ms / 1e9),
    };
    for row in rows {
        match &row.outcome {
            Err(error) => {
                let _ = writeln!(
                    t,
                    "| {} | {} | {} | FAILED: {} | | | | | | |",
                    row.name,
                    row.size,
                    row.launch,
                    error.replace('|', "/")
                );
            }
            Ok(times) => {
                let ours = times.cudajit.median;
                let (nvcc, ratio, nvcc_tp, ratio_ok) = match times.nvcc {
                    Some(theirs) => {
                        let ratio = ours / theirs.median;
                        (
                            format!("{:.4}", theirs.median),
                            format!("**{ratio:.3}**"),
                            throughput(row.work, theirs.median),
                            if ratio <= RATIO_TARGET {
                                "yes"
                            } else {
                                "**no**"
                            }
                            .to_owned(),
                        )
                    }
                    None => ("—".into(), "—".into(), "—".into(), "—".into()),
                };
                let bandwidth_ok = match row.work {
                    Work::Bytes(bytes) => {
                        if bytes / ours / 1e6 >= BANDWIDTH_TARGET * copy_gbs {
                            "yes"
                        } else {
                            "**no**"
                        }
                    }
                    Work::Flops(_) => "n/a (compute-bound)",
                };
                let _ = writeln!(
                    t,
                    "| {} | {} | {} | {:.4} | {nvcc} | {ratio} | {} | {nvcc_tp} | {ratio_ok} | {bandwidth_ok} |",
                    row.name,
                    row.size,
                    row.launch,
                    ours,
                    throughput(row.work, ours)
                );
            }
        }
    }
    let _ = writeln!(t, "\nSpread (min–max ms over the timed runs):\n");
    for row in rows {
        if let Ok(times) = &row.outcome {
            let spread = |s: Stats| format!("{:.4}–{:.4}", s.min, s.max);
            let _ = writeln!(
                t,
                "- {}: cudajit {}{}",
                row.name,
                spread(times.cudajit),
                times
                    .nvcc
                    .map(|s| format!(", nvcc {}", spread(s)))
                    .unwrap_or_default()
            );
        }
    }
    t
}

/// Registers, local memory (spills) and static shared memory of both implementations of
/// every kernel, as the driver reports them; with `--dump-cubins`, the cudajit cubins.
pub(crate) fn resources_table(env: &Env, options: &Options) -> Result<String> {
    let mut t = String::from(
        "\nResources per thread / block (driver attributes): registers, local memory bytes \
         (spills), static shared bytes.\n\n\
         | kernel | cudajit regs | cudajit local B | cudajit shared B | nvcc regs | nvcc local B | nvcc shared B |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let attributes = |f: &CudaFunction| -> Result<[i32; 3]> {
        Ok([
            f.get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            f.get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            f.get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
        ])
    };
    for (kernel, spec, twin) in kernel_list() {
        let compiled = kernel.compile_for_arch_with(env.arch, &spec)?;
        if let Some(dir) = &options.dump_cubins {
            dump_cubin(dir, &compiled.entry, &compiled.cubin)?;
        }
        let module = env
            .context
            .load_module(cudarc::nvrtc::Ptx::from_binary(compiled.cubin.to_vec()))?;
        let [r, l, s] = attributes(&module.load_function(&compiled.entry)?)?;
        let theirs = match env.nvcc_function(twin) {
            Ok(Some(f)) => {
                let [r, l, s] = attributes(&f)?;
                format!("{r} | {l} | {s}")
            }
            Ok(None) => "— | — | —".to_owned(),
            Err(e) => format!("{e} | | "),
        };
        let _ = writeln!(t, "| {twin} | {r} | {l} | {s} | {theirs} |");
    }
    Ok(t)
}

pub(crate) fn dump_cubin(dir: &std::path::Path, entry: &str, cubin: &[u8]) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("--dump-cubins: creating {}: {e}", dir.display()))?;
    let path = dir.join(format!("{entry}.cubin"));
    std::fs::write(&path, cubin)
        .map_err(|e| format!("--dump-cubins: writing {}: {e}", path.display()))?;
    Ok(())
}
