//! From the syntax tree to a typed expression tree checked against a schema.

use std::sync::Arc;

use super::ast::{BinaryOp, Expr as SqlExpr, Literal as Value, SqlType, TrimSide, UnaryOp};
use arrow::compute::{CastOptions, cast_with_options};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, NullArray, StringArray,
};
use arrow_schema::{DataType, Schema};

use super::ExprError;
use super::types::{common_numeric, comparable, is_numeric, is_string, parse_type, type_name};

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
}

/// Arithmetic operators (integer overflow and division by zero are errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// Built-in scalar functions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Func {
    Lower,
    Upper,
    Length,
    Trim {
        leading: bool,
        trailing: bool,
    },
    /// 1-based start; `None` length = to the end.
    Substr {
        start: i64,
        length: Option<u64>,
    },
    Concat,
    Coalesce,
}

/// A typed expression node.
#[derive(Debug, Clone)]
pub enum Node {
    Column {
        name: String,
        ty: DataType,
    },
    /// A one-element array.
    Literal(ArrayRef),
    Compare {
        op: CmpOp,
        left: Box<Node>,
        right: Box<Node>,
    },
    Arith {
        op: ArithOp,
        left: Box<Node>,
        right: Box<Node>,
    },
    Negate(Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    IsNull {
        expr: Box<Node>,
        negated: bool,
    },
    Like {
        expr: Box<Node>,
        pattern: ArrayRef,
        negated: bool,
        case_insensitive: bool,
    },
    Cast {
        expr: Box<Node>,
        to: DataType,
    },
    Call {
        func: Func,
        args: Vec<Node>,
        ty: DataType,
    },
}

impl Node {
    pub fn data_type(&self) -> DataType {
        match self {
            Node::Column { ty, .. } => ty.clone(),
            Node::Literal(a) => a.data_type().clone(),
            Node::Compare { .. }
            | Node::And(..)
            | Node::Or(..)
            | Node::Not(_)
            | Node::IsNull { .. }
            | Node::Like { .. } => DataType::Boolean,
            Node::Arith { left, .. } => left.data_type(),
            Node::Negate(inner) => inner.data_type(),
            Node::Cast { to, .. } => to.clone(),
            Node::Call { ty, .. } => ty.clone(),
        }
    }

    fn is_literal(&self) -> bool {
        matches!(self, Node::Literal(_))
    }
}

/// The start of an AST node inside the expression text (0, 0 when unknown).
pub fn position(expr: &SqlExpr) -> (u64, u64) {
    expr.pos()
}

fn err_at(expr: &SqlExpr, message: impl Into<String>) -> ExprError {
    let (line, column) = position(expr);
    ExprError::at(message, line, column)
}

pub fn compile(expr: &SqlExpr, schema: &Schema) -> Result<Node, ExprError> {
    Compiler { schema }.node(expr)
}

struct Compiler<'a> {
    schema: &'a Schema,
}

