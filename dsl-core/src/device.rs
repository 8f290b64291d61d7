//! Host-side declarations of the device intrinsics.
//!
//! Kernel bodies are ordinary Rust that rustc type-checks, so every intrinsic a kernel may
//! call exists here with its real signature. The `#[kernel]` macro recognises the calls and
//! turns them into device code; these host functions are never called by generated code.
//! Called on the host outside a kernel, they panic with a message saying so.

/// A three-dimensional index or extent, as CUDA's `dim3`/`uint3`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

#[cold]
fn device_only(name: &str) -> ! {
    panic!(
        "`{name}()` is a device intrinsic: it only has a meaning inside a `#[kernel]` function \
         launched on the GPU"
    )
}

/// The index of the calling thread within its block (CUDA `threadIdx`).
///
/// ```
/// use cudajit_core::device::*;
/// fn body(out: &mut [u32]) {
///     out[thread_idx().x as usize] = 1;
/// }
/// ```
pub fn thread_idx() -> Dim3 {
    device_only("thread_idx")
}

/// The index of the calling thread's block within the grid (CUDA `blockIdx`).
pub fn block_idx() -> Dim3 {
    device_only("block_idx")
}

/// The number of threads per block (CUDA `blockDim`).
pub fn block_dim() -> Dim3 {
    device_only("block_dim")
}

/// The number of blocks in the grid (CUDA `gridDim`).
pub fn grid_dim() -> Dim3 {
    device_only("grid_dim")
}

/// The global index of the calling thread along x:
/// `block_idx().x * block_dim().x + thread_idx().x`, computed in 64 bits.
pub fn global_index() -> usize {
    device_only("global_index")
}

/// The number of threads in the grid along x: `grid_dim().x * block_dim().x`, in 64 bits.
/// The step of a grid-stride loop.
pub fn grid_stride() -> usize {
    device_only("grid_stride")
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Self {
        Dim3 { x, y: 1, z: 1 }
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Self {
        Dim3 { x, y, z: 1 }
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Self {
        Dim3 { x, y, z }
    }
}

/// The values a kernel's `print!`/`println!` formats: scalars (the device's `printf`
/// takes nothing else), and references to them. The macro checks each argument in the
/// never-called copy of the function (`macros/src/generate/method_check.rs`), so
/// `println!("{:?}", x)` of a slice is a build error naming the fix, as rustc reports a type
/// without `Debug`. A supertrait of [`DeviceScalar`], so `T: DeviceScalar` prints too.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be printed by a kernel: `print!` and `println!` in kernels format scalars (`bool`, integers, floats)",
    label = "not a scalar",
    note = "print the elements or fields instead: `println!(\"{{}} {{}}\", x[0], p.y)`, or a loop printing `x[k]`"
)]
pub trait DevicePrintable {}

// `println!("{}", v)` of a `v: &f32` (`for v in x.iter()`).
impl<T: DevicePrintable + ?Sized> DevicePrintable for &T {}
impl<T: DevicePrintable + ?Sized> DevicePrintable for &mut T {}

/// The check of one `print!` argument (`value` is `&(argument)`).
pub fn printable<T: DevicePrintable + ?Sized>(value: &T) {
    let _ = value;
}

/// A Rust type that is a scalar of the kernel language; generic kernels and device
/// functions take their type parameters from these.
pub trait DeviceScalar: Copy + Send + Sync + 'static + DevicePrintable {
    /// The scalar type in cudajit's IR.
    const SCALAR: crate::Scalar;
}

macro_rules! device_scalars {
    ($($ty:ty => $scalar:ident),* $(,)?) => {
        $(impl DeviceScalar for $ty {
            const SCALAR: crate::Scalar = crate::Scalar::$scalar;
        }
        impl DevicePrintable for $ty {})*
    };
}

device_scalars!(
    bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64, isize => Isize,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64, usize => Usize, f32 => F32, f64 => F64,
    half::f16 => F16, half::bf16 => BF16,
);

