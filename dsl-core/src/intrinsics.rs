//! Device intrinsics called like functions: barriers, fences, shared memory, atomics and
//! warp-level operations. Shared by the macro (which recognises the names) and lowering.

use serde::{Deserialize, Serialize};

/// A read-modify-write atomic operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AtomicOp {
    Add,
    Sub,
    Min,
    Max,
    And,
    Or,
    Xor,
    Exchange,
    CompareExchange,
}

/// Which threads an atomic is atomic with respect to (PTX `.cta`, `.gpu`, `.sys`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AtomicScope {
    /// The threads of the block (`atomic_add_block`).
    Block,
    /// The whole GPU (`atomic_add`, CUDA's default).
    Device,
    /// The host and other GPUs too (`atomic_add_system`).
    System,
}

impl AtomicOp {
    const ALL: [(AtomicOp, &'static str); 9] = [
        (AtomicOp::Add, "add"),
        (AtomicOp::Sub, "sub"),
        (AtomicOp::Min, "min"),
        (AtomicOp::Max, "max"),
        (AtomicOp::And, "and"),
        (AtomicOp::Or, "or"),
        (AtomicOp::Xor, "xor"),
        (AtomicOp::Exchange, "exchange"),
        (AtomicOp::CompareExchange, "compare_exchange"),
    ];

    /// The operation's name in `atomic_<name>`.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(op, _)| *op == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
    }
}

/// The memory ordering of an ordered atomic: C++'s (and Rust's) `memory_order`, which
/// PTX spells `.relaxed`, `.acquire`, `.release`, `.acq_rel`, and `.sc` fences.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MemoryOrder {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

impl MemoryOrder {
    const ALL: [(MemoryOrder, &'static str); 5] = [
        (MemoryOrder::Relaxed, "Relaxed"),
        (MemoryOrder::Acquire, "Acquire"),
        (MemoryOrder::Release, "Release"),
        (MemoryOrder::AcqRel, "AcqRel"),
        (MemoryOrder::SeqCst, "SeqCst"),
    ];

    /// The ordering named by the variant `name` of the prelude's `Ordering`.
    pub fn from_variant(name: &str) -> Option<MemoryOrder> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(o, _)| *o)
    }

    /// The variant's name (`Acquire`).
    pub fn variant(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(o, _)| *o == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
    }
}

impl AtomicScope {
    /// The scope named by the variant `name` of the prelude's `Scope`.
    pub fn from_variant(name: &str) -> Option<AtomicScope> {
        match name {
            "Block" => Some(AtomicScope::Block),
            "Device" => Some(AtomicScope::Device),
            "System" => Some(AtomicScope::System),
            _ => None,
        }
    }
}

/// What an ordered atomic does to its element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AtomicAccess {
    /// `atomic_load(&x[i], order, scope)`: returns the element.
    Load,
    /// `atomic_store(&mut x[i], value, order, scope)`.
    Store,
    /// `atomic_add_ordered(&mut x[i], value, order, scope)` and the other operations:
    /// returns the previous value.
    ReadModifyWrite(AtomicOp),
}

impl AtomicAccess {
    /// Whether `order` means something for this access, as in C++ and Rust: a load cannot
    /// release, a store cannot acquire.
    pub fn allows(self, order: MemoryOrder) -> bool {
        match self {
            AtomicAccess::Load => !matches!(order, MemoryOrder::Release | MemoryOrder::AcqRel),
            AtomicAccess::Store => !matches!(order, MemoryOrder::Acquire | MemoryOrder::AcqRel),
            AtomicAccess::ReadModifyWrite(_) => true,
        }
    }

    /// The orderings [`Self::allows`], for messages.
    pub fn allowed_orders(self) -> &'static str {
        match self {
            AtomicAccess::Load => "`Relaxed`, `Acquire` or `SeqCst`",
            AtomicAccess::Store => "`Relaxed`, `Release` or `SeqCst`",
            AtomicAccess::ReadModifyWrite(_) => {
                "`Relaxed`, `Acquire`, `Release`, `AcqRel` or `SeqCst`"
            }
        }
    }
}

/// The ordering and scope of an ordered atomic, read by lowering from the call's last two
/// arguments (`Ordering::Acquire, Scope::Device`), which must be written as variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MemoryOrdering {
    pub order: MemoryOrder,
    pub scope: AtomicScope,
}

