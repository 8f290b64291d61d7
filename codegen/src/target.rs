//! The GPU architecture code is compiled for.

use std::fmt;
use std::str::FromStr;

/// A compute capability such as 9.0 (H100/H200) or 8.0 (A100), and which of its features
/// the code may use. One value yields both the virtual architecture libNVVM compiles for
/// (`compute_90`, `compute_90a`) and the real one nvJitLink links for (`sm_90`, `sm_90a`),
/// so the two can never disagree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Arch {
    pub major: u32,
    pub minor: u32,
    pub features: ArchFeatures,
}

/// Which instructions code for an architecture may use.
///
/// The PTX ISA marks some instructions architecture-specific (`wgmma.*`, `setmaxnreg` on
/// Hopper): ptxas accepts them only for the `a` target (`sm_90a`), and a cubin built for
/// that target runs only on GPUs of exactly that compute capability, never on later ones.
/// The two are different targets, so cubins and cache entries of one are never taken for
/// the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ArchFeatures {
    /// The portable feature set (`sm_90`): the cubin also runs on later GPUs' PTX JIT path.
    Portable,
    /// The architecture-specific feature set (`sm_90a`).
    Specific,
}

impl Arch {
    /// Hopper (H100, H200).
    pub const SM_90: Arch = Arch::new(9, 0);
    /// Hopper with its architecture-specific instructions (`wgmma`, `setmaxnreg`): runs on
    /// H100/H200 only.
    pub const SM_90A: Arch = Arch::SM_90.specific();
    /// Ampere A100.
    pub const SM_80: Arch = Arch::new(8, 0);

    /// The architecture of compute capability `major.minor`, portable feature set.
    pub const fn new(major: u32, minor: u32) -> Self {
        Arch {
            major,
            minor,
            features: ArchFeatures::Portable,
        }
    }

    /// The same compute capability with its architecture-specific features (`sm_XYa`).
    pub const fn specific(self) -> Self {
        Arch {
            features: ArchFeatures::Specific,
            ..self
        }
    }

    /// Whether this is an `a` target (`sm_90a`).
    pub const fn is_specific(self) -> bool {
        matches!(self.features, ArchFeatures::Specific)
    }

    /// `compute_XY` or `compute_XYa`, the libNVVM `-arch` value.
    pub fn compute_name(self) -> String {
        format!("compute_{}{}", self.number(), self.suffix())
    }

    /// `sm_XY` or `sm_XYa`, the nvJitLink `-arch` value and the cubin's target.
    pub fn sm_name(self) -> String {
        format!("sm_{}{}", self.number(), self.suffix())
    }

    /// `10 * major + minor`, as cubins record it (the same for `sm_90` and `sm_90a`:
    /// device libraries built for 9.0 link into either).
    pub fn number(self) -> u32 {
        self.major * 10 + self.minor
    }

    fn suffix(self) -> &'static str {
        match self.features {
            ArchFeatures::Portable => "",
            ArchFeatures::Specific => "a",
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.sm_name())
    }
}

/// An architecture name that is not `sm_XY[a]`, `compute_XY[a]` or `X.Y`.
#[derive(Clone, PartialEq, Eq, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[error(
    "`{0}` is not a GPU architecture: write it as `sm_90`, `compute_90` or `9.0`, and \
     `sm_90a` for Hopper's architecture-specific instructions"
)]
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
        let named = trimmed
            .strip_prefix("sm_")
            .or_else(|| trimmed.strip_prefix("compute_"))
            .ok_or_else(error)?;
        let (digits, specific) = match named.strip_suffix('a') {
            Some(digits) => (digits, true),
            None => (named, false),
        };
        if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(error());
        }
        let (major, minor) = digits.split_at(digits.len() - 1);
        let arch = Arch::new(
            major.parse().map_err(|_| error())?,
            minor.parse().map_err(|_| error())?,
        );
        Ok(if specific { arch.specific() } else { arch })
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

    #[test]
    fn the_specific_target_is_its_own_architecture() {
        for text in ["sm_90a", "compute_90a"] {
            assert_eq!(text.parse::<Arch>(), Ok(Arch::SM_90A));
        }
        assert_eq!(Arch::SM_90A.compute_name(), "compute_90a");
        assert_eq!(Arch::SM_90A.sm_name(), "sm_90a");
        assert_eq!(Arch::SM_90A.to_string(), "sm_90a");
        assert_eq!(Arch::SM_90A.number(), 90);
        assert_ne!(Arch::SM_90A, Arch::SM_90);
        assert!(Arch::SM_90A.is_specific() && !Arch::SM_90.is_specific());
        assert_eq!("sm_100a".parse::<Arch>(), Ok(Arch::new(10, 0).specific()));
        for wrong in ["sm_a", "sm_90aa", "sm_9a", "compute_a90"] {
            assert!(wrong.parse::<Arch>().is_err(), "{wrong}");
        }
    }
}