/// The floating-point storage types a kernel converts through `f32` or `f64`: `f16`,
/// `bf16`, `f32` and `f64`. A kernel generic over its element type (`T: Real`) reads an
/// element as `x.to_f32()` and writes one as `T::from_f32(v)`; each is the `as` cast of
/// the value for the type the specialisation gives `T` (round to nearest even into `f16`
/// and `bf16`, as the `half` crate converts on the host).
///
/// On the host the methods are the `half` crate's conversions (a `#[device]` function
/// written so runs on both):
///
/// ```
/// use cudajit_core::device::Real;
///
/// /// The sum of `x` and `y` in `f32`, stored as their element type.
/// fn add<T: Real>(x: T, y: T) -> T {
///     T::from_f32(x.to_f32() + y.to_f32())
/// }
/// let sum = add(half::bf16::from_f32(1.5), half::bf16::from_f32(2.0));
/// assert_eq!(sum.to_f32(), 3.5);
/// assert_eq!(add(1.5f64, 2.0), 3.5);
/// ```
pub trait Real: DeviceScalar {
    /// The value as an `f32`.
    fn to_f32(self) -> f32;
    /// The value as an `f64`.
    fn to_f64(self) -> f64;
    /// `v` as this type, rounded to nearest even.
    fn from_f32(v: f32) -> Self;
    /// `v` as this type, rounded to nearest even.
    fn from_f64(v: f64) -> Self;
}

macro_rules! real_halves {
    ($($ty:ty),*) => {$(
        impl Real for $ty {
            fn to_f32(self) -> f32 { <$ty>::to_f32(self) }
            fn to_f64(self) -> f64 { <$ty>::to_f64(self) }
            fn from_f32(v: f32) -> Self { <$ty>::from_f32(v) }
            fn from_f64(v: f64) -> Self { <$ty>::from_f64(v) }
        }
    )*};
}

real_halves!(half::f16, half::bf16);

