//! Items a kernel uses: functions, constants and statics, structs, enums, impl blocks,
//! operator and user traits. One example per row of the table's "Items" group.

use core::ops::{Add, AddAssign, Index, Mul, Neg};

use cudajit::prelude::*;
use cudajit::{bf16, f16};

#[derive(Clone, Copy, Debug, DeviceCopy)]
#[repr(C)]
pub struct Pair {
    pub a: f32,
    pub b: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Vec2 {
    pub x: f32,
    pub y: f32,
}

#[device]
impl Vec2 {
    /// Named through the type (`Vec2::UNIT`): row `item.associated-const-by-type`.
    pub const UNIT: f32 = 1.0;

    pub fn new(x: f32, y: f32) -> Vec2 {
        Vec2 { x, y }
    }

    pub fn dot(&self, o: &Vec2) -> f32 {
        self.x * o.x + self.y * o.y
    }

    pub fn scaled(self, k: f32) -> Vec2 {
        Self::new(self.x * k, self.y * k)
    }

    pub fn length_squared(&self) -> f32 {
        self.dot(self)
    }

    pub fn flip(&mut self) {
        let t = self.x;
        self.x = self.y;
        self.y = t;
    }
}

#[device]
impl Add for Vec2 {
    type Output = Vec2;
    fn add(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x + o.x, self.y + o.y)
    }
}

#[device]
impl Mul<f32> for Vec2 {
    type Output = Vec2;
    fn mul(self, k: f32) -> Vec2 {
        Vec2::new(self.x * k, self.y * k)
    }
}

#[device]
impl Mul<Vec2> for f32 {
    type Output = Vec2;
    fn mul(self, v: Vec2) -> Vec2 {
        Vec2::new(self * v.x, self * v.y)
    }
}

#[device]
impl Neg for Vec2 {
    type Output = Vec2;
    fn neg(self) -> Vec2 {
        Vec2::new(-self.x, -self.y)
    }
}

#[device]
impl AddAssign for Vec2 {
    fn add_assign(&mut self, o: Vec2) {
        self.x += o.x;
        self.y += o.y;
    }
}

#[device]
impl PartialEq for Pair {
    fn eq(&self, o: &Pair) -> bool {
        self.a == o.a && self.b == o.b
    }
}

