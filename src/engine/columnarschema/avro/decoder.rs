//! The Avro → Arrow mapping (semantics §3) compiled into a tree of column nodes
//! that decode Avro binary straight into Arrow builders, with no intermediate
//! value: this is the `tail` hot path. Nullability comes only from unions with
//! null; a union of several non-null branches is a struct of branches; a record
//! reached again while it is being expanded becomes Utf8 Avro JSON text.

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, BooleanBuilder, FixedSizeBinaryBuilder, StringBuilder};
use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Decimal128Type, Decimal256Type, Float32Type, Float64Type,
    Int32Type, Int64Type, Time32MillisecondType, Time64MicrosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, validate_decimal_precision_and_scale,
};
use arrow_array::{ArrayRef, ListArray, MapArray, PrimitiveArray, StringArray, StructArray};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer, ScalarBuffer, i256};
use arrow_schema::{DataType, Field, FieldRef, Fields, Metadata, TimeUnit};

use crate::engine::columnar::reserved::JSON_KEY;
use crate::engine::columnarschema::avro::cursor::{Cursor, DecodeError, DecodeResult};
use crate::engine::columnarschema::avro::json_text::avro_json;
use crate::engine::columnarschema::avro::schema::{AvroSchema, AvroType, NamedType};

pub const LOGICAL_KEY: &str = "krabka.avro.logical";
pub const FIXED_KEY: &str = "krabka.avro.fixed";
pub const ENUM_KEY: &str = "krabka.avro.enum";
pub const ENUM_SYMBOLS_KEY: &str = "krabka.avro.enum.symbols";
pub const UNION_KEY: &str = "krabka.avro.union";

/// The column of a non-record top-level schema.
pub const VALUE_COLUMN: &str = "value";

/// Largest item count of one array or map block whose items take no bytes.
const MAX_EMPTY_ITEMS: usize = 1 << 20;

/// A schema the mapping refuses (messages of semantics §3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MappingError(pub String);

/// One column (or nested child) being decoded.
enum Node {
    Bool(BooleanBuilder),
    Int(Prim<Int32Type>),
    Long(Prim<Int64Type>),
    Float(Prim<Float32Type>),
    Double(Prim<Float64Type>),
    Bytes(BinaryBuilder),
    /// UTF-8 is validated once per batch at `finish` (a per-value check costs more).
    Str(RawStrings),
    Date(Prim<Date32Type>),
    TimeMillis(Prim<Time32MillisecondType>),
    TimeMicros(Prim<Time64MicrosecondType>),
    TsMillis(Prim<TimestampMillisecondType>),
    TsMicros(Prim<TimestampMicrosecondType>),
    Dec128 {
        b: Prim<Decimal128Type>,
        fixed: Option<usize>,
    },
    Dec256 {
        b: Prim<Decimal256Type>,
        fixed: Option<usize>,
    },
    Fixed {
        b: FixedSizeBinaryBuilder,
        size: usize,
    },
    /// Symbols are valid UTF-8 already; the strings buffer still checks once per batch.
    Enum {
        b: RawStrings,
        symbols: Arc<[String]>,
    },
    Record {
        fields: Fields,
        children: Vec<Node>,
        nulls: NullBufferBuilder,
    },
    List {
        item_field: FieldRef,
        offsets: Vec<i32>,
        item: Box<Node>,
        nulls: NullBufferBuilder,
        item_min_size: usize,
    },
    Map {
        entries_field: FieldRef,
        entry_fields: Fields,
        offsets: Vec<i32>,
        keys: StringBuilder,
        values: Box<Node>,
        nulls: NullBufferBuilder,
    },
    /// A union with exactly one non-null branch (and maybe null).
    Optional {
        null_branch: Option<usize>,
        value_branch: usize,
        branches: usize,
        inner: Box<Node>,
    },
    /// A union of several non-null branches: a struct with one child per branch.
    Union {
        fields: Fields,
        /// Avro branch index → child index (`None` for the null branch).
        branch_child: Vec<Option<usize>>,
        children: Vec<Node>,
        nulls: NullBufferBuilder,
    },
    /// A recursive reference: Avro JSON text.
    Json {
        b: StringBuilder,
        schema: Arc<AvroSchema>,
        ty: AvroType,
    },
}

fn meta(pairs: &[(&str, String)]) -> Metadata {
    let mut m = Metadata::new();
    for (k, v) in pairs {
        m.insert(*k, v.clone());
    }
    m
}

