//! A Pratt parser from tokens to the [`Expr`] tree, with SQL's precedences:
//! `OR` < `AND` < `NOT` < `IS` < `LIKE` < comparisons, `IN`, `BETWEEN` <
//! `+ -` < `* / % ||` < unary `- +` < `::`.
//!
//! The parser is the only recursion over untrusted input before the tree is
//! bounded, so it counts its depth ([`MAX_EXPR_NESTING`]) and refuses long
//! operator chains up front ([`MAX_EXPR_OPERATORS`]): every later walk of the
//! tree (compile, evaluate, drop) then recurses a bounded number of times.

use super::ast::{BinaryOp, Expr, Literal, Pos, SqlType, TrimSide, UnaryOp};
use super::token::{Tok, Token, tokenize};
use super::{ExprError, MAX_EXPR_NESTING, MAX_EXPR_OPERATORS};

const OR: u8 = 5;
const AND: u8 = 10;
const UNARY_NOT: u8 = 15;
const IS: u8 = 17;
const LIKE: u8 = 19;
const COMPARE: u8 = 20;
const PIPE: u8 = 21;
const CARET: u8 = 22;
const AMPERSAND: u8 = 23;
const PLUS_MINUS: u8 = 30;
const MUL_DIV: u8 = 40;
const DOUBLE_COLON: u8 = 50;

/// Words that are syntax, not names, wherever they appear; counted as operators.
const KEYWORDS: [&str; 30] = [
    "AND",
    "OR",
    "NOT",
    "IS",
    "NULL",
    "TRUE",
    "FALSE",
    "IN",
    "BETWEEN",
    "LIKE",
    "ILIKE",
    "ESCAPE",
    "CAST",
    "AS",
    "SUBSTRING",
    "SUBSTR",
    "TRIM",
    "FROM",
    "FOR",
    "BOTH",
    "LEADING",
    "TRAILING",
    "DISTINCT",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "SELECT",
    "EXISTS",
];

/// Words that cannot start an operand (other syntax words, such as `leading`,
/// still name columns outside the construct they belong to).
const NOT_AN_OPERAND: [&str; 17] = [
    "AND", "OR", "IS", "IN", "BETWEEN", "LIKE", "ILIKE", "AS", "FROM", "FOR", "DISTINCT", "SELECT",
    "EXISTS", "WHEN", "THEN", "ELSE", "END",
];

/// Parses `expr`, or `expr AS name` when `allow_alias`.
pub fn parse(text: &str, allow_alias: bool) -> Result<(Expr, Option<String>), ExprError> {
    let tokens = tokenize(text)?;
    check_operator_count(&tokens)?;
    let mut parser = Parser {
        text,
        tokens,
        at: 0,
        depth: 0,
    };
    let expr = parser.expr()?;
    let alias = if allow_alias && parser.eat_keyword("AS") {
        Some(parser.alias()?)
    } else {
        None
    };
    let next = parser.peek();
    if next.tok != Tok::Eof {
        let hint = if !allow_alias && next.tok.is_keyword("AS") {
            " (a filter predicate takes no `AS name`)"
        } else {
            ""
        };
        return Err(ExprError::at(
            format!("unexpected `{}` after the expression{hint}", next.tok),
            next.line,
            next.column,
        ));
    }
    Ok((expr, alias))
}

fn is_operator(tok: &Tok) -> bool {
    match tok {
        Tok::Word { text, quote: None } => KEYWORDS.iter().any(|k| text.eq_ignore_ascii_case(k)),
        Tok::Sym(s) => !matches!(*s, "(" | ")" | ","),
        Tok::Other(_) => true,
        Tok::Word { .. } | Tok::Number(_) | Tok::Str(_) | Tok::Eof => false,
    }
}