/// Which argument of an ordered atomic an [`OrderingError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderingArgument {
    Order,
    Scope,
}

/// Why an ordered atomic's ordering or scope is refused, with the message that names the
/// fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderingError {
    pub argument: OrderingArgument,
    pub message: String,
}

/// The ordering and scope of the ordered atomic `name`, from the variants written as its
/// last two arguments (`None`: not written as a variant). Shared by the macro, which
/// reports a mistake at the argument when the kernel is built, and lowering.
pub fn memory_ordering(
    name: &str,
    access: AtomicAccess,
    order: Option<&str>,
    scope: Option<&str>,
) -> Result<MemoryOrdering, OrderingError> {
    let order_error = |message: String| OrderingError {
        argument: OrderingArgument::Order,
        message,
    };
    let order = order.and_then(MemoryOrder::from_variant).ok_or_else(|| {
        order_error(format!(
            "the ordering of `{name}` is part of the instruction, so it is written as a variant of `Ordering` ({}); a variable or expression cannot choose it",
            access.allowed_orders()
        ))
    })?;
    if !access.allows(order) {
        let why = if access == AtomicAccess::Load {
            "a load cannot release"
        } else {
            "a store cannot acquire"
        };
        return Err(order_error(format!(
            "`Ordering::{}` is not an ordering of `{name}` ({why}): use {}",
            order.variant(),
            access.allowed_orders()
        )));
    }
    let scope = scope.and_then(AtomicScope::from_variant).ok_or_else(|| OrderingError {
        argument: OrderingArgument::Scope,
        message: format!(
            "the scope of `{name}` is part of the instruction, so it is written as a variant: `Scope::Block`, `Scope::Device` or `Scope::System`"
        ),
    })?;
    Ok(MemoryOrdering { order, scope })
}

/// Which lanes a shuffle reads from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ShuffleMode {
    /// From lane `arg`.
    Idx,
    /// From lane `lane - arg`.
    Up,
    /// From lane `lane + arg`.
    Down,
    /// From lane `lane ^ arg`.
    Xor,
}

/// A warp vote.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum VoteOp {
    Ballot,
    All,
    Any,
}

/// How far a memory fence orders accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FenceScope {
    Block,
    Device,
    System,
}

/// Which state space [`Intrinsic::Address`] gives an element's address in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AddressSpace {
    /// A shared-memory element's 32-bit `.shared` address (`shared_address`): what
    /// `ldmatrix`, `cp.async` and `mbarrier` take in inline PTX.
    Shared,
    /// A slice element's 64-bit address (`global_address`): the generic address, which
    /// for global memory is also its `.global` address.
    Global,
}