/// A primitive column gathered in a plain vector whose capacity carries over from one
/// batch to the next (an Arrow builder starts every batch empty and regrows).
struct Prim<T: ArrowPrimitiveType> {
    values: Vec<T::Native>,
    nulls: NullBufferBuilder,
    data_type: DataType,
}

impl<T: ArrowPrimitiveType> Prim<T> {
    fn new(data_type: DataType) -> Self {
        Prim {
            values: Vec::new(),
            nulls: NullBufferBuilder::new(0),
            data_type,
        }
    }

    #[inline(always)]
    fn append_value(&mut self, v: T::Native) {
        self.values.push(v);
        self.nulls.append_non_null();
    }

    fn append_null(&mut self) {
        self.values.push(T::Native::default());
        self.nulls.append_null();
    }

    fn finish(&mut self) -> Result<ArrayRef, String> {
        let rows = self.values.len();
        let values = std::mem::replace(&mut self.values, Vec::with_capacity(rows));
        let array = PrimitiveArray::<T>::try_new(ScalarBuffer::from(values), self.nulls.finish())
            .map_err(|e| e.to_string())?;
        Ok(Arc::new(array.with_data_type(self.data_type.clone())))
    }
}

/// String values gathered as raw bytes; `finish` validates the whole buffer at once.
struct RawStrings {
    values: Vec<u8>,
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
}

impl RawStrings {
    fn new() -> Self {
        RawStrings {
            values: Vec::with_capacity(1 << 16),
            offsets: vec![0],
            nulls: NullBufferBuilder::new(0),
        }
    }

    #[inline(always)]
    fn append(&mut self, bytes: &[u8]) -> DecodeResult<()> {
        self.values.extend_from_slice(bytes);
        self.offsets.push(offset(self.values.len())?);
        self.nulls.append_non_null();
        Ok(())
    }

    fn append_null(&mut self) {
        self.offsets.push(*self.offsets.last().unwrap_or(&0));
        self.nulls.append_null();
    }

    fn finish(&mut self) -> Result<ArrayRef, String> {
        // The next batch likely has the same shape: start with this one's capacity.
        let mut next_offsets = Vec::with_capacity(self.offsets.len());
        next_offsets.push(0);
        let next_values = Vec::with_capacity(self.values.len().max(1 << 12));
        let values = std::mem::replace(&mut self.values, next_values);
        let offsets = std::mem::replace(&mut self.offsets, next_offsets);
        let array = StringArray::try_new(
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            values.into(),
            self.nulls.finish(),
        )
        .map_err(|_| "invalid UTF-8 in Avro string".to_string())?;
        Ok(Arc::new(array))
    }
}

/// A compiled type: Arrow type, field metadata, nullability and the decoding node.
struct Compiled {
    data_type: DataType,
    metadata: Metadata,
    nullable: bool,
    node: Node,
}

impl Compiled {
    fn plain(data_type: DataType, node: Node) -> Self {
        Compiled {
            data_type,
            metadata: Metadata::new(),
            nullable: false,
            node,
        }
    }

    fn field(&self, name: &str) -> Field {
        Field::new(name, self.data_type.clone(), self.nullable).with_metadata(self.metadata.clone())
    }
}

/// The union branch name: full name of a named type, else the Avro type name.
fn branch_name(schema: &AvroSchema, ty: &AvroType) -> String {
    match ty {
        AvroType::Null => "null",
        AvroType::Boolean => "boolean",
        AvroType::Int | AvroType::Date | AvroType::TimeMillis => "int",
        AvroType::Long
        | AvroType::TimeMicros
        | AvroType::TimestampMillis
        | AvroType::TimestampMicros
        | AvroType::LocalTimestampMillis
        | AvroType::LocalTimestampMicros => "long",
        AvroType::Float => "float",
        AvroType::Double => "double",
        AvroType::Bytes | AvroType::Decimal { .. } => "bytes",
        AvroType::String | AvroType::Uuid => "string",
        AvroType::Array(_) => "array",
        AvroType::Map(_) => "map",
        AvroType::Union(_) => "union",
        AvroType::Named(i) => return schema.named(*i).name().to_string(),
    }
    .to_string()
}