#[device]
impl Index<usize> for Vec2 {
    type Output = f32;
    fn index(&self, k: usize) -> &f32 {
        match k {
            0 => &self.x,
            _ => &self.y,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Body {
    pub pos: Vec2,
    pub history: [f32; 3],
}

#[device]
pub trait Shape {
    const SIDES: u32;
    fn area(&self) -> f32;
    fn weighted(&self, k: f32) -> f32 {
        self.area() * k + 1.0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Square {
    pub side: f32,
}

#[device]
impl Shape for Square {
    const SIDES: u32 = 4;
    fn area(&self) -> f32 {
        self.side * self.side
    }
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(u8)]
pub enum Op {
    Add = 1,
    Sub = 7,
    Mul,
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Meters(pub f32, pub u32);

#[device]
impl Meters {
    pub fn total(&self) -> f32 {
        self.0 * self.1 as f32
    }
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Halve;

#[device]
impl Halve {
    pub fn apply(&self, v: f32) -> f32 {
        v * 0.5
    }
}

const LIMIT: u32 = 5;
static OFFSET: f32 = 0.25;
const TABLE: [u32; 4] = [3, 1, 4, 1];
static WEIGHTS: [f32; 3] = [0.25, 0.5, 0.25];

#[device]
pub fn device_function(x: &[f32], i: usize) -> f64 {
    super::expressions::twice_of(x[i]) as f64 + i as f64
}

#[device]
pub fn sum_of<T: Int>(a: T, b: T) -> T {
    a + b
}

#[device]
pub fn generic_function(x: &[f32], i: usize) -> f64 {
    sum_of((x[i] * 4.0) as i64, -3) as f64 + sum_of(i as u32, 2) as f64
}

#[device]
pub fn fill<const N: usize>(v: f32) -> [f32; N] {
    let out = [v; N];
    out
}

#[device]
pub fn const_generic(x: &[f32], i: usize) -> f64 {
    let a = fill::<3>(x[i]);
    (a[0] + a[2] + a.len() as f32 + i as f32) as f64
}

#[device]
pub fn constants(x: &[f32], i: usize) -> f64 {
    const LOCAL: f32 = 2.0;
    let n = (i as u32).min(LIMIT);
    (n as f32 + OFFSET + LOCAL * x[i]) as f64
}

#[device]
pub fn constant_tables(x: &[f32], i: usize) -> f64 {
    let mut s = TABLE[i % 4] as f32 * WEIGHTS[i % 3];
    for w in WEIGHTS.iter() {
        s += w * x[i];
    }
    (s + TABLE.len() as f32) as f64
}

#[device]
pub fn structs(x: &[f32], i: usize) -> f64 {
    let p = Pair {
        a: x[i],
        b: i as u32,
    };
    let q = p;
    let mut b = Body {
        pos: Vec2::new(q.a, 1.0),
        history: [0.0; 3],
    };
    b.history[i % 3] = b.pos.x;
    b.pos.y += 2.0;
    (b.pos.x + b.pos.y + b.history[i % 3] + q.b as f32) as f64
}

#[device]
pub fn tuple_structs(x: &[f32], i: usize) -> f64 {
    let mut m = Meters(x[i], i as u32);
    m.1 += 1;
    let Meters(len, n) = m;
    let copy = m;
    (m.total() + len + n as f32 + copy.0) as f64
}

#[device]
pub fn halved_by(op: Halve, v: f32) -> f32 {
    op.apply(v) + 1.0
}

#[device]
pub fn unit_structs(x: &[f32], i: usize) -> f64 {
    let op = Halve;
    (op.apply(x[i]) + halved_by(Halve, i as f32)) as f64
}

#[device]
pub fn impl_blocks(x: &[f32], i: usize) -> f64 {
    let mut v = Vec2::new(x[i], i as f32);
    v.flip();
    (v.x + v.scaled(3.0).y + v.length_squared()) as f64
}

/// A generic struct: row `item.generic-struct`.
#[derive(Clone, Copy, Debug, DeviceCopy)]
#[repr(C)]
pub struct Duo<T> {
    pub a: T,
    pub b: T,
}

/// A generic impl block and an operator implemented generically: row `item.generic-impl`.
#[device]
impl<T: DeviceScalar + Add<Output = T> + Mul<Output = T>> Duo<T> {
    pub fn new(a: T, b: T) -> Self {
        Duo { a, b }
    }

    pub fn dot(&self, o: &Duo<T>) -> T {
        self.a * o.a + self.b * o.b
    }
}

#[device]
impl<T: DeviceScalar + Add<Output = T>> Add for Duo<T> {
    type Output = Duo<T>;
    fn add(self, o: Duo<T>) -> Duo<T> {
        Duo {
            a: self.a + o.a,
            b: self.b + o.b,
        }
    }
}

#[device]
pub fn generic_structs(x: &[f32], i: usize) -> f64 {
    let p = Duo::<f32> { a: x[i], b: 0.5 };
    let q = Duo::<u32> { a: i as u32, b: 3 };
    let r = [p, p];
    (p.a + r[1].b) as f64 + (q.a * q.b) as f64
}

#[device]
pub fn generic_impls(x: &[f32], i: usize) -> f64 {
    let p: Duo<f32> = Duo::new(x[i], 2.0);
    let q = Duo::<u32>::new(i as u32, 7);
    let s = p + Duo::new(1.5, -0.25);
    (s.dot(&p) as f64) + q.dot(&q) as f64
}

#[device]
pub fn associated_constant_by_type(x: &[f32], i: usize) -> f64 {
    (x[i] * Vec2::UNIT + Vec2::UNIT) as f64
}

#[device]
pub fn operators(x: &[f32], i: usize) -> f64 {
    let a = Vec2::new(x[i], 1.0);
    let b = Vec2::new(2.0, i as f32);
    let mut c = a + b * 2.0;
    c += -a;
    let d = 0.5 * c;
    let p = Pair { a: x[i], b: 1 };
    let q = Pair { a: 0.0, b: 1 };
    (d.x + d.y + d[0] * 10.0 + (p == q) as u32 as f32 + (p != q) as u32 as f32 * 2.0) as f64
}

#[device]
pub fn area_of<S: Shape>(s: &S, k: f32) -> f32 {
    s.area() + s.weighted(k) + S::SIDES as f32
}

#[device]
pub fn qualified<S: Shape>(s: &S, k: f32) -> f32 {
    <S as Shape>::area(s) + <S as Shape>::weighted(s, k) + Shape::area(s)
}

#[device]
pub fn qualified_calls(x: &[f32], i: usize) -> f64 {
    let s = Square { side: x[i] };
    (qualified(&s, i as f32) + <Square as Shape>::area(&s) + Square::area(&s)) as f64
}

#[device]
pub fn trait_path_calls(x: &[f32], i: usize) -> f64 {
    let s = Square { side: x[i] };
    (Shape::area(&s) + Shape::weighted(&s, 0.5) + i as f32) as f64
}

#[device]
pub fn default_method_directly(x: &[f32], i: usize) -> f64 {
    let s = Square { side: x[i] };
    (s.weighted(i as f32) + s.area()) as f64
}

#[device]
pub fn user_traits(x: &[f32], i: usize) -> f64 {
    let s = Square { side: x[i] };
    (area_of(&s, i as f32) + s.area()) as f64
}

#[device]
pub fn enums(x: &[f32], i: usize) -> f64 {
    let op = if i % 3 == 0 {
        Op::Add
    } else if i % 3 == 1 {
        Op::Sub
    } else {
        Op::Mul
    };
    let v = match op {
        Op::Add => x[i] + 1.0,
        Op::Sub => x[i] - 1.0,
        Op::Mul => x[i] * 2.0,
    };
    (v + op as u32 as f32 + (op == Op::Mul) as u32 as f32) as f64
}

#[device]
pub fn apply_impl(v: f32, f: impl Fn(f32) -> f32) -> f32 {
    f(v) * 2.0
}

#[device]
pub fn size_impl(s: &impl Size, t: impl Size) -> f32 {
    s.size() - t.size()
}

#[device]
pub fn impl_trait_argument(x: &[f32], i: usize) -> f64 {
    let k = i as f32;
    let sq = Square { side: x[i] };
    let v = Vec2 { x: k, y: x[i] };
    (apply_impl(x[i], |v| v + k) + apply_impl(1.0, |v| v * v) + size_impl(&sq, v)) as f64
}

/// A dyn-compatible trait, for `&dyn Size` (the struct known at each call).
#[device]
pub trait Size {
    fn size(&self) -> f32;
}

#[device]
impl Size for Square {
    fn size(&self) -> f32 {
        self.side * 0.5
    }
}

#[device]
impl Size for Vec2 {
    fn size(&self) -> f32 {
        self.x - self.y
    }
}

#[device]
pub fn doubled_size(s: &dyn Size) -> f32 {
    s.size() * 2.0
}

#[device]
pub fn dyn_traits(x: &[f32], i: usize) -> f64 {
    let sq = Square { side: x[i] };
    let v = Vec2 { x: x[i], y: 1.5 };
    let d: &dyn Size = &sq;
    (doubled_size(d) + doubled_size(&v) + d.size()) as f64
}

/// A trait with an associated type.
#[device]
pub trait Output {
    type Out;
    fn out(&self) -> Self::Out;
}

#[device]
impl Output for Square {
    type Out = u32;
    fn out(&self) -> Self::Out {
        self.side as u32 + 2
    }
}

#[device]
pub fn out_of<S: Output>(s: &S) -> S::Out {
    let o: S::Out = s.out();
    o
}

#[device]
pub fn associated_types(x: &[f32], i: usize) -> f64 {
    let sq = Square { side: x[i] * x[i] };
    out_of(&sq) as f64
}

#[device]
pub fn halved<T: Real>(v: T) -> T {
    T::from_f32(v.to_f32() * 0.5)
}

#[device]
pub fn real_elements(x: &[f32], i: usize) -> f64 {
    let h = halved(bf16::from_f32(x[i]));
    let f = halved(f16::from_f32(x[i]));
    (h.to_f32() + f.to_f32() + halved(x[i]) + halved(x[i] as f64) as f32) as f64
}

#[device]
pub fn add_into(acc: &mut f32, v: &f32) {
    *acc += *v;
}

#[device]
pub fn scalar_reference(x: &[f32], i: usize) -> f64 {
    let mut acc = 1.0f32;
    add_into(&mut acc, &x[i]);
    let mut p = Vec2::new(0.5, x[i]);
    add_into(&mut p.y, &acc);
    (acc + p.y) as f64
}

group!(items, ROWS {
    "item.scalar-reference" => scalar_reference,
    "item.device-fn" => device_function,
    "item.generic-fn" => generic_function,
    "item.generic-real" => real_elements,
    "item.const-generic" => const_generic,
    "item.const" => constants,
    "item.const-array" => constant_tables,
    "item.struct" => structs,
    "item.tuple-struct" => tuple_structs,
    "item.unit-struct" => unit_structs,
    "item.impl" => impl_blocks,
    "item.generic-struct" => generic_structs,
    "item.generic-impl" => generic_impls,
    "item.associated-const-by-type" => associated_constant_by_type,
    "item.operator-impl" => operators,
    "item.trait" => user_traits,
    "expr.qualified-path" => qualified_calls,
    "expr.trait-path-call" => trait_path_calls,
    "expr.default-method-direct" => default_method_directly,
    "item.enum" => enums,
    "item.impl-trait-param" => impl_trait_argument,
    "expr.dyn-trait" => dyn_traits,
    "item.associated-type" => associated_types,
});
