//! Collectives, sizes and contenders: what is measured and how each contender launches.

use std::sync::Arc;

use cudajit::CudaStream;

use super::{BenchResult, OUTPUT_ALIGN};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Collective {
    AllReduce,
    AllGather,
    PeerRead,
}

impl Collective {
    pub(crate) const ALL: [Collective; 3] = [
        Collective::AllReduce,
        Collective::AllGather,
        Collective::PeerRead,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all-reduce",
            Collective::AllGather => "all-gather",
            Collective::PeerRead => "peer-read",
        }
    }

    /// Bus bandwidth per algorithm bandwidth (`bytes / t`, bytes = input per rank).
    pub(crate) fn bus_factor(self, n: usize) -> f64 {
        let n = n as f64;
        match self {
            Collective::AllReduce => 2.0 * (n - 1.0) / n,
            Collective::AllGather => n - 1.0,
            Collective::PeerRead => 1.0,
        }
    }
}

/// One problem size, with the window convention of `lsa_collectives.cu`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Size {
    /// Elements of input per rank.
    pub(crate) count: usize,
    /// Bytes of input per rank.
    pub(crate) bytes: usize,
    /// Where the output starts in the window, in bytes (`round_up(bytes, 4096)`).
    pub(crate) output_offset: usize,
}

impl Size {
    pub(crate) fn of<T>(count: usize) -> Size {
        let bytes = count * std::mem::size_of::<T>();
        Size {
            count,
            bytes,
            output_offset: bytes.div_ceil(OUTPUT_ALIGN).max(1) * OUTPUT_ALIGN,
        }
    }
}

/// Starts one operation on one local rank: `(rank index, its stream, size)`.
pub(crate) type RankLaunch<'a> =
    Box<dyn Fn(usize, &Arc<CudaStream>, &Size) -> BenchResult<()> + 'a>;
/// Starts one operation on every local rank at once (NCCL's grouped collectives).
pub(crate) type GroupLaunch<'a> = Box<dyn Fn(&[Arc<CudaStream>], &Size) -> BenchResult<()> + 'a>;

/// How a contender is started.
pub(crate) enum Launch<'a> {
    /// Called for every local rank in turn, all before any stream is waited on (device-API
    /// kernels: their barriers span GPUs).
    PerRank(RankLaunch<'a>),
    /// Called once for all ranks.
    Group(GroupLaunch<'a>),
}

/// Something measured: a name, the collective it computes (which decides its check and
/// bandwidth formula) and how to start it. It reads its input from, and writes its output
/// to, the pass's symmetric window as `Size` says.
pub(crate) struct Contender<'a> {
    pub(crate) name: String,
    pub(crate) collective: Collective,
    pub(crate) launch: Launch<'a>,
}

impl<'a> Contender<'a> {
    pub(crate) fn per_rank(
        name: impl Into<String>,
        collective: Collective,
        launch: impl Fn(usize, &Arc<CudaStream>, &Size) -> BenchResult<()> + 'a,
    ) -> Self {
        Contender {
            name: name.into(),
            collective,
            launch: Launch::PerRank(Box::new(launch)),
        }
    }

    pub(crate) fn group(
        name: impl Into<String>,
        collective: Collective,
        launch: impl Fn(&[Arc<CudaStream>], &Size) -> BenchResult<()> + 'a,
    ) -> Self {
        Contender {
            name: name.into(),
            collective,
            launch: Launch::Group(Box::new(launch)),
        }
    }

    pub(crate) fn start(&self, streams: &[Arc<CudaStream>], size: &Size) -> BenchResult<()> {
        match &self.launch {
            Launch::PerRank(f) => streams
                .iter()
                .enumerate()
                .try_for_each(|(i, s)| f(i, s, size)),
            Launch::Group(f) => f(streams, size),
        }
    }
}
