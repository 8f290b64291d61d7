//! External device functions (`#[extern_device]`) and the device libraries that define
//! them.
//!
//! An external function is declared in the kernel's NVVM IR and resolved by nvJitLink
//! against a [`DeviceLibrary`] the user supplies; with LTO-IR inputs the call inlines.
//! A library is bytes embedded in the program, a file, or parts a function provides at
//! run time for each GPU architecture (e.g. the device library of the NCCL release the
//! program loaded).
//!
//! This module only declares libraries: what `#[extern_device]` and the `const`
//! constructors build. Reading their files, asking their providers and keeping the answers
//! per architecture is the linker's business (`cudajit_codegen::device_library`).

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

/// A function that provides a device library's parts for one architecture, given as the
/// SM version (`10 * major + minor`, e.g. 90). An `Err` says what is missing and how to
/// fix it; it becomes the message of a [`LibraryError`].
pub type LibraryProvider = fn(u32) -> Result<ProvidedLibrary, String>;

/// Where a device library's bytes come from.
#[derive(Clone, Copy, Debug)]
pub enum LibrarySource {
    /// Bytes embedded in the program (`include_bytes!`).
    Embedded(&'static [u8]),
    /// A file read at first use (relative paths are relative to the working directory).
    File(&'static str),
    /// Parts a function provides at first use, once per architecture.
    Provided(LibraryProvider),
}

/// One nvJitLink input of a device library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryPart {
    /// The input's name in nvJitLink's messages, e.g. the file it came from.
    pub name: String,
    pub kind: LibraryKind,
    pub bytes: Vec<u8>,
}

/// A device library's inputs for one architecture, in link order, and where they came
/// from. What a [`LibraryProvider`] returns, and what the linker reads for every kind of
/// library (an embedded or file library is one part).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProvidedLibrary {
    /// Where the parts come from, for messages: paths, release, how they were built.
    pub origin: String,
    /// The inputs, linked in this order after the kernel.
    pub parts: Vec<LibraryPart>,
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
    /// `None` for a provided library: each part has its own kind.
    kind: Option<LibraryKind>,
    source: LibrarySource,
}

/// A device library that could not be read (built by the linker, which reads libraries).
#[derive(Clone, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[error("device library `{library}` ({origin}): {message}")]
pub struct LibraryError {
    pub library: String,
    pub origin: String,
    pub message: String,
}

impl DeviceLibrary {
    const fn new(name: &'static str, kind: Option<LibraryKind>, source: LibrarySource) -> Self {
        DeviceLibrary { name, kind, source }
    }

    /// A library embedded in the program, e.g. `include_bytes!("fast_math.fatbin")`.
    pub const fn embedded(name: &'static str, kind: LibraryKind, bytes: &'static [u8]) -> Self {
        Self::new(name, Some(kind), LibrarySource::Embedded(bytes))
    }

    /// A library read from `path` the first time a kernel that calls into it is compiled.
    pub const fn file(name: &'static str, kind: LibraryKind, path: &'static str) -> Self {
        Self::new(name, Some(kind), LibrarySource::File(path))
    }

    /// A library whose parts `provider` returns the first time a kernel that calls into
    /// it is compiled for an architecture (it is given the SM version, e.g. 90), e.g.
    /// `cudajit_nccl::device_code::provide_for_loaded_nccl`. The answer, success or
    /// failure, is kept for the rest of the process.
    ///
    /// ```
    /// use cudajit_core::external::{DeviceLibrary, LibraryKind, LibraryPart, ProvidedLibrary};
    /// fn fast_math(sm: u32) -> Result<ProvidedLibrary, String> {
    ///     let path = format!("fast_math.sm_{sm}.ltoir");
    ///     let bytes = std::fs::read(&path).map_err(|e| format!("{path}: {e}; build it"))?;
    ///     let part = LibraryPart { name: path.clone(), kind: LibraryKind::LtoIr, bytes };
    ///     Ok(ProvidedLibrary { origin: path, parts: vec![part] })
    /// }
    /// static FAST_MATH: DeviceLibrary = DeviceLibrary::provided("fast_math", fast_math);
    /// ```
    pub const fn provided(name: &'static str, provider: LibraryProvider) -> Self {
        Self::new(name, None, LibrarySource::Provided(provider))
    }

    /// The name used in messages.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The kind of an embedded or file library; `None` for a provided one, whose parts
    /// each have a kind.
    pub fn kind(&self) -> Option<LibraryKind> {
        self.kind
    }

    /// Where the bytes come from: embedded, a file, or a provider.
    pub fn source(&self) -> LibrarySource {
        self.source
    }

    /// Where the bytes come from, for messages: the path, "embedded in the program", or
    /// "provided at run time" (the provided parts' own origin is in what the provider
    /// returns).
    pub fn origin(&self) -> String {
        match self.source {
            LibrarySource::Embedded(bytes) => {
                format!("embedded in the program, {} bytes", bytes.len())
            }
            LibrarySource::File(path) => path.to_owned(),
            LibrarySource::Provided(_) => "provided at run time".to_owned(),
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
