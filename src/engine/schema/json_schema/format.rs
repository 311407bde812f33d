//! `format` as an assertion for drafts 4, 6 and 7, as the `jsonschema` crate did; in
//! 2019-09 and 2020-12 it is an annotation only. Unknown formats are ignored.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::draft::Draft;

/// The check for a format name in a draft, if the draft asserts that format.
/// A format's check of a string.
pub type Check = fn(&str) -> bool;

/// `assert` (a meta-schema with the format-assertion vocabulary) makes later drafts assert
/// too.
pub fn checker(name: &str, draft: Draft, assert: bool) -> Option<Check> {
    if draft > Draft::Draft7 && !assert {
        return None;
    }
    let at_least = |d: Draft| draft >= d;
    Some(match name {
        "date" => date,
        "date-time" => date_time,
        "time" => time,
        "email" | "idn-email" => email,
        "hostname" if at_least(Draft::Draft7) => hostname,
        "hostname" => hostname_rfc1123,
        "idn-hostname" if at_least(Draft::Draft7) => idn_hostname,
        "ipv4" => |s| ipv4(s),
        "ipv6" => |s| !s.contains('%') && s.parse::<Ipv6Addr>().is_ok(),
        "uri" => uri,
        "iri" if at_least(Draft::Draft7) => iri,
        "uri-reference" if at_least(Draft::Draft6) => uri_reference,
        "iri-reference" if at_least(Draft::Draft7) => iri_reference,
        "uri-template" if at_least(Draft::Draft6) => uri_template,
        "json-pointer" if at_least(Draft::Draft6) => json_pointer,
        "relative-json-pointer" if at_least(Draft::Draft7) => relative_json_pointer,
        "regex" => |s| super::pattern::compile(s).is_ok(),
        _ => return None,
    })
}

fn digits(s: &str, n: usize) -> Option<u32> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

fn date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (
        digits(&s[0..4], 4),
        digits(&s[5..7], 2),
        digits(&s[8..10], 2),
    ) else {
        return false;
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

fn time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(h), Some(m), Some(sec)) = (
        digits(&s[0..2], 2),
        digits(&s[3..5], 2),
        digits(&s[6..8], 2),
    ) else {
        return false;
    };
    let mut rest = &s[8..];
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &r[n..];
    }
    let (oh, om) = if rest.eq_ignore_ascii_case("z") {
        (0i64, 0i64)
    } else {
        let sign = match rest.as_bytes().first() {
            Some(b'+') => 1,
            Some(b'-') => -1,
            _ => return false,
        };
        let r = &rest[1..];
        if r.len() != 5 || r.as_bytes()[2] != b':' {
            return false;
        }
        let (Some(oh), Some(om)) = (digits(&r[0..2], 2), digits(&r[3..5], 2)) else {
            return false;
        };
        if oh > 23 || om > 59 {
            return false;
        }
        (sign * oh as i64, sign * om as i64)
    };
    if h > 23 || m > 59 || sec > 60 {
        return false;
    }
    if sec == 60 {
        // A leap second is only ever 23:59:60 in UTC.
        let utc = (h as i64 * 60 + m as i64 - oh * 60 - om).rem_euclid(24 * 60);
        return utc == 23 * 60 + 59;
    }
    true
}

fn date_time(s: &str) -> bool {
    match s.find(['T', 't']) {
        Some(10) => date(&s[..10]) && time(&s[11..]),
        _ => false,
    }
}

fn ipv4(s: &str) -> bool {
    s.parse::<Ipv4Addr>().is_ok() && s.split('.').all(|o| o.len() == 1 || !o.starts_with('0'))
}

fn hostname_rfc1123(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// Draft 7 on (RFC 5890): `ab--` labels are reserved for encodings; only `xn--`
/// (Punycode) is one. Drafts 4 and 6 read RFC 1123, where any `--` is fine.
fn hostname(s: &str) -> bool {
    hostname_rfc1123(s)
        && s.split('.')
            .all(|label| label.get(2..4) != Some("--") || label[..2].eq_ignore_ascii_case("xn"))
}

fn idn_hostname(s: &str) -> bool {
    let s = s.strip_suffix('.').unwrap_or(s);
    !s.is_empty()
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.chars().count() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '-' || !c.is_ascii())
        })
}

fn email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    let local_ok = if local.starts_with('"') && local.ends_with('"') && local.len() >= 2 {
        true
    } else {
        !local.is_empty()
            && !local.starts_with('.')
            && !local.ends_with('.')
            && !local.contains("..")
            && !local.contains(|c: char| c.is_whitespace() || "()<>[]:;@\\,\"".contains(c))
    };
    let domain_ok = match domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        Some(literal) => match literal.strip_prefix("IPv6:") {
            Some(v6) => v6.parse::<Ipv6Addr>().is_ok(),
            None => ipv4(literal),
        },
        None => hostname_rfc1123(domain) || idn_hostname(domain),
    };
    local_ok && domain_ok
}

