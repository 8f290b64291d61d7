//! Measuring: checked runs, CUDA-event timing of batches, the sweep over sizes.

use super::{
    open_pass, BenchResult, Collective, Contender, Elem, Options, Pass, Setup, Size, BATCH_BYTES,
    MAX_BATCH,
};

/// One measured (or only checked) contender at one size.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) collective: Collective,
    pub(crate) contender: String,
    pub(crate) dtype: &'static str,
    pub(crate) bytes: usize,
    pub(crate) count: usize,
    /// Median microseconds per operation; `None` when only checked.
    pub(crate) time_us: Option<f64>,
    /// `None`: above `--verify-max`, not checked.
    pub(crate) correct: Option<bool>,
}

impl Row {
    pub(crate) fn algbw(&self) -> Option<f64> {
        self.time_us.map(|t| self.bytes as f64 / (t * 1e3))
    }
    pub(crate) fn busbw(&self, n: usize) -> Option<f64> {
        self.algbw().map(|a| a * self.collective.bus_factor(n))
    }
}

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// Median microseconds per operation (see the module docs).
pub(crate) fn time(
    setup: &Setup,
    c: &Contender<'_>,
    size: &Size,
    opts: &Options,
) -> BenchResult<f64> {
    let batch = (BATCH_BYTES / size.bytes.max(1)).clamp(1, MAX_BATCH);
    for _ in 0..opts.warmup {
        c.start(&setup.streams, size)?;
    }
    setup.synchronize()?;
    let mut samples = Vec::with_capacity(opts.samples);
    for _ in 0..opts.samples {
        for (s, (start, _)) in setup.streams.iter().zip(&setup.events) {
            start.record(s)?;
        }
        for _ in 0..batch {
            c.start(&setup.streams, size)?;
        }
        for (s, (_, stop)) in setup.streams.iter().zip(&setup.events) {
            stop.record(s)?;
        }
        let mut slowest = 0f64;
        for (start, stop) in &setup.events {
            slowest = slowest.max(f64::from(start.elapsed_ms(stop)?));
        }
        samples.push(slowest * 1e3 / batch as f64);
    }
    Ok(median(samples))
}

/// Runs every contender of `pass` at every size: checked up to `--verify-max`, timed
/// when `measure`.
pub(crate) fn run_pass<T: Elem>(
    pass: &Pass<'_, T>,
    counts: &[usize],
    opts: &Options,
    measure: bool,
) -> BenchResult<Vec<Row>> {
    let contenders = pass.contenders();
    let mut rows = Vec::new();
    for &count in counts {
        let size = Size::of::<T>(count);
        for c in &contenders {
            let correct = if size.bytes <= opts.verify_max {
                pass.poison_outputs(&size)?;
                // A smaller size's output region overlaps a larger size's input, and a
                // timed run may have overwritten it: write this size's input again.
                pass.write_inputs(count)?;
                c.start(&pass.setup.streams, &size)?;
                pass.setup.synchronize()?;
                let problem = pass.check(c.collective, &size)?;
                if let Some(p) = &problem {
                    eprintln!(
                        "WRONG: {} {} {} bytes ({} {}): {p}",
                        c.collective.name(),
                        c.name,
                        size.bytes,
                        count,
                        T::NAME
                    );
                }
                Some(problem.is_none())
            } else {
                None
            };
            let time_us = if measure {
                Some(time(pass.setup, c, &size, opts)?)
            } else {
                None
            };
            let row = Row {
                collective: c.collective,
                contender: c.name.clone(),
                dtype: T::NAME,
                bytes: size.bytes,
                count,
                time_us,
                correct,
            };
            if measure {
                print_progress(&row, pass.setup.n());
            }
            rows.push(row);
        }
    }
    Ok(rows)
}

pub(crate) fn print_progress(row: &Row, n: usize) {
    eprintln!(
        "  {:<10} {:<22} {:>10} B  {:>10.2} us  {:>8.1} GB/s bus",
        row.collective.name(),
        row.contender,
        row.bytes,
        row.time_us.unwrap_or(f64::NAN),
        row.busbw(n).unwrap_or(f64::NAN)
    );
}

/// The check-only pass of an element type at sizes with scalar tails.
pub(crate) fn check_tails<T: Elem>(setup: &Setup, opts: &Options) -> BenchResult<Vec<Row>> {
    let counts = [1, 37, (1 << 16) + 3, (1 << 20) + 13];
    let pass = open_pass::<T>(setup, opts, *counts.iter().max().unwrap_or(&1))?;
    pass.write_inputs(pass.buffer.len().min(*counts.iter().max().unwrap_or(&1)))?;
    run_pass(&pass, &counts, opts, false)
}

/// The measured sweep of an element type.
pub(crate) fn sweep<T: Elem>(setup: &Setup, opts: &Options) -> BenchResult<Vec<Row>> {
    let elem = std::mem::size_of::<T>();
    let counts: Vec<usize> = opts
        .sizes()
        .into_iter()
        .map(|b| (b / elem).max(1))
        .collect();
    let max_count = counts.iter().copied().max().unwrap_or(1);
    let pass = open_pass::<T>(setup, opts, max_count)?;
    pass.write_inputs(max_count)?;
    run_pass(&pass, &counts, opts, true)
}
