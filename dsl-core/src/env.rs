//! The environment variables cudajit reads, all through one reader: a variable set to a
//! value cudajit cannot use is an error that names the variable and what it accepts,
//! never a silent default (a typo in `CUDAJIT_SIM_WATCHDOG_S=3O` must not turn the
//! watchdog off).
//!
//! Unset and empty (or blank) are the same: "use the default" (`CUDA_HOME= cmd` is how
//! shells unset things in practice). Variables holding paths are not read here: any
//! value is a path, and the code that uses it reports a path that does not work.
//!
//! Every crate of the workspace reads its variables through [`EnvVar`]; tests give the
//! value directly ([`EnvVar::given`]) instead of mutating the process's environment.

use std::ffi::OsString;
use std::time::Duration;

/// A variable set to a value cudajit cannot use.
#[derive(Clone, PartialEq, Eq, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[error("{variable}=`{value}` is not valid: expected {accepts} (or unset it for the default)")]
pub struct EnvVarError {
    /// The variable, e.g. `CUDAJIT_SIM_WATCHDOG_S`.
    pub variable: &'static str,
    /// Its value as set (lossily decoded when not UTF-8).
    pub value: String,
    /// What it accepts, in words.
    pub accepts: String,
}

/// One variable and its value, read once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvVar {
    name: &'static str,
    value: Option<OsString>,
}

/// What [`EnvVar::flag`] accepts.
pub const FLAG_VALUES: &str = "`1`, `true`, `on` or `yes`; or `0`, `false`, `off` or `no`";

impl EnvVar {
    /// `name` as the process's environment has it now.
    pub fn process(name: &'static str) -> EnvVar {
        EnvVar {
            name,
            value: std::env::var_os(name),
        }
    }

    /// `name` with the value `value` (`None`: unset), for environments held as data.
    pub fn given(name: &'static str, value: Option<impl Into<OsString>>) -> EnvVar {
        EnvVar {
            name,
            value: value.map(Into::into),
        }
    }

    /// The variable's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// An error saying the value is not one of `accepts`.
    pub fn invalid(&self, accepts: impl Into<String>) -> EnvVarError {
        EnvVarError {
            variable: self.name,
            value: self
                .value
                .as_ref()
                .map(|v| v.to_string_lossy().into_owned())
                .unwrap_or_default(),
            accepts: accepts.into(),
        }
    }

    /// The value as text, trimmed; `None` when unset or blank. A value that is not UTF-8
    /// is an error (no setting cudajit parses can be one).
    pub fn text(&self, accepts: &str) -> Result<Option<&str>, EnvVarError> {
        let Some(value) = &self.value else {
            return Ok(None);
        };
        let text = value.to_str().ok_or_else(|| self.invalid(accepts))?.trim();
        Ok((!text.is_empty()).then_some(text))
    }

    /// The value read by `parse` (`None` from it: not valid, `accepts` says what is).
    pub fn parse<T>(
        &self,
        accepts: &str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<Option<T>, EnvVarError> {
        match self.text(accepts)? {
            None => Ok(None),
            Some(text) => parse(text).map(Some).ok_or_else(|| self.invalid(accepts)),
        }
    }

    /// An on/off switch: see [`FLAG_VALUES`] (any case).
    pub fn flag(&self) -> Result<Option<bool>, EnvVarError> {
        self.parse(FLAG_VALUES, |text| {
            match text.to_ascii_lowercase().as_str() {
                "1" | "true" | "on" | "yes" => Some(true),
                "0" | "false" | "off" | "no" => Some(false),
                _ => None,
            }
        })
    }

    /// A duration in seconds: a finite number (fractions allowed), above 0, or also 0
    /// when `zero` says what 0 means (it goes into the error's words).
    pub fn seconds(&self, zero: Option<&str>) -> Result<Option<Duration>, EnvVarError> {
        let accepts = match zero {
            Some(meaning) => format!("a number of seconds such as `30` or `0.5` ({meaning})"),
            None => "a number of seconds above 0, such as `30` or `0.5`".to_owned(),
        };
        self.parse(&accepts, |text| {
            let seconds: f64 = text.parse().ok()?;
            let allowed = seconds > 0.0 || (seconds == 0.0 && zero.is_some());
            (seconds.is_finite() && allowed).then(|| Duration::from_secs_f64(seconds))
        })
    }

    /// A whole number, at least 1.
    pub fn count(&self) -> Result<Option<usize>, EnvVarError> {
        self.parse("a whole number, at least 1", |text| {
            text.parse().ok().filter(|&n: &usize| n > 0)
        })
    }

    /// One of `choices` (name, value), any case.
    pub fn choice<T: Copy>(&self, choices: &[(&str, T)]) -> Result<Option<T>, EnvVarError> {
        let names: Vec<String> = choices
            .iter()
            .map(|(name, _)| format!("`{name}`"))
            .collect();
        let accepts = format!("one of {}", names.join(", "));
        self.parse(&accepts, |text| {
            choices
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(text))
                .map(|&(_, value)| value)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(value: &str) -> EnvVar {
        EnvVar::given("CUDAJIT_TEST", Some(value))
    }

    #[test]
    fn unset_and_blank_are_the_default() {
        let unset = EnvVar::given("CUDAJIT_TEST", None::<&str>);
        assert_eq!(unset.flag(), Ok(None));
        assert_eq!(var("  ").count(), Ok(None));
        assert_eq!(var("").seconds(None), Ok(None));
    }

    #[test]
    fn flags_take_the_usual_words() {
        assert_eq!(var("ON").flag(), Ok(Some(true)));
        assert_eq!(var(" no ").flag(), Ok(Some(false)));
        let error = var("maybe").flag().unwrap_err();
        assert_eq!(error.variable, "CUDAJIT_TEST");
        assert_eq!(error.value, "maybe");
        let message = error.to_string();
        assert!(
            message.starts_with("CUDAJIT_TEST=`maybe` is not valid: expected `1`, `true`"),
            "{message}"
        );
    }

    #[test]
    fn seconds_refuse_what_is_not_a_duration() {
        assert_eq!(
            var("0.25").seconds(None),
            Ok(Some(Duration::from_millis(250)))
        );
        assert_eq!(var("0").seconds(Some("0: off")), Ok(Some(Duration::ZERO)));
        assert!(var("0").seconds(None).is_err());
        for bad in ["-1", "NaN", "inf", "abc", "3O"] {
            let error = var(bad)
                .seconds(Some("0 turns the watchdog off"))
                .unwrap_err();
            assert!(
                error.to_string().contains("0 turns the watchdog off"),
                "{error}"
            );
        }
    }

    #[test]
    fn counts_and_choices() {
        assert_eq!(var("8").count(), Ok(Some(8)));
        assert!(var("0").count().is_err());
        assert!(var("-2").count().is_err());
        let choices = [("gpu", 1), ("sim", 2)];
        assert_eq!(var("SIM").choice(&choices), Ok(Some(2)));
        let error = var("cpu2").choice(&choices).unwrap_err();
        assert!(error.to_string().contains("one of `gpu`, `sim`"), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn a_value_that_is_not_utf8_is_an_error() {
        use std::os::unix::ffi::OsStringExt;
        let bad = EnvVar::given("CUDAJIT_TEST", Some(OsString::from_vec(vec![0x66, 0xff])));
        assert!(bad.flag().is_err());
    }
}
