//! The communicator types a kernel takes by value: [`DevComm`] (a rank's `ncclDevComm`,
//! carrying a [`LaunchToken`] for the launch checks) and [`Window`] (a rank's
//! `ncclWindow_t`), their layouts in the kernel language, and what a device communicator
//! needs for a grid ([`requirements_for`]).

use cudajit_core::layout::{DeviceStruct, FieldLayout, StructLayout};

use cudajit::{LaunchArgument, LaunchCheck};

use super::launch_check::dev_comm_launch_check;
use super::launch_token::{LaunchToken, TOKEN_OFFSET};

/// Bytes of `ncclDevComm` a [`DevComm`] carries: more than any release so far needs
/// (88 bytes in 2.28.3, 200 in 2.28.9, 248 in 2.32.3).
pub const DEV_COMM_CAPACITY: usize = 256;

/// [`DEV_COMM_CAPACITY`] in 64-bit words, the parameter's representation.
pub const DEV_COMM_WORDS: usize = DEV_COMM_CAPACITY / 8;

/// A rank's `ncclDevComm`, as a kernel parameter. The bytes are the NCCL release's own;
/// kernels only pass `&comm` to the functions of this module.
///
/// Built by [`DevComm::for_rank`], its last 8 bytes (past every release's `ncclDevComm`,
/// never read on the device) carry a [`LaunchToken`]: which device communicator and
/// local rank it came from and its LSA barrier count, for the launch checks.
///
/// A kernel asks it where it is; here on two simulated ranks ([`cudajit_nccl::sim`]), each
/// storing its answers in its part of a symmetric window ([`Window`] shows the same on
/// GPUs):
///
/// ```
/// use cudajit::nccl::device::{self as nccl, DevComm, Window};
/// use cudajit::nccl::sim::SimWorld;
/// use cudajit::prelude::*;
///
/// #[kernel]
/// fn where_am_i(comm: DevComm, window: Window) {
///     if global_index() == 0 {
///         let out = unsafe { slice_at_mut::<i32>(nccl::local_address(window, 0), 4) };
///         out[0] = nccl::rank(&comm);
///         out[1] = nccl::nranks(&comm);
///         out[2] = nccl::lsa_rank(&comm);
///         out[3] = nccl::lsa_size(&comm);
///     }
/// }
///
/// fn main() -> Result<(), cudajit::Error> {
///     let world = SimWorld::new(2)?;
///     let window = world.alloc_symmetric::<i32>(4)?;
///     for rank in 0..2 {
///         let (comm, part) = (world.dev_comm(rank), window.window(rank));
///         where_am_i::launch(world.stream(rank), LaunchConfig::new(1, 32), comm, part)?;
///     }
///     assert_eq!(window.to_vec(1)?, [1, 2, 1, 2]);
///     Ok(())
/// }
/// ```
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct DevComm {
    words: [u64; DEV_COMM_WORDS],
}

/// A `ncclDevComm` that does not fit a [`DevComm`].
#[derive(Clone, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum DevCommError {
    #[error(
        "this NCCL release's ncclDevComm is {size} bytes, more than the {DEV_COMM_CAPACITY} a \
         cudajit kernel parameter carries: raise DEV_COMM_CAPACITY in cudajit"
    )]
    TooLarge { size: usize },
    #[error("the device communicator has no local rank {index} (it has {count})")]
    NoSuchRank { index: usize, count: usize },
}

impl DevComm {
    /// The kernel parameter of local rank `index` of a device communicator, with the
    /// [`LaunchToken`] that lets launches check the grid against its barriers and agree on
    /// the kernel with the other ranks.
    pub fn for_rank(dev_comm: &cudajit_nccl::DevComm, index: usize) -> Result<Self, DevCommError> {
        let count = dev_comm.local_ranks();
        let bytes = dev_comm
            .as_bytes(index)
            .ok_or(DevCommError::NoSuchRank { index, count })?;
        let mut comm = Self::from_bytes(bytes)?;
        let token = LaunchToken {
            serial: dev_comm.serial(),
            local: index,
            lsa_barriers: dev_comm.lsa_barrier_count(),
        };
        match token.encode() {
            Some(word) if bytes.len() <= TOKEN_OFFSET => comm.words[DEV_COMM_WORDS - 1] = word,
            _ => {
                static WARNED: std::sync::Once = std::sync::Once::new();
                WARNED.call_once(|| {
                    tracing::warn!(
                        size = bytes.len(),
                        serial = dev_comm.serial(),
                        local = index,
                        "a DevComm kernel argument without launch token: launches taking it \
                         check neither barriers nor agreement"
                    )
                });
            }
        }
        Ok(comm)
    }

