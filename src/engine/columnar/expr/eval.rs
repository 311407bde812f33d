//! Column-at-a-time evaluation of a typed expression with Arrow kernels.
//! Literals stay one-element scalars until a kernel broadcasts them.

use std::sync::Arc;

use arrow::compute::kernels::{cmp, comparison, numeric, zip::zip};
use arrow::compute::{
    CastOptions, and_kleene, cast_with_options, is_not_null, is_null, not, or_kleene,
};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, Scalar, UInt32Array};
use arrow_schema::{ArrowError, DataType};

use super::compile::{ArithOp, CmpOp, Func, Node};
use super::strings;
use super::types::type_name;
use super::{EvalError, arrow_error};

/// A value during evaluation: a full column or a one-element scalar.
#[derive(Debug, Clone)]
pub(super) enum Val {
    Array(ArrayRef),
    Scalar(ArrayRef),
}

impl Val {
    fn array(&self) -> &ArrayRef {
        match self {
            Val::Array(a) | Val::Scalar(a) => a,
        }
    }

    fn is_scalar(&self) -> bool {
        matches!(self, Val::Scalar(_))
    }

    /// A full column of `len` rows.
    pub(super) fn into_array(self, len: usize) -> Result<ArrayRef, EvalError> {
        match self {
            Val::Array(a) => Ok(a),
            Val::Scalar(a) => broadcast(&a, len),
        }
    }
}

fn broadcast(scalar: &ArrayRef, len: usize) -> Result<ArrayRef, EvalError> {
    let indices = UInt32Array::from(vec![0u32; len]);
    arrow::compute::take(scalar.as_ref(), &indices, None).map_err(arrow_error)
}

pub fn evaluate(node: &Node, batch: &RecordBatch) -> Result<ArrayRef, EvalError> {
    eval(node, batch)?.into_array(batch.num_rows())
}

/// Applies a binary kernel, keeping scalar-with-scalar results scalar.
fn binary(
    left: &Val,
    right: &Val,
    kernel: impl Fn(&dyn arrow_array::Datum, &dyn arrow_array::Datum) -> Result<ArrayRef, ArrowError>,
) -> Result<Val, EvalError> {
    let out = match (left, right) {
        (Val::Scalar(l), Val::Scalar(r)) => {
            kernel(&Scalar::new(l.clone()), &Scalar::new(r.clone()))
        }
        (Val::Scalar(l), Val::Array(r)) => kernel(&Scalar::new(l.clone()), r),
        (Val::Array(l), Val::Scalar(r)) => kernel(l, &Scalar::new(r.clone())),
        (Val::Array(l), Val::Array(r)) => kernel(l, r),
    }
    .map_err(arrow_error)?;
    Ok(if left.is_scalar() && right.is_scalar() {
        Val::Scalar(out)
    } else {
        Val::Array(out)
    })
}

fn boolean(value: &Val, len: usize) -> Result<BooleanArray, EvalError> {
    let array = value.clone().into_array(len)?;
    match array.data_type() {
        DataType::Boolean => Ok(array
            .as_any()
            .downcast_ref::<BooleanArray>()
            .expect("boolean")
            .clone()),
        DataType::Null => Ok(BooleanArray::new_null(len)),
        other => Err(EvalError(format!(
            "expected boolean, got {}",
            type_name(other)
        ))),
    }
}

fn same_shape(like: &[&Val], array: ArrayRef) -> Val {
    if like.iter().all(|v| v.is_scalar()) {
        Val::Scalar(array)
    } else {
        Val::Array(array)
    }
}

