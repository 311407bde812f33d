//! Record filters applied before decoding: partitions, a glob over the key bytes
//! and `NAME=glob` over header values. Globs are shell-style over bytes: `*` any
//! run, `?` one byte, `[abc]`, `[a-z]`, `[!…]` classes, `\` escapes.

use crate::engine::columnar::record::{Record, RecordView};

/// A compiled shell-style glob over bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    tokens: Vec<Token>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Byte(u8),
    Any,
    Star,
    Class {
        negated: bool,
        ranges: Vec<(u8, u8)>,
    },
}

impl Glob {
    pub fn new(pattern: &str) -> Result<Self, String> {
        let b = pattern.as_bytes();
        let mut tokens = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'*' => {
                    if tokens.last() != Some(&Token::Star) {
                        tokens.push(Token::Star);
                    }
                }
                b'?' => tokens.push(Token::Any),
                b'\\' => {
                    i += 1;
                    let c = *b
                        .get(i)
                        .ok_or_else(|| format!("glob {pattern:?} ends with a lone backslash"))?;
                    tokens.push(Token::Byte(c));
                }
                b'[' => {
                    let mut j = i + 1;
                    let negated = matches!(b.get(j), Some(b'!') | Some(b'^'));
                    if negated {
                        j += 1;
                    }
                    let mut ranges = Vec::new();
                    let mut first = true;
                    loop {
                        let c = *b
                            .get(j)
                            .ok_or_else(|| format!("glob {pattern:?} has an unclosed ["))?;
                        if c == b']' && !first {
                            break;
                        }
                        first = false;
                        if b.get(j + 1) == Some(&b'-') && b.get(j + 2).is_some_and(|&e| e != b']') {
                            ranges.push((c, b[j + 2]));
                            j += 3;
                        } else {
                            ranges.push((c, c));
                            j += 1;
                        }
                    }
                    tokens.push(Token::Class { negated, ranges });
                    i = j;
                }
                c => tokens.push(Token::Byte(c)),
            }
            i += 1;
        }
        Ok(Glob { tokens })
    }

    /// Whether the whole of `text` matches.
    pub fn matches(&self, text: &[u8]) -> bool {
        // Iterative matching with single backtrack point for the last star: linear-ish, no recursion.
        let (mut t, mut p) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            let step = match self.tokens.get(p) {
                Some(Token::Star) => {
                    star = Some((p, t));
                    p += 1;
                    continue;
                }
                Some(Token::Any) => true,
                Some(Token::Byte(c)) => *c == text[t],
                Some(Token::Class { negated, ranges }) => {
                    ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&text[t])) != *negated
                }
                None => false,
            };
            if step {
                t += 1;
                p += 1;
            } else if let Some((sp, st)) = star {
                p = sp + 1;
                t = st + 1;
                star = Some((sp, st + 1));
            } else {
                return false;
            }
        }
        self.tokens[p..].iter().all(|t| *t == Token::Star)
    }
}

/// Which records a tail keeps.
#[derive(Debug, Clone, Default)]
pub struct RecordFilter {
    /// Keep only these partitions (empty = all).
    pub partitions: Vec<i32>,
    /// The key must match (a keyless record never matches).
    pub key: Option<Glob>,
    /// Each `(name, glob)`: some header with that name has a non-null value matching.
    pub headers: Vec<(String, Glob)>,
}

impl RecordFilter {
    pub fn is_empty(&self) -> bool {
        self.partitions.is_empty() && self.key.is_none() && self.headers.is_empty()
    }

    pub fn keeps(&self, r: &Record) -> bool {
        self.keeps_view(&r.view())
    }

    pub fn keeps_view(&self, r: &RecordView<'_>) -> bool {
        if !self.partitions.is_empty() && !self.partitions.contains(&r.partition) {
            return false;
        }
        if let Some(g) = &self.key
            && !r.key.is_some_and(|k| g.matches(k))
        {
            return false;
        }
        if self.headers.is_empty() {
            return true;
        }
        // A cell that does not decode has no header to match.
        let headers = r.headers.to_list().unwrap_or_default();
        self.headers.iter().all(|(name, g)| {
            headers
                .iter()
                .any(|h| &h.key == name && h.value.as_deref().is_some_and(|v| g.matches(v)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::columnar::headers::Header;

    #[test]
    fn globs_match_whole_byte_strings() {
        let g = |p: &str, t: &str| Glob::new(p).unwrap().matches(t.as_bytes());
        assert!(g("user-*", "user-42"));
        assert!(!g("user-*", "xuser-42"));
        assert!(g("a?c", "abc"));
        assert!(g("*b*", "abc"));
        assert!(g("[a-c]x", "bx"));
        assert!(!g("[!a-c]x", "bx"));
        assert!(g("a\\*", "a*"));
        assert!(!g("a\\*", "ab"));
        assert!(g("*", ""));
        assert!(g("a*b*c", "aXbYbZc"));
        assert!(Glob::new("[ab").is_err());
    }

    #[test]
    fn the_filter_needs_partition_key_and_every_header_to_match() {
        let f = RecordFilter {
            partitions: vec![0, 3],
            key: Some(Glob::new("alice").unwrap()),
            headers: vec![("src".into(), Glob::new("de*").unwrap())],
        };
        let mut r = Record {
            partition: 3,
            key: Some(b"alice".to_vec()),
            headers: vec![Header::new("src", Some(b"demo".to_vec()))],
            ..Default::default()
        };
        assert!(f.keeps(&r));
        r.partition = 1;
        assert!(!f.keeps(&r));
        r.partition = 0;
        r.headers = vec![Header::new("src", None)];
        assert!(!f.keeps(&r));
    }
}