/// The intrinsics, with the Rust names of `cudajit::prelude`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Intrinsic {
    /// `sync_threads()`: `__syncthreads()`.
    SyncThreads,
    /// `fence_block()`, `fence_device()`, `fence_system()`: `__threadfence*()`.
    Fence(FenceScope),
    /// `shared_array::<T>(len)`: a block-shared array of a constant length.
    SharedArray,
    /// `dynamic_shared::<T>()`: the launch's dynamic shared memory as a slice of `T`.
    DynamicShared,
    /// `atomic_add(&mut x[i], v)` and friends (`atomic_add_block`, `atomic_add_system` for
    /// other scopes): returns the old value.
    Atomic(AtomicOp, AtomicScope),
    /// `shfl_idx_sync(mask, v, lane)` and friends.
    Shuffle(ShuffleMode),
    /// `ballot_sync(mask, p)`, `all_sync(mask, p)`, `any_sync(mask, p)`.
    Vote(VoteOp),
    /// `activemask()`.
    ActiveMask,
    /// `lane_id()`.
    LaneId,
    /// `vload4(x, i)` / `vload2(x, i)`: elements `n*i .. n*i+n` of a slice in one 16-byte
    /// access, bound with `let (a, b, c, d) = ..`.
    VectorLoad(u8),
    /// `vstore4(y, i, (a, b, c, d))` / `vstore2(..)`: the same, written.
    VectorStore(u8),
    /// `vload::<T, N>(x, i)`: elements `N*i .. N*i+N` of a slice in one 8- or 16-byte
    /// access, as an array `[T; N]` (`N` may be a const generic parameter, so one generic
    /// function serves every element width). The captured call's `ty` is `[T; N]`.
    VectorLoadArray,
    /// `vstore(y, i, values)`: the array `values` (`[T; N]`) written to elements
    /// `N*i .. N*i+N` in one access.
    VectorStoreArray,
    /// `unsafe { slice_at::<T>(address, len) }` (`slice_at_mut` when `mutable`): the `len`
    /// elements of `T` at a device address, such as an NCCL peer's window, as a slice.
    SliceAt { mutable: bool },
    /// `shared_address(&tile[i])` (`u32`) or `global_address(&x[i])` (`u64`): the address
    /// of an element, for inline PTX operands.
    Address(AddressSpace),
    /// An atomic with an explicit ordering and scope: `atomic_load`, `atomic_store`,
    /// `atomic_<op>_ordered`. In captured syntax `ordering` is `None` and the ordering and
    /// scope are the call's last two arguments; lowering moves them here, so the IR's
    /// arguments are the element's pointer and the values, and its `ordering` is `Some`.
    OrderedAtomic {
        access: AtomicAccess,
        ordering: Option<MemoryOrdering>,
    },
    /// `read_volatile(&x[i])` (`store: false`) or `write_volatile(&mut x[i], v)`: an access
    /// the compiler neither removes, merges nor reorders with other volatile accesses
    /// (`ld.volatile`/`st.volatile`), for memory another agent changes.
    Volatile { store: bool },
    /// `clock64()`: the SM's cycle counter (`%clock64`), `u64`.
    Clock64,
    /// `globaltimer()`: the GPU's nanosecond timer (`%globaltimer`), `u64`.
    GlobalTimer,
    /// `nanosleep(ns)`: suspends the thread for about `ns` nanoseconds (`nanosleep.u32`,
    /// at most 1 ms), for spin-wait back-off.
    NanoSleep,
    /// `tensor_map_address(&map)` (`u64`): the generic address of a kernel's tensor-map
    /// parameter, for `cp.async.bulk.tensor` in inline PTX. Lowered to
    /// `Expression::TensorMapAddress`, never a statement.
    TensorMapAddress,
    /// `grid_sync()`: a barrier across every thread of the grid, CUDA's
    /// `cooperative_groups::this_grid().sync()`; the kernel must be launched cooperatively.
    GridSync,
}

/// `atomic_<op>_ordered`, `atomic_load`, `atomic_store`: the ordered atomics.
fn ordered_atomic(name: &str) -> Option<AtomicAccess> {
    match name {
        "atomic_load" => Some(AtomicAccess::Load),
        "atomic_store" => Some(AtomicAccess::Store),
        _ => {
            let op = name.strip_prefix("atomic_")?.strip_suffix("_ordered")?;
            AtomicOp::ALL
                .iter()
                .find(|(_, n)| *n == op)
                .map(|(op, _)| AtomicAccess::ReadModifyWrite(*op))
        }
    }
}

const NAMES: [(Intrinsic, &str); 33] = [
    (Intrinsic::GridSync, "grid_sync"),
    (Intrinsic::TensorMapAddress, "tensor_map_address"),
    (Intrinsic::Volatile { store: false }, "read_volatile"),
    (Intrinsic::Volatile { store: true }, "write_volatile"),
    (Intrinsic::Clock64, "clock64"),
    (Intrinsic::GlobalTimer, "globaltimer"),
    (Intrinsic::NanoSleep, "nanosleep"),
    (Intrinsic::Address(AddressSpace::Shared), "shared_address"),
    (Intrinsic::Address(AddressSpace::Global), "global_address"),
    (Intrinsic::VectorLoad(8), "vload8"),
    (Intrinsic::VectorStore(8), "vstore8"),
    (Intrinsic::SliceAt { mutable: false }, "slice_at"),
    (Intrinsic::SliceAt { mutable: true }, "slice_at_mut"),
    (Intrinsic::VectorLoad(4), "vload4"),
    (Intrinsic::VectorLoad(2), "vload2"),
    (Intrinsic::VectorStore(4), "vstore4"),
    (Intrinsic::VectorStore(2), "vstore2"),
    (Intrinsic::VectorLoadArray, "vload"),
    (Intrinsic::VectorStoreArray, "vstore"),
    (Intrinsic::SyncThreads, "sync_threads"),
    (Intrinsic::Fence(FenceScope::Block), "fence_block"),
    (Intrinsic::Fence(FenceScope::Device), "fence_device"),
    (Intrinsic::Fence(FenceScope::System), "fence_system"),
    (Intrinsic::SharedArray, "shared_array"),
    (Intrinsic::DynamicShared, "dynamic_shared"),
    (Intrinsic::Shuffle(ShuffleMode::Idx), "shfl_idx_sync"),
    (Intrinsic::Shuffle(ShuffleMode::Up), "shfl_up_sync"),
    (Intrinsic::Shuffle(ShuffleMode::Down), "shfl_down_sync"),
    (Intrinsic::Shuffle(ShuffleMode::Xor), "shfl_xor_sync"),
    (Intrinsic::Vote(VoteOp::Ballot), "ballot_sync"),
    (Intrinsic::Vote(VoteOp::All), "all_sync"),
    (Intrinsic::Vote(VoteOp::Any), "any_sync"),
    (Intrinsic::ActiveMask, "activemask"),
];

