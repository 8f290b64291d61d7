//! Source positions of the user's kernel code.

use serde::{Deserialize, Serialize};

/// A line/column position in the file that defines a kernel (1-based line, 0-based column,
/// as `proc_macro` reports them). `Span::default()` means "unknown".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    /// 1-based line; 0 when unknown.
    pub line: u32,
    /// 0-based column.
    pub column: u32,
}

impl Span {
    /// A span at `line`:`column`.
    pub const fn new(line: u32, column: u32) -> Self {
        Span { line, column }
    }

    /// Whether the position is known.
    pub fn is_known(&self) -> bool {
        self.line != 0
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_known() {
            write!(f, "{}:{}", self.line, self.column + 1)
        } else {
            f.write_str("?")
        }
    }
}
