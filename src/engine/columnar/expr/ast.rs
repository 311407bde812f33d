//! The syntax tree of an expression: only the SQL subset the compiler accepts.
//!
//! Each node knows where it starts in the text. As in the SQL parser this
//! replaced, a node starts at its first operand, not at a prefix operator, a
//! parenthesis or `CAST(`: an error about `-amount` points at `amount`.

use std::fmt;

/// A 1-based line and column inside the expression text.
pub type Pos = (u64, u64);

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A column name; `quote` is `"` or `` ` `` when it was quoted.
    Identifier {
        name: String,
        quote: Option<char>,
        pos: Pos,
    },
    /// `a.b`: parsed so the compiler can say it is not supported.
    Compound {
        parts: Vec<String>,
        pos: Pos,
    },
    Literal {
        value: Literal,
        pos: Pos,
    },
    /// `*`, only inside a call's arguments (`count(*)`).
    Wildcard {
        pos: Pos,
    },
    Nested(Box<Expr>),
    Unary {
        op: UnaryOp,
        expr: Box<Expr>,
    },
    Binary {
        left: Box<Expr>,
        op: BinaryOp,
        right: Box<Expr>,
    },
    /// `x IS [NOT] NULL`.
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    /// `x IS [NOT] UNKNOWN`, `x IS [NOT] DISTINCT FROM y`: parsed so the
    /// compiler can say they are not supported.
    IsOther {
        expr: Box<Expr>,
        negated: bool,
        distinct_from: Option<Box<Expr>>,
    },
    /// `x IS [NOT] TRUE` (`value` true) or `x IS [NOT] FALSE`.
    IsBool {
        expr: Box<Expr>,
        value: bool,
        negated: bool,
    },
    In {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
    },
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        negated: bool,
        case_insensitive: bool,
        escape: Option<Box<Expr>>,
    },
    /// `CAST(x AS type)` (`TRY_CAST`, `SAFE_CAST`: `name`, refused by the
    /// compiler), or `x::type` when `double_colon`.
    Cast {
        expr: Box<Expr>,
        ty: SqlType,
        double_colon: bool,
        name: &'static str,
    },
    /// `SUBSTRING(x FROM a [FOR b])` and `SUBSTRING(x, a[, b])`; `SUBSTR` when
    /// `short`, the comma form when `commas` (kept for messages).
    Substring {
        expr: Box<Expr>,
        from: Option<Box<Expr>>,
        length: Option<Box<Expr>>,
        short: bool,
        commas: bool,
    },
    /// `TRIM([BOTH | LEADING | TRAILING] [chars FROM] x)` or `TRIM(x, chars)`.
    Trim {
        expr: Box<Expr>,
        side: Option<TrimSide>,
        characters: Option<Box<Expr>>,
        /// Written `TRIM(x, chars)`.
        comma: bool,
    },
    Function {
        name: String,
        args: Vec<Expr>,
        distinct: bool,
        pos: Pos,
    },
    /// `CASE [x] WHEN a THEN b … [ELSE c] END`: parsed so the compiler can say
    /// it is not supported, with the whole construct in the message.
    Case {
        operand: Option<Box<Expr>>,
        branches: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
        pos: Pos,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// The digits as written.
    Number(String),
    String(String),
    Boolean(bool),
    Null,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Not,
    Minus,
    Plus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    Plus,
    Minus,
    Multiply,
    Divide,
    Modulo,
    And,
    Or,
    StringConcat,
    /// A bitwise operator (`&`, `|`, `^`, `#`, `<<`, `>>`): parsed with SQL's
    /// precedence so the compiler can name it as unsupported.
    Bitwise(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimSide {
    Both,
    Leading,
    Trailing,
}

/// A type name in a cast: its words upper-cased and joined by one space
/// (`DOUBLE PRECISION`), and the text as written (`timestamp[us, UTC]`,
/// `VARCHAR(10)`) for the names only this project knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlType {
    pub name: String,
    pub text: String,
}

impl Expr {
    /// Where the node starts (see the module doc).
    pub fn pos(&self) -> Pos {
        match self {
            Expr::Identifier { pos, .. }
            | Expr::Compound { pos, .. }
            | Expr::Literal { pos, .. }
            | Expr::Wildcard { pos }
            | Expr::Function { pos, .. }
            | Expr::Case { pos, .. } => *pos,
            Expr::Nested(e)
            | Expr::Unary { expr: e, .. }
            | Expr::Binary { left: e, .. }
            | Expr::IsNull { expr: e, .. }
            | Expr::IsBool { expr: e, .. }
            | Expr::IsOther { expr: e, .. }
            | Expr::In { expr: e, .. }
            | Expr::Between { expr: e, .. }
            | Expr::Like { expr: e, .. }
            | Expr::Cast { expr: e, .. }
            | Expr::Substring { expr: e, .. } => e.pos(),
            // `TRIM('x' FROM s)` starts at its characters.
            Expr::Trim {
                expr, characters, ..
            } => characters
                .as_ref()
                .map_or(expr.pos(), |c| c.pos().min(expr.pos())),
        }
    }
}

impl fmt::Display for BinaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
            BinaryOp::Plus => "+",
            BinaryOp::Minus => "-",
            BinaryOp::Multiply => "*",
            BinaryOp::Divide => "/",
            BinaryOp::Modulo => "%",
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
            BinaryOp::StringConcat => "||",
            BinaryOp::Bitwise(symbol) => symbol,
        })
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Number(n) => f.write_str(n),
            Literal::String(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Literal::Boolean(b) => f.write_str(if *b { "true" } else { "false" }),
            Literal::Null => f.write_str("NULL"),
        }
    }
}

