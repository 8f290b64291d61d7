//! Structs inside structs and arrays inside structs (`struct Body { pos: Vec2, history:
//! [f32; 4], corners: [Vec2; 2] }`): read, written in place at any depth, copied whole,
//! built by struct literals, taken by value as kernel parameters and in slices; on the
//! CPU simulator and the GPU against the same code run on the host, and in the PTX
//! without local memory.

use cudajit::prelude::*;

#[derive(Clone, Copy, Debug, Default, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Vec2 {
    pub x: f32,
    pub y: f32,
}

#[device]
impl Vec2 {
    pub fn length(&self) -> f32 {
        (self.x * self.x + self.y * self.y).sqrt()
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Body {
    pub pos: Vec2,
    pub vel: Vec2,
    pub mass: f64,
    pub history: [f32; 4],
    pub corners: [Vec2; 2],
    pub id: u16,
    pub alive: bool,
}

/// Moves a nested struct through `&mut`.
#[device]
fn shift(v: &mut Vec2, by: f32) {
    v.x += by;
    v.y -= by;
}

/// One body's step, the same code on the device (inlined into `advance`) and the host:
/// `out` written in place through `&mut`.
#[device]
fn advance_one(delta: Body, b: Body, out: &mut Body) -> f32 {
    let mut next = b;
    next.pos.x += b.vel.x + delta.pos.x;
    next.pos.y = b.pos.y + b.vel.y;
    for k in 0..3 {
        next.history[k] = b.history[k + 1] + delta.history[k];
    }
    next.history[3] = next.pos.length();
    next.corners[1] = next.pos;
    next.corners[0].x -= 1.0;
    shift(&mut next.vel, 0.5);
    shift(&mut next.corners[1], 0.25);
    let fresh = Body {
        pos: Vec2 { x: 0.0, y: 1.0 },
        vel: b.vel,
        mass: 2.0,
        history: [0.5; 4],
        corners: [b.pos; 2],
        id: b.id + 1,
        alive: !b.alive,
    };
    let mut sum = 0.0f32;
    for k in 0..next.history.len() {
        sum += next.history[k];
    }
    *out = next;
    out.id = fresh.id;
    out.alive = fresh.alive;
    out.corners[0].y = fresh.pos.y + delta.corners[1].y;
    sum + fresh.history[2] + fresh.corners[1].x + b.mass as f32
}

#[kernel]
fn advance(delta: Body, input: &[Body], out: &mut [Body], scalars: &mut [f32]) {
    let i = global_index();
    if i < input.len() {
        scalars[i] = advance_one(delta, input[i], &mut out[i]);
        out[i].history[0] *= 2.0;
        out[i].corners[1].x += out[i].pos.y;
    }
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 * (1.0 + a.abs().max(b.abs()))
}

fn same_body(a: &Body, b: &Body) -> bool {
    let v = |p: Vec2, q: Vec2| close(p.x, q.x) && close(p.y, q.y);
    v(a.pos, b.pos)
        && v(a.vel, b.vel)
        && a.mass == b.mass
        && a.history.iter().zip(&b.history).all(|(x, y)| close(*x, *y))
        && v(a.corners[0], b.corners[0])
        && v(a.corners[1], b.corners[1])
        && a.id == b.id
        && a.alive == b.alive
}

fn advance_matches_the_host(stream: &cudajit::Stream) {
    let n = 50;
    let bodies: Vec<Body> = (0..n)
        .map(|i| {
            let f = i as f32;
            Body {
                pos: Vec2 { x: f, y: -f },
                vel: Vec2 {
                    x: 0.5,
                    y: f * 0.25,
                },
                mass: 1.0 + i as f64,
                history: [f, f + 1.0, f * 2.0, 3.0],
                corners: [Vec2 { x: 1.0, y: f }, Vec2 { x: -f, y: 2.0 }],
                id: i as u16,
                alive: i % 3 == 0,
            }
        })
        .collect();
    let delta = Body {
        pos: Vec2 { x: 0.125, y: 0.0 },
        history: [1.0, 2.0, 3.0, 4.0],
        corners: [Vec2::default(), Vec2 { x: 0.0, y: 7.0 }],
        ..Body::default()
    };
    let input = stream.clone_htod(&bodies).unwrap();
    let mut out = stream.alloc_zeros::<Body>(n).unwrap();
    let mut scalars = stream.alloc_zeros::<f32>(n).unwrap();
    advance::launch(
        stream,
        LaunchConfig::for_elements(n),
        delta,
        &input,
        &mut out,
        &mut scalars,
    )
    .unwrap();
    let mut out_host = vec![Body::default(); n];
    let mut scalars_host = vec![0.0f32; n];
    for i in 0..n {
        scalars_host[i] = advance_one(delta, bodies[i], &mut out_host[i]);
        out_host[i].history[0] *= 2.0;
        out_host[i].corners[1].x += out_host[i].pos.y;
    }
    let out = stream.clone_dtoh(&out).unwrap();
    let scalars = stream.clone_dtoh(&scalars).unwrap();
    for i in 0..n {
        assert!(
            same_body(&out[i], &out_host[i]),
            "out[{i}]: {:?} != {:?}",
            out[i],
            out_host[i]
        );
        assert!(
            close(scalars[i], scalars_host[i]),
            "scalars[{i}]: {} != {}",
            scalars[i],
            scalars_host[i]
        );
    }
}

#[test]
fn nested_structs_and_array_fields_run_on_the_simulator() {
    advance_matches_the_host(&cudajit::Stream::simulator());
}

#[test]
fn nested_structs_and_array_fields_on_the_gpu() {
    let Ok(stream) = cudajit::Stream::gpu(0) else {
        eprintln!("skipped: no GPU");
        return;
    };
    advance_matches_the_host(&stream);
}

/// The nested layout the device uses is rustc's: `offset_of!` at every depth.
#[test]
fn the_layout_is_rustcs_at_every_depth() {
    use cudajit::__private::{DeviceStruct, FieldType};
    let layout = <Body as DeviceStruct>::LAYOUT;
    let scalars = layout.scalar_fields();
    // pos (2), vel (2), mass, history (4), corners (2 × 2), id, alive.
    assert_eq!(scalars.len(), 2 + 2 + 1 + 4 + 4 + 1 + 1);
    let corner_y = core::mem::offset_of!(Body, corners)
        + core::mem::size_of::<Vec2>()
        + core::mem::offset_of!(Vec2, y);
    assert!(scalars.contains(&(corner_y, cudajit::core::Scalar::F32)));
    let (_, history) = layout.field("history").unwrap();
    assert_eq!(history.ty.size(), 16);
    assert!(matches!(history.ty, FieldType::Array { len: 4, .. }));
    assert_eq!(layout.nested_layouts().len(), 1, "Vec2, once");
}

/// Release builds: the structs and their arrays, indexed by constants after unrolling,
/// live in registers.
#[test]
fn nested_fields_compile_without_local_memory() {
    use cudajit::codegen::compile::{linked_ptx, CompileOptions};
    if cudajit::codegen::toolchain::Toolchain::global().is_err()
        && std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() != Ok("1")
    {
        eprintln!("skipped: no NVIDIA toolchain (run scripts/test.sh to install it)");
        return;
    }
    let options = CompileOptions {
        bounds_checks: false,
        ..CompileOptions::default()
    };
    let ptx = linked_ptx(
        advance::KERNEL.captured(),
        &cudajit::Specialization::default(),
        cudajit::Arch::SM_90,
        &options,
    )
    .unwrap_or_else(|e| panic!("advance: {e}"));
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
    assert!(!ptx.contains("call.uni"), "a call left:\n{ptx}");
}
