//! Plain-text records as kcat's `-P` makes them: one record per input line, the
//! line's `\n` dropped (a `\r` kept), an empty line skipped; with `-K SEP` the
//! bytes before the first SEP are the key and the rest the value (`k:` gives an
//! empty value, a line without SEP a keyless record); every `-H name=value` header
//! is added to every record in the order given (`-H name` gives a null value).

use crate::engine::columnar::headers::Header;
use crate::engine::columnar::record::OutRecord;

/// Parses one `-H` argument: `name=value`, or `name` alone for a null value.
pub fn parse_header(text: &str) -> Result<Header, String> {
    let (name, value) = match text.split_once('=') {
        Some((n, v)) => (n, Some(v.as_bytes().to_vec())),
        None => (text, None),
    };
    if name.is_empty() {
        return Err(format!("-H {text:?}: a header needs a name (name=value)"));
    }
    Ok(Header::new(name, value))
}

/// The record of one line, or `None` for an empty line.
pub fn line_record(
    line: &[u8],
    separator: Option<&[u8]>,
    headers: &[Header],
    timestamp: i64,
) -> Option<OutRecord> {
    if line.is_empty() {
        return None;
    }
    let (key, value) = match separator.and_then(|sep| find(line, sep).map(|at| (at, sep.len()))) {
        Some((at, len)) => (Some(line[..at].to_vec()), line[at + len..].to_vec()),
        None => (None, line.to_vec()),
    };
    Some(OutRecord {
        key,
        value: Some(value),
        timestamp,
        headers: headers.to_vec(),
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(line: &str, sep: Option<&str>) -> Option<(Option<String>, String)> {
        line_record(line.as_bytes(), sep.map(str::as_bytes), &[], 1).map(|r| {
            (
                r.key.map(|k| String::from_utf8(k).unwrap()),
                String::from_utf8(r.value.unwrap()).unwrap(),
            )
        })
    }

    #[test]
    fn keys_split_at_the_first_separator_as_kcat_does() {
        assert_eq!(kv("a:1", Some(":")), Some((Some("a".into()), "1".into())));
        assert_eq!(kv("b::x", Some(":")), Some((Some("b".into()), ":x".into())));
        assert_eq!(kv("nokey", Some(":")), Some((None, "nokey".into())));
        assert_eq!(kv(":v", Some(":")), Some((Some(String::new()), "v".into())));
        assert_eq!(kv("c:", Some(":")), Some((Some("c".into()), String::new())));
        assert_eq!(
            kv("b::2::3", Some("::")),
            Some((Some("b".into()), "2::3".into()))
        );
        assert_eq!(kv("", Some(":")), None);
        assert_eq!(kv("a:1", None), Some((None, "a:1".into())));
    }

    #[test]
    fn headers_without_a_value_are_null() {
        assert_eq!(
            parse_header("x=1").unwrap(),
            Header::new("x", Some(b"1".to_vec()))
        );
        assert_eq!(
            parse_header("z=").unwrap(),
            Header::new("z", Some(Vec::new()))
        );
        assert_eq!(parse_header("y").unwrap(), Header::new("y", None));
        assert_eq!(
            parse_header("a=b=c").unwrap(),
            Header::new("a", Some(b"b=c".to_vec()))
        );
        assert!(parse_header("=v").is_err());
    }
}
