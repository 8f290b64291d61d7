//! A distributed tensor: its layout and, on every rank, its local shard in device memory
//! (a symmetric window, so that peers can read it by LSA and a reshard can write it).

use super::element::Element;
use super::error::M2nError;
use super::model::TensorSpec;
use super::ranks::{M2nRanks, SymmetricTensor};
use cudajit::BufferElement;

/// A [`TensorSpec`] with each rank's local shard in a symmetric window: row-major from
/// element 0, the window as long as the largest shard on every rank. The source and the
/// destination of [`ReshardHandle::reshard_tensor`] and
/// [`ReshardHandle::reshard_tensor_with_window`].
///
/// [`ReshardHandle::reshard_tensor`]: super::ReshardHandle::reshard_tensor
/// [`ReshardHandle::reshard_tensor_with_window`]: super::ReshardHandle::reshard_tensor_with_window
pub struct DistributedTensor<'a, T> {
    ranks: M2nRanks<'a>,
    spec: TensorSpec,
    local: SymmetricTensor<T>,
}

impl<T> std::fmt::Debug for DistributedTensor<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistributedTensor")
            .field("spec", &self.spec)
            .field("local", &self.local)
            .finish_non_exhaustive()
    }
}

impl<'a, T: Element + BufferElement> DistributedTensor<'a, T> {
    /// A tensor of `spec` on `ranks`, its shards allocated (a window on every rank of the
    /// largest shard's elements; at least one).
    pub fn new(ranks: M2nRanks<'a>, spec: TensorSpec) -> Result<Self, M2nError> {
        check_element::<T>(&spec)?;
        let largest = largest_shard(&spec, ranks.nranks());
        let local = ranks.alloc(largest.max(1))?;
        Ok(DistributedTensor { ranks, spec, local })
    }

    /// A tensor of `spec` whose shards are already in `window` (registered by the
    /// caller around them), which must hold the largest shard.
    pub fn from_window(
        ranks: M2nRanks<'a>,
        spec: TensorSpec,
        window: SymmetricTensor<T>,
    ) -> Result<Self, M2nError> {
        check_element::<T>(&spec)?;
        let largest = largest_shard(&spec, ranks.nranks());
        if window.len() < largest {
            return Err(M2nError::mismatch(
                "tensor window",
                window.len(),
                format!("the window must hold the largest local shard ({largest} elements)"),
            ));
        }
        Ok(DistributedTensor {
            ranks,
            spec,
            local: window,
        })
    }

    pub fn spec(&self) -> &TensorSpec {
        &self.spec
    }

    /// The window of every rank's local shard.
    pub fn local(&self) -> &SymmetricTensor<T> {
        &self.local
    }

    /// The local shard's shape on local rank `i` (`None` outside the mesh).
    pub fn local_shape(&self, i: usize) -> Result<Option<Vec<usize>>, M2nError> {
        self.ranks.check_local(i)?;
        Ok(self.spec.local_shape(self.ranks.rank(i)))
    }

    /// Writes local rank `i`'s whole local shard.
    pub fn write_local(&self, i: usize, shard: &[T]) -> Result<(), M2nError> {
        self.ranks.check_local(i)?;
        let expected = self.spec.local_elements(self.ranks.rank(i));
        if shard.len() != expected {
            return Err(M2nError::mismatch(
                "local shard elements",
                shard.len(),
                format!(
                    "local rank {i} (rank {}) holds {expected} elements of the tensor",
                    self.ranks.rank(i)
                ),
            ));
        }
        if shard.is_empty() {
            return Ok(());
        }
        Ok(self.local.copy_from_host(i, shard)?)
    }

    /// Local rank `i`'s local shard (empty outside the mesh).
    pub fn read_local(&self, i: usize) -> Result<Vec<T>, M2nError> {
        self.ranks.check_local(i)?;
        let count = self.spec.local_elements(self.ranks.rank(i));
        Ok(self.local.to_vec(i, count)?)
    }

    /// Releases the shards' window now (on GPUs; simulated ones go with their world).
    pub fn close(self) -> Result<(), M2nError> {
        Ok(self.local.close()?)
    }
}

fn largest_shard(spec: &TensorSpec, nranks: usize) -> usize {
    (0..nranks)
        .map(|r| spec.local_elements(r))
        .max()
        .unwrap_or(0)
}

pub(crate) fn check_element<T: Element>(spec: &TensorSpec) -> Result<(), M2nError> {
    if !T::holds(spec.dtype()) {
        return Err(M2nError::mismatch(
            "element type",
            T::SIZE,
            format!(
                "the tensor's elements are {:?}, not {}",
                spec.dtype(),
                std::any::type_name::<T>()
            ),
        ));
    }
    Ok(())
}