fn decimal(
    precision: usize,
    scale: usize,
    fixed: Option<usize>,
    field: &str,
) -> Result<Compiled, MappingError> {
    if precision > 76 {
        return Err(MappingError(format!(
            "Avro decimal precision above 76 is unsupported in field {field}: {precision}"
        )));
    }
    let s = i8::try_from(scale).map_err(|_| {
        MappingError(format!(
            "unsupported Avro decimal scale in field {field}: {scale}"
        ))
    })?;
    let p = precision as u8;
    let bad = |e: arrow_schema::ArrowError| MappingError(format!("field {field}: {e}"));
    Ok(if precision <= 38 {
        validate_decimal_precision_and_scale::<Decimal128Type>(p, s).map_err(bad)?;
        let dt = DataType::Decimal128(p, s);
        Compiled::plain(
            dt.clone(),
            Node::Dec128 {
                b: Prim::new(dt),
                fixed,
            },
        )
    } else {
        validate_decimal_precision_and_scale::<Decimal256Type>(p, s).map_err(bad)?;
        let dt = DataType::Decimal256(p, s);
        Compiled::plain(
            dt.clone(),
            Node::Dec256 {
                b: Prim::new(dt),
                fixed,
            },
        )
    })
}

/// A primitive column of type `data_type`.
fn prim<T: ArrowPrimitiveType>(data_type: DataType, node: fn(Prim<T>) -> Node) -> Compiled {
    Compiled::plain(data_type.clone(), node(Prim::new(data_type)))
}

/// Minimum encoded size of a value of this node (0 means items may take no bytes).
fn min_size(node: &Node) -> usize {
    match node {
        Node::Fixed { size, .. } => *size,
        Node::Dec128 { fixed: Some(n), .. } | Node::Dec256 { fixed: Some(n), .. } => *n,
        Node::Record { children, .. } => children.iter().map(min_size).sum(),
        Node::Float(_) => 4,
        Node::Double(_) => 8,
        _ => 1,
    }
}

fn compile(
    schema: &Arc<AvroSchema>,
    ty: &AvroType,
    field: &str,
    stack: &mut Vec<usize>,
) -> Result<Compiled, MappingError> {
    let utc: Option<Arc<str>> = Some("UTC".into());
    Ok(match ty {
        AvroType::Null => {
            return Err(MappingError(format!(
                "Avro field has only null branches: {field}"
            )));
        }
        AvroType::Boolean => Compiled::plain(DataType::Boolean, Node::Bool(BooleanBuilder::new())),
        AvroType::Int => prim(DataType::Int32, Node::Int),
        AvroType::Long => prim(DataType::Int64, Node::Long),
        AvroType::Float => prim(DataType::Float32, Node::Float),
        AvroType::Double => prim(DataType::Float64, Node::Double),
        AvroType::Bytes => Compiled::plain(DataType::Binary, Node::Bytes(BinaryBuilder::new())),
        AvroType::String => Compiled::plain(DataType::Utf8, Node::Str(RawStrings::new())),
        AvroType::Uuid => Compiled {
            metadata: meta(&[(LOGICAL_KEY, "uuid".into())]),
            ..Compiled::plain(DataType::Utf8, Node::Str(RawStrings::new()))
        },
        AvroType::Date => prim(DataType::Date32, Node::Date),
        AvroType::TimeMillis => prim(DataType::Time32(TimeUnit::Millisecond), Node::TimeMillis),
        AvroType::TimeMicros => prim(DataType::Time64(TimeUnit::Microsecond), Node::TimeMicros),
        AvroType::TimestampMillis => prim(
            DataType::Timestamp(TimeUnit::Millisecond, utc),
            Node::TsMillis,
        ),
        AvroType::TimestampMicros => prim(
            DataType::Timestamp(TimeUnit::Microsecond, utc),
            Node::TsMicros,
        ),
        AvroType::LocalTimestampMillis => prim(
            DataType::Timestamp(TimeUnit::Millisecond, None),
            Node::TsMillis,
        ),
        AvroType::LocalTimestampMicros => prim(
            DataType::Timestamp(TimeUnit::Microsecond, None),
            Node::TsMicros,
        ),
        AvroType::Decimal { precision, scale } => decimal(*precision, *scale, None, field)?,
        AvroType::Array(item) => compile_array(schema, item, field, stack)?,
        AvroType::Map(values) => compile_map(schema, values, field, stack)?,
        AvroType::Union(branches) => compile_union(schema, branches, field, stack)?,
        AvroType::Named(index) => compile_named(schema, ty, *index, field, stack)?,
    })
}

