//! Epoch milliseconds as RFC 3339 UTC text (`2024-11-29T10:00:00.123Z`) for
//! the leader reports; no calendar crate needed for this one format.

/// Formats epoch milliseconds; far-out values (beyond year 9999) print as numbers.
pub fn rfc3339_ms(ms: i64) -> String {
    const MAX: i64 = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
    if !(0..=MAX).contains(&ms) {
        return ms.to_string();
    }
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, m, d) = civil_from_days(days);
    let (h, rest) = (rest / 3_600_000, rest % 3_600_000);
    let (min, rest) = (rest / 60_000, rest % 60_000);
    let (s, milli) = (rest / 1000, rest % 1000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{milli:03}Z")
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// A millisecond extent as seconds with one decimal: `21.3s`.
pub fn seconds(ms: i64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_ms_format_as_utc_rfc3339() {
        assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_ms(1_700_000_000_000), "2023-11-14T22:13:20.000Z");
        assert_eq!(rfc3339_ms(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(rfc3339_ms(-1), "-1");
        assert_eq!(rfc3339_ms(i64::MAX), i64::MAX.to_string());
    }
}
