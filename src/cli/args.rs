//! A small command-line reader: words, `--flag`s and `--option VALUE`s.

/// The arguments after the program name, consumed as they are read.
pub struct Args {
    rest: Vec<String>,
}

impl Args {
    /// Reads `args`.
    pub fn new(args: &[String]) -> Args {
        Args {
            rest: args.to_vec(),
        }
    }

    /// The next argument that is not an option, removed.
    pub fn next_word(&mut self) -> Option<String> {
        let at = self
            .rest
            .iter()
            .position(|a| !a.starts_with('-') || a == "-h")?;
        // A word right after an option taking a value belongs to that option: callers
        // read their options before their words.
        Some(self.rest.remove(at))
    }

    /// Whether `--name` is present (removed).
    pub fn flag(&mut self, name: &str) -> bool {
        let before = self.rest.len();
        self.rest.retain(|a| a != name);
        self.rest.len() != before
    }

    /// The value of `--name VALUE` or `--name=VALUE` (removed).
    pub fn option(&mut self, name: &str) -> Result<Option<String>, String> {
        let prefix = format!("{name}=");
        if let Some(at) = self.rest.iter().position(|a| a.starts_with(&prefix)) {
            let arg = self.rest.remove(at);
            return Ok(Some(arg[prefix.len()..].to_owned()));
        }
        let Some(at) = self.rest.iter().position(|a| a == name) else {
            return Ok(None);
        };
        self.rest.remove(at);
        if at < self.rest.len() && !self.rest[at].starts_with("--") {
            Ok(Some(self.rest.remove(at)))
        } else {
            Err(format!("`{name}` needs a value"))
        }
    }

    /// Fails on anything left unread.
    pub fn finish(&self) -> Result<(), String> {
        match self.rest.first() {
            None => Ok(()),
            Some(extra) => Err(format!("unexpected argument `{extra}`")),
        }
    }
}