fn compile_array(
    schema: &Arc<AvroSchema>,
    item: &AvroType,
    field: &str,
    stack: &mut Vec<usize>,
) -> Result<Compiled, MappingError> {
    let c = compile(schema, item, field, stack)?;
    let item_field = Arc::new(c.field("item"));
    let item_min_size = min_size(&c.node);
    Ok(Compiled::plain(
        DataType::List(item_field.clone()),
        Node::List {
            item_field,
            offsets: vec![0],
            item: Box::new(c.node),
            nulls: NullBufferBuilder::new(0),
            item_min_size,
        },
    ))
}

fn compile_map(
    schema: &Arc<AvroSchema>,
    values: &AvroType,
    field: &str,
    stack: &mut Vec<usize>,
) -> Result<Compiled, MappingError> {
    let c = compile(schema, values, field, stack)?;
    let entry_fields = Fields::from(vec![
        Field::new("key", DataType::Utf8, false),
        c.field("value"),
    ]);
    let entries_field = Arc::new(Field::new(
        "entries",
        DataType::Struct(entry_fields.clone()),
        false,
    ));
    Ok(Compiled::plain(
        DataType::Map(entries_field.clone(), false),
        Node::Map {
            entries_field,
            entry_fields,
            offsets: vec![0],
            keys: StringBuilder::new(),
            values: Box::new(c.node),
            nulls: NullBufferBuilder::new(0),
        },
    ))
}

/// A union: a nullable column for one non-null branch, a struct of branches otherwise.
fn compile_union(
    schema: &Arc<AvroSchema>,
    branches: &[AvroType],
    field: &str,
    stack: &mut Vec<usize>,
) -> Result<Compiled, MappingError> {
    let null_branch = branches.iter().position(|b| *b == AvroType::Null);
    let non_null: Vec<(usize, &AvroType)> = branches
        .iter()
        .enumerate()
        .filter(|(_, b)| **b != AvroType::Null)
        .collect();
    Ok(match non_null.len() {
        0 => {
            return Err(MappingError(format!(
                "Avro field has only null branches: {field}"
            )));
        }
        1 => {
            let (value_branch, inner) = non_null[0];
            let c = compile(schema, inner, field, stack)?;
            Compiled {
                data_type: c.data_type,
                metadata: c.metadata,
                nullable: null_branch.is_some(),
                node: Node::Optional {
                    null_branch,
                    value_branch,
                    branches: branches.len(),
                    inner: Box::new(c.node),
                },
            }
        }
        _ => {
            let mut fields = Vec::new();
            let mut children = Vec::new();
            let mut branch_child = vec![None; branches.len()];
            for (i, b) in non_null {
                let name = branch_name(schema, b);
                if fields.iter().any(|f: &Field| f.name() == &name) {
                    return Err(MappingError(format!(
                        "Avro union branch names collide in field {field}"
                    )));
                }
                let c = compile(schema, b, field, stack)?;
                fields.push(c.field(&name).with_nullable(true));
                branch_child[i] = Some(children.len());
                children.push(c.node);
            }
            let fields = Fields::from(fields);
            Compiled {
                data_type: DataType::Struct(fields.clone()),
                metadata: meta(&[(UNION_KEY, "true".into())]),
                nullable: null_branch.is_some(),
                node: Node::Union {
                    fields,
                    branch_child,
                    children,
                    nulls: NullBufferBuilder::new(0),
                },
            }
        }
    })
}