impl Real for f32 {
    fn to_f32(self) -> f32 {
        self
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f32(v: f32) -> Self {
        v
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl Real for f64 {
    fn to_f32(self) -> f32 {
        self as f32
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f32(v: f32) -> Self {
        v as f64
    }
    fn from_f64(v: f64) -> Self {
        v
    }
}

/// Floating-point scalars (`f32`, `f64`): what a `T: Float` kernel may do with a `T`.
///
/// The methods are the ones kernels support on concrete floats (`x.sqrt()`); on the host
/// they are the standard library's, so generic device functions run on the host too.
pub trait Float:
    DeviceScalar
    + PartialOrd
    + core::ops::Add<Output = Self>
    + core::ops::Sub<Output = Self>
    + core::ops::Mul<Output = Self>
    + core::ops::Div<Output = Self>
    + core::ops::Rem<Output = Self>
    + core::ops::Neg<Output = Self>
    + core::ops::AddAssign
    + core::ops::SubAssign
    + core::ops::MulAssign
    + core::ops::DivAssign
{
    fn zero() -> Self;
    fn one() -> Self;
    fn sqrt(self) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tanh(self) -> Self;
    fn abs(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn recip(self) -> Self;
    fn powf(self, n: Self) -> Self;
    fn mul_add(self, a: Self, b: Self) -> Self;
    fn min(self, other: Self) -> Self;
    fn max(self, other: Self) -> Self;
    fn is_nan(self) -> bool;
    fn signum(self) -> Self;
    fn fract(self) -> Self;
    fn exp_m1(self) -> Self;
    fn ln_1p(self) -> Self;
    fn div_euclid(self, rhs: Self) -> Self;
    fn rem_euclid(self, rhs: Self) -> Self;
    fn clamp(self, min: Self, max: Self) -> Self;
}

macro_rules! float_impls {
    ($($ty:ty),*) => {$(
        impl Float for $ty {
            fn zero() -> Self { 0.0 }
            fn one() -> Self { 1.0 }
            fn sqrt(self) -> Self { <$ty>::sqrt(self) }
            fn exp(self) -> Self { <$ty>::exp(self) }
            fn ln(self) -> Self { <$ty>::ln(self) }
            fn sin(self) -> Self { <$ty>::sin(self) }
            fn cos(self) -> Self { <$ty>::cos(self) }
            fn tanh(self) -> Self { <$ty>::tanh(self) }
            fn abs(self) -> Self { <$ty>::abs(self) }
            fn floor(self) -> Self { <$ty>::floor(self) }
            fn ceil(self) -> Self { <$ty>::ceil(self) }
            fn recip(self) -> Self { <$ty>::recip(self) }
            fn powf(self, n: Self) -> Self { <$ty>::powf(self, n) }
            fn mul_add(self, a: Self, b: Self) -> Self { <$ty>::mul_add(self, a, b) }
            fn min(self, other: Self) -> Self { <$ty>::min(self, other) }
            fn max(self, other: Self) -> Self { <$ty>::max(self, other) }
            fn is_nan(self) -> bool { <$ty>::is_nan(self) }
            fn signum(self) -> Self { <$ty>::signum(self) }
            fn fract(self) -> Self { <$ty>::fract(self) }
            fn exp_m1(self) -> Self { <$ty>::exp_m1(self) }
            fn ln_1p(self) -> Self { <$ty>::ln_1p(self) }
            fn div_euclid(self, rhs: Self) -> Self { <$ty>::div_euclid(self, rhs) }
            fn rem_euclid(self, rhs: Self) -> Self { <$ty>::rem_euclid(self, rhs) }
            fn clamp(self, min: Self, max: Self) -> Self { <$ty>::clamp(self, min, max) }
        }
    )*};
}

float_impls!(f32, f64);

/// Integer scalars: what a `T: Int` kernel may do with a `T`.
pub trait Int:
    DeviceScalar
    + Ord
    + core::ops::Add<Output = Self>
    + core::ops::Sub<Output = Self>
    + core::ops::Mul<Output = Self>
    + core::ops::Div<Output = Self>
    + core::ops::Rem<Output = Self>
    + core::ops::BitAnd<Output = Self>
    + core::ops::BitOr<Output = Self>
    + core::ops::BitXor<Output = Self>
    + core::ops::Not<Output = Self>
    + core::ops::AddAssign
    + core::ops::SubAssign
    + core::ops::MulAssign
{
    fn zero() -> Self;
    fn one() -> Self;
    fn count_ones(self) -> u32;
    fn leading_zeros(self) -> u32;
    fn trailing_zeros(self) -> u32;
    fn wrapping_add(self, rhs: Self) -> Self;
    fn wrapping_sub(self, rhs: Self) -> Self;
    fn wrapping_mul(self, rhs: Self) -> Self;
    fn wrapping_neg(self) -> Self;
    fn wrapping_shl(self, n: u32) -> Self;
    fn wrapping_shr(self, n: u32) -> Self;
    fn saturating_add(self, rhs: Self) -> Self;
    fn saturating_sub(self, rhs: Self) -> Self;
    fn saturating_mul(self, rhs: Self) -> Self;
    fn rotate_left(self, n: u32) -> Self;
    fn rotate_right(self, n: u32) -> Self;
    fn reverse_bits(self) -> Self;
    fn swap_bytes(self) -> Self;
    fn pow(self, exp: u32) -> Self;
    fn div_euclid(self, rhs: Self) -> Self;
    fn rem_euclid(self, rhs: Self) -> Self;
}

macro_rules! int_impls {
    ($($ty:ty),*) => {$(
        impl Int for $ty {
            fn zero() -> Self { 0 }
            fn one() -> Self { 1 }
            fn count_ones(self) -> u32 { <$ty>::count_ones(self) }
            fn leading_zeros(self) -> u32 { <$ty>::leading_zeros(self) }
            fn trailing_zeros(self) -> u32 { <$ty>::trailing_zeros(self) }
            fn wrapping_add(self, rhs: Self) -> Self { <$ty>::wrapping_add(self, rhs) }
            fn wrapping_sub(self, rhs: Self) -> Self { <$ty>::wrapping_sub(self, rhs) }
            fn wrapping_mul(self, rhs: Self) -> Self { <$ty>::wrapping_mul(self, rhs) }
            fn wrapping_neg(self) -> Self { <$ty>::wrapping_neg(self) }
            fn wrapping_shl(self, n: u32) -> Self { <$ty>::wrapping_shl(self, n) }
            fn wrapping_shr(self, n: u32) -> Self { <$ty>::wrapping_shr(self, n) }
            fn saturating_add(self, rhs: Self) -> Self { <$ty>::saturating_add(self, rhs) }
            fn saturating_sub(self, rhs: Self) -> Self { <$ty>::saturating_sub(self, rhs) }
            fn saturating_mul(self, rhs: Self) -> Self { <$ty>::saturating_mul(self, rhs) }
            fn rotate_left(self, n: u32) -> Self { <$ty>::rotate_left(self, n) }
            fn rotate_right(self, n: u32) -> Self { <$ty>::rotate_right(self, n) }
            fn reverse_bits(self) -> Self { <$ty>::reverse_bits(self) }
            fn swap_bytes(self) -> Self { <$ty>::swap_bytes(self) }
            fn pow(self, exp: u32) -> Self { <$ty>::pow(self, exp) }
            fn div_euclid(self, rhs: Self) -> Self { <$ty>::div_euclid(self, rhs) }
            fn rem_euclid(self, rhs: Self) -> Self { <$ty>::rem_euclid(self, rhs) }
        }
    )*};
}

int_impls!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

// ----- barriers, fences, shared memory, atomics, warps -----

/// Waits until every thread of the block reaches this point, and makes their earlier
/// shared- and global-memory writes visible to each other (CUDA `__syncthreads()`).
pub fn sync_threads() {
    device_only("sync_threads")
}

/// Orders this thread's memory accesses as seen by its block (`__threadfence_block()`).
pub fn fence_block() {
    device_only("fence_block")
}

/// Orders this thread's memory accesses as seen by the whole GPU (`__threadfence()`).
pub fn fence_device() {
    device_only("fence_device")
}

/// Orders this thread's memory accesses as seen by the host and other GPUs
/// (`__threadfence_system()`).
pub fn fence_system() {
    device_only("fence_system")
}

/// A block-shared array of `len` elements (a constant: a literal, const generic or
/// `#[comptime]` parameter), bound with `let`: `let tile = shared_array::<f32>(256);`.
/// Every thread of the block sees the same array; its contents start undefined.
pub fn shared_array<T: DeviceScalar>(len: usize) -> &'static mut [T] {
    let _ = len;
    device_only("shared_array")
}

/// The `len` elements of `T` at the device address `address`, as a slice bound with `let`:
/// `let peer = unsafe { slice_at::<f32>(address, n) };`. The address comes from device
/// code that hands out memory, such as an NCCL window's peer address
/// (`cudajit::nccl::device::lsa_address`).
///
/// # Safety
/// `address` must be the start of `len` valid, aligned elements of `T` in global memory
/// (this GPU's or a peer's mapped into it) for as long as the slice is used.
pub unsafe fn slice_at<T: DeviceScalar>(address: usize, len: usize) -> &'static [T] {
    let _ = (address, len);
    device_only("slice_at")
}

/// [`slice_at`], writable: `let out = unsafe { slice_at_mut::<f32>(address, n) };`.
///
/// # Safety
/// As for [`slice_at`]; in addition nothing else may write the elements while the kernel
/// does, except where the program orders the accesses (barriers, atomics).
pub unsafe fn slice_at_mut<T: DeviceScalar>(address: usize, len: usize) -> &'static mut [T] {
    let _ = (address, len);
    device_only("slice_at_mut")
}

/// The launch's dynamic shared memory (`LaunchConfig::with_shared_mem`) as a slice of
/// `T`, bound with `let`: `let buf = dynamic_shared::<f32>();`. CUDA's
/// `extern __shared__ T buf[]`.
pub fn dynamic_shared<T: DeviceScalar>() -> &'static mut [T] {
    device_only("dynamic_shared")
}

macro_rules! atomics {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        ///
        /// Returns the previous value. Relaxed ordering at device scope, like CUDA's
        /// `atomic*` functions; 32- and 64-bit integers (floats for add and sub).
        pub fn $name<T: DeviceScalar>(target: &mut T, value: T) -> T {
            let _ = (target, value);
            device_only(stringify!($name))
        }
    )*};
}

