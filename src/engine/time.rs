//! Epoch-millisecond timestamps as RFC 3339 UTC text (`2024-08-24T11:46:40.042Z`), the way
//! every report prints broker times. Pure arithmetic on the proleptic Gregorian calendar
//! (Howard Hinnant's `civil_from_days`), so no date crate is needed for display.

/// Milliseconds per day.
const DAY_MS: i64 = 86_400_000;

/// RFC 3339 UTC with millisecond precision. Instants outside years 0000–9999 cannot be
/// written in RFC 3339 and are shown as `<ms> ms since epoch` instead of being clamped.
pub fn rfc3339_millis(epoch_ms: i64) -> String {
    let days = epoch_ms.div_euclid(DAY_MS);
    let ms_of_day = epoch_ms.rem_euclid(DAY_MS);
    let (year, month, day) = civil_from_days(days);
    if !(0..=9999).contains(&year) {
        return format!("{epoch_ms} ms since epoch");
    }
    let (secs, millis) = (ms_of_day / 1000, ms_of_day % 1000);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// (year, month 1–12, day 1–31) of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_millis_print_as_rfc3339_utc_with_milliseconds() {
        assert_eq!(rfc3339_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            rfc3339_millis(1_724_500_000_042),
            "2024-08-24T11:46:40.042Z"
        );
        assert_eq!(rfc3339_millis(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339_millis(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(
            rfc3339_millis(253_402_300_799_999),
            "9999-12-31T23:59:59.999Z"
        );
    }

    #[test]
    fn instants_outside_four_digit_years_are_shown_raw_not_clamped() {
        assert_eq!(
            rfc3339_millis(253_402_300_800_000),
            "253402300800000 ms since epoch"
        );
        assert_eq!(
            rfc3339_millis(i64::MIN),
            format!("{} ms since epoch", i64::MIN)
        );
        assert_eq!(
            rfc3339_millis(i64::MAX),
            format!("{} ms since epoch", i64::MAX)
        );
    }
}