/// A named type: a record (a JSON string column when it recurses), an enum or a fixed.
fn compile_named(
    schema: &Arc<AvroSchema>,
    ty: &AvroType,
    index: usize,
    field: &str,
    stack: &mut Vec<usize>,
) -> Result<Compiled, MappingError> {
    Ok(match schema.named(index) {
        NamedType::Record { fields, .. } => {
            if stack.contains(&index) {
                return Ok(Compiled {
                    metadata: meta(&[(JSON_KEY, "true".into())]),
                    ..Compiled::plain(
                        DataType::Utf8,
                        Node::Json {
                            b: StringBuilder::new(),
                            schema: schema.clone(),
                            ty: ty.clone(),
                        },
                    )
                });
            }
            stack.push(index);
            let mut arrow_fields = Vec::with_capacity(fields.len());
            let mut children = Vec::with_capacity(fields.len());
            for f in fields {
                let c = compile(schema, &f.ty, &f.name, stack)?;
                arrow_fields.push(c.field(&f.name));
                children.push(c.node);
            }
            stack.pop();
            let fields = Fields::from(arrow_fields);
            Compiled::plain(
                DataType::Struct(fields.clone()),
                Node::Record {
                    fields,
                    children,
                    nulls: NullBufferBuilder::new(0),
                },
            )
        }
        NamedType::Enum { name, symbols } => Compiled {
            metadata: meta(&[
                (ENUM_KEY, name.clone()),
                (ENUM_SYMBOLS_KEY, symbols.join(",")),
            ]),
            ..Compiled::plain(
                DataType::Utf8,
                Node::Enum {
                    b: RawStrings::new(),
                    symbols: symbols.clone().into(),
                },
            )
        },
        NamedType::Fixed {
            name,
            size,
            decimal: dec,
        } => match dec {
            Some((p, s)) => decimal(*p, *s, Some(*size), field)?,
            None => {
                let width = i32::try_from(*size)
                    .map_err(|_| MappingError(format!("fixed {name} is too large")))?;
                Compiled {
                    metadata: meta(&[(FIXED_KEY, name.clone())]),
                    ..Compiled::plain(
                        DataType::FixedSizeBinary(width),
                        Node::Fixed {
                            b: FixedSizeBinaryBuilder::new(width),
                            size: *size,
                        },
                    )
                }
            }
        },
    })
}

/// Two's complement big-endian bytes → i128 (sign-extended), or `None` if too wide.
#[inline]
fn be_i128(bytes: &[u8]) -> Option<i128> {
    // Decimals are mostly a few bytes: folding them in beats a variable-length copy.
    if bytes.len() <= 16 {
        let Some((&first, rest)) = bytes.split_first() else {
            return Some(0);
        };
        let mut v = i128::from(first as i8);
        for &b in rest {
            v = (v << 8) | i128::from(b);
        }
        return Some(v);
    }
    let negative = bytes[0] & 0x80 != 0;
    let (head, tail) = bytes.split_at(bytes.len() - 16);
    let ext = if negative { 0xff } else { 0x00 };
    if head.iter().any(|&b| b != ext) || (tail[0] & 0x80 != 0) != negative {
        return None;
    }
    be_i128(tail)
}

fn be_i256(bytes: &[u8]) -> Option<i256> {
    if bytes.len() > 32 {
        let negative = bytes[0] & 0x80 != 0;
        let ext = if negative { 0xff } else { 0x00 };
        let (head, tail) = bytes.split_at(bytes.len() - 32);
        if head.iter().any(|&b| b != ext) || (tail[0] & 0x80 != 0) != negative {
            return None;
        }
        return be_i256(tail);
    }
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let mut buf = [if negative { 0xff } else { 0x00 }; 32];
    buf[32 - bytes.len()..].copy_from_slice(bytes);
    Some(i256::from_be_bytes(buf))
}

fn decimal_overflow() -> DecodeError {
    DecodeError("Avro decimal value does not fit its precision".into())
}

impl Node {
    /// Decodes one value. Leaves are decoded inline: this is inlined into the loops
    /// over a row's columns and a record's fields, so a row costs one call per
    /// nested record instead of one (with a full prologue) per field.
    #[inline(always)]
    fn decode(&mut self, c: &mut Cursor<'_>) -> DecodeResult<()> {
        match self {
            Node::Bool(b) => b.append_value(c.read_bool()?),
            Node::Int(b) => b.append_value(c.read_int()?),
            Node::Long(b) => b.append_value(c.read_long()?),
            Node::Float(b) => b.append_value(c.read_f32()?),
            Node::Double(b) => b.append_value(c.read_f64()?),
            Node::Bytes(b) => b.append_value(c.read_bytes()?),
            Node::Str(b) => b.append(c.read_bytes()?)?,
            Node::Date(b) => b.append_value(c.read_int()?),
            Node::TimeMillis(b) => b.append_value(c.read_int()?),
            Node::TimeMicros(b) => b.append_value(c.read_long()?),
            Node::TsMillis(b) => b.append_value(c.read_long()?),
            Node::TsMicros(b) => b.append_value(c.read_long()?),
            Node::Dec128 { b, fixed } => {
                let bytes = match fixed {
                    Some(n) => c.read_fixed(*n)?,
                    None => c.read_bytes()?,
                };
                b.append_value(be_i128(bytes).ok_or_else(decimal_overflow)?);
            }
            Node::Dec256 { b, fixed } => {
                let bytes = match fixed {
                    Some(n) => c.read_fixed(*n)?,
                    None => c.read_bytes()?,
                };
                b.append_value(be_i256(bytes).ok_or_else(decimal_overflow)?);
            }
            Node::Fixed { b, size } => {
                let bytes = c.read_fixed(*size)?;
                b.append_value(bytes)
                    .map_err(|e| DecodeError(format!("cannot append fixed value: {e}")))?;
            }
            Node::Enum { b, symbols } => {
                let i = c.read_int()?;
                let s = usize::try_from(i)
                    .ok()
                    .and_then(|i| symbols.get(i))
                    .ok_or_else(|| DecodeError(format!("invalid Avro enum index {i}")))?;
                b.append(s.as_bytes())?;
            }
            Node::Optional {
                null_branch,
                value_branch,
                branches,
                inner,
            } => {
                let i = c.read_long()?;
                if i == *value_branch as i64 {
                    // The usual optional string stays inline too.
                    match inner.as_mut() {
                        Node::Str(b) => b.append(c.read_bytes()?)?,
                        other => other.decode_out_of_line(c)?,
                    }
                } else if null_branch.is_some_and(|n| n as i64 == i) {
                    match inner.as_mut() {
                        Node::Str(b) => b.append_null(),
                        other => other.append_null(),
                    }
                } else {
                    return Err(bad_branch(i, *branches));
                }
            }
            _ => self.decode_nested(c)?,
        }
        Ok(())
    }