    /// This argument with `token` in place of its launch token (for tests and tools that
    /// build arguments themselves).
    #[doc(hidden)]
    pub fn with_token(mut self, token: LaunchToken) -> Option<Self> {
        self.words[DEV_COMM_WORDS - 1] = token.encode()?;
        Some(self)
    }

    /// The launch token [`DevComm::for_rank`] put in, if any.
    pub fn token(&self) -> Option<LaunchToken> {
        LaunchToken::decode(self.words[DEV_COMM_WORDS - 1])
    }

    /// A parameter holding `bytes`, a `ncclDevComm` of the loaded release, without a
    /// [`LaunchToken`]: launches taking it check neither barriers nor agreement.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DevCommError> {
        if bytes.len() > DEV_COMM_CAPACITY {
            return Err(DevCommError::TooLarge { size: bytes.len() });
        }
        let mut words = [0u64; DEV_COMM_WORDS];
        for (i, chunk) in bytes.chunks(8).enumerate() {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            words[i] = u64::from_ne_bytes(word);
        }
        Ok(DevComm { words })
    }
}

impl DevComm {
    /// The parameter's words (the simulator, `cudajit-nccl-sim`, encodes its simulated
    /// ranks in them).
    #[doc(hidden)]
    pub fn from_words(words: [u64; DEV_COMM_WORDS]) -> Self {
        DevComm { words }
    }
}

impl std::fmt::Debug for DevComm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevComm").finish_non_exhaustive()
    }
}

/// What a device communicator needs for kernels launched with `config` that
/// synchronise through LSA barriers: one barrier per CTA of the grid. Create it with this
/// and the launch check of those kernels passes for every grid up to `config`'s.
pub fn requirements_for(config: &cudajit::LaunchConfig) -> cudajit_nccl::DevCommRequirements {
    let ctas = (config.grid.x as u64)
        .saturating_mul(config.grid.y as u64)
        .saturating_mul(config.grid.z as u64);
    cudajit_nccl::DevCommRequirements::lsa_barriers(ctas.min(u32::MAX as u64) as u32)
}

/// The words of [`DevComm`] as the kernel language sees them: opaque `u64`s.
const DEV_COMM_FIELDS: [FieldLayout; DEV_COMM_WORDS] = {
    const NAMES: [&str; DEV_COMM_WORDS] = [
        "w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9", "w10", "w11", "w12", "w13",
        "w14", "w15", "w16", "w17", "w18", "w19", "w20", "w21", "w22", "w23", "w24", "w25", "w26",
        "w27", "w28", "w29", "w30", "w31",
    ];
    let mut fields = [FieldLayout {
        name: "",
        ty: cudajit_core::layout::FieldType::Scalar(cudajit_core::Scalar::U64),
        offset: 0,
    }; DEV_COMM_WORDS];
    let mut i = 0;
    while i < DEV_COMM_WORDS {
        fields[i].name = NAMES[i];
        fields[i].offset = i * 8;
        i += 1;
    }
    fields
};

// SAFETY: `DevComm` is `repr(C)` plain data; the layout lists its words.
#[diagnostic::do_not_recommend]
unsafe impl DeviceStruct for DevComm {
    const LAYOUT: StructLayout = StructLayout {
        name: "DevComm",
        fields: &DEV_COMM_FIELDS,
        size: DEV_COMM_CAPACITY,
        align: 16,
        enum_repr: None,
        variants: &[],
        drop: None,
        methods: cudajit_core::methods::MethodTable::NONE,
        args: &[],
    };
}
// The launch checks of a communicating kernel (`super::launch_check`).
impl LaunchArgument for DevComm {
    const LAUNCH_CHECK: Option<LaunchCheck<Self>> = Some(dev_comm_launch_check);
}
// SAFETY: plain data, passed to the driver by address as CUDA C++ passes structs.
unsafe impl cudarc::driver::DeviceRepr for DevComm {}