impl Compiler<'_> {
    fn node(&self, expr: &SqlExpr) -> Result<Node, ExprError> {
        match expr {
            SqlExpr::Identifier { name, quote, .. } => self.column(expr, name).map_err(|e| {
                if *quote == Some('"') {
                    // SQL reads "x" as a column name; a string is 'x'.
                    ExprError {
                        message: format!(
                            "{}; \"{name}\" is a column name in SQL, write '{name}' for a string",
                            e.message
                        ),
                        ..e
                    }
                } else {
                    e
                }
            }),
            SqlExpr::Compound { parts, .. } => Err(err_at(
                expr,
                format!(
                    "qualified column names are not supported: `{}`",
                    parts.join(".")
                ),
            )),
            SqlExpr::Literal { value, .. } => literal(expr, value),
            SqlExpr::Nested(inner) => self.node(inner),
            SqlExpr::Unary { op, expr: inner } => self.unary(expr, *op, inner),
            SqlExpr::Binary { left, op, right } => self.binary(expr, left, *op, right),
            SqlExpr::IsNull {
                expr: inner,
                negated,
            } => Ok(Node::IsNull {
                expr: Box::new(self.node(inner)?),
                negated: *negated,
            }),
            SqlExpr::IsBool {
                expr: inner,
                value,
                negated,
            } => {
                if value != negated {
                    self.is_true(inner, *value)
                } else {
                    self.is_false(inner, *value)
                }
            }
            SqlExpr::In {
                expr: inner,
                list,
                negated,
            } => self.in_list(expr, inner, list, *negated),
            SqlExpr::Between {
                expr: inner,
                negated,
                low,
                high,
            } => {
                let lower = self.compare(low, self.node(inner)?, self.node(low)?, CmpOp::GtEq)?;
                let upper = self.compare(high, self.node(inner)?, self.node(high)?, CmpOp::LtEq)?;
                let both = Node::And(Box::new(lower), Box::new(upper));
                Ok(if *negated {
                    Node::Not(Box::new(both))
                } else {
                    both
                })
            }
            SqlExpr::Like {
                negated,
                expr: inner,
                pattern,
                escape,
                case_insensitive,
            } => {
                if escape.is_some() {
                    return Err(err_at(expr, "LIKE ANY and ESCAPE are not supported"));
                }
                self.like(inner, pattern, *negated, *case_insensitive)
            }
            SqlExpr::Cast {
                expr: inner,
                ty,
                name,
                ..
            } => {
                if *name != "CAST" {
                    return Err(err_at(
                        expr,
                        "only CAST(x AS type) and x::type are supported",
                    ));
                }
                self.cast(expr, inner, ty)
            }
            SqlExpr::Substring {
                expr: inner,
                from,
                length,
                ..
            } => {
                let args: Vec<&SqlExpr> = std::iter::once(inner.as_ref())
                    .chain(from.as_deref())
                    .chain(length.as_deref())
                    .collect();
                self.substr(expr, &args)
            }
            SqlExpr::Trim {
                expr: inner,
                side,
                characters,
                ..
            } => self.trim(expr, inner, *side, characters.is_some()),
            SqlExpr::Function {
                name,
                args,
                distinct,
                ..
            } => self.function(expr, name, args, *distinct),
            SqlExpr::Wildcard { .. } | SqlExpr::Case { .. } | SqlExpr::IsOther { .. } => {
                Err(err_at(expr, format!("unsupported expression `{expr}`")))
            }
        }
    }

    /// `NOT x`, `-x` (a negative literal folded, `i64::MIN` included), `+x`.
    fn unary(&self, expr: &SqlExpr, op: UnaryOp, inner: &SqlExpr) -> Result<Node, ExprError> {
        match op {
            UnaryOp::Not => Ok(Node::Not(Box::new(self.boolean(inner)?))),
            UnaryOp::Minus => {
                // -9223372036854775808 is i64::MIN: its digits alone do not fit.
                if let SqlExpr::Literal {
                    value: Value::Number(text),
                    ..
                } = inner
                    && let Ok(n) = format!("-{text}").parse::<i64>()
                {
                    return Ok(Node::Literal(Arc::new(Int64Array::from(vec![n]))));
                }
                let node = self.node(inner)?;
                let ty = node.data_type();
                if !is_numeric(&ty) {
                    return Err(err_at(expr, format!("cannot negate {}", type_name(&ty))));
                }
                if let Node::Literal(array) = &node {
                    return fold_negate(expr, array);
                }
                Ok(Node::Negate(Box::new(node)))
            }
            UnaryOp::Plus => self.node(inner),
        }
    }

    /// `x IS TRUE` / `x IS NOT FALSE`.
    fn is_true(&self, inner: &SqlExpr, value: bool) -> Result<Node, ExprError> {
        let truth = self.boolean(inner)?;
        let is_true = value;
        // `x IS TRUE` never yields null: null → false (and null → true for IS NOT FALSE).
        let value = Node::Call {
            func: Func::Coalesce,
            args: vec![
                truth,
                Node::Literal(Arc::new(BooleanArray::from(vec![!is_true]))),
            ],
            ty: DataType::Boolean,
        };
        Ok(value)
    }

    /// `x IS FALSE` / `x IS NOT TRUE`.
    fn is_false(&self, inner: &SqlExpr, value: bool) -> Result<Node, ExprError> {
        let truth = self.boolean(inner)?;
        let is_false = !value;
        Ok(Node::Not(Box::new(Node::Call {
            func: Func::Coalesce,
            args: vec![
                truth,
                Node::Literal(Arc::new(BooleanArray::from(vec![is_false]))),
            ],
            ty: DataType::Boolean,
        })))
    }

    /// `x [NOT] IN (a, b, …)` as a chain of equalities.
    fn in_list(
        &self,
        expr: &SqlExpr,
        inner: &SqlExpr,
        list: &[SqlExpr],
        negated: bool,
    ) -> Result<Node, ExprError> {
        if list.is_empty() {
            return Err(err_at(expr, "IN needs at least one value"));
        }
        let mut any: Option<Node> = None;
        for item in list {
            let eq = self.compare(item, self.node(inner)?, self.node(item)?, CmpOp::Eq)?;
            any = Some(match any {
                None => eq,
                Some(previous) => Node::Or(Box::new(previous), Box::new(eq)),
            });
        }
        let any = any.expect("non-empty list");
        Ok(if negated {
            Node::Not(Box::new(any))
        } else {
            any
        })
    }

    /// `x [NOT] [I]LIKE 'pattern'`.
    fn like(
        &self,
        inner: &SqlExpr,
        pattern: &SqlExpr,
        negated: bool,
        case_insensitive: bool,
    ) -> Result<Node, ExprError> {
        let value = self.string(inner)?;
        let SqlExpr::Literal {
            value: Value::String(text),
            ..
        } = pattern
        else {
            return Err(err_at(pattern, "a LIKE pattern must be a string literal"));
        };
        Ok(Node::Like {
            expr: Box::new(cast_to(value, &DataType::Utf8)),
            pattern: Arc::new(StringArray::from(vec![text.clone()])),
            negated,
            case_insensitive,
        })
    }

    /// `CAST(x AS type)` and `x::type` (a literal is cast at compile time).
    fn cast(
        &self,
        expr: &SqlExpr,
        inner: &SqlExpr,
        data_type: &SqlType,
    ) -> Result<Node, ExprError> {
        let to = sql_type(data_type).map_err(|m| err_at(expr, m))?;
        let node = self.node(inner)?;
        let from = node.data_type();
        if !arrow::compute::can_cast_types(&from, &to) {
            return Err(err_at(
                expr,
                format!("cannot cast {} to {}", type_name(&from), type_name(&to)),
            ));
        }
        if let Node::Literal(array) = &node {
            return cast_literal(expr, array, &to).map(Node::Literal);
        }
        Ok(Node::Cast {
            expr: Box::new(node),
            to,
        })
    }

    /// `TRIM([BOTH | LEADING | TRAILING] x)`: whitespace only.
    fn trim(
        &self,
        expr: &SqlExpr,
        inner: &SqlExpr,
        side: Option<TrimSide>,
        with_characters: bool,
    ) -> Result<Node, ExprError> {
        if with_characters {
            return Err(err_at(
                expr,
                "trim takes no character list; it trims whitespace",
            ));
        }
        let (leading, trailing) = match side {
            None | Some(TrimSide::Both) => (true, true),
            Some(TrimSide::Leading) => (true, false),
            Some(TrimSide::Trailing) => (false, true),
        };
        let arg = self.string(inner)?;
        Ok(string_call(Func::Trim { leading, trailing }, vec![arg]))
    }

    fn column(&self, expr: &SqlExpr, name: &str) -> Result<Node, ExprError> {
        match self.schema.field_with_name(name) {
            // A dictionary-encoded column (`__topic`) is its values' type to an
            // expression; the evaluator unpacks it.
            Ok(field) => Ok(Node::Column {
                name: name.to_owned(),
                ty: match field.data_type() {
                    DataType::Dictionary(_, values) => values.as_ref().clone(),
                    other => other.clone(),
                },
            }),
            Err(_) => {
                let known: Vec<&str> = self
                    .schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect();
                Err(err_at(
                    expr,
                    format!(
                        "Arrow column does not exist: {name}{} (columns: {})",
                        crate::engine::suggest::hint(name, known.iter().copied()),
                        known.join(", ")
                    ),
                ))
            }
        }
    }

    fn boolean(&self, expr: &SqlExpr) -> Result<Node, ExprError> {
        let node = self.node(expr)?;
        match node.data_type() {
            DataType::Boolean => Ok(node),
            DataType::Null => Ok(cast_to(node, &DataType::Boolean)),
            other => Err(err_at(
                expr,
                format!("expected a boolean, but `{expr}` is {}", type_name(&other)),
            )),
        }
    }

    fn string(&self, expr: &SqlExpr) -> Result<Node, ExprError> {
        let node = self.node(expr)?;
        match node.data_type() {
            DataType::Utf8 => Ok(node),
            DataType::LargeUtf8 | DataType::Null => Ok(cast_to(node, &DataType::Utf8)),
            other => Err(err_at(
                expr,
                format!("expected a string, but `{expr}` is {}", type_name(&other)),
            )),
        }
    }

    fn binary(
        &self,
        expr: &SqlExpr,
        left: &SqlExpr,
        op: BinaryOp,
        right: &SqlExpr,
    ) -> Result<Node, ExprError> {
        let cmp = match op {
            BinaryOp::Eq => Some(CmpOp::Eq),
            BinaryOp::NotEq => Some(CmpOp::NotEq),
            BinaryOp::Lt => Some(CmpOp::Lt),
            BinaryOp::LtEq => Some(CmpOp::LtEq),
            BinaryOp::Gt => Some(CmpOp::Gt),
            BinaryOp::GtEq => Some(CmpOp::GtEq),
            _ => None,
        };
        if let Some(cmp) = cmp {
            return self.compare(expr, self.node(left)?, self.node(right)?, cmp);
        }
        let arith = match op {
            BinaryOp::Plus => Some(ArithOp::Add),
            BinaryOp::Minus => Some(ArithOp::Sub),
            BinaryOp::Multiply => Some(ArithOp::Mul),
            BinaryOp::Divide => Some(ArithOp::Div),
            BinaryOp::Modulo => Some(ArithOp::Rem),
            _ => None,
        };
        if let Some(arith) = arith {
            let (l, r) = (self.node(left)?, self.node(right)?);
            let (lt, rt) = (l.data_type(), r.data_type());
            let common = unify(&l, &r, common_numeric).ok_or_else(|| {
                err_at(
                    expr,
                    format!(
                        "cannot apply `{op}` to {} and {}",
                        type_name(&lt),
                        type_name(&rt)
                    ),
                )
            })?;
            if !is_numeric(&common) {
                return Err(err_at(
                    expr,
                    format!("cannot apply `{op}` to {}", type_name(&common)),
                ));
            }
            return Ok(Node::Arith {
                op: arith,
                left: Box::new(coerce(left, l, &common)?),
                right: Box::new(coerce(right, r, &common)?),
            });
        }
        match op {
            BinaryOp::And => Ok(Node::And(
                Box::new(self.boolean(left)?),
                Box::new(self.boolean(right)?),
            )),
            BinaryOp::Or => Ok(Node::Or(
                Box::new(self.boolean(left)?),
                Box::new(self.boolean(right)?),
            )),
            BinaryOp::StringConcat => Ok(string_call(
                Func::Concat,
                vec![self.as_text(left)?, self.as_text(right)?],
            )),
            other => Err(err_at(expr, format!("unsupported operator `{other}`"))),
        }
    }

    fn compare(&self, at: &SqlExpr, left: Node, right: Node, op: CmpOp) -> Result<Node, ExprError> {
        let (lt, rt) = (left.data_type(), right.data_type());
        let common = unify(&left, &right, comparable).ok_or_else(|| {
            err_at(
                at,
                format!("cannot compare {} with {}", type_name(&lt), type_name(&rt)),
            )
        })?;
        Ok(Node::Compare {
            op,
            left: Box::new(coerce(at, left, &common)?),
            right: Box::new(coerce(at, right, &common)?),
        })
    }

    /// Any scalar as text (for `||` and concat).
    fn as_text(&self, expr: &SqlExpr) -> Result<Node, ExprError> {
        let node = self.node(expr)?;
        let ty = node.data_type();
        if ty == DataType::Utf8 {
            return Ok(node);
        }
        if !arrow::compute::can_cast_types(&ty, &DataType::Utf8) {
            return Err(err_at(
                expr,
                format!("cannot turn {} into text", type_name(&ty)),
            ));
        }
        coerce(expr, node, &DataType::Utf8)
    }

    fn function(
        &self,
        expr: &SqlExpr,
        name: &str,
        args: &[SqlExpr],
        distinct: bool,
    ) -> Result<Node, ExprError> {
        if distinct {
            return Err(err_at(
                expr,
                "DISTINCT and clauses inside calls are not supported",
            ));
        }
        if args.iter().any(|a| matches!(a, SqlExpr::Wildcard { .. })) {
            return Err(err_at(expr, format!("unsupported argument in `{expr}`")));
        }
        let name = name.to_ascii_lowercase();
        let args: Vec<&SqlExpr> = args.iter().collect();
        let arity = |n: usize| -> Result<(), ExprError> {
            if args.len() == n {
                Ok(())
            } else {
                Err(err_at(
                    expr,
                    format!(
                        "{name} takes {n} argument{}, got {}",
                        if n == 1 { "" } else { "s" },
                        args.len()
                    ),
                ))
            }
        };
        match name.as_str() {
            "lower" | "upper" | "length" | "char_length" | "character_length" | "trim"
            | "ltrim" | "rtrim" => {
                arity(1)?;
                let arg = self.string(args[0])?;
                let func = match name.as_str() {
                    "lower" => Func::Lower,
                    "upper" => Func::Upper,
                    "trim" => Func::Trim {
                        leading: true,
                        trailing: true,
                    },
                    "ltrim" => Func::Trim {
                        leading: true,
                        trailing: false,
                    },
                    "rtrim" => Func::Trim {
                        leading: false,
                        trailing: true,
                    },
                    _ => {
                        return Ok(Node::Call {
                            func: Func::Length,
                            args: vec![arg],
                            ty: DataType::Int32,
                        });
                    }
                };
                Ok(string_call(func, vec![arg]))
            }
            "substr" | "substring" => self.substr(expr, &args),
            "concat" => {
                if args.is_empty() {
                    return Err(err_at(expr, "concat needs at least one argument"));
                }
                let parts = args
                    .iter()
                    .map(|a| self.as_text(a))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(string_call(Func::Concat, parts))
            }
            "coalesce" => {
                if args.is_empty() {
                    return Err(err_at(expr, "coalesce needs at least one argument"));
                }
                self.coalesce(&args)
            }
            _ => Err(err_at(
                expr,
                format!(
                    "unknown function `{name}`; expected lower, upper, length, trim, ltrim, rtrim, substr, concat or coalesce"
                ),
            )),
        }
    }

    /// `coalesce(a, b, …)`: the arguments' common type, literals converted to it.
    fn coalesce(&self, args: &[&SqlExpr]) -> Result<Node, ExprError> {
        let nodes = args
            .iter()
            .map(|a| self.node(a))
            .collect::<Result<Vec<_>, _>>()?;
        let mut common = DataType::Null;
        for (node, arg) in nodes.iter().zip(args) {
            let ty = node.data_type();
            common = if common == DataType::Null {
                ty
            } else if ty == DataType::Null || ty == common {
                common
            } else {
                comparable(&common, &ty).ok_or_else(|| {
                    err_at(
                        arg,
                        format!(
                            "coalesce arguments must share a type: {} and {}",
                            type_name(&common),
                            type_name(&ty)
                        ),
                    )
                })?
            };
        }
        let coerced = nodes
            .into_iter()
            .zip(args)
            .map(|(n, a)| coerce(a, n, &common))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Node::Call {
            func: Func::Coalesce,
            args: coerced,
            ty: common,
        })
    }

    fn substr(&self, expr: &SqlExpr, args: &[&SqlExpr]) -> Result<Node, ExprError> {
        if !(2..=3).contains(&args.len()) {
            return Err(err_at(expr, "substr takes (text, start[, length])"));
        }
        let text = self.string(args[0])?;
        let start = integer_literal(args[1])?;
        let length = match args.get(2) {
            Some(arg) => {
                let n = integer_literal(arg)?;
                Some(
                    u64::try_from(n)
                        .map_err(|_| err_at(arg, "substr length must not be negative"))?,
                )
            }
            None => None,
        };
        Ok(string_call(Func::Substr { start, length }, vec![text]))
    }
}

