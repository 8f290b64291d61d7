//! The `nvcc` executable: only its version is needed (for diagnostics and to
//! cross-check the other components), so it is run, never loaded.

use std::path::Path;
use std::process::Command;

use super::error::{Result, ToolchainError};

/// Runs `nvcc --version` and returns the full version, e.g. `"13.0.88"`.
pub fn nvcc_version(path: &Path) -> Result<String> {
    let fail = |message: String| ToolchainError::Nvcc {
        path: path.to_path_buf(),
        message,
    };
    let out = Command::new(path)
        .arg("--version")
        .output()
        .map_err(|e| fail(format!("cannot run it: {e}")))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(fail(format!(
            "`--version` exited with {}: {stderr}{stdout}",
            out.status
        )));
    }
    parse_nvcc_version(&stdout)
        .ok_or_else(|| fail(format!("unrecognised `--version` output:\n{stdout}")))
}

/// Extracts the version from `nvcc --version` output: the `V13.0.88` of
/// "release 13.0, V13.0.88", or failing that the `13.0` of "release 13.0".
pub fn parse_nvcc_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.contains("release "))?;
    if let Some((_, rest)) = line.split_once(", V") {
        let v: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        if !v.is_empty() {
            return Some(v);
        }
    }
    let (_, rest) = line.split_once("release ")?;
    let v: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    (!v.is_empty()).then_some(v)
}
