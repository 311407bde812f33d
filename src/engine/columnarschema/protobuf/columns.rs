//! Arrow builders for decoded Protobuf messages, one node per column of the mapping
//! `proto_arrow` produces (semantics §3). A node is built from its Arrow field, and
//! converts prost-reflect values by their kind: enums become their symbol name (an
//! unknown number its decimal text), wrappers their scalar, `Timestamp` microseconds
//! (nanos truncated), `Struct`/`Value`/`ListValue` and recursive messages canonical
//! JSON text, maps their entries sorted by key.

use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Float32Builder, Float64Builder, Int32Builder, Int64Builder,
    StringBuilder, TimestampMicrosecondBuilder, UInt64Builder,
};
use arrow_array::{ArrayRef, ListArray, MapArray, StructArray};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Fields, TimeUnit};
use prost_reflect::{DynamicMessage, Kind, MapKey, ReflectMessage, Value};

use crate::engine::schema::protobuf::to_json;

/// Field metadata naming the wrapper message of a scalar column.
pub const WRAPPER_KEY: &str = "krabka.proto.wrapper";

/// One column (or nested child) being built.
enum Node {
    Bool(BooleanBuilder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    UInt64(UInt64Builder),
    Float32(Float32Builder),
    Float64(Float64Builder),
    Utf8(StringBuilder),
    Binary(BinaryBuilder),
    Timestamp(TimestampMicrosecondBuilder),
    Struct {
        fields: Fields,
        children: Vec<Column>,
        nulls: NullBufferBuilder,
    },
    List {
        item: FieldRef,
        child: Box<Column>,
        offsets: Vec<i32>,
        nulls: NullBufferBuilder,
    },
    Map {
        entries: FieldRef,
        key: Box<Column>,
        value: Box<Column>,
        offsets: Vec<i32>,
        nulls: NullBufferBuilder,
    },
}

/// A named column: errors name it by its dotted path.
pub struct Column {
    /// The field name, as the message's fields are matched.
    name: String,
    path: String,
    nullable: bool,
    /// A `google.protobuf.*Value` wrapper: a message value is unwrapped to its scalar.
    wrapper: bool,
    node: Node,
}

fn offsets_buffer(offsets: &mut Vec<i32>) -> OffsetBuffer<i32> {
    let taken = std::mem::replace(offsets, vec![0]);
    OffsetBuffer::new(ScalarBuffer::from(taken))
}

impl Column {
    /// The builder for `field`; `parent` is the dotted path of the enclosing column.
    pub fn new(field: &Field, parent: &str) -> Result<Column, String> {
        let path = if parent.is_empty() {
            field.name().clone()
        } else {
            format!("{parent}.{}", field.name())
        };
        let node = match field.data_type() {
            DataType::Boolean => Node::Bool(BooleanBuilder::new()),
            DataType::Int32 => Node::Int32(Int32Builder::new()),
            DataType::Int64 => Node::Int64(Int64Builder::new()),
            DataType::UInt64 => Node::UInt64(UInt64Builder::new()),
            DataType::Float32 => Node::Float32(Float32Builder::new()),
            DataType::Float64 => Node::Float64(Float64Builder::new()),
            DataType::Utf8 => Node::Utf8(StringBuilder::new()),
            DataType::Binary => Node::Binary(BinaryBuilder::new()),
            DataType::Timestamp(TimeUnit::Microsecond, tz) => {
                Node::Timestamp(TimestampMicrosecondBuilder::new().with_timezone_opt(tz.clone()))
            }
            DataType::Struct(fields) => Node::Struct {
                fields: fields.clone(),
                children: fields
                    .iter()
                    .map(|f| Column::new(f, &path))
                    .collect::<Result<_, _>>()?,
                nulls: NullBufferBuilder::new(0),
            },
            DataType::List(item) => Node::List {
                item: item.clone(),
                child: Box::new(Column::new(item, &path)?),
                offsets: vec![0],
                nulls: NullBufferBuilder::new(0),
            },
            DataType::Map(entries, _) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return Err(format!("map column {path} without key/value entries"));
                };
                let [key, value] = kv.iter().collect::<Vec<_>>()[..] else {
                    return Err(format!("map column {path} without key/value entries"));
                };
                Node::Map {
                    entries: entries.clone(),
                    key: Box::new(Column::new(key, &path)?),
                    value: Box::new(Column::new(value, &path)?),
                    offsets: vec![0],
                    nulls: NullBufferBuilder::new(0),
                }
            }
            other => return Err(format!("unsupported Arrow type {other} for column {path}")),
        };
        Ok(Column {
            name: field.name().clone(),
            path,
            nullable: field.is_nullable(),
            wrapper: field.metadata().contains_key(WRAPPER_KEY),
            node,
        })
    }

    /// An explicit null: refused for a non-nullable column.
    pub fn append_null(&mut self) -> Result<(), String> {
        if !self.nullable {
            return Err(format!("required Protobuf field is null: {}", self.path));
        }
        self.append_null_or_default();
        Ok(())
    }

    /// A field the message does not carry: null where nullable, else its default
    /// (zero, empty, a struct of defaults) as proto3 reads an absent field.
    pub fn append_absent(&mut self) {
        self.append_null_or_default();
    }

    fn append_null_or_default(&mut self) {
        let null = self.nullable;
        match &mut self.node {
            Node::Bool(b) => {
                if null {
                    b.append_null()
                } else {
                    b.append_value(false)
                }
            }
            Node::Int32(b) => push(b, null, 0),
            Node::Int64(b) => push(b, null, 0),
            Node::UInt64(b) => push(b, null, 0),
            Node::Float32(b) => push(b, null, 0.0),
            Node::Float64(b) => push(b, null, 0.0),
            Node::Timestamp(b) => push(b, null, 0),
            Node::Utf8(b) => {
                if null {
                    b.append_null()
                } else {
                    b.append_value("")
                }
            }
            Node::Binary(b) => {
                if null {
                    b.append_null()
                } else {
                    b.append_value(b"")
                }
            }
            Node::Struct {
                children, nulls, ..
            } => {
                // Children of a null struct still need a slot: defaults keep
                // non-nullable children free of unmasked nulls.
                for c in children {
                    c.append_null_or_default();
                }
                nulls.append(!null);
            }
            Node::List { offsets, nulls, .. } | Node::Map { offsets, nulls, .. } => {
                offsets.push(*offsets.last().unwrap_or(&0));
                nulls.append(!null);
            }
        }
    }

    /// Appends the message's fields as this struct's children (or, at the top level,
    /// as the columns), matched by field name.
    pub fn append_fields(columns: &mut [Column], msg: &DynamicMessage) -> Result<(), String> {
        let desc = msg.descriptor();
        for c in columns {
            match desc.get_field_by_name(&c.name) {
                Some(fd) if fd.supports_presence() && !msg.has_field(&fd) => c.append_absent(),
                Some(fd) => c.append(&msg.get_field(&fd), &fd.kind())?,
                None => c.append_absent(),
            }
        }
        Ok(())
    }

    /// Appends one value of `kind` (for a repeated field: the list, with the element kind;
    /// for a map field: the map, with the entry message kind).
    pub fn append(&mut self, value: &Value, kind: &Kind) -> Result<(), String> {
        let path = &self.path;
        let mismatch = || {
            format!(
                "Protobuf field {path}: a {} value does not fit the column type",
                value_name(value)
            )
        };
        match (&mut self.node, value) {
            (Node::Struct { .. } | Node::List { .. } | Node::Map { .. }, _) => {}
            (Node::Timestamp(b), Value::Message(m)) => {
                let seconds = field_i64(m, "seconds");
                let nanos = field_i64(m, "nanos");
                let micros = seconds
                    .checked_mul(1_000_000)
                    .and_then(|s| s.checked_add(nanos.div_euclid(1000)))
                    .ok_or_else(|| format!("timestamp overflow in column {path}"))?;
                b.append_value(micros);
                return Ok(());
            }
            (Node::Utf8(b), Value::Message(m)) if !self.wrapper => {
                let json = to_json(m).map_err(|e| format!("Protobuf field {path}: {e}"))?;
                b.append_value(json.to_string());
                return Ok(());
            }
            // A wrapper: its scalar is field 1.
            (_, Value::Message(m)) => {
                let Some(fd) = m.descriptor().get_field(1) else {
                    return Err(mismatch());
                };
                let inner = m.get_field(&fd);
                return self.append(&inner, &fd.kind());
            }
            _ => {}
        }
        match (&mut self.node, value) {
            (Node::Bool(b), Value::Bool(v)) => b.append_value(*v),
            (Node::Int32(b), Value::I32(v)) => b.append_value(*v),
            (Node::Int64(b), Value::I64(v)) => b.append_value(*v),
            (Node::Int64(b), Value::I32(v)) => b.append_value(i64::from(*v)),
            (Node::Int64(b), Value::U32(v)) => b.append_value(i64::from(*v)),
            (Node::UInt64(b), Value::U64(v)) => b.append_value(*v),
            (Node::UInt64(b), Value::U32(v)) => b.append_value(u64::from(*v)),
            (Node::Float32(b), Value::F32(v)) => b.append_value(*v),
            (Node::Float64(b), Value::F64(v)) => b.append_value(*v),
            (Node::Float64(b), Value::F32(v)) => b.append_value(f64::from(*v)),
            (Node::Utf8(b), Value::String(v)) => b.append_value(v),
            (Node::Utf8(b), Value::EnumNumber(n)) => match kind {
                Kind::Enum(e) => match e.get_value(*n) {
                    Some(symbol) => b.append_value(symbol.name()),
                    None => b.append_value(n.to_string()),
                },
                _ => b.append_value(n.to_string()),
            },
            (Node::Binary(b), Value::Bytes(v)) => b.append_value(v),
            (
                Node::Struct {
                    children, nulls, ..
                },
                Value::Message(m),
            ) => {
                Column::append_fields(children, m)?;
                nulls.append_non_null();
            }
            (
                Node::List {
                    child,
                    offsets,
                    nulls,
                    ..
                },
                Value::List(items),
            ) => {
                for item in items {
                    child.append(item, kind)?;
                }
                let end = offsets.last().unwrap_or(&0) + items.len() as i32;
                offsets.push(end);
                nulls.append_non_null();
            }
            (
                Node::Map {
                    key: key_col,
                    value: value_col,
                    offsets,
                    nulls,
                    ..
                },
                Value::Map(entries),
            ) => {
                let Kind::Message(entry) = kind else {
                    return Err(mismatch());
                };
                let key_kind = entry.map_entry_key_field().kind();
                let value_kind = entry.map_entry_value_field().kind();
                // Sorted by key (D2): the same map always gives the same rows.
                let mut sorted: Vec<(&MapKey, &Value)> = entries.iter().collect();
                sorted.sort_by(|a, b| a.0.cmp(b.0));
                for (k, v) in &sorted {
                    key_col.append(&Value::from((*k).clone()), &key_kind)?;
                    value_col.append(v, &value_kind)?;
                }
                let end = offsets.last().unwrap_or(&0) + sorted.len() as i32;
                offsets.push(end);
                nulls.append_non_null();
            }
            _ => return Err(mismatch()),
        }
        Ok(())
    }

    /// The built array; the builders start over empty.
    pub fn finish(&mut self) -> Result<ArrayRef, String> {
        let path = self.path.clone();
        let wrap = |e: arrow_schema::ArrowError| format!("column {path}: {e}");
        Ok(match &mut self.node {
            Node::Bool(b) => Arc::new(b.finish()),
            Node::Int32(b) => Arc::new(b.finish()),
            Node::Int64(b) => Arc::new(b.finish()),
            Node::UInt64(b) => Arc::new(b.finish()),
            Node::Float32(b) => Arc::new(b.finish()),
            Node::Float64(b) => Arc::new(b.finish()),
            Node::Utf8(b) => Arc::new(b.finish()),
            Node::Binary(b) => Arc::new(b.finish()),
            Node::Timestamp(b) => Arc::new(b.finish()),
            Node::Struct {
                fields,
                children,
                nulls,
            } => {
                let len = nulls.len();
                let arrays = children
                    .iter_mut()
                    .map(Column::finish)
                    .collect::<Result<Vec<_>, _>>()?;
                Arc::new(
                    StructArray::try_new_with_length(fields.clone(), arrays, nulls.finish(), len)
                        .map_err(wrap)?,
                )
            }
            Node::List {
                item,
                child,
                offsets,
                nulls,
            } => {
                let values = child.finish()?;
                Arc::new(
                    ListArray::try_new(
                        item.clone(),
                        offsets_buffer(offsets),
                        values,
                        nulls.finish(),
                    )
                    .map_err(wrap)?,
                )
            }
            Node::Map {
                entries,
                key,
                value,
                offsets,
                nulls,
            } => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return Err(format!("map column {path} without key/value entries"));
                };
                let struct_array =
                    StructArray::try_new(kv.clone(), vec![key.finish()?, value.finish()?], None)
                        .map_err(wrap)?;
                Arc::new(
                    MapArray::try_new(
                        entries.clone(),
                        offsets_buffer(offsets),
                        struct_array,
                        nulls.finish(),
                        false,
                    )
                    .map_err(wrap)?,
                )
            }
        })
    }
}

/// Appends a primitive: null when `null`, else `default`.
fn push<T: arrow_array::ArrowPrimitiveType>(
    b: &mut arrow_array::builder::PrimitiveBuilder<T>,
    null: bool,
    default: T::Native,
) {
    if null {
        b.append_null()
    } else {
        b.append_value(default)
    }
}

/// An integer field of a message by name (`Timestamp.seconds`, `.nanos`), 0 when absent.
fn field_i64(m: &DynamicMessage, name: &str) -> i64 {
    match m.get_field_by_name(name).as_deref() {
        Some(Value::I64(v)) => *v,
        Some(Value::I32(v)) => i64::from(*v),
        _ => 0,
    }
}

fn value_name(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "bool",
        Value::I32(_) => "int32",
        Value::I64(_) => "int64",
        Value::U32(_) => "uint32",
        Value::U64(_) => "uint64",
        Value::F32(_) => "float",
        Value::F64(_) => "double",
        Value::String(_) => "string",
        Value::Bytes(_) => "bytes",
        Value::EnumNumber(_) => "enum",
        Value::Message(_) => "message",
        Value::List(_) => "repeated",
        Value::Map(_) => "map",
    }
}