fn string_call(func: Func, args: Vec<Node>) -> Node {
    Node::Call {
        func,
        args,
        ty: DataType::Utf8,
    }
}

fn integer_literal(expr: &SqlExpr) -> Result<i64, ExprError> {
    let (negative, inner) = match expr {
        SqlExpr::Unary {
            op: UnaryOp::Minus,
            expr,
        } => (true, expr.as_ref()),
        SqlExpr::Unary { expr, .. } => (false, expr.as_ref()),
        other => (false, other),
    };
    if let SqlExpr::Literal {
        value: Value::Number(text),
        ..
    } = inner
        && let Ok(n) = text.parse::<i64>()
    {
        return Ok(if negative { -n } else { n });
    }
    Err(err_at(expr, "substr positions must be integer literals"))
}

/// The common type of two operands; a literal adapts to the other side's type
/// when it converts exactly, so `amount > 100` never casts the column.
fn unify(
    left: &Node,
    right: &Node,
    rule: fn(&DataType, &DataType) -> Option<DataType>,
) -> Option<DataType> {
    let (lt, rt) = (left.data_type(), right.data_type());
    if lt == DataType::Null {
        return Some(rt);
    }
    if rt == DataType::Null {
        return Some(lt);
    }
    for (lit, other, other_ty) in [(right, left, &lt), (left, right, &rt)] {
        if let (Node::Literal(array), false) = (lit, other.is_literal())
            && literal_fits(array, other_ty)
        {
            return Some(other_ty.clone());
        }
    }
    rule(&lt, &rt)
}