    #[inline(never)]
    fn decode_out_of_line(&mut self, c: &mut Cursor<'_>) -> DecodeResult<()> {
        self.decode(c)
    }

    /// Records, lists, maps, unions of several branches and recursive references.
    #[inline(never)]
    fn decode_nested(&mut self, c: &mut Cursor<'_>) -> DecodeResult<()> {
        match self {
            Node::Record {
                children, nulls, ..
            } => {
                for child in children.iter_mut() {
                    child.decode(c)?;
                }
                nulls.append_non_null();
            }
            Node::List {
                offsets,
                item,
                nulls,
                item_min_size,
                ..
            } => {
                let mut total = *offsets.last().unwrap_or(&0) as usize;
                loop {
                    let n = c.read_block_count()?;
                    if n == 0 {
                        break;
                    }
                    check_count(n, *item_min_size, c)?;
                    for _ in 0..n {
                        item.decode_out_of_line(c)?;
                    }
                    total += n;
                }
                offsets.push(offset(total)?);
                nulls.append_non_null();
            }
            Node::Map {
                offsets,
                keys,
                values,
                nulls,
                ..
            } => {
                let mut total = *offsets.last().unwrap_or(&0) as usize;
                loop {
                    let n = c.read_block_count()?;
                    if n == 0 {
                        break;
                    }
                    check_count(n, 1, c)?;
                    for _ in 0..n {
                        keys.append_value(c.read_str()?);
                        values.decode_out_of_line(c)?;
                    }
                    total += n;
                }
                offsets.push(offset(total)?);
                nulls.append_non_null();
            }
            Node::Union {
                branch_child,
                children,
                nulls,
                ..
            } => {
                let i = c.read_long()?;
                let slot = usize::try_from(i)
                    .ok()
                    .and_then(|i| branch_child.get(i))
                    .ok_or_else(|| bad_branch(i, branch_child.len()))?;
                match slot {
                    None => {
                        children.iter_mut().for_each(Node::append_null);
                        nulls.append_null();
                    }
                    Some(chosen) => {
                        for (k, child) in children.iter_mut().enumerate() {
                            if k == *chosen {
                                child.decode_out_of_line(c)?;
                            } else {
                                child.append_null();
                            }
                        }
                        nulls.append_non_null();
                    }
                }
            }
            Node::Json { b, schema, ty } => {
                let v = avro_json(schema, ty, c)?;
                b.append_value(v.to_string());
            }
            // Leaves and optionals never get here: `decode` handles them inline.
            _ => return self.decode_out_of_line(c),
        }
        Ok(())
    }

