//! The GPU architecture code is compiled for.

use std::fmt;
use std::str::FromStr;

/// A compute capability such as 9.0 (H100/H200) or 8.0 (A100). One value yields both the
/// virtual architecture libNVVM compiles for (`compute_90`) and the real one nvJitLink
/// links for (`sm_90`), so the two can never disagree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Arch {
    pub major: u32,
    pub minor: u32,
}

impl Arch {
    /// Hopper (H100, H200).
    pub const SM_90: Arch = Arch::new(9, 0);
    /// Ampere A100.
    pub const SM_80: Arch = Arch::new(8, 0);

    /// The architecture of compute capability `major.minor`.
    pub const fn new(major: u32, minor: u32) -> Self {
        Arch { major, minor }
    }

    /// `compute_XY`, the libNVVM `-arch` value.
    pub fn compute_name(self) -> String {
        format!("compute_{}{}", self.major, self.minor)
    }

    /// `sm_XY`, the nvJitLink `-arch` value and the cubin's target.
    pub fn sm_name(self) -> String {
        format!("sm_{}{}", self.major, self.minor)
    }

    /// `10 * major + minor`, as cubins record it.
    pub fn number(self) -> u32 {
        self.major * 10 + self.minor
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.sm_name())
    }
}

/// An architecture name that is not `sm_XY`, `compute_XY` or `X.Y`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a GPU architecture: write it as `sm_90`, `compute_90` or `9.0`")]
pub struct ParseArchError(pub String);

impl FromStr for Arch {
    type Err = ParseArchError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || ParseArchError(text.to_owned());
        let trimmed = text.trim();
        if let Some((major, minor)) = trimmed.split_once('.') {
            let major = major.parse().map_err(|_| error())?;
            let minor = minor.parse().map_err(|_| error())?;
            return Ok(Arch::new(major, minor));
        }
        let digits = trimmed
            .strip_prefix("sm_")
            .or_else(|| trimmed.strip_prefix("compute_"))
            .ok_or_else(error)?;
        if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(error());
        }
        let (major, minor) = digits.split_at(digits.len() - 1);
        Ok(Arch::new(
            major.parse().map_err(|_| error())?,
            minor.parse().map_err(|_| error())?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for text in ["sm_90", "compute_90", "9.0"] {
            assert_eq!(text.parse::<Arch>(), Ok(Arch::SM_90));
        }
        assert_eq!("sm_120".parse::<Arch>(), Ok(Arch::new(12, 0)));
        assert_eq!(Arch::SM_80.compute_name(), "compute_80");
        assert_eq!(Arch::SM_80.sm_name(), "sm_80");
        assert!("sm_9x".parse::<Arch>().is_err());
        assert!("hopper".parse::<Arch>().is_err());
    }
}