fn literal_fits(array: &ArrayRef, to: &DataType) -> bool {
    let from = array.data_type();
    let sensible = (is_numeric(from) && is_numeric(to))
        || (is_string(from) && matches!(to, DataType::Timestamp(..) | DataType::Date32))
        || (is_string(from) && is_string(to));
    sensible
        && cast_scalar(array, to)
            .map(|cast| cast.null_count() == array.null_count() && round_trips(array, &cast))
            .unwrap_or(false)
}

/// An integer literal into a float column is fine; 2.5 into an int column is not.
fn round_trips(original: &ArrayRef, cast: &ArrayRef) -> bool {
    if !(original.data_type().is_floating() && cast.data_type().is_integer()) {
        return true;
    }
    cast_with_options(cast, original.data_type(), &strict())
        .map(|back| back.as_ref() == original.as_ref())
        .unwrap_or(false)
}

fn strict() -> CastOptions<'static> {
    CastOptions {
        safe: false,
        ..Default::default()
    }
}

fn cast_to(node: Node, to: &DataType) -> Node {
    if &node.data_type() == to {
        node
    } else {
        Node::Cast {
            expr: Box::new(node),
            to: to.clone(),
        }
    }
}

fn coerce(at: &SqlExpr, node: Node, to: &DataType) -> Result<Node, ExprError> {
    match &node {
        Node::Literal(array) if array.data_type() != to => {
            cast_literal(at, array, to).map(Node::Literal)
        }
        _ => Ok(cast_to(node, to)),
    }
}

