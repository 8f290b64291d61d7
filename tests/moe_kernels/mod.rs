//! The MoE kernels every link test checks, with their specialisations (shared by
//! `tests/moe_device.rs` and `tests/moe_device_2_32.rs`).

use cudajit::core::ir::Literal;
use cudajit::core::CapturedKernel;
use cudajit::nccl::moe::{high_throughput, low_latency};
use cudajit::Specialization;

/// Every MoE kernel specialisation: (kernel, specialisation, whether it moves token rows).
pub fn every_kernel() -> Vec<(&'static CapturedKernel, Specialization, bool)> {
    let plain = Specialization::default;
    let flag = |name: &str, on: bool| Specialization {
        types: Vec::new(),
        structs: Vec::new(),
        consts: vec![(name.into(), Literal::Bool(on))],
    };
    let weights = |with: bool| flag("with_weights", with);
    let fp8 = |on: bool| flag("fp8", on);
    vec![
        (
            low_latency::low_latency_dispatch::KERNEL.captured(),
            fp8(false),
            true,
        ),
        (
            low_latency::low_latency_dispatch::KERNEL.captured(),
            fp8(true),
            true,
        ),
        (
            low_latency::low_latency_dispatch_send::KERNEL.captured(),
            fp8(false),
            true,
        ),
        (
            low_latency::low_latency_dispatch_send::KERNEL.captured(),
            fp8(true),
            true,
        ),
        (
            low_latency::low_latency_dispatch_complete::KERNEL.captured(),
            plain(),
            false,
        ),
        (
            low_latency::low_latency_combine::KERNEL.captured(),
            plain(),
            true,
        ),
        (
            high_throughput::high_throughput_layout::KERNEL.captured(),
            plain(),
            false,
        ),
        (
            high_throughput::high_throughput_dispatch::KERNEL.captured(),
            fp8(false),
            true,
        ),
        (
            high_throughput::high_throughput_dispatch::KERNEL.captured(),
            fp8(true),
            true,
        ),
        (
            high_throughput::high_throughput_combine::KERNEL.captured(),
            weights(false),
            true,
        ),
        (
            high_throughput::high_throughput_combine::KERNEL.captured(),
            weights(true),
            true,
        ),
    ]
}