atomics!(
    /// `*target += value`, atomically.
    atomic_add,
    /// `*target -= value`, atomically.
    atomic_sub,
    /// `*target = min(*target, value)`, atomically.
    atomic_min,
    /// `*target = max(*target, value)`, atomically.
    atomic_max,
    /// `*target &= value`, atomically.
    atomic_and,
    /// `*target |= value`, atomically.
    atomic_or,
    /// `*target ^= value`, atomically.
    atomic_xor,
    /// `*target = value`, atomically.
    atomic_exchange,
);

atomics!(
    /// [`atomic_add`] atomic only with respect to the threads of the block.
    atomic_add_block,
    /// [`atomic_add`] atomic also with respect to the host and other GPUs.
    atomic_add_system,
    /// [`atomic_sub`] at block scope.
    atomic_sub_block,
    /// [`atomic_sub`] at system scope.
    atomic_sub_system,
    /// [`atomic_min`] at block scope.
    atomic_min_block,
    /// [`atomic_min`] at system scope.
    atomic_min_system,
    /// [`atomic_max`] at block scope.
    atomic_max_block,
    /// [`atomic_max`] at system scope.
    atomic_max_system,
    /// [`atomic_and`] at block scope.
    atomic_and_block,
    /// [`atomic_and`] at system scope.
    atomic_and_system,
    /// [`atomic_or`] at block scope.
    atomic_or_block,
    /// [`atomic_or`] at system scope.
    atomic_or_system,
    /// [`atomic_xor`] at block scope.
    atomic_xor_block,
    /// [`atomic_xor`] at system scope.
    atomic_xor_system,
    /// [`atomic_exchange`] at block scope.
    atomic_exchange_block,
    /// [`atomic_exchange`] at system scope.
    atomic_exchange_system,
);