/// A strict cast of a literal. Text into a zoned timestamp is parsed as an
/// instant (an offset or `Z`, else UTC) and then labelled with the zone: Arrow
/// cannot resolve zone names without chrono-tz, and the stored value is UTC anyway.
fn cast_scalar(array: &ArrayRef, to: &DataType) -> Result<ArrayRef, arrow_schema::ArrowError> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{
        TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
        TimestampSecondType,
    };
    use arrow_schema::TimeUnit;
    if let (true, DataType::Timestamp(unit, Some(zone))) = (is_string(array.data_type()), to) {
        let naive = cast_with_options(array, &DataType::Timestamp(*unit, None), &strict())?;
        let zone = zone.clone();
        return Ok(match unit {
            TimeUnit::Second => Arc::new(
                naive
                    .as_primitive::<TimestampSecondType>()
                    .clone()
                    .with_timezone(zone),
            ),
            TimeUnit::Millisecond => Arc::new(
                naive
                    .as_primitive::<TimestampMillisecondType>()
                    .clone()
                    .with_timezone(zone),
            ),
            TimeUnit::Microsecond => Arc::new(
                naive
                    .as_primitive::<TimestampMicrosecondType>()
                    .clone()
                    .with_timezone(zone),
            ),
            TimeUnit::Nanosecond => Arc::new(
                naive
                    .as_primitive::<TimestampNanosecondType>()
                    .clone()
                    .with_timezone(zone),
            ),
        });
    }
    cast_with_options(array, to, &strict())
}

