//! NCCL status codes as `Result`s, with NCCL's own explanation attached.

use std::ffi::{c_char, CStr};

use crate::error::{NcclCallError, NcclError, Result};
use crate::sys::{ncclComm_t, ncclResult_t, ncclSuccess, result_name, NcclSys};

/// `Ok(())` for `ncclSuccess`; otherwise an [`NcclCallError`] carrying
/// `ncclGetErrorString(code)` and `ncclGetLastError(comm)` (`comm` may be null).
///
/// # Safety
/// `comm` must be null or a live communicator of the library `sys` was resolved from.
pub(crate) unsafe fn check(
    sys: &NcclSys,
    function: &'static str,
    code: ncclResult_t,
    comm: ncclComm_t,
) -> Result<()> {
    if code == ncclSuccess {
        return Ok(());
    }
    // SAFETY: both functions accept any code / a null or live communicator, and return
    // static strings (or null) owned by NCCL.
    let (error_string, last_error) = unsafe {
        (
            text((sys.get_error_string)(code)),
            text((sys.get_last_error)(comm)),
        )
    };
    Err(NcclError::Call(NcclCallError {
        function,
        code,
        name: result_name(code),
        error_string,
        last_error,
    }))
}

/// A NUL-terminated C string owned by NCCL, copied; null is empty.
///
/// # Safety
/// `ptr` must be null or point to a NUL-terminated string live for the call.
pub(crate) unsafe fn text(ptr: *const c_char) -> String {
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: caller's contract.
    unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}
