//! One problem size: the operands, every contender's result checked against cuBLAS, and
//! the interleaved CUDA-event timings.

use std::sync::Arc;

use cudajit::prelude::*;
use cudajit::{bf16, CudaSlice, CudaStream, LaunchConfig};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

use super::cublas::{Blas, BlasOutput};
use super::hopper;
use super::kernels::{self, SHARED_BYTES, THREADS, TILE_M, TILE_N};
use super::options::{Algorithm, Layout};
use super::twin::Twin;
use super::Result;

/// Bytes read between timed runs so that no contender finds its operands in L2 (50 MB).
pub const L2_FLUSH_BYTES: usize = 256 << 20;
/// Untimed runs of each contender before the timed ones.
pub const WARMUPS: usize = 5;

/// Reads `x` (and writes nothing unless a value is exactly `sentinel`, which it never is):
/// the L2 flush between timed runs.
#[kernel]
fn read_all(x: &[u32], sentinel: u32, out: &mut [u32]) {
    let mut v = 0u32;
    let mut i = global_index();
    while i < x.len() {
        v ^= x[i];
        i += grid_dim().x as usize * block_dim().x as usize;
    }
    if v == sentinel {
        out[0] = v;
    }
}

/// C's element type: what cuBLAS writes, which cudajit kernel writes it, and how close two
/// results must be.
pub trait Element:
    BlasOutput + DeviceRepr + ValidAsZeroBits + hopper::Output + Copy + Unpin + 'static
{
    fn to_f32(self) -> f32;
    /// At most the spacing of the type's values near `value`: two results rounded from
    /// f32 accumulators that agree within the accumulation's tolerance may still be this
    /// far apart (one rounded up, the other down).
    fn spacing(value: f32) -> f32;
    /// Launches the cudajit GEMM that writes C in this type.
    #[allow(clippy::too_many_arguments)]
    fn launch_cudajit(
        stream: &Arc<CudaStream>,
        config: LaunchConfig,
        layout: Layout,
        dims: (u32, u32, u32),
        a: &CudaSlice<bf16>,
        b: &CudaSlice<bf16>,
        c: &mut CudaSlice<Self>,
    ) -> Result<()>;
    /// Launches the Hopper GEMM (TMA + wgmma) writing C in this type.
    fn launch_wgmma(
        stream: &Arc<CudaStream>,
        layout: Layout,
        (cluster, persistent): (bool, bool),
        dims: (u32, u32, u32),
        a: &CudaSlice<bf16>,
        b: &CudaSlice<bf16>,
        c: &mut CudaSlice<Self>,
    ) -> Result<()> {
        hopper::launch(
            stream,
            layout.b_row_major(),
            cluster,
            persistent,
            dims,
            a,
            b,
            c,
        )
    }
}

impl Element for f32 {
    fn to_f32(self) -> f32 {
        self
    }
    fn spacing(_: f32) -> f32 {
        0.0
    }
    fn launch_cudajit(
        stream: &Arc<CudaStream>,
        config: LaunchConfig,
        layout: Layout,
        (m, n, k): (u32, u32, u32),
        a: &CudaSlice<bf16>,
        b: &CudaSlice<bf16>,
        c: &mut CudaSlice<f32>,
    ) -> Result<()> {
        match layout {
            Layout::Tn => kernels::gemm_bf16::launch::<false>(stream, config, m, n, k, a, b, c)?,
            Layout::Nn => kernels::gemm_bf16::launch::<true>(stream, config, m, n, k, a, b, c)?,
        }
        Ok(())
    }
}

impl Element for bf16 {
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
    fn spacing(value: f32) -> f32 {
        // 8 significant bits: adjacent values at most 2^-7 of the value apart.
        value.abs() / 128.0
    }
    fn launch_cudajit(
        stream: &Arc<CudaStream>,
        config: LaunchConfig,
        layout: Layout,
        (m, n, k): (u32, u32, u32),
        a: &CudaSlice<bf16>,
        b: &CudaSlice<bf16>,
        c: &mut CudaSlice<bf16>,
    ) -> Result<()> {
        match layout {
            Layout::Tn => {
                kernels::gemm_bf16_to_bf16::launch::<false>(stream, config, m, n, k, a, b, c)?
            }
            Layout::Nn => {
                kernels::gemm_bf16_to_bf16::launch::<true>(stream, config, m, n, k, a, b, c)?
            }
        }
        Ok(())
    }
}

/// The launch configuration of an M×N problem: one block per 128×128 tile of C.
pub fn launch_config(m: usize, n: usize) -> LaunchConfig {
    LaunchConfig::new(((n / TILE_N) as u32, (m / TILE_M) as u32, 1), THREADS)
        .with_shared_mem(SHARED_BYTES)
}

/// A result against cuBLAS's.
#[derive(Clone, Copy, Debug)]
pub struct Check {
    pub max_error: f32,
    pub max_value: f32,
    pub correct: bool,
}