impl Intrinsic {
    /// The intrinsic called `name` (lane_id is handled with the index intrinsics).
    pub fn from_name(name: &str) -> Option<Intrinsic> {
        if name == "lane_id" {
            return Some(Intrinsic::LaneId);
        }
        if let Some(access) = ordered_atomic(name) {
            return Some(Intrinsic::OrderedAtomic {
                access,
                ordering: None,
            });
        }
        if let Some(rest) = name.strip_prefix("atomic_") {
            let (op, scope) = match (rest.strip_suffix("_block"), rest.strip_suffix("_system")) {
                (Some(op), _) => (op, AtomicScope::Block),
                (_, Some(op)) => (op, AtomicScope::System),
                _ => (rest, AtomicScope::Device),
            };
            return AtomicOp::ALL
                .iter()
                .find(|(_, n)| *n == op)
                .map(|(op, _)| Intrinsic::Atomic(*op, scope));
        }
        NAMES.iter().find(|(_, n)| *n == name).map(|(i, _)| *i)
    }

    /// The Rust name (for atomics, without the scope suffix).
    pub fn name(self) -> &'static str {
        if self == Intrinsic::LaneId {
            return "lane_id";
        }
        if let Intrinsic::OrderedAtomic { access, .. } = self {
            return match access {
                AtomicAccess::Load => "atomic_load",
                AtomicAccess::Store => "atomic_store",
                AtomicAccess::ReadModifyWrite(op) => match op {
                    AtomicOp::Add => "atomic_add_ordered",
                    AtomicOp::Sub => "atomic_sub_ordered",
                    AtomicOp::Min => "atomic_min_ordered",
                    AtomicOp::Max => "atomic_max_ordered",
                    AtomicOp::And => "atomic_and_ordered",
                    AtomicOp::Or => "atomic_or_ordered",
                    AtomicOp::Xor => "atomic_xor_ordered",
                    AtomicOp::Exchange => "atomic_exchange_ordered",
                    AtomicOp::CompareExchange => "atomic_compare_exchange_ordered",
                },
            };
        }
        if let Intrinsic::Atomic(op, _) = self {
            return match op {
                AtomicOp::Add => "atomic_add",
                AtomicOp::Sub => "atomic_sub",
                AtomicOp::Min => "atomic_min",
                AtomicOp::Max => "atomic_max",
                AtomicOp::And => "atomic_and",
                AtomicOp::Or => "atomic_or",
                AtomicOp::Xor => "atomic_xor",
                AtomicOp::Exchange => "atomic_exchange",
                AtomicOp::CompareExchange => "atomic_compare_exchange",
            };
        }
        NAMES
            .iter()
            .find(|(i, _)| *i == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
    }

    /// Number of arguments, as written (an ordered atomic's ordering and scope included).
    pub fn arity(self) -> usize {
        match self {
            Intrinsic::SyncThreads
            | Intrinsic::GridSync
            | Intrinsic::Fence(_)
            | Intrinsic::DynamicShared
            | Intrinsic::ActiveMask
            | Intrinsic::LaneId
            | Intrinsic::Clock64
            | Intrinsic::GlobalTimer => 0,
            Intrinsic::SharedArray
            | Intrinsic::Address(_)
            | Intrinsic::TensorMapAddress
            | Intrinsic::NanoSleep
            | Intrinsic::Volatile { store: false } => 1,
            Intrinsic::Volatile { store: true } => 2,
            Intrinsic::OrderedAtomic { access, .. } => match access {
                AtomicAccess::Load => 3,
                AtomicAccess::ReadModifyWrite(AtomicOp::CompareExchange) => 5,
                AtomicAccess::Store | AtomicAccess::ReadModifyWrite(_) => 4,
            },
            Intrinsic::VectorLoad(_) | Intrinsic::VectorLoadArray | Intrinsic::SliceAt { .. } => 2,
            Intrinsic::VectorStore(_) | Intrinsic::VectorStoreArray => 3,
            Intrinsic::Atomic(AtomicOp::CompareExchange, _) | Intrinsic::Shuffle(_) => 3,
            Intrinsic::Atomic(..) | Intrinsic::Vote(_) => 2,
        }
    }

