//! External device functions (`#[extern_device]`) and the device libraries that define
//! them.
//!
//! An external function is declared in the kernel's NVVM IR and resolved by nvJitLink
//! against a [`DeviceLibrary`] the user supplies; with LTO-IR inputs the call inlines.

use std::sync::OnceLock;

/// What a device library's bytes are, as nvJitLink takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LibraryKind {
    /// LTO-IR (`nvcc -dlto -dc`, or `.ltoir` files): calls into it inline.
    LtoIr,
    /// A fatbin; built with `nvcc -dlto -rdc=true -fatbin` it carries LTO-IR, so calls inline.
    Fatbin,
    /// PTX text (`nvcc -rdc=true -ptx`): linked, not inlined.
    Ptx,
    /// A relocatable cubin (`nvcc -rdc=true -cubin`): linked, not inlined.
    Cubin,
}

/// Where a device library's bytes come from.
#[derive(Clone, Copy, Debug)]
pub enum LibrarySource {
    /// Bytes embedded in the program (`include_bytes!`).
    Embedded(&'static [u8]),
    /// A file read at first use (relative paths are relative to the working directory).
    File(&'static str),
}

/// A device library that `#[extern_device]` functions bind to. Define it as a `static`:
///
/// ```
/// use cudajit_core::external::{DeviceLibrary, LibraryKind};
/// static FAST_MATH: DeviceLibrary =
///     DeviceLibrary::file("fast_math", LibraryKind::Fatbin, "fast_math.fatbin");
/// ```
#[derive(Debug)]
pub struct DeviceLibrary {
    name: &'static str,
    kind: LibraryKind,
    source: LibrarySource,
    loaded: OnceLock<Result<Vec<u8>, String>>,
}

/// A device library that could not be read.
#[derive(Clone, Debug, thiserror::Error)]
#[error("device library `{library}` ({origin}): {message}")]
pub struct LibraryError {
    pub library: String,
    pub origin: String,
    pub message: String,
}

impl DeviceLibrary {
    /// A library embedded in the program, e.g. `include_bytes!("fast_math.fatbin")`.
    pub const fn embedded(name: &'static str, kind: LibraryKind, bytes: &'static [u8]) -> Self {
        DeviceLibrary {
            name,
            kind,
            source: LibrarySource::Embedded(bytes),
            loaded: OnceLock::new(),
        }
    }

    /// A library read from `path` the first time a kernel that calls into it is compiled.
    pub const fn file(name: &'static str, kind: LibraryKind, path: &'static str) -> Self {
        DeviceLibrary {
            name,
            kind,
            source: LibrarySource::File(path),
            loaded: OnceLock::new(),
        }
    }

    /// The name used in messages.
    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn kind(&self) -> LibraryKind {
        self.kind
    }

    pub fn source(&self) -> LibrarySource {
        self.source
    }

    /// Where the bytes come from, for messages: the path, or "embedded in the program".
    pub fn origin(&self) -> String {
        match self.source {
            LibrarySource::Embedded(bytes) => {
                format!("embedded in the program, {} bytes", bytes.len())
            }
            LibrarySource::File(path) => path.to_owned(),
        }
    }

    /// The library's bytes; a file is read once, at first use.
    pub fn bytes(&self) -> Result<&[u8], LibraryError> {
        let loaded = match self.source {
            LibrarySource::Embedded(bytes) => return Ok(bytes),
            LibrarySource::File(path) => self.loaded.get_or_init(|| {
                std::fs::read(path)
                    .map_err(|e| format!("cannot read it ({e}); build it first or fix the path"))
            }),
        };
        match loaded {
            Ok(bytes) if bytes.is_empty() => Err(self.error("the file is empty")),
            Ok(bytes) => Ok(bytes),
            Err(message) => Err(self.error(message)),
        }
    }

    fn error(&self, message: &str) -> LibraryError {
        LibraryError {
            library: self.name.to_owned(),
            origin: self.origin(),
            message: message.to_owned(),
        }
    }
}

/// Called by the host stub `#[extern_device]` generates for each function.
#[cold]
pub fn extern_device_on_host(name: &str) -> ! {
    panic!(
        "`{name}()` is an `#[extern_device]` function: it only exists in device code, inside a \
         `#[kernel]` launched on the GPU (the CPU simulator does not run it either)"
    )
}