impl Check {
    /// Every element within `1e-3 · max |C|` (f32 accumulations in another order) plus
    /// the output type's spacing at the element, and finite.
    pub fn compare<C: Element>(got: &[C], want: &[C]) -> Check {
        let max_value = want.iter().fold(0.0f32, |acc, v| acc.max(v.to_f32().abs()));
        let tolerance = 1e-3 * max_value.max(1.0);
        let mut max_error = 0.0f32;
        let mut correct = got.len() == want.len();
        for (g, w) in got.iter().zip(want) {
            let (g, w) = (g.to_f32(), w.to_f32());
            let error = (g - w).abs();
            max_error = max_error.max(error);
            correct &= g.is_finite() && error <= tolerance + C::spacing(w);
        }
        Check {
            max_error,
            max_value,
            correct,
        }
    }
}

/// Deterministic values in [-1, 1), as bf16.
pub fn random_bf16(seed: u64, count: usize) -> Vec<bf16> {
    let mut state = seed.max(1);
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            bf16::from_f32(((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
        })
        .collect()
}

/// What one problem measures with: the stream, cuBLAS, the flush buffer, the twin.
pub struct Bench {
    pub stream: Arc<CudaStream>,
    pub blas: Blas,
    pub twin: Option<Twin>,
    pub layout: Layout,
    pub algorithm: Algorithm,
    /// The Hopper GEMM in 2-block clusters sharing B (`--cluster`).
    pub cluster: bool,
    /// The Hopper GEMM with one block per SM walking the tiles (`--persistent`).
    pub persistent: bool,
    pub runs: usize,
    flush: CudaSlice<u32>,
    /// The flush kernel's (never written) output, borrowed by each timing round.
    flush_out: std::cell::RefCell<CudaSlice<u32>>,
}

/// One problem's medians (ms) and checks; `nvcc_*` only with a twin.
pub struct Row {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub cudajit_ms: f64,
    pub cublas_ms: f64,
    pub nvcc_ms: Option<f64>,
    pub cudajit: Check,
    pub nvcc: Option<Check>,
}

impl Row {
    pub fn tflops(&self, ms: f64) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64 / ms / 1e9
    }
    pub fn correct(&self) -> bool {
        self.cudajit.correct && self.nvcc.is_none_or(|c| c.correct)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Contender {
    Cudajit,
    Nvcc,
    Cublas,
}

impl Bench {
    pub fn new(
        stream: Arc<CudaStream>,
        twin: Option<Twin>,
        layout: Layout,
        algorithm: Algorithm,
        runs: usize,
    ) -> Result<Bench> {
        Ok(Bench {
            blas: Blas::new(stream.clone())?,
            flush: stream.alloc_zeros::<u32>(L2_FLUSH_BYTES / 4)?,
            flush_out: std::cell::RefCell::new(stream.alloc_zeros::<u32>(1)?),
            stream,
            twin,
            layout,
            algorithm,
            cluster: false,
            persistent: false,
            runs,
        })
    }

    /// Runs every contender once on `problem` and checks each result against cuBLAS's:
    /// cudajit's, and the twin's when there is one. cuBLAS's own result is first checked
    /// against the host at sampled entries, so a wrong reference call cannot pass.
    pub fn check<C: Element>(&self, problem: &mut Problem<C>) -> Result<(Check, Option<Check>)> {
        for contender in self.contenders() {
            self.launch(contender, problem)?;
        }
        let want = self.stream.clone_dtoh(&problem.reference)?;
        problem.check_reference(self.layout, &want)?;
        let cudajit = Check::compare(&self.stream.clone_dtoh(&problem.ours)?, &want);
        let nvcc = match self.twin {
            Some(_) => Some(Check::compare(
                &self.stream.clone_dtoh(&problem.twins)?,
                &want,
            )),
            None => None,
        };
        Ok((cudajit, nvcc))
    }

    /// Checks every contender at M×N×K, then times them: `WARMUPS` rounds, then `runs`
    /// rounds of cudajit, nvcc, cuBLAS in turn, each run after an L2 flush.
    pub fn measure<C: Element>(&self, m: usize, n: usize, k: usize) -> Result<Row> {
        let mut problem = Problem::<C>::new(&self.stream, m, n, k)?;
        let (cudajit, nvcc) = self.check(&mut problem)?;
        let contenders = self.contenders();
        let medians = self.time_rounds(contenders.len(), &mut |slot| {
            self.launch(contenders[slot], &mut problem)
        })?;
        let median_of = |contender: Contender| {
            contenders
                .iter()
                .position(|&c| c == contender)
                .map(|slot| medians[slot])
        };
        Ok(Row {
            m,
            n,
            k,
            cudajit_ms: median_of(Contender::Cudajit).unwrap_or(f64::NAN),
            nvcc_ms: median_of(Contender::Nvcc),
            cublas_ms: median_of(Contender::Cublas).unwrap_or(f64::NAN),
            cudajit,
            nvcc,
        })
    }

    /// The median times of `count` contenders (`launch(slot)` runs contender `slot`):
    /// `WARMUPS` rounds, then `runs` rounds of every contender in turn, each run after an
    /// L2 flush, timed by CUDA events around it.
    pub fn time_rounds(
        &self,
        count: usize,
        launch: &mut dyn FnMut(usize) -> Result<()>,
    ) -> Result<Vec<f64>> {
        let mut samples = vec![Vec::with_capacity(self.runs); count];
        for round in 0..WARMUPS + self.runs {
            for (slot, times) in samples.iter_mut().enumerate() {
                read_all::launch(
                    &self.stream,
                    LaunchConfig::new(1056, 256),
                    &self.flush,
                    1,
                    &mut *self.flush_out.borrow_mut(),
                )?;
                let start = self
                    .stream
                    .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
                launch(slot)?;
                let end = self
                    .stream
                    .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
                end.synchronize()?;
                if round >= WARMUPS {
                    times.push(f64::from(start.elapsed_ms(&end)?));
                }
            }
        }
        Ok(samples.iter_mut().map(|times| median(times)).collect())
    }

    /// cudajit, the twin when there is one, cuBLAS: the order of every round.
    fn contenders(&self) -> Vec<Contender> {
        let mut contenders = vec![Contender::Cudajit];
        if self.twin.is_some() {
            contenders.push(Contender::Nvcc);
        }
        contenders.push(Contender::Cublas);
        contenders
    }

    /// One run of `contender` into its own output buffer of `problem`.
    fn launch<C: Element>(&self, contender: Contender, problem: &mut Problem<C>) -> Result<()> {
        let (m, n, k) = problem.dims;
        match contender {
            Contender::Cudajit if self.algorithm == Algorithm::Wgmma => C::launch_wgmma(
                &self.stream,
                self.layout,
                (self.cluster, self.persistent),
                (m as u32, n as u32, k as u32),
                &problem.a,
                &problem.b,
                &mut problem.ours,
            ),
            Contender::Cudajit => C::launch_cudajit(
                &self.stream,
                launch_config(m, n),
                self.layout,
                (m as u32, n as u32, k as u32),
                &problem.a,
                &problem.b,
                &mut problem.ours,
            ),
            Contender::Nvcc => match &self.twin {
                Some(twin) => twin.launch(m, n, k, &problem.a, &problem.b, &mut problem.twins),
                None => Ok(()),
            },
            Contender::Cublas => self.blas.gemm(
                self.layout,
                m,
                n,
                k,
                &problem.a,
                &problem.b,
                &mut problem.reference,
            ),
        }
    }
}

/// One M×N×K problem: the operands on the host and the GPU, and an output buffer for each
/// contender.
pub struct Problem<C: Element> {
    pub dims: (usize, usize, usize),
    /// A (M×K, row-major) and B (K×N, in the benchmark's layout: the values are random, so
    /// one vector serves both layouts).
    pub a_host: Vec<bf16>,
    pub b_host: Vec<bf16>,
    a: CudaSlice<bf16>,
    b: CudaSlice<bf16>,
    pub ours: CudaSlice<C>,
    pub twins: CudaSlice<C>,
    pub reference: CudaSlice<C>,
}

impl<C: Element> Problem<C> {
    pub fn new(stream: &Arc<CudaStream>, m: usize, n: usize, k: usize) -> Result<Problem<C>> {
        let a_host = random_bf16(m as u64 * 31 + k as u64, m * k);
        let b_host = random_bf16(n as u64 * 17 + k as u64 + 1, n * k);
        Ok(Problem {
            dims: (m, n, k),
            a: stream.clone_htod(&a_host)?,
            b: stream.clone_htod(&b_host)?,
            a_host,
            b_host,
            ours: stream.alloc_zeros::<C>(m * n)?,
            twins: stream.alloc_zeros::<C>(m * n)?,
            reference: stream.alloc_zeros::<C>(m * n)?,
        })
    }

    /// C[r][c] computed on the host (in f64) from the operands, B stored as `layout` says.
    pub fn host_entry(&self, layout: Layout, r: usize, c: usize) -> f64 {
        let (_, n, k) = self.dims;
        (0..k)
            .map(|i| {
                let b = match layout {
                    Layout::Tn => self.b_host[c * k + i],
                    Layout::Nn => self.b_host[i * n + c],
                };
                f64::from(self.a_host[r * k + i].to_f32()) * f64::from(b.to_f32())
            })
            .sum()
    }

    /// `want` (cuBLAS's C) against [`Problem::host_entry`] at 256 entries spread over C,
    /// the corners included.
    pub fn check_reference(&self, layout: Layout, want: &[C]) -> Result<()> {
        let (m, n, _) = self.dims;
        let max_value = want.iter().fold(0.0f32, |acc, v| acc.max(v.to_f32().abs()));
        let tolerance = 1e-3 * max_value.max(1.0);
        for s in 0..256usize {
            let (r, c) = match s {
                0 => (0, 0),
                1 => (m - 1, n - 1),
                _ => ((s * 7919) % m, (s * 104_729) % n),
            };
            let host = self.host_entry(layout, r, c) as f32;
            let got = want[r * n + c].to_f32();
            if (got - host).abs() > tolerance + C::spacing(host) {
                return Err(format!(
                    "cuBLAS's C[{r}][{c}] = {got} but the host computes {host}: the reference \
                     call is wrong for layout {}",
                    layout.name()
                )
                .into());
            }
        }
        Ok(())
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}