    /// Whether the intrinsic takes one explicit type argument (`shared_array::<f32>`).
    pub fn takes_type(self) -> bool {
        matches!(
            self,
            Intrinsic::SharedArray | Intrinsic::DynamicShared | Intrinsic::SliceAt { .. }
        )
    }

    /// Whether the intrinsic moves an array (`vload::<T, N>`, `vstore`): its turbofish is
    /// `<T, N>`, the array's element type and length.
    pub fn is_array_access(self) -> bool {
        matches!(
            self,
            Intrinsic::VectorLoadArray | Intrinsic::VectorStoreArray
        )
    }

    /// Whether the first argument is a place (`&mut x[i]`, or `&x[i]` for an address).
    pub fn takes_place(self) -> bool {
        matches!(
            self,
            Intrinsic::Atomic(..)
                | Intrinsic::Address(_)
                | Intrinsic::OrderedAtomic { .. }
                | Intrinsic::Volatile { .. }
        )
    }

    /// Whether the place is only read (`&x[i]`), not written (`&mut x[i]`).
    pub fn reads_place_only(self) -> bool {
        matches!(
            self,
            Intrinsic::Address(_)
                | Intrinsic::Volatile { store: false }
                | Intrinsic::OrderedAtomic {
                    access: AtomicAccess::Load,
                    ..
                }
        )
    }

    /// Whether the call produces no value (a statement).
    pub fn is_statement(self) -> bool {
        matches!(
            self,
            Intrinsic::SyncThreads
                | Intrinsic::GridSync
                | Intrinsic::Fence(_)
                | Intrinsic::VectorStore(_)
                | Intrinsic::VectorStoreArray
                | Intrinsic::Volatile { store: true }
                | Intrinsic::NanoSleep
                | Intrinsic::OrderedAtomic {
                    access: AtomicAccess::Store,
                    ..
                }
        )
    }

    /// Whether the call produces a slice (bound with `let`).
    pub fn is_slice(self) -> bool {
        matches!(
            self,
            Intrinsic::SharedArray | Intrinsic::DynamicShared | Intrinsic::SliceAt { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_names_carry_their_scope() {
        assert_eq!(
            Intrinsic::from_name("atomic_add"),
            Some(Intrinsic::Atomic(AtomicOp::Add, AtomicScope::Device))
        );
        assert_eq!(
            Intrinsic::from_name("atomic_compare_exchange_block"),
            Some(Intrinsic::Atomic(
                AtomicOp::CompareExchange,
                AtomicScope::Block
            ))
        );
        assert_eq!(
            Intrinsic::from_name("atomic_max_system"),
            Some(Intrinsic::Atomic(AtomicOp::Max, AtomicScope::System))
        );
        assert_eq!(Intrinsic::from_name("atomic_frobnicate"), None);
        assert_eq!(
            Intrinsic::from_name("atomic_compare_exchange_ordered"),
            Some(Intrinsic::OrderedAtomic {
                access: AtomicAccess::ReadModifyWrite(AtomicOp::CompareExchange),
                ordering: None
            })
        );
        assert_eq!(
            Intrinsic::from_name("atomic_load"),
            Some(Intrinsic::OrderedAtomic {
                access: AtomicAccess::Load,
                ordering: None
            })
        );
        assert_eq!(Intrinsic::from_name("atomic_frob_ordered"), None);
        for name in [
            "atomic_load",
            "atomic_store",
            "atomic_xor_ordered",
            "clock64",
        ] {
            assert_eq!(Intrinsic::from_name(name).map(Intrinsic::name), Some(name));
        }
        assert_eq!(
            Intrinsic::from_name("vload4"),
            Some(Intrinsic::VectorLoad(4))
        );
    }
}
