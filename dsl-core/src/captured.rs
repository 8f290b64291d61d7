//! The form in which the `#[kernel]` macro embeds a kernel into the program.

use crate::ast::KernelSource;

/// A kernel captured at compile time: its syntax as compact JSON and a SHA-256 of that text
/// computed when the macro expanded, so the JIT cache can be consulted without parsing or
/// lowering anything.
#[derive(Clone, Copy, Debug)]
pub struct CapturedKernel {
    /// The kernel's Rust name.
    pub name: &'static str,
    /// [`KernelSource`] serialised by [`KernelSource::to_json`].
    pub source: &'static str,
    /// Lowercase hex SHA-256 of `source`.
    pub source_hash: &'static str,
    /// The file that defines the kernel (`file!()`), for messages.
    pub file: &'static str,
}

impl CapturedKernel {
    /// Parses the captured syntax.
    pub fn parse(&self) -> Result<KernelSource, serde_json::Error> {
        KernelSource::from_json(self.source)
    }
}