fn check_operator_count(tokens: &[Token]) -> Result<(), ExprError> {
    let mut operators = tokens.iter().filter(|t| is_operator(&t.tok));
    match operators.nth(MAX_EXPR_OPERATORS) {
        Some(token) => Err(ExprError::at(
            format!(
                "the expression has more than {MAX_EXPR_OPERATORS} operators; split it into several columns"
            ),
            token.line,
            token.column,
        )),
        None => Ok(()),
    }
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.tokens[self.at.min(self.tokens.len() - 1)]
    }

    fn peek_nth(&self, n: usize) -> &Tok {
        &self.tokens[(self.at + n).min(self.tokens.len() - 1)].tok
    }

    fn next(&mut self) -> Token {
        let token = self.peek().clone();
        if token.tok != Tok::Eof {
            self.at += 1;
        }
        token
    }

    fn pos(&self) -> Pos {
        let t = self.peek();
        (t.line, t.column)
    }

    fn eat_keyword(&mut self, keyword: &str) -> bool {
        let found = self.peek().tok.is_keyword(keyword);
        if found {
            self.at += 1;
        }
        found
    }

    fn eat_sym(&mut self, sym: &str) -> bool {
        let found = matches!(&self.peek().tok, Tok::Sym(s) if *s == sym);
        if found {
            self.at += 1;
        }
        found
    }

    fn expected(&self, what: &str) -> ExprError {
        let t = self.peek();
        ExprError::at(
            format!("syntax error: Expected: {what}, found: {}", t.tok),
            t.line,
            t.column,
        )
    }

    fn expect_keyword(&mut self, keyword: &str) -> Result<(), ExprError> {
        if self.eat_keyword(keyword) {
            Ok(())
        } else {
            Err(self.expected(keyword))
        }
    }

    fn expect_sym(&mut self, sym: &str) -> Result<(), ExprError> {
        if self.eat_sym(sym) {
            Ok(())
        } else {
            Err(self.expected(sym))
        }
    }

    /// One more level of nesting; a parenthesis or call takes two (see the tests).
    fn enter(&mut self, levels: usize) -> Result<(), ExprError> {
        self.depth += levels;
        if self.depth > MAX_EXPR_NESTING {
            return Err(ExprError::at("expression nests too deeply", 0, 0));
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<Expr, ExprError> {
        self.subexpr(0)
    }

    /// An expression whose operators all bind tighter than `prec`.
    fn subexpr(&mut self, prec: u8) -> Result<Expr, ExprError> {
        self.enter(1)?;
        let mut left = self.prefix()?;
        loop {
            let next = self.infix_precedence();
            if next <= prec {
                break;
            }
            left = self.infix(left, next)?;
        }
        self.depth -= 1;
        Ok(left)
    }

    /// A sub-expression inside parentheses or a call's argument list.
    fn grouped<T>(
        &mut self,
        inner: impl FnOnce(&mut Self) -> Result<T, ExprError>,
    ) -> Result<T, ExprError> {
        self.enter(1)?;
        let out = inner(self)?;
        self.depth -= 1;
        Ok(out)
    }

    fn infix_precedence(&self) -> u8 {
        let keyword = |n: usize, k: &str| self.peek_nth(n).is_keyword(k);
        match self.peek_nth(0) {
            Tok::Sym("=" | "==" | "<>" | "!=" | "<" | "<=" | ">" | ">=") => COMPARE,
            Tok::Sym("+" | "-") => PLUS_MINUS,
            Tok::Sym("*" | "/" | "%" | "||") => MUL_DIV,
            Tok::Sym("::") => DOUBLE_COLON,
            Tok::Sym("&") => AMPERSAND,
            Tok::Sym("^" | "<<" | ">>") => CARET,
            Tok::Sym("|") => PIPE,
            _ if keyword(0, "OR") => OR,
            _ if keyword(0, "AND") => AND,
            _ if keyword(0, "IS") => IS,
            _ if keyword(0, "IN") || keyword(0, "BETWEEN") => COMPARE,
            _ if keyword(0, "LIKE") || keyword(0, "ILIKE") => LIKE,
            _ if keyword(0, "NOT") && (keyword(1, "IN") || keyword(1, "BETWEEN")) => COMPARE,
            _ if keyword(0, "NOT") && (keyword(1, "LIKE") || keyword(1, "ILIKE")) => LIKE,
            _ => 0,
        }
    }

    fn infix(&mut self, left: Expr, prec: u8) -> Result<Expr, ExprError> {
        let token = self.next();
        let binary = |op| (op, prec);
        let (op, prec) = match &token.tok {
            Tok::Sym("=" | "==") => binary(BinaryOp::Eq),
            Tok::Sym("<>" | "!=") => binary(BinaryOp::NotEq),
            Tok::Sym("<") => binary(BinaryOp::Lt),
            Tok::Sym("<=") => binary(BinaryOp::LtEq),
            Tok::Sym(">") => binary(BinaryOp::Gt),
            Tok::Sym(">=") => binary(BinaryOp::GtEq),
            Tok::Sym("+") => binary(BinaryOp::Plus),
            Tok::Sym("-") => binary(BinaryOp::Minus),
            Tok::Sym("*") => binary(BinaryOp::Multiply),
            Tok::Sym("/") => binary(BinaryOp::Divide),
            Tok::Sym("%") => binary(BinaryOp::Modulo),
            Tok::Sym("||") => binary(BinaryOp::StringConcat),
            Tok::Sym(s @ ("&" | "|" | "^" | "<<" | ">>")) => binary(BinaryOp::Bitwise(s)),
            Tok::Sym("::") => {
                let ty = self.data_type()?;
                return Ok(Expr::Cast {
                    expr: Box::new(left),
                    ty,
                    double_colon: true,
                    name: "CAST",
                });
            }
            t if t.is_keyword("OR") => binary(BinaryOp::Or),
            t if t.is_keyword("AND") => binary(BinaryOp::And),
            t if t.is_keyword("IS") => return self.is(left),
            t if t.is_keyword("NOT") => return self.negatable(left, true),
            _ => {
                self.at -= 1;
                return self.negatable(left, false);
            }
        };
        let right = self.subexpr(prec)?;
        Ok(Expr::Binary {
            left: Box::new(left),
            op,
            right: Box::new(right),
        })
    }

    /// After `IS`: `[NOT] NULL | TRUE | FALSE | UNKNOWN | DISTINCT FROM x`.
    fn is(&mut self, left: Expr) -> Result<Expr, ExprError> {
        let negated = self.eat_keyword("NOT");
        let expr = Box::new(left);
        if self.eat_keyword("UNKNOWN") {
            return Ok(Expr::IsOther {
                expr,
                negated,
                distinct_from: None,
            });
        }
        if self.eat_keyword("DISTINCT") {
            self.expect_keyword("FROM")?;
            let other = Box::new(self.subexpr(IS)?);
            return Ok(Expr::IsOther {
                expr,
                negated,
                distinct_from: Some(other),
            });
        }
        if self.eat_keyword("NULL") {
            Ok(Expr::IsNull { expr, negated })
        } else if self.eat_keyword("TRUE") || self.eat_keyword("FALSE") {
            let value = self.tokens[self.at - 1].tok.is_keyword("TRUE");
            Ok(Expr::IsBool {
                expr,
                value,
                negated,
            })
        } else {
            Err(self.expected("[NOT] NULL | TRUE | FALSE | UNKNOWN | DISTINCT FROM after IS"))
        }
    }

    /// `[NOT] IN (…)`, `[NOT] BETWEEN a AND b`, `[NOT] [I]LIKE p [ESCAPE e]`.
    fn negatable(&mut self, left: Expr, negated: bool) -> Result<Expr, ExprError> {
        let expr = Box::new(left);
        if self.eat_keyword("IN") {
            let list = self.in_list(&expr)?;
            return Ok(Expr::In {
                expr,
                list,
                negated,
            });
        }
        if self.eat_keyword("BETWEEN") {
            let low = Box::new(self.subexpr(COMPARE)?);
            self.expect_keyword("AND")?;
            let high = Box::new(self.subexpr(COMPARE)?);
            return Ok(Expr::Between {
                expr,
                low,
                high,
                negated,
            });
        }
        let case_insensitive = self.peek().tok.is_keyword("ILIKE");
        if !(self.eat_keyword("LIKE") || self.eat_keyword("ILIKE")) {
            return Err(self.expected("IN, BETWEEN or LIKE"));
        }
        let pattern = Box::new(self.subexpr(LIKE)?);
        let escape = if self.eat_keyword("ESCAPE") {
            Some(Box::new(self.subexpr(LIKE)?))
        } else {
            None
        };
        Ok(Expr::Like {
            expr,
            pattern,
            negated,
            case_insensitive,
            escape,
        })
    }

    fn in_list(&mut self, left: &Expr) -> Result<Vec<Expr>, ExprError> {
        self.expect_sym("(")?;
        if self.peek().tok.is_keyword("SELECT") || self.peek().tok.is_keyword("WITH") {
            let (line, column) = left.pos();
            return Err(ExprError::at(
                "IN takes a list of values, not a subquery",
                line,
                column,
            ));
        }
        let list = self.grouped(|p| p.comma_separated())?;
        self.expect_sym(")")?;
        Ok(list)
    }

    fn comma_separated(&mut self) -> Result<Vec<Expr>, ExprError> {
        let mut items = vec![self.expr()?];
        while self.eat_sym(",") {
            items.push(self.expr()?);
        }
        Ok(items)
    }

    fn prefix(&mut self) -> Result<Expr, ExprError> {
        let pos = self.pos();
        if !matches!(
            self.peek().tok,
            Tok::Number(_) | Tok::Str(_) | Tok::Word { .. } | Tok::Sym("-" | "+" | "(")
        ) {
            return Err(self.expected("an expression"));
        }
        let token = self.next();
        let literal = |value| -> Result<Expr, ExprError> { Ok(Expr::Literal { value, pos }) };
        match token.tok {
            Tok::Number(n) => literal(Literal::Number(n)),
            Tok::Str(s) => literal(Literal::String(s)),
            Tok::Sym(sym @ ("-" | "+")) => {
                let op = if sym == "-" {
                    UnaryOp::Minus
                } else {
                    UnaryOp::Plus
                };
                let expr = Box::new(self.subexpr(MUL_DIV)?);
                Ok(Expr::Unary { op, expr })
            }
            Tok::Sym("(") => {
                let inner = self.grouped(|p| p.expr())?;
                self.expect_sym(")")?;
                Ok(Expr::Nested(Box::new(inner)))
            }
            Tok::Word { text, quote } => self.word(text, quote, pos),
            _ => Err(self.expected("an expression")),
        }
    }

    /// A word at the start of an operand: a keyword construct, a call or a name.
    fn word(&mut self, text: String, quote: Option<char>, pos: Pos) -> Result<Expr, ExprError> {
        let keyword = |k: &str| quote.is_none() && text.eq_ignore_ascii_case(k);
        let call = self.peek().tok == Tok::Sym("(");
        if keyword("NOT") {
            let expr = Box::new(self.subexpr(UNARY_NOT)?);
            return Ok(Expr::Unary {
                op: UnaryOp::Not,
                expr,
            });
        }
        for (k, value) in [
            ("NULL", Literal::Null),
            ("TRUE", Literal::Boolean(true)),
            ("FALSE", Literal::Boolean(false)),
        ] {
            if keyword(k) {
                return Ok(Expr::Literal { value, pos });
            }
        }
        if call
            && let Some(name) = ["CAST", "TRY_CAST", "SAFE_CAST"]
                .into_iter()
                .find(|k| keyword(k))
        {
            return self.cast(name);
        }
        if (keyword("SUBSTRING") || keyword("SUBSTR")) && call {
            return self.substring(keyword("SUBSTR"));
        }
        if keyword("CASE") {
            return self.case(pos);
        }
        if keyword("TRIM") && call {
            return self.trim();
        }
        if NOT_AN_OPERAND.iter().any(|k| keyword(k)) {
            self.at -= 1;
            return Err(self.expected("an expression"));
        }
        if call {
            return self.call(text, pos);
        }
        if self.peek().tok == Tok::Sym(".") {
            let mut parts = vec![text];
            while self.peek().tok == Tok::Sym(".") {
                self.at += 1;
                parts.push(self.identifier()?);
            }
            return Ok(Expr::Compound { parts, pos });
        }
        Ok(Expr::Identifier {
            name: text,
            quote,
            pos,
        })
    }

    /// A name after `AS` or `.`: any word, as SQL allows `AS from` there.
    fn identifier(&mut self) -> Result<String, ExprError> {
        match &self.peek().tok {
            Tok::Word { text, .. } => {
                let name = text.clone();
                self.at += 1;
                Ok(name)
            }
            _ => Err(self.expected("identifier")),
        }
    }

    /// The name after `AS`: a word, or a string (`AS 'total'`, as SQL dialects allow).
    fn alias(&mut self) -> Result<String, ExprError> {
        if let Tok::Str(name) = &self.peek().tok {
            let name = name.clone();
            self.at += 1;
            return Ok(name);
        }
        self.identifier()
    }

    /// `name(args)`, `name(*)`, `name(DISTINCT args)`.
    fn call(&mut self, name: String, pos: Pos) -> Result<Expr, ExprError> {
        self.expect_sym("(")?;
        let distinct = self.eat_keyword("DISTINCT");
        let args = if self.peek().tok == Tok::Sym(")") {
            Vec::new()
        } else if self.peek().tok == Tok::Sym("*") && self.peek_nth(1) == &Tok::Sym(")") {
            let pos = self.pos();
            self.at += 1;
            vec![Expr::Wildcard { pos }]
        } else {
            self.grouped(|p| p.comma_separated())?
        };
        self.expect_sym(")")?;
        Ok(Expr::Function {
            name,
            args,
            distinct,
            pos,
        })
    }

    /// After `CAST`: `(expr AS type)`.
    fn cast(&mut self, name: &'static str) -> Result<Expr, ExprError> {
        self.expect_sym("(")?;
        let expr = self.grouped(|p| p.expr())?;
        self.expect_keyword("AS")?;
        let ty = self.data_type()?;
        self.expect_sym(")")?;
        Ok(Expr::Cast {
            expr: Box::new(expr),
            ty,
            double_colon: false,
            name,
        })
    }

    /// After `SUBSTRING` or `SUBSTR`: `(x FROM a [FOR b])` or `(x, a[, b])`.
    fn substring(&mut self, short: bool) -> Result<Expr, ExprError> {
        self.expect_sym("(")?;
        let (expr, from, length, commas) = self.grouped(|p| {
            let expr = p.expr()?;
            let (mut from, mut length) = (None, None);
            let commas = p.peek().tok == Tok::Sym(",");
            let (from_word, for_word) = if commas { (",", ",") } else { ("FROM", "FOR") };
            let eat = |p: &mut Self, word: &str| {
                if commas {
                    p.eat_sym(word)
                } else {
                    p.eat_keyword(word)
                }
            };
            if eat(p, from_word) {
                from = Some(Box::new(p.expr()?));
                if eat(p, for_word) {
                    length = Some(Box::new(p.expr()?));
                }
            }
            Ok((expr, from, length, commas))
        })?;
        self.expect_sym(")")?;
        Ok(Expr::Substring {
            expr: Box::new(expr),
            from,
            length,
            short,
            commas,
        })
    }

    /// After `CASE`: `[x] WHEN a THEN b … [ELSE c] END`.
    fn case(&mut self, pos: Pos) -> Result<Expr, ExprError> {
        self.grouped(|p| {
            let operand = if p.peek().tok.is_keyword("WHEN") {
                None
            } else {
                Some(Box::new(p.expr()?))
            };
            let mut branches = Vec::new();
            while p.eat_keyword("WHEN") {
                let when = p.expr()?;
                p.expect_keyword("THEN")?;
                branches.push((when, p.expr()?));
            }
            if branches.is_empty() {
                return Err(p.expected("WHEN"));
            }
            let otherwise = if p.eat_keyword("ELSE") {
                Some(Box::new(p.expr()?))
            } else {
                None
            };
            p.expect_keyword("END")?;
            Ok(Expr::Case {
                operand,
                branches,
                otherwise,
                pos,
            })
        })
    }

    /// After `TRIM`: `([BOTH | LEADING | TRAILING] [chars FROM] x)` or `(x, chars)`.
    fn trim(&mut self) -> Result<Expr, ExprError> {
        self.expect_sym("(")?;
        let side = [
            ("BOTH", TrimSide::Both),
            ("LEADING", TrimSide::Leading),
            ("TRAILING", TrimSide::Trailing),
        ]
        .into_iter()
        .find_map(|(k, side)| self.eat_keyword(k).then_some(side));
        let (expr, characters, comma) = self.grouped(|p| {
            if side.is_some() && p.eat_keyword("FROM") {
                return Ok((p.expr()?, None, false));
            }
            let first = p.expr()?;
            if p.eat_keyword("FROM") {
                Ok((p.expr()?, Some(Box::new(first)), false))
            } else if side.is_none() && p.eat_sym(",") {
                Ok((first, Some(Box::new(p.expr()?)), true))
            } else {
                Ok((first, None, false))
            }
        })?;
        self.expect_sym(")")?;
        Ok(Expr::Trim {
            expr: Box::new(expr),
            side,
            characters,
            comma,
        })
    }

    /// A type name: words (`DOUBLE PRECISION`), then `(n[, m])` or `[…]`.
    fn data_type(&mut self) -> Result<SqlType, ExprError> {
        let start = self.peek().start;
        let mut words = Vec::new();
        while let Tok::Word { text, quote: None } = &self.peek().tok {
            let continues = words.is_empty()
                || matches!(
                    text.to_ascii_uppercase().as_str(),
                    "PRECISION"
                        | "VARYING"
                        | "WITH"
                        | "WITHOUT"
                        | "TIME"
                        | "ZONE"
                        | "UNSIGNED"
                        | "SIGNED"
                );
            if !continues {
                break;
            }
            words.push(text.to_ascii_uppercase());
            self.at += 1;
        }
        if words.is_empty() {
            return Err(self.expected("a data type name"));
        }
        for (open, close) in [("(", ")"), ("[", "]")] {
            if self.peek().tok == Tok::Sym(open) {
                self.skip_to(close)?;
                break;
            }
        }
        let end = self.tokens[self.at - 1].end;
        Ok(SqlType {
            name: words.join(" "),
            text: self.text[start..end].to_owned(),
        })
    }

    /// Skips the opening symbol and everything up to and including `close`
    /// (type parameters such as `(10, 2)` or `[us, UTC]`, kept as text).
    fn skip_to(&mut self, close: &'static str) -> Result<(), ExprError> {
        self.at += 1;
        loop {
            match &self.peek().tok {
                Tok::Sym(s) if *s == close => {
                    self.at += 1;
                    return Ok(());
                }
                Tok::Eof | Tok::Sym("(" | ")" | "[" | "]") => return Err(self.expected(close)),
                _ => self.at += 1,
            }
        }
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
