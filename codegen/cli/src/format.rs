//! Sizes and times for people: `bytesize` and `humantime` do the formatting.

use std::time::{Duration, SystemTime};

/// `512 B`, `4.0 KiB`, `1.5 MiB`, `2.0 GiB`.
pub fn bytes(n: u64) -> String {
    bytesize::ByteSize(n).display().iec().to_string()
}

/// `2026-11-30T14:05:00Z`.
pub fn utc(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time).to_string()
}

/// `just now`, `5 min ago`, `3 h ago`, `12 days ago`: rounded down to one unit, which
/// `humantime::format_duration` (every unit, `5m 3s`) does not do.
pub fn ago(time: SystemTime) -> String {
    let elapsed = SystemTime::now()
        .duration_since(time)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    match elapsed {
        0..60 => "just now".to_owned(),
        60..3600 => format!("{} min ago", elapsed / 60),
        3600..86_400 => format!("{} h ago", elapsed / 3600),
        _ => format!("{} days ago", elapsed / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn dates_and_sizes() {
        let t = UNIX_EPOCH + Duration::from_secs(1_764_511_500);
        assert_eq!(utc(t), "2025-11-30T14:05:00Z");
        assert_eq!(utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(3 << 30), "3.0 GiB");
        assert_eq!(
            ago(SystemTime::now() - Duration::from_secs(301)),
            "5 min ago"
        );
    }
}
