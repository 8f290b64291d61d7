//! Sizes and times for people.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `512 B`, `4.0 KiB`, `1.5 MiB`, `2.00 GiB`.
pub fn bytes(n: u64) -> String {
    const KIB: f64 = 1024.0;
    let n_f = n as f64;
    if n < 1024 {
        format!("{n} B")
    } else if n_f < KIB * KIB {
        format!("{:.1} KiB", n_f / KIB)
    } else if n_f < KIB * KIB * KIB {
        format!("{:.1} MiB", n_f / (KIB * KIB))
    } else {
        format!("{:.2} GiB", n_f / (KIB * KIB * KIB))
    }
}

/// `2026-11-30 14:05 UTC`.
pub fn utc(time: SystemTime) -> String {
    let secs = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        (rem % 3600) / 60
    )
}

/// `just now`, `5 min ago`, `3 h ago`, `12 days ago`.
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

/// Year, month, day of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_sizes() {
        let t = UNIX_EPOCH + Duration::from_secs(1_764_511_500);
        assert_eq!(utc(t), "2025-11-30 14:05 UTC");
        assert_eq!(utc(UNIX_EPOCH), "1970-01-01 00:00 UTC");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
    }
}
