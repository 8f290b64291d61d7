//! `CUDAJIT_LOG=debug`: cudajit's log on stderr without setting up `tracing`.
//!
//! cudajit logs through `tracing`. A program with its own subscriber (for example
//! `tracing_subscriber::fmt` with `RUST_LOG=cudajit=debug`) sees everything there, and
//! cudajit never replaces it. For everyone else, `CUDAJIT_LOG` makes cudajit *try* to
//! install `tracing_subscriber`'s `fmt` subscriber on stderr, filtered by an
//! [`EnvFilter`] built from the variable:
//!
//! - a level (`error`, `warn`, `info`, `debug`, `trace`; `warning`, and `1`/`on`/`true`
//!   for `info`) applies to every target, as before;
//! - any other value is read as `EnvFilter` directives (`cudajit_codegen=trace,info`).
//!
//! The attempt is made at the first kernel compile (and by the `cudajit` tool) and only
//! succeeds when no global subscriber is installed yet: a program that installs its own
//! before then keeps it. A program that installs its own later should leave `CUDAJIT_LOG`
//! unset (or use [`env_filter`] in its own subscriber), since `tracing` allows only one
//! global subscriber per process.
//!
//! Warnings a user must see (an unusable cache directory) go through [`warn_always`]: when
//! no subscriber is installed at all they are printed on stderr anyway.

use std::sync::OnceLock;

use tracing::subscriber::NoSubscriber;
use tracing::Level;
use tracing_subscriber::EnvFilter;

/// The variable read by [`init_from_env`].
pub const VARIABLE: &str = "CUDAJIT_LOG";

/// Tries to install the stderr logger if `CUDAJIT_LOG` is set (once per process; later
/// calls are one atomic load). Does nothing when a global subscriber already exists.
pub fn init_from_env() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let Ok(setting) = std::env::var(VARIABLE) else {
            return;
        };
        if setting.trim().is_empty() {
            return;
        }
        match filter_for(&setting) {
            Ok(filter) => {
                // `try_init` fails, harmlessly, when the program has its own subscriber.
                let _ = tracing_subscriber::fmt()
                    .with_env_filter(filter)
                    .with_writer(std::io::stderr)
                    .with_ansi(false)
                    .with_target(false)
                    .without_time()
                    .try_init();
            }
            Err(error) => eprintln!(
                "cudajit: {VARIABLE}=`{setting}` is neither a level (error, warn, info, debug, trace) nor a filter: {error}"
            ),
        }
    });
}

/// The filter `CUDAJIT_LOG` asks for, for a program that builds its own subscriber
/// (`None` when unset, empty or invalid).
pub fn env_filter() -> Option<EnvFilter> {
    let setting = std::env::var(VARIABLE).ok()?;
    (!setting.trim().is_empty())
        .then(|| filter_for(&setting).ok())
        .flatten()
}

/// The filter for a `CUDAJIT_LOG` value: a level name for every target, else directives.
pub fn filter_for(setting: &str) -> Result<EnvFilter, String> {
    match parse_level(setting) {
        Some(level) => Ok(EnvFilter::new(level.as_str().to_ascii_lowercase())),
        None => EnvFilter::try_new(setting.trim()).map_err(|e| e.to_string()),
    }
}

/// Parses a level name (`debug`, `INFO`, ...; `1`/`on` mean `info`).
pub fn parse_level(text: &str) -> Option<Level> {
    match text.trim().to_ascii_lowercase().as_str() {
        "error" => Some(Level::ERROR),
        "warn" | "warning" => Some(Level::WARN),
        "info" | "1" | "on" | "true" => Some(Level::INFO),
        "debug" => Some(Level::DEBUG),
        "trace" => Some(Level::TRACE),
        _ => None,
    }
}

/// Whether any subscriber (global or scoped) would receive events on this thread.
pub fn has_subscriber() -> bool {
    !tracing::dispatcher::get_default(|d| d.is::<NoSubscriber>())
}

/// A warning the user must see even without a logger: sent to `tracing` at `warn`, and
/// printed on stderr as `cudajit: warning: ...` when no subscriber is installed.
pub fn warn_always(message: &str) {
    if has_subscriber() {
        tracing::warn!("cudajit: {message}");
    } else {
        eprintln!("cudajit: warning: {message}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse() {
        assert_eq!(parse_level("DEBUG"), Some(Level::DEBUG));
        assert_eq!(parse_level("warning"), Some(Level::WARN));
        assert_eq!(parse_level("loud"), None);
    }

    #[test]
    fn levels_and_directives_make_filters() {
        assert_eq!(filter_for("on").unwrap().to_string(), "info");
        assert_eq!(filter_for("Warning").unwrap().to_string(), "warn");
        assert_eq!(
            filter_for("cudajit_codegen=trace").unwrap().to_string(),
            "cudajit_codegen=trace"
        );
        assert!(filter_for("cudajit_codegen=loud").is_err());
    }

    #[test]
    fn no_subscriber_is_detected_and_a_scoped_one_is_seen() {
        // No global subscriber is installed by the unit tests.
        assert!(!has_subscriber());
        let subscriber = tracing_subscriber::fmt()
            .with_writer(std::io::sink)
            .finish();
        tracing::subscriber::with_default(subscriber, || assert!(has_subscriber()));
    }
}