fn cast_literal(at: &SqlExpr, array: &ArrayRef, to: &DataType) -> Result<ArrayRef, ExprError> {
    cast_scalar(array, to).map_err(|e| {
        err_at(
            at,
            format!("cannot convert literal to {}: {e}", type_name(to)),
        )
    })
}

fn literal(expr: &SqlExpr, value: &Value) -> Result<Node, ExprError> {
    let array: ArrayRef = match value {
        Value::Number(text) => {
            if let Ok(n) = text.parse::<i64>() {
                Arc::new(Int64Array::from(vec![n]))
            } else if text.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err_at(
                    expr,
                    format!("integer literal {text} does not fit int64"),
                ));
            } else {
                let f: f64 = text
                    .parse()
                    .map_err(|_| err_at(expr, format!("invalid number {text}")))?;
                Arc::new(Float64Array::from(vec![f]))
            }
        }
        Value::String(s) => Arc::new(StringArray::from(vec![s.clone()])),
        Value::Boolean(b) => Arc::new(BooleanArray::from(vec![*b])),
        Value::Null => Arc::new(NullArray::new(1)),
    };
    Ok(Node::Literal(array))
}

fn fold_negate(expr: &SqlExpr, array: &ArrayRef) -> Result<Node, ExprError> {
    arrow::compute::kernels::numeric::neg(array.as_ref())
        .map(Node::Literal)
        .map_err(|e| err_at(expr, format!("cannot negate literal: {e}")))
}

