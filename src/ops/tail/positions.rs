//! The `--from` grammar (rpk/kcl; kcat `s@` alias): where a tail starts and,
//! optionally, where it stops.
//!
//! `START[:STOP]` with START = `start` | `end` | `+N` (N after the log start) |
//! `-N` (N before the end) | `N` (exact offset) | `@T` (first offset at or after a
//! time: epoch ms, `YYYY-MM-DD`, RFC 3339, or `-1h` relative to now) | `s@T`; and
//! STOP = `end` (end offsets captured at start) | `N` (offset, exclusive) | `T` or
//! `@T` (a time, exclusive) after a time start. `:end` alone reads from the start to the end.

use chrono::{DateTime, NaiveDate};

use crate::engine::units::parse_duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    Beginning,
    End,
    AfterStart(i64),
    BeforeEnd(i64),
    Offset(i64),
    Time(i64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Follow forever.
    Never,
    /// The end offsets captured when the tail starts.
    End,
    /// Offset, exclusive.
    Offset(i64),
    /// First offset at or after this time, exclusive.
    Time(i64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Positions {
    pub start: Start,
    pub stop: Stop,
}

/// A time: epoch ms, `YYYY-MM-DD` (UTC midnight), RFC 3339, or `-<duration>` before now.
pub fn parse_time(text: &str, now_ms: i64) -> Result<i64, String> {
    if let Some(rel) = text.strip_prefix('-') {
        let d = parse_duration(rel)?;
        // Kafka timestamps start at the epoch: a time before it would be sent as a
        // negative timestamp, which brokers read as "latest" or "earliest".
        return i64::try_from(d.as_millis())
            .ok()
            .and_then(|d| now_ms.checked_sub(d))
            .filter(|t| *t >= 0)
            .ok_or_else(|| {
                format!("-{rel} before now is before 1970-01-01, where Kafka timestamps start")
            });
    }
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse()
            .map_err(|_| format!("timestamp {text:?} is out of range"));
    }
    if let Ok(d) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(d
            .and_hms_opt(0, 0, 0)
            .map_or(0, |t| t.and_utc().timestamp_millis())
            .max(0));
    }
    let t = DateTime::parse_from_rfc3339(text)
        .map(|t| t.timestamp_millis())
        .map_err(|_| {
            format!("invalid time {text:?}: expected epoch milliseconds, YYYY-MM-DD, RFC 3339 or a relative -<duration> such as -1h")
        })?;
    if t < 0 {
        return Err(format!(
            "time {text:?} is before 1970-01-01, where Kafka timestamps start"
        ));
    }
    Ok(t)
}

fn count(text: &str, what: &str) -> Result<i64, String> {
    text.parse::<i64>()
        .ok()
        .filter(|n| *n >= 0)
        .ok_or_else(|| format!("invalid {what} {text:?}"))
}

fn parse_start(text: &str, now_ms: i64) -> Result<Start, String> {
    Ok(match text {
        "" | "start" | "beginning" | "oldest" => Start::Beginning,
        "end" | "newest" => Start::End,
        t if t.starts_with("s@") => Start::Time(parse_time(&t[2..], now_ms)?),
        t if t.starts_with('@') => Start::Time(parse_time(&t[1..], now_ms)?),
        t if t.starts_with('+') => Start::AfterStart(count(&t[1..], "offset count")?),
        t if t.starts_with('-') => Start::BeforeEnd(count(&t[1..], "offset count")?),
        t => Start::Offset(count(t, "offset")?),
    })
}

fn parse_stop(text: &str, start: Start, now_ms: i64) -> Result<Stop, String> {
    Ok(match text {
        "end" => Stop::End,
        t if t.starts_with('@') => Stop::Time(parse_time(&t[1..], now_ms)?),
        t if matches!(start, Start::Time(_)) => Stop::Time(parse_time(t, now_ms)?),
        t => Stop::Offset(count(t, "stop offset")?),
    })
}

/// Parses `--from`.
pub fn parse_from(text: &str, now_ms: i64) -> Result<Positions, String> {
    let text = text.trim();
    if let Ok(start) = parse_start(text, now_ms) {
        return Ok(Positions {
            start,
            stop: Stop::Never,
        });
    }
    // Times may contain ':' themselves: take the first split where both sides parse.
    let mut first_error = None;
    for (i, _) in text.match_indices(':') {
        let (l, r) = (&text[..i], &text[i + 1..]);
        match parse_start(l, now_ms).and_then(|start| Ok((start, parse_stop(r, start, now_ms)?))) {
            Ok((start, stop)) => return Ok(Positions { start, stop }),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let e = first_error.unwrap_or_else(|| parse_start(text, now_ms).err().unwrap_or_default());
    Err(format!("invalid --from {text:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    fn p(t: &str) -> Positions {
        parse_from(t, NOW).unwrap_or_else(|e| panic!("{t}: {e}"))
    }

    #[test]
    fn the_rpk_grammar_parses() {
        assert_eq!(p("start").start, Start::Beginning);
        assert_eq!(p("end").start, Start::End);
        assert_eq!(p("+5").start, Start::AfterStart(5));
        assert_eq!(p("-5").start, Start::BeforeEnd(5));
        assert_eq!(p("42").start, Start::Offset(42));
        assert_eq!(p("@1700000000000").start, Start::Time(NOW));
        assert_eq!(p("s@1700000000000").start, Start::Time(NOW));
        assert_eq!(p("@-1h").start, Start::Time(NOW - 3_600_000));
        assert_eq!(p("@2024-01-02").start, Start::Time(1_704_153_600_000));
        assert_eq!(
            p("10:20"),
            Positions {
                start: Start::Offset(10),
                stop: Stop::Offset(20)
            }
        );
        assert_eq!(
            p(":end"),
            Positions {
                start: Start::Beginning,
                stop: Stop::End
            }
        );
        assert_eq!(
            p("@2024-01-02T00:00:00Z:2024-01-03T00:00:00Z"),
            Positions {
                start: Start::Time(1_704_153_600_000),
                stop: Stop::Time(1_704_240_000_000)
            }
        );
        assert_eq!(
            p("@1000:2000"),
            Positions {
                start: Start::Time(1000),
                stop: Stop::Time(2000)
            }
        );
    }

    #[test]
    fn nonsense_is_refused() {
        for bad in [
            "abc",
            "+x",
            "-",
            "@yesterday",
            "1:2:3",
            "@-1",
            "@-99999999999d",
            "@-999999999999999d",
            "@1969-12-31T23:59:59Z",
        ] {
            let e = parse_from(bad, NOW).unwrap_err();
            assert!(e.starts_with("invalid --from"), "{bad}: {e}");
        }
    }
}