fn list(f: &mut fmt::Formatter<'_>, items: &[Expr]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

fn not(negated: bool) -> &'static str {
    if negated { "NOT " } else { "" }
}

/// SQL text of the tree, for messages (`expected a boolean, but `amount + 1` is …`).
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Identifier {
                name, quote: None, ..
            } => f.write_str(name),
            Expr::Identifier {
                name,
                quote: Some(q),
                ..
            } => write!(f, "{q}{name}{q}"),
            Expr::Compound { parts, .. } => f.write_str(&parts.join(".")),
            Expr::Literal { value, .. } => write!(f, "{value}"),
            Expr::Wildcard { .. } => f.write_str("*"),
            Expr::Nested(e) => write!(f, "({e})"),
            Expr::Unary {
                op: UnaryOp::Not,
                expr,
            } => write!(f, "NOT {expr}"),
            // `- -x`, not `--x` (a comment).
            Expr::Unary {
                op: op @ (UnaryOp::Minus | UnaryOp::Plus),
                expr,
            } => {
                let sign = if *op == UnaryOp::Minus { "-" } else { "+" };
                let space = if matches!(**expr, Expr::Unary { .. }) {
                    " "
                } else {
                    ""
                };
                write!(f, "{sign}{space}{expr}")
            }
            Expr::Binary { left, op, right } => write!(f, "{left} {op} {right}"),
            Expr::IsNull { expr, negated } => write!(f, "{expr} IS {}NULL", not(*negated)),
            Expr::IsBool {
                expr,
                value,
                negated,
            } => write!(
                f,
                "{expr} IS {}{}",
                not(*negated),
                if *value { "TRUE" } else { "FALSE" }
            ),
            Expr::IsOther {
                expr,
                negated,
                distinct_from: None,
            } => write!(f, "{expr} IS {}UNKNOWN", not(*negated)),
            Expr::IsOther {
                expr,
                negated,
                distinct_from: Some(other),
            } => write!(f, "{expr} IS {}DISTINCT FROM {other}", not(*negated)),
            Expr::In {
                expr,
                list: items,
                negated,
            } => {
                write!(f, "{expr} {}IN (", not(*negated))?;
                list(f, items)?;
                f.write_str(")")
            }
            Expr::Between {
                expr,
                low,
                high,
                negated,
            } => write!(f, "{expr} {}BETWEEN {low} AND {high}", not(*negated)),
            Expr::Like {
                expr,
                pattern,
                negated,
                case_insensitive,
                escape,
            } => {
                let like = if *case_insensitive { "ILIKE" } else { "LIKE" };
                write!(f, "{expr} {}{like} {pattern}", not(*negated))?;
                match escape {
                    Some(e) => write!(f, " ESCAPE {e}"),
                    None => Ok(()),
                }
            }
            Expr::Cast {
                expr,
                ty,
                double_colon: true,
                ..
            } => write!(f, "{expr}::{}", ty.text),
            Expr::Cast { expr, ty, name, .. } => write!(f, "{name}({expr} AS {})", ty.text),
            Expr::Substring { .. } | Expr::Case { .. } | Expr::Trim { .. } => self.fmt_special(f),
            Expr::Function {
                name,
                args,
                distinct,
                ..
            } => {
                write!(f, "{name}({}", if *distinct { "DISTINCT " } else { "" })?;
                list(f, args)?;
                f.write_str(")")
            }
        }
    }
}

impl Expr {
    /// The keyword constructs' SQL text (split from `fmt` to keep it short).
    fn fmt_special(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Substring {
                expr,
                from,
                length,
                short,
                commas,
            } => {
                let name = if *short { "SUBSTR" } else { "SUBSTRING" };
                let (from_word, for_word) = if *commas {
                    (", ", ", ")
                } else {
                    (" FROM ", " FOR ")
                };
                write!(f, "{name}({expr}")?;
                if let Some(from) = from {
                    write!(f, "{from_word}{from}")?;
                }
                if let Some(length) = length {
                    write!(f, "{for_word}{length}")?;
                }
                f.write_str(")")
            }
            Expr::Case {
                operand,
                branches,
                otherwise,
                ..
            } => {
                f.write_str("CASE")?;
                if let Some(operand) = operand {
                    write!(f, " {operand}")?;
                }
                for (when, then) in branches {
                    write!(f, " WHEN {when} THEN {then}")?;
                }
                if let Some(otherwise) = otherwise {
                    write!(f, " ELSE {otherwise}")?;
                }
                f.write_str(" END")
            }
            Expr::Trim {
                expr,
                characters: Some(chars),
                comma: true,
                ..
            } => write!(f, "TRIM({expr}, {chars})"),
            Expr::Trim {
                expr,
                side,
                characters,
                ..
            } => {
                f.write_str("TRIM(")?;
                if let Some(side) = side {
                    f.write_str(match side {
                        TrimSide::Both => "BOTH ",
                        TrimSide::Leading => "LEADING ",
                        TrimSide::Trailing => "TRAILING ",
                    })?;
                }
                if let Some(chars) = characters {
                    write!(f, "{chars} FROM ")?;
                }
                write!(f, "{expr})")
            }
            // Only the constructs above reach here (see `fmt`).
            _ => Ok(()),
        }
    }
}