/// [`atomic_compare_exchange`] at block scope.
pub fn atomic_compare_exchange_block<T: DeviceScalar>(target: &mut T, current: T, new: T) -> T {
    let _ = (target, current, new);
    device_only("atomic_compare_exchange_block")
}

/// [`atomic_compare_exchange`] at system scope.
pub fn atomic_compare_exchange_system<T: DeviceScalar>(target: &mut T, current: T, new: T) -> T {
    let _ = (target, current, new);
    device_only("atomic_compare_exchange_system")
}

/// If `*target == current`, sets it to `new`, atomically. Returns the previous value
/// (CUDA `atomicCAS`).
pub fn atomic_compare_exchange<T: DeviceScalar>(target: &mut T, current: T, new: T) -> T {
    let _ = (target, current, new);
    device_only("atomic_compare_exchange")
}

// ----- ordered atomics, volatile accesses, timers, grid synchronisation -----

/// The memory ordering of [`atomic_load`], [`atomic_store`] and the `atomic_*_ordered`
/// functions: the variants of Rust's `core::sync::atomic::Ordering` (and C++'s
/// `memory_order`), lowered to PTX's `.relaxed`, `.acquire`, `.release`, `.acq_rel` and, for
/// `SeqCst`, a `fence.sc` before an acquiring (or, for stores, relaxed) access, as CUDA's
/// `cuda::atomic_ref` does. Written as a variant at the call (`Ordering::Acquire`): it is
/// part of the instruction, not a run-time value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Ordering {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

/// Which threads an ordered atomic orders and is atomic with respect to: PTX's `.cta`,
/// `.gpu` and `.sys` (`cuda::thread_scope_block`, `_device`, `_system`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Scope {
    /// The threads of the block.
    Block,
    /// Every thread of the GPU.
    Device,
    /// The host and other GPUs too (memory they map).
    System,
}

// SAFETY: fieldless `#[repr(u8)]` enums with the implicit discriminants listed (kernels
// only name their variants; the layout is what a parameter of the type would be).
#[diagnostic::do_not_recommend] // not a suggestion for a user's type that lacks the derive
unsafe impl crate::layout::DeviceStruct for Ordering {
    const LAYOUT: crate::layout::StructLayout = enum_layout(
        "Ordering",
        &[
            variant("Relaxed", Ordering::Relaxed as i64),
            variant("Acquire", Ordering::Acquire as i64),
            variant("Release", Ordering::Release as i64),
            variant("AcqRel", Ordering::AcqRel as i64),
            variant("SeqCst", Ordering::SeqCst as i64),
        ],
    );
}

// SAFETY: as for `Ordering`.
#[diagnostic::do_not_recommend]
unsafe impl crate::layout::DeviceStruct for Scope {
    const LAYOUT: crate::layout::StructLayout = enum_layout(
        "Scope",
        &[
            variant("Block", Scope::Block as i64),
            variant("Device", Scope::Device as i64),
            variant("System", Scope::System as i64),
        ],
    );
}

const fn variant(name: &'static str, value: i64) -> crate::layout::VariantLayout {
    crate::layout::VariantLayout { name, value }
}

const fn enum_layout(
    name: &'static str,
    variants: &'static [crate::layout::VariantLayout],
) -> crate::layout::StructLayout {
    crate::layout::StructLayout {
        name,
        fields: &[],
        size: 1,
        align: 1,
        enum_repr: Some(crate::Scalar::U8),
        variants,
        drop: None,
        methods: crate::methods::MethodTable::NONE,
        args: &[],
    }
}

/// The element, read atomically with `order` at `scope`: `ld.acquire.gpu` for
/// `atomic_load(&x[i], Ordering::Acquire, Scope::Device)` (`cuda::atomic_ref::load`).
/// 32- and 64-bit integers and floats; `order` is `Relaxed`, `Acquire` or `SeqCst`.
pub fn atomic_load<T: DeviceScalar>(target: &T, order: Ordering, scope: Scope) -> T {
    let _ = (target, order, scope);
    device_only("atomic_load")
}

/// Writes the element atomically with `order` at `scope`: `st.release.gpu` for
/// `atomic_store(&mut x[i], v, Ordering::Release, Scope::Device)`. `order` is `Relaxed`,
/// `Release` or `SeqCst`.
pub fn atomic_store<T: DeviceScalar>(target: &mut T, value: T, order: Ordering, scope: Scope) {
    let _ = (target, value, order, scope);
    device_only("atomic_store")
}

