//! Small helpers shared by the three FFI layers.

use std::ffi::{c_char, CString};

use super::discover::Component;
use super::error::{Result, ToolchainError};

/// Text up to the first NUL, lossily decoded (NVIDIA's logs are ASCII in
/// practice; a stray byte must not turn a log into an error).
pub(crate) fn c_text(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Owned C strings plus the pointer array C APIs take; the pointers stay
/// valid as long as this value lives.
pub(crate) struct CStrings {
    _owned: Vec<CString>,
    ptrs: Vec<*const c_char>,
}

impl CStrings {
    /// Converts `items`; an interior NUL is an `InvalidArgument` error naming
    /// `what` (e.g. "option").
    pub(crate) fn new(component: Component, what: &str, items: &[&str]) -> Result<Self> {
        let owned = items
            .iter()
            .map(|s| c_string(component, what, s))
            .collect::<Result<Vec<_>>>()?;
        let ptrs = owned.iter().map(|c| c.as_ptr()).collect();
        Ok(CStrings {
            _owned: owned,
            ptrs,
        })
    }

    /// The pointer array.
    pub(crate) fn ptrs(&self) -> &[*const c_char] {
        &self.ptrs
    }
}

/// One C string; an interior NUL is an `InvalidArgument` error.
pub(crate) fn c_string(component: Component, what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| ToolchainError::InvalidArgument {
        component,
        message: format!("{what} {s:?} contains a NUL byte"),
    })
}

/// Owned copies of borrowed strings, for error reports.
pub(crate) fn owned(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}
