//! Reading the device libraries `#[extern_device]` functions bind to: the linker's side of
//! [`DeviceLibrary`], which only declares a library (its name, kind and source).
//!
//! An embedded or file library is read once per process and is the same for every
//! architecture; a provided library's provider is asked once per architecture and
//! process, and its answer, success or failure, is kept. The answers live in a memo per
//! library (libraries are `static`s, so a library's address names it for the whole
//! process).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use cudajit_core::external::{
    DeviceLibrary, LibraryError, LibraryPart, LibrarySource, ProvidedLibrary,
};

use crate::sync::lock_ignoring_poison as lock;

/// A device library's bytes, read by the linker. Implemented for [`DeviceLibrary`];
/// bring it into scope to call `library.parts(sm)`.
pub trait LibraryParts {
    /// The library's inputs for SM version `sm` (e.g. 90) and their origin: one part for
    /// an embedded or file library, whatever the provider returned for a provided one
    /// (asked once per architecture).
    fn parts(&'static self, sm: u32) -> Result<Arc<ProvidedLibrary>, LibraryError>;

    /// The library's bytes, for an embedded or file library (a file is read once, at
    /// first use). A provided library has parts per architecture: see [`Self::parts`].
    fn bytes(&'static self) -> Result<&'static [u8], LibraryError>;

    /// Where the parts for SM version `sm` come from: the provider's origin once it
    /// answered, else [`DeviceLibrary::origin`].
    fn origin_for(&'static self, sm: u32) -> String;
}

/// What the process learnt about one library.
#[derive(Default)]
struct LibraryMemo {
    /// An embedded or file library, the same for every architecture.
    loaded: OnceLock<Result<Arc<ProvidedLibrary>, String>>,
    /// A provided library, per SM version; failures are kept too, so a provider is asked
    /// once per architecture and process.
    provided: Mutex<BTreeMap<u32, Result<Arc<ProvidedLibrary>, String>>>,
}

/// The memo of `library`, created at first use and kept for the process (one small value
/// per `static` library, so it may live as long as the library does).
fn memo_of(library: &'static DeviceLibrary) -> &'static LibraryMemo {
    static MEMOS: OnceLock<Mutex<HashMap<usize, &'static LibraryMemo>>> = OnceLock::new();
    let address = library as *const DeviceLibrary as usize;
    let mut memos = lock(MEMOS.get_or_init(Default::default));
    memos
        .entry(address)
        .or_insert_with(|| Box::leak(Box::default()))
}

impl LibraryParts for DeviceLibrary {
    fn parts(&'static self, sm: u32) -> Result<Arc<ProvidedLibrary>, LibraryError> {
        let LibrarySource::Provided(provider) = self.source() else {
            return single(self).cloned();
        };
        // Asked under the lock: threads racing for one architecture share one answer
        // (a provider may run a compiler).
        let mut provided = lock(&memo_of(self).provided);
        let answer = provided
            .entry(sm)
            .or_insert_with(|| check_provided(provider(sm)).map(Arc::new));
        match answer {
            Ok(library) => Ok(library.clone()),
            Err(message) => Err(error(
                self,
                message,
                format!("provided at run time for sm_{sm}"),
            )),
        }
    }

    fn bytes(&'static self) -> Result<&'static [u8], LibraryError> {
        match self.source() {
            LibrarySource::Embedded(bytes) => Ok(bytes),
            LibrarySource::File(_) => Ok(&single(self)?.parts[0].bytes),
            LibrarySource::Provided(_) => Err(error(
                self,
                "a provided library has parts per architecture: use `parts(sm)`",
                self.origin(),
            )),
        }
    }

    fn origin_for(&'static self, sm: u32) -> String {
        match self.source() {
            LibrarySource::Provided(_) => match lock(&memo_of(self).provided).get(&sm) {
                Some(Ok(provided)) => provided.origin.clone(),
                _ => format!("provided at run time for sm_{sm}"),
            },
            _ => self.origin(),
        }
    }
}

/// An embedded or file library as its one part.
fn single(library: &'static DeviceLibrary) -> Result<&'static Arc<ProvidedLibrary>, LibraryError> {
    let (kind, source) = (library.kind(), library.source());
    let loaded = memo_of(library).loaded.get_or_init(|| {
        // Embedded and file libraries are built with a kind (`embedded`, `file`).
        let (bytes, name, kind) = match (source, kind) {
            (LibrarySource::Embedded(bytes), Some(kind)) => {
                (bytes.to_vec(), library.name().to_owned(), kind)
            }
            (LibrarySource::File(path), Some(kind)) => (
                std::fs::read(path)
                    .map_err(|e| format!("cannot read it ({e}); build it first or fix the path"))?,
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
            origin: library.origin(),
            parts: vec![LibraryPart { name, kind, bytes }],
        }))
    });
    loaded
        .as_ref()
        .map_err(|message| error(library, message, library.origin()))
}

fn error(library: &DeviceLibrary, message: &str, origin: String) -> LibraryError {
    LibraryError {
        library: library.name().to_owned(),
        origin,
        message: message.to_owned(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use cudajit_core::external::LibraryKind;
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
