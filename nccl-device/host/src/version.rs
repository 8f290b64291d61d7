//! NCCL release numbers: `ncclGetVersion` codes and the `NCCL_*` macros of `nccl.h`.

use std::fmt;
use std::path::Path;

/// An NCCL release, e.g. 2.28.3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NcclVersion {
    /// `NCCL_MAJOR`.
    pub major: u32,
    /// `NCCL_MINOR`.
    pub minor: u32,
    /// `NCCL_PATCH`.
    pub patch: u32,
}

/// The oldest release with the device API's host side (`ncclDevCommCreate`, symmetric
/// windows) that cudajit supports.
pub const MIN_SUPPORTED: NcclVersion = NcclVersion::new(2, 28, 3);

impl NcclVersion {
    /// A version from its three numbers.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        NcclVersion {
            major,
            minor,
            patch,
        }
    }

    /// Decodes `ncclGetVersion` / `NCCL_VERSION_CODE`. Releases from 2.9 on encode
    /// `major * 10000 + minor * 100 + patch`; older ones `major * 1000 + minor * 100 +
    /// patch` (codes below 10000).
    pub const fn from_code(code: u32) -> Self {
        if code >= 10000 {
            NcclVersion::new(code / 10000, code / 100 % 100, code % 100)
        } else {
            NcclVersion::new(code / 1000, code / 100 % 10, code % 100)
        }
    }

    /// The `NCCL_VERSION_CODE` of this release (the 2.9+ encoding).
    pub const fn code(self) -> u32 {
        self.major * 10000 + self.minor * 100 + self.patch
    }

    /// The release that `nccl.h`'s text declares through `NCCL_MAJOR`, `NCCL_MINOR`
    /// and `NCCL_PATCH`, falling back to `NCCL_VERSION_CODE`.
    pub fn from_header_text(text: &str) -> Option<Self> {
        let define = |name: &str| -> Option<u32> {
            text.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next()? == "#define" && words.next()? == name)
                    .then(|| words.next()?.parse().ok())
                    .flatten()
            })
        };
        match (
            define("NCCL_MAJOR"),
            define("NCCL_MINOR"),
            define("NCCL_PATCH"),
        ) {
            (Some(major), Some(minor), Some(patch)) => Some(NcclVersion::new(major, minor, patch)),
            _ => define("NCCL_VERSION_CODE").map(NcclVersion::from_code),
        }
    }

    /// The release declared by the `nccl.h` at `path`.
    pub fn from_header(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        NcclVersion::from_header_text(&text)
            .ok_or_else(|| "no NCCL_MAJOR/NCCL_MINOR/NCCL_PATCH or NCCL_VERSION_CODE".to_owned())
    }
}

impl fmt::Display for NcclVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}