/// A rank's handle of a symmetric window (`ncclWindow_t`), as a kernel parameter.
///
/// On GPUs: a communicator over the process's GPUs, a symmetric buffer (one window per
/// rank), a device communicator with a barrier per CTA, and each rank's launch on its own
/// GPU, all launched before any is waited for (the kernels meet at LSA barriers):
///
/// ```no_run
/// use cudajit::nccl::device::{self as nccl, requirements_for, DevComm, MemoryOrder, Window};
/// use cudajit::nccl::{Communicator, LoadedNccl};
/// use cudajit::prelude::*;
///
/// /// Every rank adds 1 to each element of the next LSA peer's window.
/// #[kernel]
/// fn bump_next(comm: DevComm, window: Window, count: usize) {
///     let mut barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
///     let next = (nccl::lsa_rank(&comm) + 1) % nccl::lsa_size(&comm);
///     let peer = unsafe { slice_at_mut::<f32>(nccl::lsa_address(window, 0, next), count) };
///     let mut i = global_index();
///     while i < count {
///         peer[i] += 1.0;
///         i += grid_stride();
///     }
///     // No rank goes on (and reads its window) before every peer's writes are done.
///     nccl::lsa_session_sync(&mut barrier, MemoryOrder::Release);
/// }
///
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let nccl = LoadedNccl::global()?;
///     let comm = Communicator::init_all(&nccl, &[0, 1])?;
///     let config = LaunchConfig::new(8, 256);
///     let dev_comm = comm.create_dev_comm(&requirements_for(&config))?;
///     let buffer = comm.alloc_symmetric::<f32>(1 << 20)?;
///     let mut streams = Vec::new();
///     for i in 0..comm.local_ranks().len() {
///         buffer.copy_from_host(i, &vec![0.0; 1 << 20])?;
///         let stream = comm.context(i).ok_or("no CUDA context")?.default_stream();
///         let window = Window::for_rank(&buffer, i).ok_or("no window")?;
///         bump_next::launch(&stream, config, DevComm::for_rank(&dev_comm, i)?, window, 1 << 20)?;
///         streams.push(stream);
///     }
///     for stream in &streams {
///         stream.synchronize()?;
///     }
///     let mut out = vec![0f32; 1 << 20];
///     buffer.copy_to_host(0, &mut out)?;
///     assert!(out.iter().all(|&x| x == 1.0));
///     Ok(())
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Window {
    handle: u64,
}

impl Window {
    /// The window of local rank `index` of a symmetric buffer, if it has one.
    pub fn for_rank<T: Copy + 'static>(
        buffer: &cudajit_nccl::SymmetricBuffer<T>,
        index: usize,
    ) -> Option<Self> {
        buffer.window(index).map(|w| Window { handle: w as u64 })
    }

    /// The raw `ncclWindow_t`.
    pub fn handle(self) -> u64 {
        self.handle
    }

    /// A window of the handle `handle` (the simulator's windows are handles of its own).
    #[doc(hidden)]
    pub fn from_handle(handle: u64) -> Self {
        Window { handle }
    }
}

// SAFETY: `Window` is `repr(C)` around one `u64`; the layout says so.
#[diagnostic::do_not_recommend]
unsafe impl DeviceStruct for Window {
    const LAYOUT: StructLayout = StructLayout {
        name: "Window",
        fields: &[FieldLayout {
            name: "handle",
            ty: cudajit_core::layout::FieldType::Scalar(cudajit_core::Scalar::U64),
            offset: 0,
        }],
        size: 8,
        align: 8,
        enum_repr: None,
        variants: &[],
        drop: None,
        methods: cudajit_core::methods::MethodTable::NONE,
        args: &[],
    };
}
impl LaunchArgument for Window {}
// SAFETY: plain data.
unsafe impl cudarc::driver::DeviceRepr for Window {}