/// The Arrow type a SQL type name means in CAST. SQL spellings follow
/// PostgreSQL/DuckDB (`INT` = int32, `BIGINT` and `INT8` = int64, `REAL` = float32);
/// our own names (`utf8`, `int64`, `timestamp[us, UTC]`) work too.
pub fn sql_type(ty: &SqlType) -> Result<DataType, String> {
    // `timestamp[us, UTC]` is this project's spelling, not SQL's TIMESTAMP(p).
    if ty.text.contains('[') {
        return parse_type(&ty.text);
    }
    Ok(match ty.name.as_str() {
        "BOOLEAN" | "BOOL" => DataType::Boolean,
        "TINYINT" => DataType::Int8,
        "SMALLINT" | "INT2" | "INT16" => DataType::Int16,
        "INT" | "INTEGER" | "INT4" | "INT32" => DataType::Int32,
        "BIGINT" | "INT8" | "INT64" => DataType::Int64,
        "UINT8" => DataType::UInt8,
        "UINT16" => DataType::UInt16,
        "UINT32" => DataType::UInt32,
        "UINT64" => DataType::UInt64,
        "REAL" | "FLOAT4" | "FLOAT32" => DataType::Float32,
        "DOUBLE" | "DOUBLE PRECISION" | "FLOAT8" | "FLOAT64" | "FLOAT" => DataType::Float64,
        "VARCHAR" | "TEXT" | "STRING" | "CHAR" | "CHARACTER" | "CHARACTER VARYING"
        | "CHAR VARYING" => DataType::Utf8,
        "BYTEA" | "BINARY" | "VARBINARY" | "BLOB" => DataType::Binary,
        "DATE" | "DATE32" => DataType::Date32,
        name if name == "TIMESTAMP" || name.starts_with("TIMESTAMP WITH") => {
            DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, None)
        }
        _ => parse_type(&ty.text)?,
    })
}

/// Collects the column names `expr` reads; false for constructs not understood
/// (the caller then assumes every column is needed).
pub fn referenced_columns(expr: &SqlExpr, out: &mut std::collections::BTreeSet<String>) -> bool {
    let all = |exprs: &[&SqlExpr], out: &mut std::collections::BTreeSet<String>| {
        exprs.iter().all(|e| referenced_columns(e, out))
    };
    match expr {
        SqlExpr::Identifier { name, .. } => {
            out.insert(name.clone());
            true
        }
        SqlExpr::Literal { .. } => true,
        SqlExpr::Nested(e)
        | SqlExpr::Unary { expr: e, .. }
        | SqlExpr::IsNull { expr: e, .. }
        | SqlExpr::IsBool { expr: e, .. }
        | SqlExpr::Cast { expr: e, .. }
        | SqlExpr::Trim { expr: e, .. } => referenced_columns(e, out),
        SqlExpr::Binary { left, right, .. } => all(&[left, right], out),
        SqlExpr::Between {
            expr, low, high, ..
        } => all(&[expr, low, high], out),
        SqlExpr::Like { expr, pattern, .. } => all(&[expr, pattern], out),
        SqlExpr::In { expr, list, .. } => {
            referenced_columns(expr, out) && list.iter().all(|e| referenced_columns(e, out))
        }
        SqlExpr::Substring {
            expr, from, length, ..
        } => {
            referenced_columns(expr, out)
                && from.iter().all(|e| referenced_columns(e, out))
                && length.iter().all(|e| referenced_columns(e, out))
        }
        SqlExpr::Function { args, .. } => args.iter().all(|e| referenced_columns(e, out)),
        SqlExpr::Compound { .. }
        | SqlExpr::Wildcard { .. }
        | SqlExpr::Case { .. }
        | SqlExpr::IsOther { .. } => false,
    }
}
