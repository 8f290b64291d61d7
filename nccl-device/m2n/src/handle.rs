//! A plan made ready to run on a set of ranks: its tables on the device, the windows of
//! the staged form, and the launches of both execution forms.

use super::config::M2nConfig;
use super::element::{from_bytes, to_bytes, Element};
use super::error::M2nError;
use super::kernels::{m2n_pack, m2n_pull};
use super::plan::ReshardPlan;
use super::ranks::{M2nRanks, SymmetricTensor};
use super::tables::Tables;
use super::tensor::{check_element, DistributedTensor};
use cudajit::{BufferElement, Stream};
use cudajit_nccl_device::Window;

/// A [`ReshardPlan`] on the ranks of a communicator (or of a simulated world), planned
/// once and run any number of times. It holds, in symmetric windows of every rank:
///
/// | window | bytes per rank |
/// | --- | --- |
/// | [`source`](ReshardHandle::source) | the largest source shard: this rank's local shard for [`reshard`](ReshardHandle::reshard) |
/// | staging | the most bytes a source sends: what the staged forms pack |
/// | [`destination`](ReshardHandle::destination) | the largest destination shard: where [`reshard`](ReshardHandle::reshard) and [`reshard_with_window`](ReshardHandle::reshard_with_window) write this rank's new shard |
///
/// and the kernels' tables. Four forms: staged (`reshard`, `reshard_tensor`: sources pack
/// into the staging windows, destinations pull) or straight from the source's window
/// (`reshard_with_window`, `reshard_tensor_with_window`: no packing copy), between the
/// handle's windows or [`DistributedTensor`]s. Every rank of the communicator launches every reshard (those
/// in neither mesh too: the kernels' barriers span all ranks), each on its own stream;
/// in one process over several GPUs, every rank launches before any is waited on.
///
/// ```
/// use cudajit::nccl::m2n::{plan, DType, DeviceMesh, M2nConfig, M2nRanks, Placement, ReshardHandle, TensorSpec};
/// use cudajit::nccl::sim::SimWorld;
///
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let world = SimWorld::new(2)?;
///     // [4 × 3] rows over ranks 0 and 1 → replicated on both.
///     let mesh = DeviceMesh::line(vec![0, 1])?;
///     let src = TensorSpec::new(&[4, 3], DType::F32, mesh.clone(), vec![Placement::Shard(0)])?;
///     let dst = TensorSpec::new(&[4, 3], DType::F32, mesh, vec![Placement::Replicate])?;
///     let config = M2nConfig { ctas: 2, threads: 64 };
///     let handle = ReshardHandle::new(M2nRanks::Sim(&world), plan(&src, &dst)?, config)?;
///     let global: Vec<f32> = (0..12).map(|x| x as f32).collect();
///     handle.write_source(0, &global[..6])?;
///     handle.write_source(1, &global[6..])?;
///     for rank in 0..2 {
///         handle.reshard(rank, &handle.stream(rank)?)?;
///     }
///     world.synchronize()?;
///     assert_eq!(handle.read_destination::<f32>(1)?, global);
///     Ok(())
/// }
/// ```
pub struct ReshardHandle<'a> {
    ranks: M2nRanks<'a>,
    plan: ReshardPlan,
    config: M2nConfig,
    staged_pull: SymmetricTensor<u64>,
    window_pull: SymmetricTensor<u64>,
    pack: SymmetricTensor<u64>,
    source: SymmetricTensor<u8>,
    staging: SymmetricTensor<u8>,
    destination: SymmetricTensor<u8>,
    /// The bytes of the largest source shard (what a caller's window must hold).
    source_bytes: usize,
}