    fn append_null(&mut self) {
        match self {
            Node::Bool(b) => b.append_null(),
            Node::Int(b) => b.append_null(),
            Node::Long(b) => b.append_null(),
            Node::Float(b) => b.append_null(),
            Node::Double(b) => b.append_null(),
            Node::Bytes(b) => b.append_null(),
            Node::Str(b) => b.append_null(),
            Node::Date(b) => b.append_null(),
            Node::TimeMillis(b) => b.append_null(),
            Node::TimeMicros(b) => b.append_null(),
            Node::TsMillis(b) => b.append_null(),
            Node::TsMicros(b) => b.append_null(),
            Node::Dec128 { b, .. } => b.append_null(),
            Node::Dec256 { b, .. } => b.append_null(),
            Node::Fixed { b, .. } => b.append_null(),
            Node::Enum { b, .. } => b.append_null(),
            Node::Json { b, .. } => b.append_null(),
            Node::Record {
                children, nulls, ..
            }
            | Node::Union {
                children, nulls, ..
            } => {
                children.iter_mut().for_each(Node::append_null);
                nulls.append_null();
            }
            Node::List { offsets, nulls, .. } | Node::Map { offsets, nulls, .. } => {
                offsets.push(*offsets.last().unwrap_or(&0));
                nulls.append_null();
            }
            Node::Optional { inner, .. } => inner.append_null(),
        }
    }

    fn finish(&mut self) -> Result<ArrayRef, String> {
        let e = |e: arrow_schema::ArrowError| e.to_string();
        Ok(match self {
            Node::Bool(b) => Arc::new(b.finish()),
            Node::Int(b) => b.finish()?,
            Node::Long(b) => b.finish()?,
            Node::Float(b) => b.finish()?,
            Node::Double(b) => b.finish()?,
            Node::Bytes(b) => Arc::new(b.finish()),
            Node::Str(b) => b.finish()?,
            Node::Date(b) => b.finish()?,
            Node::TimeMillis(b) => b.finish()?,
            Node::TimeMicros(b) => b.finish()?,
            Node::TsMillis(b) => b.finish()?,
            Node::TsMicros(b) => b.finish()?,
            Node::Dec128 { b, .. } => b.finish()?,
            Node::Dec256 { b, .. } => b.finish()?,
            Node::Fixed { b, .. } => Arc::new(b.finish()),
            Node::Enum { b, .. } => b.finish()?,
            Node::Json { b, .. } => Arc::new(b.finish()),
            Node::Optional { inner, .. } => inner.finish()?,
            Node::Record {
                fields,
                children,
                nulls,
            }
            | Node::Union {
                fields,
                children,
                nulls,
                ..
            } => {
                let len = nulls.len();
                let arrays = children
                    .iter_mut()
                    .map(Node::finish)
                    .collect::<Result<Vec<_>, _>>()?;
                Arc::new(
                    StructArray::try_new_with_length(fields.clone(), arrays, nulls.finish(), len)
                        .map_err(e)?,
                )
            }
            Node::List {
                item_field,
                offsets,
                item,
                nulls,
                ..
            } => {
                let offs =
                    OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])));
                let values = item.finish()?;
                Arc::new(
                    ListArray::try_new(item_field.clone(), offs, values, nulls.finish())
                        .map_err(e)?,
                )
            }
            Node::Map {
                entries_field,
                entry_fields,
                offsets,
                keys,
                values,
                nulls,
            } => {
                let offs =
                    OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])));
                let keys: ArrayRef = Arc::new(keys.finish());
                let values = values.finish()?;
                let entries = StructArray::try_new(entry_fields.clone(), vec![keys, values], None)
                    .map_err(e)?;
                Arc::new(
                    MapArray::try_new(entries_field.clone(), offs, entries, nulls.finish(), false)
                        .map_err(e)?,
                )
            }
        })
    }
}

fn bad_branch(i: i64, n: usize) -> DecodeError {
    DecodeError(format!(
        "invalid Avro union branch index {i} ({n} branches)"
    ))
}

fn offset(total: usize) -> DecodeResult<i32> {
    i32::try_from(total).map_err(|_| DecodeError("too many Avro items in one batch".into()))
}

fn check_count(n: usize, min_size: usize, c: &Cursor<'_>) -> DecodeResult<()> {
    let limit = c
        .remaining()
        .checked_div(min_size)
        .unwrap_or(MAX_EMPTY_ITEMS);
    if n > limit {
        return Err(DecodeError(format!("invalid Avro block count {n}")));
    }
    Ok(())
}

/// A compiled row decoder: the top-level columns of one reader schema.
pub struct RowDecoder {
    fields: Vec<FieldRef>,
    columns: Vec<Node>,
    rows: usize,
}

