//! The simulated worlds of the device-API tests (tests/nccl_sim.rs, moe_sim.rs,
//! m2n_sim.rs).

use cudajit::nccl::sim::SimWorld;
use cudajit::simulator::SimOptions;

/// `nranks` simulated ranks in one NVLink domain, on 2 simulator workers (the CI
/// machine's cores).
pub fn world(nranks: usize) -> SimWorld {
    SimWorld::with_options(
        nranks,
        SimOptions {
            workers: 2,
            ..SimOptions::default()
        },
    )
    .unwrap()
}
