//! Slices of `#[derive(DeviceCopy)]` structs in the portable `Buffer`: made by
//! `stream.clone_htod(&bodies)`, passed as `&[Body]` / `&mut [Body]`, read back with
//! `clone_dtoh`, on the simulator (always) and on a GPU (skipped without one), against a
//! host reference; and the PTX of the kernels (no local memory, no calls).

mod common;

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::prelude::*;
use cudajit::{Arch, Backend, Specialization, Stream};

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
struct Body {
    x: f32,
    y: f32,
    vx: f32,
    vy: f32,
    mass: f32,
}

/// A struct with padding (after `alive`, and at its tail): the slice's stride is
/// `size_of::<Tagged>()`, and padding bytes never reach the device from the host.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
struct Tagged {
    alive: bool,
    weight: f64,
    id: u16,
}

/// Plummer softening, so close pairs stay finite.
const SOFTENING: f32 = 0.01;

/// One step of all-pairs gravity: body `i`'s new state from every body's old one (the
/// O(n²) loop of CUDA's n-body sample, without its shared-memory tiles).
#[kernel]
fn nbody_step(dt: f32, bodies: &[Body], next: &mut [Body]) {
    let i = global_index();
    if i < bodies.len() {
        let me = bodies[i];
        let mut ax = 0.0f32;
        let mut ay = 0.0f32;
        for j in 0..bodies.len() {
            let dx = bodies[j].x - me.x;
            let dy = bodies[j].y - me.y;
            let d2 = dx * dx + dy * dy + SOFTENING;
            let inv = 1.0f32 / (d2 * d2.sqrt());
            ax += bodies[j].mass * dx * inv;
            ay += bodies[j].mass * dy * inv;
        }
        let vx = me.vx + ax * dt;
        let vy = me.vy + ay * dt;
        next[i] = Body {
            x: me.x + vx * dt,
            y: me.y + vy * dt,
            vx,
            vy,
            mass: me.mass,
        };
    }
}

/// Updates structs with padding in place, field by field.
#[kernel]
fn age(items: &mut [Tagged]) {
    let i = global_index();
    if i < items.len() && items[i].alive {
        items[i].weight *= 0.5;
        items[i].id += 1;
        items[i].alive = items[i].weight > 1.0;
    }
}

fn host_step(dt: f32, bodies: &[Body]) -> Vec<Body> {
    bodies
        .iter()
        .map(|me| {
            let (mut ax, mut ay) = (0.0f32, 0.0f32);
            for other in bodies {
                let (dx, dy) = (other.x - me.x, other.y - me.y);
                let d2 = dx * dx + dy * dy + SOFTENING;
                let inv = 1.0 / (d2 * d2.sqrt());
                ax += other.mass * dx * inv;
                ay += other.mass * dy * inv;
            }
            let (vx, vy) = (me.vx + ax * dt, me.vy + ay * dt);
            Body {
                x: me.x + vx * dt,
                y: me.y + vy * dt,
                vx,
                vy,
                mass: me.mass,
            }
        })
        .collect()
}

/// 300 bodies on a spiral with varied masses and velocities (not a multiple of the block).
fn bodies() -> Vec<Body> {
    (0..300)
        .map(|k| {
            let t = k as f32 * 0.37;
            Body {
                x: t.cos() * (1.0 + 0.01 * k as f32),
                y: t.sin() * (1.0 + 0.01 * k as f32),
                vx: -t.sin() * 0.1,
                vy: t.cos() * 0.1,
                mass: 0.5 + (k % 7) as f32 * 0.25,
            }
        })
        .collect()
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-4 * (1.0 + a.abs().max(b.abs()))
}

/// Ten steps on `stream`, ping-ponging two buffers, against ten host steps.
fn check_nbody(stream: &Stream) {
    let dt = 0.001;
    let start = bodies();
    let mut current = stream.clone_htod(&start).expect("upload");
    let mut next = stream.alloc_zeros::<Body>(start.len()).expect("alloc");
    let mut expected = start.clone();
    for _ in 0..10 {
        nbody_step::launch(
            stream,
            LaunchConfig::for_elements(start.len()),
            dt,
            &current,
            &mut next,
        )
        .expect("launch");
        std::mem::swap(&mut current, &mut next);
        expected = host_step(dt, &expected);
    }
    stream.synchronize().expect("synchronize");
    let got = stream.clone_dtoh(&current).expect("download");
    assert_eq!(got.len(), expected.len());
    for (k, (g, e)) in got.iter().zip(&expected).enumerate() {
        let fields = [(g.x, e.x), (g.y, e.y), (g.vx, e.vx), (g.vy, e.vy)];
        assert!(
            fields.iter().all(|&(a, b)| close(a, b)) && g.mass == e.mass,
            "body {k}: {g:?}, expected {e:?}"
        );
    }
    // The bodies moved: the check is not of the initial state.
    assert!(got.iter().zip(&start).all(|(g, s)| g.x != s.x));
}

fn check_padded_in_place(stream: &Stream) {
    let items: Vec<Tagged> = (0..100)
        .map(|k| Tagged {
            alive: k % 3 != 0,
            weight: k as f64,
            id: k as u16 * 10,
        })
        .collect();
    let mut buffer = stream.clone_htod(&items).expect("upload");
    age::launch(stream, LaunchConfig::for_elements(items.len()), &mut buffer).expect("launch");
    let got = stream.clone_dtoh(&buffer).expect("download");
    let expected: Vec<Tagged> = items
        .iter()
        .map(|t| match t.alive {
            true => Tagged {
                alive: t.weight * 0.5 > 1.0,
                weight: t.weight * 0.5,
                id: t.id + 1,
            },
            false => *t,
        })
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn struct_slices_on_the_simulator() {
    let stream = Stream::simulator();
    assert_eq!(stream.backend(), Backend::Simulator);
    check_nbody(&stream);
    check_padded_in_place(&stream);
}

#[test]
fn struct_slices_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = Stream::from_cuda(context.default_stream());
    check_nbody(&stream);
    check_padded_in_place(&stream);
}

#[test]
fn a_gpu_buffer_is_refused_by_the_simulator_and_back() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let gpu = Stream::from_cuda(context.default_stream());
    let on_gpu = gpu.clone_htod(&bodies()).expect("upload");
    let sim = Stream::simulator();
    let mut next = sim.alloc_zeros::<Body>(on_gpu.len()).expect("alloc");
    let result = nbody_step::launch(
        &sim,
        LaunchConfig::for_elements(300),
        0.1,
        &on_gpu,
        &mut next,
    );
    assert!(result.is_err(), "a GPU buffer launched on the simulator");
}

#[test]
fn struct_slice_kernels_compile_without_local_memory_or_calls() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let spec = Specialization {
        types: Vec::new(),
        structs: Vec::new(),
        consts: Vec::new(),
    };
    for kernel in [nbody_step::KERNEL.captured(), age::KERNEL.captured()] {
        let ptx =
            linked_ptx(kernel, &spec, Arch::SM_90, &CompileOptions::default()).expect("linking");
        assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
        assert!(!ptx.contains("call."), "a call:\n{ptx}");
    }
}
