//! Durations in the `krabka_units` syntax: an integer and a mandatory unit
//! (`ns us ms s m h d`); only `0` may stand without a unit.

use std::time::Duration;

/// Parses `30s`, `250ms`, `1h`, `0`. Errors name the text and the accepted forms.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if t == "0" {
        return Ok(Duration::ZERO);
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let bad = || {
        format!(
            "invalid duration {text:?}: expected an integer and a unit (ns, us, ms, s, m, h, d), e.g. 30s or 250ms"
        )
    };
    if digits.is_empty() {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let nanos_per: u128 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return Err(bad()),
    };
    let total = u128::from(n) * nanos_per;
    let secs = u64::try_from(total / 1_000_000_000)
        .map_err(|_| format!("invalid duration {text:?}: too large"))?;
    Ok(Duration::new(secs, (total % 1_000_000_000) as u32))
}

/// Formats a duration in the largest unit that divides it exactly (`30s`, `1500ms`).
pub fn format_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0".into();
    }
    for (unit, per) in [
        ("d", 86_400_000_000_000u128),
        ("h", 3_600_000_000_000),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
    ] {
        if nanos.is_multiple_of(per) {
            return format!("{}{unit}", nanos / per);
        }
    }
    format!("{nanos}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_mandatory_except_for_zero() {
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("2d").unwrap(), Duration::from_secs(172_800));
        assert_eq!(parse_duration("5us").unwrap(), Duration::from_micros(5));
        assert_eq!(parse_duration("7ns").unwrap(), Duration::from_nanos(7));
        for bad in [
            "30",
            "s",
            "",
            "1.5s",
            "-1s",
            "10 sec",
            "1h30m",
            "99999999999999999999d",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn formatting_round_trips() {
        for text in ["0", "30s", "250ms", "1h", "2d", "90m", "7ns"] {
            assert_eq!(format_duration(parse_duration(text).unwrap()), text);
        }
    }
}