impl RowDecoder {
    /// Compiles a schema: a top-level record's fields become columns, any other
    /// top-level type the single column `value`.
    pub fn new(schema: Arc<AvroSchema>) -> Result<Self, MappingError> {
        let mut fields = Vec::new();
        let mut columns = Vec::new();
        let mut stack = Vec::new();
        match &schema.root {
            AvroType::Named(i) if matches!(schema.named(*i), NamedType::Record { .. }) => {
                let NamedType::Record { fields: defs, .. } = schema.named(*i) else {
                    unreachable!("checked above");
                };
                stack.push(*i);
                for f in defs {
                    let c = compile(&schema, &f.ty, &f.name, &mut stack)?;
                    fields.push(Arc::new(c.field(&f.name)));
                    columns.push(c.node);
                }
            }
            other => {
                let c = compile(&schema, other, VALUE_COLUMN, &mut stack)?;
                fields.push(Arc::new(c.field(VALUE_COLUMN)));
                columns.push(c.node);
            }
        }
        Ok(RowDecoder {
            fields,
            columns,
            rows: 0,
        })
    }

    /// The Arrow fields of the columns, fixed at construction.
    pub fn fields(&self) -> &[FieldRef] {
        &self.fields
    }

    /// Decodes one Avro body (the whole of `body` must be consumed) into one row.
    pub fn decode(&mut self, body: &[u8]) -> DecodeResult<()> {
        let mut c = Cursor::new(body);
        for (i, col) in self.columns.iter_mut().enumerate() {
            if let Err(e) = col.decode(&mut c) {
                return Err(field_error(&self.fields[i], body.len() - c.remaining(), e));
            }
        }
        if c.remaining() != 0 {
            return Err(DecodeError(format!(
                "{} trailing bytes after the Avro value",
                c.remaining()
            )));
        }
        self.rows += 1;
        Ok(())
    }

    /// Appends a row of nulls (a tombstone); a non-nullable column refuses it.
    pub fn append_null(&mut self) -> DecodeResult<()> {
        if let Some(f) = self.fields.iter().find(|f| !f.is_nullable()) {
            return Err(DecodeError(format!(
                "required Avro field is null: {}",
                f.name()
            )));
        }
        self.columns.iter_mut().for_each(Node::append_null);
        self.rows += 1;
        Ok(())
    }

    /// The columns of every row decoded since the last finish.
    pub fn finish(&mut self) -> Result<Vec<(FieldRef, ArrayRef)>, String> {
        self.rows = 0;
        let arrays = self
            .columns
            .iter_mut()
            .map(Node::finish)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(self.fields.iter().cloned().zip(arrays).collect())
    }

    pub fn rows(&self) -> usize {
        self.rows
    }
}

/// Names the top-level field and the byte offset in the body where decoding failed; built
/// only on the error path, so the row loop stays as lean as it was.
#[cold]
fn field_error(field: &FieldRef, offset: usize, e: DecodeError) -> DecodeError {
    DecodeError(format!(
        "field {:?} (near byte {offset} of the body): {}",
        field.name(),
        e.0
    ))
}

#[cfg(test)]
mod decimal_tests {
    use super::be_i128;

    #[test]
    fn big_endian_decimal_bytes_sign_extend_and_refuse_values_wider_than_128_bits() {
        assert_eq!(be_i128(&[]), Some(0));
        assert_eq!(be_i128(&[0x7f]), Some(127));
        assert_eq!(be_i128(&[0x80]), Some(-128));
        assert_eq!(be_i128(&[0xff, 0x38]), Some(-200));
        assert_eq!(be_i128(&[0x00, 0xc8]), Some(200));
        assert_eq!(be_i128(&i128::MAX.to_be_bytes()), Some(i128::MAX));
        assert_eq!(be_i128(&i128::MIN.to_be_bytes()), Some(i128::MIN));
        let mut wide = vec![0xff; 4];
        wide.extend_from_slice(&(-5i128).to_be_bytes());
        assert_eq!(be_i128(&wide), Some(-5));
        let mut wide = vec![0x00; 3];
        wide.extend_from_slice(&i128::MAX.to_be_bytes());
        assert_eq!(be_i128(&wide), Some(i128::MAX));
        // A redundant sign byte that disagrees with the value's top bit is too wide.
        let mut bad = vec![0x00];
        bad.extend_from_slice(&(-1i128).to_be_bytes());
        assert_eq!(be_i128(&bad), None);
        let mut bad = vec![0x01];
        bad.extend_from_slice(&5i128.to_be_bytes());
        assert_eq!(be_i128(&bad), None);
    }
}
