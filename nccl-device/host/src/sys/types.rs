//! C types and constants of `nccl.h` that are the same in every supported release.
#![allow(non_camel_case_types, non_upper_case_globals)]

use std::ffi::{c_char, c_int, c_void};

/// `ncclResult_t`, kept as an integer so an unknown code is not undefined behaviour.
pub type ncclResult_t = c_int;
/// `ncclComm_t`: opaque pointer to `struct ncclComm`.
pub type ncclComm_t = *mut c_void;
/// `ncclWindow_t`: opaque pointer to `struct ncclWindow_vidmem`.
pub type ncclWindow_t = *mut c_void;
/// `cudaStream_t` (the same handle as the driver's `CUstream`).
pub type cudaStream_t = *mut c_void;
/// `ncclDataType_t`, kept as an integer like [`ncclResult_t`].
pub type ncclDataType_t = c_int;
/// `ncclRedOp_t`, kept as an integer like [`ncclResult_t`].
pub type ncclRedOp_t = c_int;

/// `NCCL_UNIQUE_ID_BYTES`.
pub const NCCL_UNIQUE_ID_BYTES: usize = 128;

/// `ncclUniqueId`: the bootstrap address rank 0 hands to every other rank.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ncclUniqueId {
    /// Opaque bytes.
    pub internal: [c_char; NCCL_UNIQUE_ID_BYTES],
}

/// `ncclSuccess`.
pub const ncclSuccess: ncclResult_t = 0;
/// `ncclInProgress`: a non-blocking communicator is still working.
pub const ncclInProgress: ncclResult_t = 7;

/// `ncclUint8`.
pub const ncclUint8: ncclDataType_t = 1;
/// `ncclInt32`.
pub const ncclInt32: ncclDataType_t = 2;
/// `ncclFloat32`.
pub const ncclFloat32: ncclDataType_t = 7;
/// `ncclBfloat16`.
pub const ncclBfloat16: ncclDataType_t = 9;

/// `ncclSum`.
pub const ncclSum: ncclRedOp_t = 0;
/// `ncclProd`.
pub const ncclProd: ncclRedOp_t = 1;
/// `ncclMax`.
pub const ncclMax: ncclRedOp_t = 2;
/// `ncclMin`.
pub const ncclMin: ncclRedOp_t = 3;
/// `ncclAvg`.
pub const ncclAvg: ncclRedOp_t = 4;

/// `NCCL_WIN_COLL_SYMMETRIC`: the buffer is registered at the same offset on every rank.
pub const NCCL_WIN_COLL_SYMMETRIC: c_int = 0x01;
/// `NCCL_WIN_REQUIRED_ALIGNMENT`: a window must start at this alignment.
pub const NCCL_WIN_REQUIRED_ALIGNMENT: usize = 4096;

/// The `ncclResult_t` enumerator name of `code`.
pub fn result_name(code: ncclResult_t) -> &'static str {
    match code {
        0 => "ncclSuccess",
        1 => "ncclUnhandledCudaError",
        2 => "ncclSystemError",
        3 => "ncclInternalError",
        4 => "ncclInvalidArgument",
        5 => "ncclInvalidUsage",
        6 => "ncclRemoteError",
        7 => "ncclInProgress",
        8 => "ncclTimeout",
        _ => "unknown ncclResult_t",
    }
}
