//! External device functions (`#[extern_device]`) and the device libraries that define
//! them.
//!
//! An external function is declared in the kernel's NVVM IR and resolved by nvJitLink
//! against a [`DeviceLibrary`] the user supplies; with LTO-IR inputs the call inlines.
//! A library is bytes embedded in the program, a file, or parts a function provides at
//! run time for each GPU architecture (e.g. the device library of the NCCL release the
//! program loaded).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

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
/// from. What a [`LibraryProvider`] returns, and what [`DeviceLibrary::parts`] gives for
/// every kind of library (an embedded or file library is one part).
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
    /// An embedded or file library, the same for every architecture.
    loaded: OnceLock<Result<Arc<ProvidedLibrary>, String>>,
    /// A provided library, per SM version; failures are kept too, so a provider is asked
    /// once per architecture and process.
    provided: Mutex<BTreeMap<u32, Result<Arc<ProvidedLibrary>, String>>>,
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
    const fn new(name: &'static str, kind: Option<LibraryKind>, source: LibrarySource) -> Self {
        DeviceLibrary {
            name,
            kind,
            source,
            loaded: OnceLock::new(),
            provided: Mutex::new(BTreeMap::new()),
        }
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

    pub fn source(&self) -> LibrarySource {
        self.source
    }

    /// Where the bytes come from, for messages: the path, "embedded in the program", or
    /// "provided at run time" (the provided parts' own origin is in [`Self::parts`]).
    pub fn origin(&self) -> String {
        match self.source {
            LibrarySource::Embedded(bytes) => {
                format!("embedded in the program, {} bytes", bytes.len())
            }
            LibrarySource::File(path) => path.to_owned(),
            LibrarySource::Provided(_) => "provided at run time".to_owned(),
        }
    }

    /// Where the parts for SM version `sm` come from: the provider's origin once it
    /// answered, else [`Self::origin`].
    pub fn origin_for(&self, sm: u32) -> String {
        match self.source {
            LibrarySource::Provided(_) => match lock(&self.provided).get(&sm) {
                Some(Ok(provided)) => provided.origin.clone(),
                _ => format!("provided at run time for sm_{sm}"),
            },
            _ => self.origin(),
        }
    }

    /// The library's bytes, for an embedded or file library (a file is read once, at
    /// first use). A provided library has parts per architecture: see [`Self::parts`].
    pub fn bytes(&self) -> Result<&[u8], LibraryError> {
        match self.source {
            LibrarySource::Embedded(bytes) => Ok(bytes),
            LibrarySource::File(_) => Ok(&self.single()?.parts[0].bytes),
            LibrarySource::Provided(_) => Err(self.error(
                "a provided library has parts per architecture: use `parts(sm)`",
                self.origin(),
            )),
        }
    }

    /// The library's inputs for SM version `sm` (e.g. 90) and their origin: one part for
    /// an embedded or file library, whatever the provider returned for a provided one
    /// (asked once per architecture).
    pub fn parts(&self, sm: u32) -> Result<Arc<ProvidedLibrary>, LibraryError> {
        let LibrarySource::Provided(provider) = self.source else {
            return self.single().cloned();
        };
        // Asked under the lock: threads racing for one architecture share one answer
        // (a provider may run a compiler).
        let mut provided = lock(&self.provided);
        let answer = provided
            .entry(sm)
            .or_insert_with(|| check_provided(provider(sm)).map(Arc::new));
        match answer {
            Ok(library) => Ok(library.clone()),
            Err(message) => Err(self.error(message, format!("provided at run time for sm_{sm}"))),
        }
    }

    /// An embedded or file library as its one part.
    fn single(&self) -> Result<&Arc<ProvidedLibrary>, LibraryError> {
        let (kind, source) = (self.kind, self.source);
        let loaded = self.loaded.get_or_init(|| {
            // Embedded and file libraries are built with a kind (`embedded`, `file`).
            let (bytes, name, kind) = match (source, kind) {
                (LibrarySource::Embedded(bytes), Some(kind)) => {
                    (bytes.to_vec(), self.name.to_owned(), kind)
                }
                (LibrarySource::File(path), Some(kind)) => (
                    std::fs::read(path).map_err(|e| {
                        format!("cannot read it ({e}); build it first or fix the path")
                    })?,
                    path.to_owned(),
                    kind,
                ),
                _ => {
                    return Err(
                        "a provided library has parts per architecture: use `parts(sm)`".to_owned(),
                    )
                }
            };
            if bytes.is_empty() {
                return Err(match source {
                    LibrarySource::File(_) => "the file is empty".to_owned(),
                    _ => "the embedded bytes are empty".to_owned(),
                });
            }
            Ok(Arc::new(ProvidedLibrary {
                origin: self.origin(),
                parts: vec![LibraryPart { name, kind, bytes }],
            }))
        });
        loaded
            .as_ref()
            .map_err(|message| self.error(message, self.origin()))
    }

    fn error(&self, message: &str, origin: String) -> LibraryError {
        LibraryError {
            library: self.name.to_owned(),
            origin,
            message: message.to_owned(),
        }
    }
}

