//! The expression tokenizer: words, numbers, strings and operator symbols, each
//! with its 1-based line and column (counted in characters, as the user sees them).

use std::fmt;

use super::ExprError;

/// What a token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    /// A bare or quoted word; `quote` is `"` or `` ` `` for a quoted identifier.
    Word {
        text: String,
        quote: Option<char>,
    },
    /// The digits as written (`12`, `1.5`, `.5`, `2e10`).
    Number(String),
    /// A single-quoted string, `''` unescaped.
    Str(String),
    /// An operator or punctuation symbol (`+`, `<=`, `::`, `(`, `,`, …).
    Sym(&'static str),
    /// A character no rule knows (`#`, `&`, …): the parser reports it.
    Other(char),
    Eof,
}

impl Tok {
    /// An unquoted word equal to `keyword` (ASCII case-insensitive).
    pub fn is_keyword(&self, keyword: &str) -> bool {
        matches!(self, Tok::Word { text, quote: None } if text.eq_ignore_ascii_case(keyword))
    }
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word { text, quote: None } => f.write_str(text),
            Tok::Word {
                text,
                quote: Some(q),
            } => write!(f, "{q}{text}{q}"),
            Tok::Number(n) => f.write_str(n),
            Tok::Str(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Tok::Sym(s) => f.write_str(s),
            Tok::Other(c) => write!(f, "{c}"),
            Tok::Eof => f.write_str("EOF"),
        }
    }
}

/// A token and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub line: u64,
    pub column: u64,
    /// Byte offsets of the token in the text (for type names kept as written).
    pub start: usize,
    pub end: usize,
}

/// Symbols, longest first so `<=` wins over `<`.
const SYMBOLS: [&str; 27] = [
    "<>", "<=", ">=", "!=", "==", "||", "::", "<<", ">>", "=", "<", ">", "+", "-", "*", "/", "%",
    "(", ")", ",", ".", "[", "]", ":", "&", "|", "^",
];

/// Splits `text` into tokens, ending with [`Tok::Eof`] at the end of the text.
pub fn tokenize(text: &str) -> Result<Vec<Token>, ExprError> {
    let mut lexer = Lexer {
        text,
        at: 0,
        line: 1,
        column: 1,
    };
    let mut tokens = Vec::new();
    loop {
        lexer.skip_blanks()?;
        let (line, column, start) = (lexer.line, lexer.column, lexer.at);
        let Some(c) = lexer.peek() else {
            tokens.push(Token {
                tok: Tok::Eof,
                line,
                column,
                start,
                end: start,
            });
            return Ok(tokens);
        };
        let tok = lexer.token(c)?;
        tokens.push(Token {
            tok,
            line,
            column,
            start,
            end: lexer.at,
        });
    }
}

struct Lexer<'a> {
    text: &'a str,
    at: usize,
    line: u64,
    column: u64,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        self.text[self.at..].chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn error(&self, message: &str, line: u64, column: u64) -> ExprError {
        ExprError::at(format!("syntax error: {message}"), line, column)
    }

    /// Whitespace, `-- line` and `/* block */` comments.
    fn skip_blanks(&mut self) -> Result<(), ExprError> {
        loop {
            match (self.peek(), self.peek_second()) {
                (Some(c), _) if c.is_whitespace() => {
                    self.bump();
                }
                (Some('-'), Some('-')) => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                (Some('/'), Some('*')) => {
                    let (line, column) = (self.line, self.column);
                    self.bump();
                    self.bump();
                    loop {
                        match self.bump() {
                            Some('*') if self.peek() == Some('/') => {
                                self.bump();
                                break;
                            }
                            Some(_) => {}
                            None => return Err(self.error("Unterminated comment", line, column)),
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn token(&mut self, c: char) -> Result<Tok, ExprError> {
        let (line, column) = (self.line, self.column);
        if c.is_alphabetic() || c == '_' {
            let start = self.at;
            while self
                .peek()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
            {
                self.bump();
            }
            return Ok(Tok::Word {
                text: self.text[start..self.at].to_owned(),
                quote: None,
            });
        }
        if c.is_ascii_digit()
            || (c == '.' && self.peek_second().is_some_and(|d| d.is_ascii_digit()))
        {
            return Ok(Tok::Number(self.number()));
        }
        if c == '\'' || c == '"' || c == '`' {
            self.bump();
            let body = self
                .quoted(c)
                .ok_or_else(|| self.error(unterminated(c), line, column))?;
            return Ok(if c == '\'' {
                Tok::Str(body)
            } else {
                Tok::Word {
                    text: body,
                    quote: Some(c),
                }
            });
        }
        let rest = &self.text[self.at..];
        if let Some(sym) = SYMBOLS.iter().find(|s| rest.starts_with(**s)) {
            for _ in 0..sym.len() {
                self.bump();
            }
            return Ok(Tok::Sym(sym));
        }
        self.bump();
        Ok(Tok::Other(c))
    }

    fn number(&mut self) -> String {
        let start = self.at;
        let digits = |l: &mut Self| {
            while l.peek().is_some_and(|c| c.is_ascii_digit()) {
                l.bump();
            }
        };
        digits(self);
        if self.peek() == Some('.') {
            self.bump();
            digits(self);
        }
        let exponent = match (self.peek(), self.peek_second()) {
            (Some('e' | 'E'), Some(d)) if d.is_ascii_digit() => true,
            (Some('e' | 'E'), Some('+' | '-')) => self.text[self.at..]
                .chars()
                .nth(2)
                .is_some_and(|d| d.is_ascii_digit()),
            _ => false,
        };
        if exponent {
            self.bump();
            if matches!(self.peek(), Some('+' | '-')) {
                self.bump();
            }
            digits(self);
        }
        self.text[start..self.at].to_owned()
    }

    /// The body of a quoted token after its opening quote; a doubled quote is one
    /// quote character. `None` when the text ends first.
    fn quoted(&mut self, quote: char) -> Option<String> {
        let mut out = String::new();
        loop {
            let c = self.bump()?;
            if c == quote {
                if self.peek() == Some(quote) {
                    self.bump();
                } else {
                    return Some(out);
                }
            }
            out.push(c);
        }
    }
}

fn unterminated(quote: char) -> &'static str {
    if quote == '\'' {
        "Unterminated string literal"
    } else {
        "Expected close delimiter, found: EOF"
    }
}
