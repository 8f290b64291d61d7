//! Lexical scopes: names bound by parameters, `let` and `for`, with shadowing.

/// A stack of scopes mapping names to `T`.
#[derive(Debug)]
pub(super) struct Scopes<T> {
    frames: Vec<Vec<(String, T)>>,
}

impl<T> Default for Scopes<T> {
    fn default() -> Self {
        Scopes { frames: Vec::new() }
    }
}

impl<T: Copy> Scopes<T> {
    pub(super) fn push(&mut self) {
        self.frames.push(Vec::new());
    }

    pub(super) fn pop(&mut self) {
        self.frames.pop();
    }

    /// Binds `name` in the innermost scope, shadowing earlier bindings.
    pub(super) fn bind(&mut self, name: &str, value: T) {
        if self.frames.is_empty() {
            self.push();
        }
        if let Some(frame) = self.frames.last_mut() {
            frame.push((name.to_owned(), value));
        }
    }

    /// The innermost binding of `name`.
    pub(super) fn lookup(&self, name: &str) -> Option<T> {
        self.frames
            .iter()
            .rev()
            .flat_map(|frame| frame.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }
}
