//! ECMA-262 patterns on the `regex` crate: the character classes ECMA defines as ASCII
//! are spelled as ASCII, and anything `regex` cannot do (lookaround, backreferences) is
//! refused instead of being matched differently.

use regex::Regex;

/// Compiled patterns are bounded so that a hostile schema cannot take the memory.
const SIZE_LIMIT: usize = 2 << 20;

/// A pattern compiled with ECMA-262 semantics, or why it cannot be.
pub fn compile(pattern: &str) -> Result<Regex, String> {
    let translated = translate(pattern)?;
    regex::RegexBuilder::new(&translated)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(SIZE_LIMIT)
        .build()
        .map_err(|e| {
            let why = e.to_string();
            let why = why.lines().last().unwrap_or("").trim().to_string();
            format!("pattern {pattern:?} is not supported: {why}")
        })
}

fn translate(pattern: &str) -> Result<String, String> {
    let unsupported = |what: &str| Err(format!("pattern {pattern:?} is not supported: {what}"));
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(e) = chars.next() else {
                    return unsupported("a trailing backslash");
                };
                escape(e, &mut chars, in_class, &mut out)
                    .map_err(|what| format!("pattern {pattern:?} is not supported: {what}"))?;
            }
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().unwrap());
                }
                // ECMA: `[]` matches nothing, `[^]` anything; `]` first is literal in
                // `regex` but closes the class in ECMA.
                if chars.peek() == Some(&']') {
                    chars.next();
                    in_class = false;
                    if out.ends_with('^') {
                        out.truncate(out.len() - 2);
                        out.push_str(r"[\s\S]");
                    } else {
                        out.truncate(out.len() - 1);
                        out.push_str(r"[^\s\S]");
                    }
                }
            }
            '[' => out.push_str(r"\["),
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '&' | '~' | '-' if in_class => {
                // `regex` reads `&&`, `~~` and `--` as set operations.
                if c != '-' || chars.peek() == Some(&'-') {
                    out.push('\\');
                }
                out.push(c);
            }
            '(' if !in_class && chars.peek() == Some(&'?') => {
                out.push('(');
                out.push(chars.next().unwrap());
                // `(?i)`: flags for the whole pattern are not ECMA-262.
                let mut flags = 0;
                let mut closed = false;
                for c in chars.clone() {
                    if c.is_ascii_alphabetic() {
                        flags += 1;
                    } else {
                        closed = c == ')';
                        break;
                    }
                }
                if flags > 0 && closed {
                    return unsupported("inline flags are not ECMA-262");
                }
                match chars.peek() {
                    Some('P') => return unsupported("(?P…) groups are not ECMA-262"),
                    Some('=') | Some('!') => return unsupported("lookahead"),
                    Some('<') => {
                        chars.next();
                        match chars.peek() {
                            Some('=') | Some('!') => return unsupported("lookbehind"),
                            _ => out.push('<'),
                        }
                    }
                    _ => {}
                }
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

/// One escape `\e` written for `regex`, or what ECMA-262 feature `regex` lacks.
fn escape(
    e: char,
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    in_class: bool,
    out: &mut String,
) -> Result<(), String> {
    let ascii = |outside: &str, inside: &str| {
        if in_class {
            inside.to_string()
        } else {
            outside.to_string()
        }
    };
    match e {
        'd' => out.push_str(&ascii("[0-9]", "0-9")),
        'D' => out.push_str(&ascii("[^0-9]", "[:^digit:]")),
        'w' => out.push_str(&ascii("[0-9A-Za-z_]", "0-9A-Za-z_")),
        'W' => out.push_str(&ascii("[^0-9A-Za-z_]", "[:^word:]")),
        's' => out.push_str(&ascii(r"[\s\x{FEFF}]", r"\s\x{FEFF}")),
        'S' => out.push_str(&ascii(r"[^\s\x{FEFF}]", r"\S")),
        '1'..='9' => return Err(String::from("backreferences")),
        'k' if !in_class => return Err(String::from("backreferences")),
        '0' => out.push_str(r"\x00"),
        'b' if in_class => out.push_str(r"\x08"),
        'c' => match chars.next() {
            Some(l) if l.is_ascii_alphabetic() => {
                out.push_str(&format!(r"\x{:02X}", (l as u8) % 32));
            }
            _ => return Err(String::from(r"a \c without a letter")),
        },
        'u' if chars.peek() == Some(&'{') => out.push_str(r"\u"),
        'u' => {
            let hex: String = chars.by_ref().take(4).collect();
            if hex.len() != 4 || !hex.chars().all(|h| h.is_ascii_hexdigit()) {
                return Err(String::from(r"a \u escape without four hex digits"));
            }
            out.push_str(&format!(r"\x{{{hex}}}"));
        }
        '/' => out.push('/'),
        e if e.is_ascii_alphabetic() && !"bBfnrtvxpP".contains(e) => {
            return Err(format!("\\{e} is not an ECMA-262 escape"));
        }
        e if e.is_ascii_alphanumeric() => {
            out.push('\\');
            out.push(e);
        }
        e => {
            // ECMA lets any punctuation be escaped; `regex` only the
            // meta-characters, so the rest are written plainly.
            if regex::escape(&e.to_string()).starts_with('\\') {
                out.push('\\');
            }
            out.push(e);
        }
    }
    Ok(())
}