macro_rules! ordered_atomics {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {$(
        $(#[$doc])*
        ///
        /// Returns the previous value. `order` and `scope` as for [`atomic_load`] (every
        /// ordering is allowed): `atom.<order>.<scope>.<op>` in PTX.
        pub fn $name<T: DeviceScalar>(target: &mut T, value: T, order: Ordering, scope: Scope) -> T {
            let _ = (target, value, order, scope);
            device_only(stringify!($name))
        }
    )*};
}

ordered_atomics!(
    /// [`atomic_add`] with an ordering and a scope.
    atomic_add_ordered,
    /// [`atomic_sub`] with an ordering and a scope.
    atomic_sub_ordered,
    /// [`atomic_min`] with an ordering and a scope.
    atomic_min_ordered,
    /// [`atomic_max`] with an ordering and a scope.
    atomic_max_ordered,
    /// [`atomic_and`] with an ordering and a scope.
    atomic_and_ordered,
    /// [`atomic_or`] with an ordering and a scope.
    atomic_or_ordered,
    /// [`atomic_xor`] with an ordering and a scope.
    atomic_xor_ordered,
    /// [`atomic_exchange`] with an ordering and a scope.
    atomic_exchange_ordered,
);

/// [`atomic_compare_exchange`] with an ordering and a scope (the ordering of the whole
/// operation, whether or not it stores). Returns the previous value.
pub fn atomic_compare_exchange_ordered<T: DeviceScalar>(
    target: &mut T,
    current: T,
    new: T,
    order: Ordering,
    scope: Scope,
) -> T {
    let _ = (target, current, new, order, scope);
    device_only("atomic_compare_exchange_ordered")
}

/// Reads the element with a volatile load (`ld.volatile`, CUDA's `volatile T*`): never
/// removed, merged or cached in a register, for memory another thread or agent changes.
/// Not atomic and not ordered: for synchronisation, prefer [`atomic_load`].
pub fn read_volatile<T: DeviceScalar>(target: &T) -> T {
    let _ = target;
    device_only("read_volatile")
}

/// Writes the element with a volatile store (`st.volatile`); see [`read_volatile`].
pub fn write_volatile<T: DeviceScalar>(target: &mut T, value: T) {
    let _ = (target, value);
    device_only("write_volatile")
}

/// The SM's cycle counter (`clock64()` in CUDA: `%clock64`). Counts cycles of the SM the
/// thread runs on; compare values of one thread only.
pub fn clock64() -> u64 {
    device_only("clock64")
}

/// The GPU's global nanosecond timer (`%globaltimer`), the same on every SM.
pub fn globaltimer() -> u64 {
    device_only("globaltimer")
}

/// A barrier across the whole grid (CUDA's `cooperative_groups::this_grid().sync()`):
/// every thread of every block waits here until all have arrived, and memory written before
/// it by any thread is visible to every thread after it. Only in a cooperative launch
/// (`LaunchConfig::cooperative()`), whose blocks are all resident on the GPU at once;
/// every thread of the grid must reach it.
pub fn grid_sync() {
    device_only("grid_sync")
}

/// Suspends the thread for about `ns` nanoseconds, at most 1 ms (`__nanosleep`): a
/// back-off for threads that spin on a flag.
pub fn nanosleep(ns: u32) {
    let _ = ns;
    device_only("nanosleep")
}

/// All lanes of a warp: the `mask` to give the `_sync` intrinsics when every lane takes
/// part.
pub const FULL_WARP: u32 = 0xffff_ffff;

/// Threads per warp.
pub const WARP_SIZE: u32 = 32;

/// The value of `value` in lane `lane` of the warp (`__shfl_sync`).
pub fn shfl_idx_sync<T: DeviceScalar>(mask: u32, value: T, lane: u32) -> T {
    let _ = (mask, value, lane);
    device_only("shfl_idx_sync")
}

/// The value of `value` in lane `lane_id() - delta` (`__shfl_up_sync`).
pub fn shfl_up_sync<T: DeviceScalar>(mask: u32, value: T, delta: u32) -> T {
    let _ = (mask, value, delta);
    device_only("shfl_up_sync")
}

/// The value of `value` in lane `lane_id() + delta` (`__shfl_down_sync`).
pub fn shfl_down_sync<T: DeviceScalar>(mask: u32, value: T, delta: u32) -> T {
    let _ = (mask, value, delta);
    device_only("shfl_down_sync")
}

/// The value of `value` in lane `lane_id() ^ lane_mask` (`__shfl_xor_sync`).
pub fn shfl_xor_sync<T: DeviceScalar>(mask: u32, value: T, lane_mask: u32) -> T {
    let _ = (mask, value, lane_mask);
    device_only("shfl_xor_sync")
}

/// One bit per lane of `mask`: set where `predicate` is true (`__ballot_sync`).
pub fn ballot_sync(mask: u32, predicate: bool) -> u32 {
    let _ = (mask, predicate);
    device_only("ballot_sync")
}

/// Whether `predicate` is true in every lane of `mask` (`__all_sync`).
pub fn all_sync(mask: u32, predicate: bool) -> bool {
    let _ = (mask, predicate);
    device_only("all_sync")
}

/// Whether `predicate` is true in some lane of `mask` (`__any_sync`).
pub fn any_sync(mask: u32, predicate: bool) -> bool {
    let _ = (mask, predicate);
    device_only("any_sync")
}

/// The lanes of the warp currently executing together (`__activemask()`).
pub fn activemask() -> u32 {
    device_only("activemask")
}

/// The calling thread's lane within its warp, 0 to 31.
pub fn lane_id() -> u32 {
    device_only("lane_id")
}

/// The 32-bit `.shared` address of a shared-memory element (`&tile[i]` of a
/// `shared_array`), for inline PTX operands that address shared memory (`mbarrier`,
/// `ldmatrix`, `cp.async`, the destination of `cp.async.bulk.tensor`).
pub fn shared_address<T>(element: &T) -> u32 {
    let _ = element;
    device_only("shared_address")
}

/// The 64-bit generic address of a slice element (`&x[i]`), which for global memory is
/// also its `.global` address: for inline PTX operands (a tensor map copied to global
/// memory, `cp.async` sources).
pub fn global_address<T>(element: &T) -> u64 {
    let _ = element;
    device_only("global_address")
}

/// Elements `4*i .. 4*i+4` of `slice` in one 16-byte load (CUDA's `float4` load), for
/// 32-bit element types: `let (a, b, c, d) = vload4(x, i);`. The slice must start at a
/// 16-byte aligned address (every cudarc allocation does).
pub fn vload4<T: DeviceScalar>(slice: &[T], i: usize) -> (T, T, T, T) {
    let _ = (slice, i);
    device_only("vload4")
}

/// Elements `2*i .. 2*i+2` of `slice` in one 16-byte load, for 64-bit element types.
pub fn vload2<T: DeviceScalar>(slice: &[T], i: usize) -> (T, T) {
    let _ = (slice, i);
    device_only("vload2")
}

/// Elements `8*i .. 8*i+8` of `slice` in one 16-byte load, for 16-bit element types
/// (`f16`, `bf16`, `i16`, `u16`): CUDA's `uint4` load of eight halves.
pub fn vload8<T: DeviceScalar>(slice: &[T], i: usize) -> (T, T, T, T, T, T, T, T) {
    let _ = (slice, i);
    device_only("vload8")
}

/// Writes `values` to elements `8*i .. 8*i+8` of `slice` in one 16-byte store.
pub fn vstore8<T: DeviceScalar>(slice: &mut [T], i: usize, values: (T, T, T, T, T, T, T, T)) {
    let _ = (slice, i, values);
    device_only("vstore8")
}

/// Writes `values` to elements `4*i .. 4*i+4` of `slice` in one 16-byte store.
pub fn vstore4<T: DeviceScalar>(slice: &mut [T], i: usize, values: (T, T, T, T)) {
    let _ = (slice, i, values);
    device_only("vstore4")
}

/// Writes `values` to elements `2*i .. 2*i+2` of `slice` in one 16-byte store.
pub fn vstore2<T: DeviceScalar>(slice: &mut [T], i: usize, values: (T, T)) {
    let _ = (slice, i, values);
    device_only("vstore2")
}

/// Elements `N*i .. N*i+N` of `slice` in one access, as an array: `N` elements of `T` make
/// 16 bytes (`vload::<f32, 4>`, `vload::<f16, 8>`, `vload::<f64, 2>`) or 8. The width is a
/// const parameter, so one generic function serves every element size:
///
/// ```
/// # use cudajit_core::device::{vload, vstore, DeviceScalar};
/// // Doubles 16 bytes of any element type: `double::<f32, 4>`, `double::<u16, 8>`.
/// fn double<T: DeviceScalar + core::ops::Add<Output = T>, const W: usize>(
///     x: &[T], y: &mut [T], v: usize,
/// ) {
///     let mut a: [T; W] = vload(x, v);
///     for k in 0..W {
///         a[k] = a[k] + a[k];
///     }
///     vstore(y, v, a);
/// }
/// ```
///
/// The slice must start at an address aligned to the access (every cudarc allocation is).
/// The array lives in registers once its indices are constants (loops over `0..W` unroll).
pub fn vload<T: DeviceScalar, const N: usize>(slice: &[T], i: usize) -> [T; N] {
    let _ = (slice, i);
    device_only("vload")
}

/// Writes the array `values` to elements `N*i .. N*i+N` of `slice` in one access (see
/// [`vload`]).
pub fn vstore<T: DeviceScalar, const N: usize>(slice: &mut [T], i: usize, values: [T; N]) {
    let _ = (slice, i, values);
    device_only("vstore")
}

/// The error function, `erf(x)` (libdevice's `erf`; `libm` on the host).
pub fn erf<T: DeviceMath>(x: T) -> T {
    x.erf_host()
}

/// `1 - erf(x)`, accurate for large arguments.
pub fn erfc<T: DeviceMath>(x: T) -> T {
    x.erfc_host()
}

/// `1 / sqrt(x)`.
pub fn rsqrt<T: DeviceMath>(x: T) -> T {
    x.rsqrt_host()
}

/// The approximate fast versions of common float functions, which compile to the GPU's
/// special-function unit (`f32` only on the device; CUDA's `__expf`, `__sinf`,
/// `__fdividef`...), and the host side of [`erf`], [`erfc`] and [`rsqrt`]. On the host they
/// are exact.
pub trait DeviceMath: Copy {
    #[doc(hidden)]
    fn erf_host(self) -> Self;
    #[doc(hidden)]
    fn erfc_host(self) -> Self;
    #[doc(hidden)]
    fn rsqrt_host(self) -> Self;
    /// Approximate `exp` (about 2 ulp for small arguments, worse for large).
    fn fast_exp(self) -> Self;
    /// Approximate `sin` (absolute error about 2^-21.4 in [-π, π]).
    fn fast_sin(self) -> Self;
    /// Approximate `cos`.
    fn fast_cos(self) -> Self;
    /// Approximate natural logarithm.
    fn fast_ln(self) -> Self;
    /// Approximate base-2 logarithm.
    fn fast_log2(self) -> Self;
    /// Approximate division.
    fn fast_div(self, divisor: Self) -> Self;
}

impl DeviceMath for f32 {
    fn erf_host(self) -> Self {
        libm::erff(self)
    }
    fn erfc_host(self) -> Self {
        libm::erfcf(self)
    }
    fn rsqrt_host(self) -> Self {
        1.0 / self.sqrt()
    }
    fn fast_exp(self) -> Self {
        self.exp()
    }
    fn fast_sin(self) -> Self {
        self.sin()
    }
    fn fast_cos(self) -> Self {
        self.cos()
    }
    fn fast_ln(self) -> Self {
        self.ln()
    }
    fn fast_log2(self) -> Self {
        self.log2()
    }
    fn fast_div(self, divisor: Self) -> Self {
        self / divisor
    }
}

impl DeviceMath for f64 {
    fn erf_host(self) -> Self {
        libm::erf(self)
    }
    fn erfc_host(self) -> Self {
        libm::erfc(self)
    }
    fn rsqrt_host(self) -> Self {
        1.0 / self.sqrt()
    }
    fn fast_exp(self) -> Self {
        self.exp()
    }
    fn fast_sin(self) -> Self {
        self.sin()
    }
    fn fast_cos(self) -> Self {
        self.cos()
    }
    fn fast_ln(self) -> Self {
        self.ln()
    }
    fn fast_log2(self) -> Self {
        self.log2()
    }
    fn fast_div(self, divisor: Self) -> Self {
        self / divisor
    }
}

/// Inline PTX, the escape hatch for what the language lacks: `ptx!(u32: "mov.u32 $0,
/// %smid;")` returns a value (`$0` is the result, `$1`.. the arguments);
/// `ptx!("membar.gl;")` returns nothing (`$0`.. are the arguments). Operands take the
/// register class of their type (`.b32` for 32-bit and smaller integers, `.b64`, `.f32`,
/// `.f64`). Only meaningful inside a `#[kernel]` or `#[device]` function.
#[macro_export]
macro_rules! ptx {
    ($ty:ty : $template:literal $(, $arg:expr)* $(,)?) => {{
        $(let _ = &$arg;)*
        $crate::device::ptx_on_host::<$ty>($template)
    }};
    ($template:literal $(, $arg:expr)* $(,)?) => {{
        $(let _ = &$arg;)*
        $crate::device::ptx_on_host::<()>($template)
    }};
}

#[doc(hidden)]
pub fn ptx_on_host<T>(template: &str) -> T {
    let _ = template;
    device_only("ptx!")
}
