//! Element types: what NCCL, the reference kernels and the host sums need of each.

use cudajit::bf16;
use cudajit::nccl::NcclType;

/// An element type of the benchmark: NCCL's, the reference kernels' (`NAME` is their
/// suffix), and the host reference of a sum.
pub(crate) trait Elem:
    NcclType + PartialEq + std::fmt::Debug + cudajit::DeviceScalar + core::ops::Add<Output = Self>
{
    fn from_i32(v: i32) -> Self;
    /// The sum in rank order, accumulated as the kernels do (f32 for floats).
    fn sum(values: impl Iterator<Item = Self>) -> Self;
}

impl Elem for f32 {
    fn from_i32(v: i32) -> Self {
        v as f32
    }
    fn sum(values: impl Iterator<Item = Self>) -> Self {
        values.fold(0.0, |a, v| a + v)
    }
}

impl Elem for bf16 {
    fn from_i32(v: i32) -> Self {
        bf16::from_f32(v as f32)
    }
    fn sum(values: impl Iterator<Item = Self>) -> Self {
        bf16::from_f32(values.fold(0.0f32, |a, v| a + v.to_f32()))
    }
}

impl Elem for i32 {
    fn from_i32(v: i32) -> Self {
        v
    }
    fn sum(values: impl Iterator<Item = Self>) -> Self {
        values.fold(0i32, |a, v| a.wrapping_add(v))
    }
}

/// Rank `rank`'s input element `k`: small integers, so sums of up to 16 ranks are exact
/// even in bf16 whatever the order NCCL adds them in.
pub(crate) fn input_value<T: Elem>(rank: usize, k: usize) -> T {
    T::from_i32(((k % 31) * 7 % 31 + rank * 13 % 31) as i32 % 31 - 15)
}
