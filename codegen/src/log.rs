//! `CUDAJIT_LOG=debug`: cudajit's log on stderr without setting up `tracing`.
//!
//! cudajit logs through `tracing`. A program that installs a subscriber (for example
//! `tracing_subscriber::fmt` with `RUST_LOG=cudajit=debug`) sees everything there. For
//! everyone else, setting `CUDAJIT_LOG` to `error`, `warn`, `info`, `debug` or `trace`
//! makes cudajit install this small subscriber, which prints events at that level or
//! above on stderr as `cudajit DEBUG message key=value`. It is installed as the global
//! default only if the program has none (a later attempt by the program to install its
//! own then fails, so programs that use `tracing` should use their own and leave
//! `CUDAJIT_LOG` unset).

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Installs the stderr logger if `CUDAJIT_LOG` names a level (once per process; later
/// calls are one atomic load).
pub fn init_from_env() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let Ok(setting) = std::env::var("CUDAJIT_LOG") else {
            return;
        };
        match parse_level(&setting) {
            Some(level) => {
                let _ = tracing::subscriber::set_global_default(StderrLogger::new(level));
            }
            None if setting.trim().is_empty() => {}
            None => eprintln!(
                "cudajit: CUDAJIT_LOG=`{setting}` is not a level; use error, warn, info, debug or trace"
            ),
        }
    });
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

/// A subscriber that prints events at `level` or above on stderr, one line each.
pub struct StderrLogger {
    level: Level,
    next_span: AtomicU64,
}

impl StderrLogger {
    /// A logger for `level` and above.
    pub fn new(level: Level) -> Self {
        StderrLogger {
            level,
            next_span: AtomicU64::new(1),
        }
    }
}

impl Subscriber for StderrLogger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= self.level
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(self.level.into())
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(self.next_span.fetch_add(1, Ordering::Relaxed))
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = Line::default();
        event.record(&mut line);
        let target = event.metadata().target();
        let prefix = if target.starts_with("cudajit") {
            String::from("cudajit")
        } else {
            target.to_owned()
        };
        let message = line.message.trim_start_matches("cudajit: ");
        let _ = writeln!(
            std::io::stderr().lock(),
            "{prefix} {} {message}{}",
            event.metadata().level(),
            line.fields
        );
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

#[derive(Default)]
struct Line {
    message: String,
    fields: String,
}

impl Visit for Line {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_owned();
        } else {
            self.fields.push_str(&format!(" {}={value}", field.name()));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        } else {
            self.fields
                .push_str(&format!(" {}={value:?}", field.name()));
        }
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
}
