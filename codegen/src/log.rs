//! cudajit's log: `tracing` events and spans, and an opt-in stderr logger.
//!
//! cudajit logs through `tracing` and, being a library, never installs a subscriber of
//! its own. A program sees cudajit's events in whatever subscriber it installs (targets
//! `cudajit`, `cudajit_codegen`, `cudajit_sim`, `cudajit_nccl`; filter them with the
//! subscriber's own filter, or with [`env_filter`]'s to honour `CUDAJIT_LOG` in it). A program without one that wants cudajit's log calls [`init`] at
//! the start of `main` (the facade re-exports it as `cudajit::log::init`): it installs
//! `tracing_subscriber`'s `fmt` subscriber on stderr, filtered by `CUDAJIT_LOG`:
//!
//! - a level (`error`, `warn`, `info`, `debug`, `trace`; `warning`, and `1`/`on`/`true`
//!   for `info`) applies to every target;
//! - any other value is read as `target=level` directives, comma-separated, a bare level
//!   for every other target (`cudajit_codegen=trace,info`: `tracing_subscriber`'s
//!   [`Targets`], which needs no regular-expression engine in every dependant's build, as
//!   `EnvFilter` would);
//! - unset: `warn`.
//!
//! The `cudajit` tool calls it; so do the examples. A program that sets `CUDAJIT_LOG`
//! but has no subscriber gets one line on stderr at its first compile or simulated launch
//! saying so (the setting would otherwise be silently ignored).
//!
//! Warnings a user must see (an unusable cache directory) go through [`warn_always`]: when
//! no subscriber is installed at all they are printed on stderr anyway.

use std::sync::Once;

use cudajit_core::{EnvVar, EnvVarError};
use tracing::subscriber::NoSubscriber;
use tracing::Level;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The variable read by [`init`] and [`env_filter`].
pub const VARIABLE: &str = "CUDAJIT_LOG";

/// What `CUDAJIT_LOG` accepts.
const ACCEPTS: &str = "a level (`error`, `warn`, `info`, `debug`, `trace`) or `target=level` \
    directives such as `cudajit_codegen=trace,info`";

/// Why [`init`] installed nothing.
#[derive(Clone, PartialEq, Eq, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum InitError {
    /// `CUDAJIT_LOG` is neither a level nor filter directives.
    #[error(transparent)]
    Environment(#[from] EnvVarError),
    /// The program already has a global subscriber: it sees cudajit's events as they are.
    #[error(
        "a global tracing subscriber is already installed: cudajit's events go to it (filter \
         them with its own filter, or add cudajit::log::env_filter()'s to it)"
    )]
    AlreadyInstalled,
}

/// Installs the stderr logger, filtered by `CUDAJIT_LOG` (`warn` when unset). For programs
/// without a `tracing` subscriber of their own; call it once, at the start of `main`.
pub fn init() -> Result<(), InitError> {
    let filter = env_filter()?.unwrap_or_else(|| Targets::new().with_default(Level::WARN));
    // The fmt subscriber's own level is `info` unless told: `filter` alone decides.
    tracing_subscriber::fmt()
        .with_max_level(Level::TRACE)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false)
        .without_time()
        .finish()
        .with(filter)
        .try_init()
        .map_err(|_| InitError::AlreadyInstalled)
}

/// The filter `CUDAJIT_LOG` asks for, for a program that builds its own subscriber (a
/// [`Targets`] is a layer and a per-layer filter): `None` when unset, an error naming the
/// variable when it is neither a level nor directives.
pub fn env_filter() -> Result<Option<Targets>, EnvVarError> {
    let setting = EnvVar::process(VARIABLE);
    let Some(text) = setting.text(ACCEPTS)? else {
        return Ok(None);
    };
    filter_for(text)
        .map(Some)
        .map_err(|reason| setting.invalid(format!("{ACCEPTS} ({reason})")))
}

/// The filter for a `CUDAJIT_LOG` value: a level name for every target, else directives.
pub fn filter_for(setting: &str) -> Result<Targets, String> {
    match parse_level(setting) {
        Some(level) => Ok(Targets::new().with_default(level)),
        None => setting.trim().parse().map_err(|e| format!("{e}")),
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

/// Says once per process, on stderr, that `CUDAJIT_LOG` is set but nothing receives the
/// log (no subscriber), with the fix. Called at the first compile and simulated launch;
/// after the first call, one atomic load.
pub fn notice_unheard_setting() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os(VARIABLE).is_some_and(|v| !v.is_empty()) && !has_subscriber() {
            eprintln!(
                "cudajit: {VARIABLE} is set but this program has no tracing subscriber, so \
                 nothing is logged: call `cudajit::log::init()` at the start of main (or \
                 install a subscriber of your own)"
            );
        }
    });
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