/// A provider's answer, refused if it has nothing to link.
fn check_provided(answer: Result<ProvidedLibrary, String>) -> Result<ProvidedLibrary, String> {
    let library = answer?;
    if library.parts.is_empty() {
        return Err(format!(
            "the provider returned no parts ({}); it must return at least one input",
            library.origin
        ));
    }
    if let Some(empty) = library.parts.iter().find(|p| p.bytes.is_empty()) {
        return Err(format!(
            "the provider's part `{}` is empty ({})",
            empty.name, library.origin
        ));
    }
    Ok(library)
}

/// Locks a mutex, recovering the data if another thread panicked while holding it (the
/// map only ever holds complete answers).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Called by the host stub `#[extern_device]` generates for each function.
#[cold]
pub fn extern_device_on_host(name: &str) -> ! {
    panic!(
        "`{name}()` is an `#[extern_device]` function: it only exists in device code, inside a \
         `#[kernel]` launched on the GPU (the CPU simulator does not run it either)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static CALLS: AtomicUsize = AtomicUsize::new(0);

    fn two_parts(sm: u32) -> Result<ProvidedLibrary, String> {
        CALLS.fetch_add(1, Ordering::SeqCst);
        if sm < 70 {
            return Err(format!("sm_{sm} is too old; use sm_70 or newer"));
        }
        let part = |name: &str, kind| LibraryPart {
            name: name.to_owned(),
            kind,
            bytes: format!("{name} for sm_{sm}").into_bytes(),
        };
        Ok(ProvidedLibrary {
            origin: format!("test provider, sm_{sm}"),
            parts: vec![
                part("shim", LibraryKind::LtoIr),
                part("lib", LibraryKind::Fatbin),
            ],
        })
    }

    static PROVIDED: DeviceLibrary = DeviceLibrary::provided("two_parts", two_parts);

    #[test]
    fn a_provided_library_is_asked_once_per_architecture() {
        assert_eq!(PROVIDED.kind(), None);
        assert_eq!(PROVIDED.origin_for(90), "provided at run time for sm_90");
        let sm90 = PROVIDED.parts(90).unwrap();
        let before = CALLS.load(Ordering::SeqCst);
        assert!(Arc::ptr_eq(&sm90, &PROVIDED.parts(90).unwrap()));
        assert_eq!(CALLS.load(Ordering::SeqCst), before, "asked again");
        assert_eq!(sm90.origin, "test provider, sm_90");
        assert_eq!(PROVIDED.origin_for(90), "test provider, sm_90");
        assert_eq!(sm90.parts.len(), 2);
        assert_eq!(sm90.parts[0].kind, LibraryKind::LtoIr);
        assert_eq!(sm90.parts[1].bytes, b"lib for sm_90");
        let sm80 = PROVIDED.parts(80).unwrap();
        assert_eq!(sm80.parts[1].bytes, b"lib for sm_80");

        let error = PROVIDED.parts(60).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("`two_parts`")
                && text.contains("sm_60 is too old; use sm_70 or newer")
                && text.contains("provided at run time for sm_60"),
            "{text}"
        );
        // A provided library has no single byte string.
        assert!(PROVIDED
            .bytes()
            .unwrap_err()
            .to_string()
            .contains("parts(sm)"));
    }

    fn nothing(_: u32) -> Result<ProvidedLibrary, String> {
        Ok(ProvidedLibrary {
            origin: "nowhere".into(),
            parts: Vec::new(),
        })
    }

    #[test]
    fn a_provider_without_parts_is_an_error() {
        static EMPTY: DeviceLibrary = DeviceLibrary::provided("empty", nothing);
        let text = EMPTY.parts(90).unwrap_err().to_string();
        assert!(text.contains("no parts (nowhere)"), "{text}");
    }

    #[test]
    fn embedded_and_file_libraries_are_one_part() {
        static EMBEDDED: DeviceLibrary =
            DeviceLibrary::embedded("embedded", LibraryKind::Fatbin, b"fatbin bytes");
        let parts = EMBEDDED.parts(90).unwrap();
        assert_eq!(parts.parts.len(), 1);
        assert_eq!(parts.parts[0].kind, LibraryKind::Fatbin);
        assert_eq!(parts.parts[0].bytes, b"fatbin bytes");
        assert_eq!(parts.origin, EMBEDDED.origin());
        assert!(Arc::ptr_eq(&parts, &EMBEDDED.parts(80).unwrap()));
        assert_eq!(EMBEDDED.bytes().unwrap(), b"fatbin bytes");

        static MISSING: DeviceLibrary = DeviceLibrary::file(
            "missing",
            LibraryKind::LtoIr,
            "/nonexistent/cudajit/missing.ltoir",
        );
        let text = MISSING.parts(90).unwrap_err().to_string();
        assert!(
            text.contains("/nonexistent/cudajit/missing.ltoir") && text.contains("cannot read it"),
            "{text}"
        );
        assert!(MISSING.bytes().is_err());
    }
}