impl std::fmt::Debug for ReshardHandle<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReshardHandle")
            .field("source", self.plan.source())
            .field("destination", self.plan.destination())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<'a> ReshardHandle<'a> {
    /// `plan` made ready on `ranks`: checked against them (every mesh rank one of the
    /// communicator's, one LSA team, an LSA barrier per CTA of `config`), its tables
    /// written to every local rank's windows.
    pub fn new(
        ranks: M2nRanks<'a>,
        plan: ReshardPlan,
        config: M2nConfig,
    ) -> Result<Self, M2nError> {
        config.check()?;
        ranks.check(config.ctas, "M2nConfig::requirements()")?;
        let nranks = ranks.nranks();
        for (which, mesh) in [
            ("source mesh rank", plan.source().mesh()),
            ("destination mesh rank", plan.destination().mesh()),
        ] {
            let highest = mesh.max_rank();
            if highest >= nranks {
                return Err(M2nError::mismatch(
                    which,
                    highest,
                    format!("the communicator has {nranks} ranks (0 to {})", nranks - 1),
                ));
            }
        }
        let size = plan.source().dtype().size();
        let largest = |spec: &super::model::TensorSpec| {
            (0..nranks)
                .map(|r| spec.local_elements(r) * size)
                .max()
                .unwrap_or(0)
        };
        let source_bytes = largest(plan.source());
        let destination_bytes = largest(plan.destination());
        let tables = Tables::new(&plan, nranks);
        let table = |t: &[Vec<u64>]| -> Result<SymmetricTensor<u64>, M2nError> {
            let window = ranks.alloc::<u64>(Tables::longest(t))?;
            for i in 0..ranks.local_ranks() {
                window.copy_from_host(i, &t[ranks.rank(i)])?;
            }
            Ok(window)
        };
        Ok(ReshardHandle {
            staged_pull: table(&tables.staged_pull)?,
            window_pull: table(&tables.window_pull)?,
            pack: table(&tables.pack)?,
            // Windows of at least one vector (an empty window has no address).
            source: ranks.alloc(source_bytes.max(16))?,
            staging: ranks.alloc(tables.staging_bytes.max(16))?,
            destination: ranks.alloc(destination_bytes.max(16))?,
            source_bytes,
            ranks,
            plan,
            config,
        })
    }

    pub fn plan(&self) -> &ReshardPlan {
        &self.plan
    }

    pub fn config(&self) -> &M2nConfig {
        &self.config
    }

    pub fn ranks(&self) -> M2nRanks<'a> {
        self.ranks
    }

    /// Local rank `i`'s stream (its CUDA context's default stream, or its simulated
    /// rank's).
    pub fn stream(&self, i: usize) -> Result<Stream, M2nError> {
        Ok(self.ranks.stream(i)?)
    }

    /// The window [`reshard`](ReshardHandle::reshard) reads each rank's local shard from
    /// (row-major, from byte 0).
    pub fn source(&self) -> &SymmetricTensor<u8> {
        &self.source
    }

    /// The window both forms write each destination rank's new shard into (row-major,
    /// from byte 0).
    pub fn destination(&self) -> &SymmetricTensor<u8> {
        &self.destination
    }

    /// Writes local rank `i`'s source shard (all of it, `T` the tensor's element type)
    /// into [`source`](ReshardHandle::source).
    pub fn write_source<T: Element>(&self, i: usize, shard: &[T]) -> Result<(), M2nError> {
        self.check_element::<T>()?;
        self.ranks.check_local(i)?;
        let expected = self.plan.source().local_elements(self.ranks.rank(i));
        if shard.len() != expected {
            return Err(M2nError::mismatch(
                "source shard elements",
                shard.len(),
                format!(
                    "local rank {i} (rank {}) holds {expected} elements of the source",
                    self.ranks.rank(i)
                ),
            ));
        }
        Ok(self.source.copy_from_host(i, &to_bytes(shard))?)
    }

    /// Local rank `i`'s destination shard (empty outside the destination mesh).
    pub fn read_destination<T: Element>(&self, i: usize) -> Result<Vec<T>, M2nError> {
        self.check_element::<T>()?;
        self.ranks.check_local(i)?;
        let count = self.plan.destination().local_elements(self.ranks.rank(i));
        let bytes = self.destination.to_vec(i, count * T::SIZE)?;
        Ok(from_bytes(&bytes))
    }

    /// Reshards through the staging windows, on local rank `i`: its source shard (in
    /// [`source`](ReshardHandle::source)) packed into its staging window, then, after a
    /// barrier of every rank, its destination shard pulled from the peers' staging
    /// windows (reduced when the source is `Partial`) into
    /// [`destination`](ReshardHandle::destination). Two launches on `stream`.
    pub fn reshard(&self, i: usize, stream: &Stream) -> Result<(), M2nError> {
        self.check_launch(i, stream)?;
        self.staged(
            i,
            stream,
            self.source.window(i)?,
            self.destination.window(i)?,
        )
    }

    /// Reshards straight from a window the caller registered around its source tensor,
    /// on local rank `i`: no packing copy; after a barrier of every rank, each
    /// destination pulls its pieces from the sources' `window`s (each rank's local shard
    /// from element 0, row-major) into [`destination`](ReshardHandle::destination). One
    /// launch on `stream`. The window must hold the largest source shard.
    pub fn reshard_with_window<T: Element + BufferElement>(
        &self,
        i: usize,
        stream: &Stream,
        window: &SymmetricTensor<T>,
    ) -> Result<(), M2nError> {
        self.check_element::<T>()?;
        let bytes = window.len() * T::SIZE;
        if bytes < self.source_bytes {
            return Err(M2nError::mismatch(
                "source window",
                window.len(),
                format!(
                    "the window must hold the largest source shard ({} elements)",
                    self.source_bytes / T::SIZE
                ),
            ));
        }
        self.check_launch(i, stream)?;
        self.pull(
            i,
            stream,
            &self.window_pull,
            window.window(i)?,
            self.destination.window(i)?,
        )
    }

    /// [`reshard`](ReshardHandle::reshard) from `source`'s shards into `destination`'s,
    /// tensors of the plan's layouts: `source`'s local shard packed into the staging
    /// window, then pulled into `destination`'s window. Two launches on `stream`.
    ///
    /// ```
    /// use cudajit::nccl::m2n::{plan, DType, DeviceMesh, DistributedTensor, M2nConfig, M2nRanks, Placement, ReshardHandle, TensorSpec};
    /// use cudajit::nccl::sim::SimWorld;
    ///
    /// fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     let world = SimWorld::new(3)?;
    ///     let ranks = M2nRanks::Sim(&world);
    ///     // 7 values over ranks 0 and 1 (4 + 3) → over ranks 1 and 2, the other way.
    ///     let a = TensorSpec::new(&[7], DType::F32, DeviceMesh::line(vec![0, 1])?, vec![Placement::Shard(0)])?;
    ///     let b = TensorSpec::new(&[7], DType::F32, DeviceMesh::line(vec![2, 1])?, vec![Placement::Shard(0)])?;
    ///     let x = DistributedTensor::<f32>::new(ranks, a.clone())?;
    ///     let y = DistributedTensor::<f32>::new(ranks, b.clone())?;
    ///     x.write_local(0, &[0.0, 1.0, 2.0, 3.0])?;
    ///     x.write_local(1, &[4.0, 5.0, 6.0])?;
    ///     let handle = ReshardHandle::new(ranks, plan(&a, &b)?, M2nConfig { ctas: 1, threads: 32 })?;
    ///     for i in 0..3 {
    ///         handle.reshard_tensor(i, &handle.stream(i)?, &x, &y)?;
    ///     }
    ///     world.synchronize()?;
    ///     assert_eq!(y.read_local(2)?, [0.0, 1.0, 2.0, 3.0]);
    ///     assert_eq!(y.read_local(1)?, [4.0, 5.0, 6.0]);
    ///     Ok(())
    /// }
    /// ```
    pub fn reshard_tensor<T: Element + BufferElement>(
        &self,
        i: usize,
        stream: &Stream,
        source: &DistributedTensor<'_, T>,
        destination: &DistributedTensor<'_, T>,
    ) -> Result<(), M2nError> {
        let (from, to) = self.tensor_windows(i, stream, source, destination)?;
        self.staged(i, stream, from, to)
    }

    /// [`reshard_with_window`](ReshardHandle::reshard_with_window) from `source`'s
    /// shards straight into `destination`'s: one launch, no packing copy, no copy out.
    pub fn reshard_tensor_with_window<T: Element + BufferElement>(
        &self,
        i: usize,
        stream: &Stream,
        source: &DistributedTensor<'_, T>,
        destination: &DistributedTensor<'_, T>,
    ) -> Result<(), M2nError> {
        let (from, to) = self.tensor_windows(i, stream, source, destination)?;
        self.pull(i, stream, &self.window_pull, from, to)
    }

    /// Local rank `i`'s windows of `source` and `destination`, after checking both
    /// tensors against the plan and the launch on `stream` (the reshard_tensor forms).
    fn tensor_windows<T: Element + BufferElement>(
        &self,
        i: usize,
        stream: &Stream,
        source: &DistributedTensor<'_, T>,
        destination: &DistributedTensor<'_, T>,
    ) -> Result<(Window, Window), M2nError> {
        self.check_element::<T>()?;
        for (which, tensor, planned) in [
            ("source tensor", source, self.plan.source()),
            ("destination tensor", destination, self.plan.destination()),
        ] {
            if tensor.spec() != planned {
                return Err(M2nError::mismatch(
                    which,
                    tensor.spec().shape().len(),
                    format!(
                        "its layout {:?} must be the plan's, {planned:?}",
                        tensor.spec()
                    ),
                ));
            }
        }
        self.check_launch(i, stream)?;
        Ok((source.local().window(i)?, destination.local().window(i)?))
    }

    /// The staged form: pack `source` into the staging window, pull into `destination`.
    fn staged(
        &self,
        i: usize,
        stream: &Stream,
        source: Window,
        destination: Window,
    ) -> Result<(), M2nError> {
        m2n_pack::launch(
            stream,
            self.config.launch_config(),
            self.pack.window(i)?,
            source,
            self.staging.window(i)?,
        )?;
        self.pull(
            i,
            stream,
            &self.staged_pull,
            self.staging.window(i)?,
            destination,
        )
    }

    fn pull(
        &self,
        i: usize,
        stream: &Stream,
        table: &SymmetricTensor<u64>,
        source: Window,
        destination: Window,
    ) -> Result<(), M2nError> {
        let op = self.plan.reduce_op().map_or(0, |o| o.code());
        m2n_pull::launch(
            stream,
            self.config.launch_config(),
            self.ranks.dev_comm(i)?,
            table.window(i)?,
            source,
            destination,
            self.plan.source().dtype().code(),
            op,
        )?;
        Ok(())
    }

    fn check_launch(&self, i: usize, stream: &Stream) -> Result<(), M2nError> {
        self.ranks.check_local(i)?;
        Ok(self
            .ranks
            .check_stream(i, stream, "ReshardHandle::stream(i)")?)
    }

    fn check_element<T: Element>(&self) -> Result<(), M2nError> {
        check_element::<T>(self.plan.source())
    }

    /// Releases the handle's windows now (on GPUs; simulated ones go with their world).
    pub fn close(self) -> Result<(), M2nError> {
        self.staged_pull.close()?;
        self.window_pull.close()?;
        self.pack.close()?;
        self.source.close()?;
        self.staging.close()?;
        Ok(self.destination.close()?)
    }
}