/// Evaluates one node over a batch. Long because it is one arm per expression node, each
/// a few lines: the match is the evaluator's table.
pub(super) fn eval(node: &Node, batch: &RecordBatch) -> Result<Val, EvalError> {
    let len = batch.num_rows();
    match node {
        Node::Column { name, ty } => {
            let column = batch
                .column_by_name(name)
                .ok_or_else(|| EvalError(format!("Arrow column does not exist: {name}")))?;
            if let DataType::Dictionary(_, values) = column.data_type()
                && values.as_ref() == ty
            {
                let unpacked = arrow::compute::cast(column, ty)
                    .map_err(|e| EvalError(format!("column `{name}`: {e}")))?;
                return Ok(Val::Array(unpacked));
            }
            if column.data_type() != ty {
                return Err(EvalError(format!(
                    "column `{name}` is {} in this batch but the expression was checked for {}",
                    type_name(column.data_type()),
                    type_name(ty)
                )));
            }
            Ok(Val::Array(column.clone()))
        }
        Node::Literal(array) => Ok(Val::Scalar(array.clone())),
        Node::Compare { op, left, right } => {
            let (l, r) = (eval(left, batch)?, eval(right, batch)?);
            binary(&l, &r, |a, b| {
                let out = match op {
                    CmpOp::Eq => cmp::eq(a, b),
                    CmpOp::NotEq => cmp::neq(a, b),
                    CmpOp::Lt => cmp::lt(a, b),
                    CmpOp::LtEq => cmp::lt_eq(a, b),
                    CmpOp::Gt => cmp::gt(a, b),
                    CmpOp::GtEq => cmp::gt_eq(a, b),
                }?;
                Ok(Arc::new(out) as ArrayRef)
            })
        }
        Node::Arith { op, left, right } => {
            let (l, r) = (eval(left, batch)?, eval(right, batch)?);
            binary(&l, &r, |a, b| match op {
                ArithOp::Add => numeric::add(a, b),
                ArithOp::Sub => numeric::sub(a, b),
                ArithOp::Mul => numeric::mul(a, b),
                ArithOp::Div => numeric::div(a, b),
                ArithOp::Rem => numeric::rem(a, b),
            })
        }
        Node::Negate(inner) => {
            let v = eval(inner, batch)?;
            let out = numeric::neg(v.array().as_ref()).map_err(arrow_error)?;
            Ok(same_shape(&[&v], out))
        }
        Node::And(l, r) | Node::Or(l, r) => {
            let (lv, rv) = (eval(l, batch)?, eval(r, batch)?);
            let n = if lv.is_scalar() && rv.is_scalar() {
                1
            } else {
                len
            };
            let (la, ra) = (boolean(&lv, n)?, boolean(&rv, n)?);
            let out = if matches!(node, Node::And(..)) {
                and_kleene(&la, &ra)
            } else {
                or_kleene(&la, &ra)
            }
            .map_err(arrow_error)?;
            Ok(same_shape(&[&lv, &rv], Arc::new(out)))
        }
        Node::Not(inner) => {
            let v = eval(inner, batch)?;
            let n = if v.is_scalar() { 1 } else { len };
            let out = not(&boolean(&v, n)?).map_err(arrow_error)?;
            Ok(same_shape(&[&v], Arc::new(out)))
        }
        Node::IsNull { expr, negated } => {
            let v = eval(expr, batch)?;
            let out = if *negated {
                is_not_null(v.array().as_ref())
            } else {
                is_null(v.array().as_ref())
            }
            .map_err(arrow_error)?;
            Ok(same_shape(&[&v], Arc::new(out)))
        }
        Node::Like {
            expr,
            pattern,
            negated,
            case_insensitive,
        } => {
            let v = eval(expr, batch)?;
            let pattern = Val::Scalar(pattern.clone());
            binary(&v, &pattern, |a, b| {
                let out = match (negated, case_insensitive) {
                    (false, false) => comparison::like(a, b),
                    (true, false) => comparison::nlike(a, b),
                    (false, true) => comparison::ilike(a, b),
                    (true, true) => comparison::nilike(a, b),
                }?;
                Ok(Arc::new(out) as ArrayRef)
            })
        }
        Node::Cast { expr, to } => {
            let v = eval(expr, batch)?;
            let options = CastOptions {
                safe: false,
                ..Default::default()
            };
            let out = cast_with_options(v.array().as_ref(), to, &options).map_err(arrow_error)?;
            Ok(same_shape(&[&v], out))
        }
        Node::Call { func, args, .. } => {
            let values = args
                .iter()
                .map(|a| eval(a, batch))
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<&Val> = values.iter().collect();
            let all_scalar = refs.iter().all(|v| v.is_scalar());
            let n = if all_scalar { 1 } else { len };
            let arrays = values
                .iter()
                .map(|v| v.clone().into_array(n))
                .collect::<Result<Vec<_>, _>>()?;
            let out = match func {
                Func::Coalesce => coalesce(&arrays)?,
                other => strings::call(other, &arrays)?,
            };
            Ok(same_shape(&refs, out))
        }
    }
}

/// The first non-null argument per row, right to left with `zip`.
fn coalesce(arrays: &[ArrayRef]) -> Result<ArrayRef, EvalError> {
    let mut result = arrays.last().expect("at least one argument").clone();
    for array in arrays.iter().rev().skip(1) {
        let mask = is_not_null(array.as_ref()).map_err(arrow_error)?;
        result = zip(&mask, array, &result).map_err(arrow_error)?;
    }
    Ok(result)
}