fn percent_ok(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().enumerate().all(|(i, &c)| {
        c != b'%'
            || (b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
    })
}

/// RFC 3986 characters outside the host: unreserved, sub-delims, the `extra` delimiters
/// and escapes (and, for IRIs, any other printable non-ASCII character).
fn plain_ok(s: &str, iri: bool, extra: &str) -> bool {
    s.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || "-._~!$&'()*+,;=%".contains(c)
            || extra.contains(c)
            || (iri && !c.is_ascii() && !c.is_control() && !c.is_whitespace())
    }) && percent_ok(s)
}

fn authority_ok(authority: &str, iri: bool) -> bool {
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    if userinfo.is_some_and(|u| !plain_ok(u, iri, ":")) {
        return false;
    }
    let (host, port) = if let Some(rest) = hostport.strip_prefix('[') {
        let Some((literal, after)) = rest.split_once(']') else {
            return false;
        };
        let v6 = literal.parse::<Ipv6Addr>().is_ok()
            && literal
                .rsplit(':')
                .next()
                .is_none_or(|tail| !tail.contains('.') || ipv4(tail));
        if !v6 && !literal.starts_with(['v', 'V']) {
            return false;
        }
        match after {
            "" => ("", None),
            a => match a.strip_prefix(':') {
                Some(p) => ("", Some(p)),
                None => return false,
            },
        }
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    port.is_none_or(|p| p.bytes().all(|b| b.is_ascii_digit())) && plain_ok(host, iri, "")
}

/// A URI (with `iri` an IRI) reference by RFC 3986's grammar; with `absolute` it must have
/// a scheme.
fn uri_ok(s: &str, iri: bool, absolute: bool) -> bool {
    let (rest, fragment) = match s.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (s, None),
    };
    if fragment.is_some_and(|f| !plain_ok(f, iri, ":@/?")) {
        return false;
    }
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    if query.is_some_and(|q| !plain_ok(q, iri, ":@/?")) {
        return false;
    }
    let scheme_end = rest.find(':').filter(|&i| {
        let scheme = &rest[..i];
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    let path = match scheme_end {
        Some(i) => &rest[i + 1..],
        None if absolute => return false,
        None => {
            // Without a scheme, a colon in the first segment would read as one.
            let first = rest.split('/').next().unwrap_or("");
            if first.contains(':') {
                return false;
            }
            rest
        }
    };
    let path = match path.strip_prefix("//") {
        Some(after) => {
            let end = after.find('/').unwrap_or(after.len());
            if !authority_ok(&after[..end], iri) {
                return false;
            }
            &after[end..]
        }
        None => path,
    };
    plain_ok(path, iri, ":@/")
}

fn uri(s: &str) -> bool {
    uri_ok(s, false, true)
}

fn uri_reference(s: &str) -> bool {
    uri_ok(s, false, false)
}

fn iri(s: &str) -> bool {
    uri_ok(s, true, true)
}

fn iri_reference(s: &str) -> bool {
    uri_ok(s, true, false)
}

/// RFC 6570 (level 4): literals and `{op varspec,…}` expressions.
fn uri_template(s: &str) -> bool {
    let mut rest = s;
    while let Some(open) = rest.find(['{', '}']) {
        if !template_literal_ok(&rest[..open]) || rest[open..].starts_with('}') {
            return false;
        }
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            return false;
        };
        if !expression_ok(&after[..close]) {
            return false;
        }
        rest = &after[close + 1..];
    }
    template_literal_ok(rest)
}

fn template_literal_ok(s: &str) -> bool {
    !s.chars()
        .any(|c| c.is_control() || c == ' ' || "\"<>\\^`{|}".contains(c))
        && percent_ok(s)
}

fn expression_ok(e: &str) -> bool {
    let e = e
        .strip_prefix(['+', '#', '.', '/', ';', '?', '&'])
        .unwrap_or(e);
    !e.is_empty()
        && e.split(',').all(|spec| {
            let (name, modifier) = match spec.find([':', '*']) {
                Some(i) => (&spec[..i], &spec[i..]),
                None => (spec, ""),
            };
            let name_ok = !name.is_empty()
                && !name.starts_with('.')
                && !name.ends_with('.')
                && !name.contains("..")
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '%')
                && percent_ok(name);
            let modifier_ok = match modifier {
                "" | "*" => true,
                m => m.strip_prefix(':').is_some_and(|n| {
                    (1..=4).contains(&n.len())
                        && !n.starts_with('0')
                        && n.bytes().all(|b| b.is_ascii_digit())
                }),
            };
            name_ok && modifier_ok
        })
}

fn json_pointer(s: &str) -> bool {
    super::uri::pointer_tokens(s).is_some()
}

fn relative_json_pointer(s: &str) -> bool {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 || (n > 1 && s.starts_with('0')) {
        return false;
    }
    let rest = &s[n..];
    rest == "#" || json_pointer(rest)
}
