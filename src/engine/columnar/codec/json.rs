//! The JSON row bridge (semantics §3): JSON values → typed columns, either from a
//! JSON Schema (`properties` in order, `required` → non-nullable, local `$ref`s) or
//! inferred from the data. Inference: object keys become columns in first-appearance
//! order across the batch, a non-object row is one column `value`, the type comes
//! from the first non-null sample, and the schema inferred from the first non-empty
//! batch is kept for every later batch (sticky).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Float64Builder, Int64Builder, StringBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Int8Type, Int16Type, Int32Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray,
};
use arrow_schema::{DataType, Field, FieldRef};
use base64::Engine as _;
use serde_json::{Map, Value};

use crate::engine::columnar::codec::ordered_json::Json;

use crate::engine::columnar::codec::raw::VALUE_COLUMN;
use crate::engine::columnar::codec::{CodecError, PayloadColumns, RowEncoder, ValueDecoder};
use crate::engine::columnar::reserved::JSON_KEY;

/// Field metadata: a Binary column that is base64 on the JSON side.
pub const BINARY_KEY: &str = "krabka.binary";

/// The Arrow shape of one JSON column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonKind {
    Int64,
    Float64,
    Bool,
    Utf8,
    /// Utf8 holding JSON text (`krabka.json=true`).
    JsonText,
    /// Binary, base64 on the JSON side (`krabka.binary=true`).
    Base64,
}

impl JsonKind {
    fn field(self, name: &str, nullable: bool) -> Field {
        let (dt, meta) = match self {
            JsonKind::Int64 => (DataType::Int64, None),
            JsonKind::Float64 => (DataType::Float64, None),
            JsonKind::Bool => (DataType::Boolean, None),
            JsonKind::Utf8 => (DataType::Utf8, None),
            JsonKind::JsonText => (DataType::Utf8, Some(JSON_KEY)),
            JsonKind::Base64 => (DataType::Binary, Some(BINARY_KEY)),
        };
        let f = Field::new(name, dt, nullable);
        match meta {
            Some(k) => f.with_metadata(arrow_schema::Metadata::new().with(k, "true")),
            None => f,
        }
    }

    fn of_sample(v: &Json) -> JsonKind {
        match v {
            Json::String(_) | Json::Null => JsonKind::Utf8,
            Json::Bool(_) => JsonKind::Bool,
            Json::Number(n) if n.is_i64() || n.is_u64() => JsonKind::Int64,
            Json::Number(_) => JsonKind::Float64,
            Json::Object(_) | Json::Array(_) => JsonKind::JsonText,
        }
    }
}

/// One column of a JSON row schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonColumn {
    pub name: String,
    pub kind: JsonKind,
    pub nullable: bool,
}

/// A JSON row schema: object columns, or one scalar column `value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonRowSchema {
    pub columns: Vec<JsonColumn>,
    /// Rows are scalars (or arrays) held in the single column `value`.
    pub scalar: bool,
}

impl JsonRowSchema {
    pub fn fields(&self) -> Vec<FieldRef> {
        self.columns
            .iter()
            .map(|c| Arc::new(c.kind.field(&c.name, c.nullable)))
            .collect()
    }

    /// Columns from a JSON Schema text (`JSONRowBridgeFromJSONSchema`).
    pub fn from_json_schema(text: &str) -> Result<Self, CodecError> {
        let root: Value = serde_json::from_str(text)
            .map_err(|e| CodecError::invalid(format!("invalid JSON Schema: {e}")))?;
        let top = resolve_ref(&root, &root)?;
        let (kind, nullable) = kind_of_schema(&root, top)?;
        let is_object = type_names(top).first().is_some_and(|t| t == "object")
            || (type_names(top).is_empty() && top.get("properties").is_some());
        if !is_object {
            return Ok(JsonRowSchema {
                columns: vec![JsonColumn {
                    name: VALUE_COLUMN.to_string(),
                    kind,
                    nullable,
                }],
                scalar: true,
            });
        }
        let Some(Value::Object(props)) = top.get("properties") else {
            return Err(CodecError::invalid("object JSON Schema has no properties"));
        };
        // Declared order: serde_json's map is sorted, so take the key order from an ordered parse.
        let ordered = Json::parse(text.as_bytes())
            .map_err(|e| CodecError::invalid(format!("invalid JSON Schema: {e}")))?;
        let mut ordered_top = &ordered;
        for _ in 0..64 {
            match ordered_top.get("$ref") {
                Some(Json::String(r)) => {
                    ordered_top = r
                        .strip_prefix('#')
                        .and_then(|p| ordered.pointer(p))
                        .ok_or_else(|| {
                            CodecError::invalid(format!("unresolved JSON Schema reference {r}"))
                        })?;
                }
                _ => break,
            }
        }
        let order: Vec<&str> = ordered_top
            .get("properties")
            .map(Json::keys)
            .unwrap_or_default();
        let required: Vec<&str> = top
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut columns = Vec::with_capacity(props.len());
        for name in order {
            let Some(prop) = props.get(name) else {
                continue;
            };
            let name = &name.to_string();
            let prop = resolve_ref(&root, prop)?;
            let (kind, type_nullable) = kind_of_schema(&root, prop)?;
            columns.push(JsonColumn {
                name: name.clone(),
                kind,
                nullable: !required.contains(&name.as_str()) || type_nullable,
            });
        }
        Ok(JsonRowSchema {
            columns,
            scalar: false,
        })
    }

    /// Infers a schema from the parsed rows of one batch; `None` when every row is null.
    fn infer(rows: &[Json]) -> Option<Self> {
        let first = rows.iter().find(|v| !v.is_null())?;
        if !matches!(first, Json::Object(_)) {
            let kind = JsonKind::of_sample(first);
            return Some(JsonRowSchema {
                columns: vec![JsonColumn {
                    name: VALUE_COLUMN.to_string(),
                    kind,
                    nullable: true,
                }],
                scalar: true,
            });
        }
        let mut order: Vec<String> = Vec::new();
        let mut kinds: HashMap<String, Option<JsonKind>> = HashMap::new();
        for row in rows {
            if let Json::Object(map) = row {
                for (k, v) in map {
                    let slot = kinds.entry(k.clone()).or_insert_with(|| {
                        order.push(k.clone());
                        None
                    });
                    if slot.is_none() && !v.is_null() {
                        *slot = Some(JsonKind::of_sample(v));
                    }
                }
            }
        }
        let columns = order
            .into_iter()
            .map(|name| {
                let kind = kinds[&name].unwrap_or(JsonKind::Utf8);
                JsonColumn {
                    name,
                    kind,
                    nullable: true,
                }
            })
            .collect();
        Some(JsonRowSchema {
            columns,
            scalar: false,
        })
    }
}

fn type_names(schema: &Value) -> Vec<String> {
    match schema.get("type") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// Follows a local `$ref` (`#/…`, JSON pointer) to its target.
fn resolve_ref<'a>(root: &'a Value, schema: &'a Value) -> Result<&'a Value, CodecError> {
    let mut current = schema;
    for _ in 0..64 {
        let Some(r) = current.get("$ref").and_then(Value::as_str) else {
            return Ok(current);
        };
        let target = r
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
            .ok_or_else(|| CodecError::invalid(format!("unresolved JSON Schema reference {r}")))?;
        current = target;
    }
    Err(CodecError::invalid(
        "unresolved JSON Schema reference (cycle)",
    ))
}

/// The column kind of a property schema and whether its type lists `null`.
fn kind_of_schema(_root: &Value, schema: &Value) -> Result<(JsonKind, bool), CodecError> {
    let names = type_names(schema);
    let nullable = names.iter().any(|t| t == "null");
    let first = names.iter().find(|t| *t != "null").map(String::as_str);
    let kind = match first {
        Some("integer") => JsonKind::Int64,
        Some("number") => JsonKind::Float64,
        Some("boolean") => JsonKind::Bool,
        Some("object") | Some("array") => JsonKind::JsonText,
        Some("string")
            if schema.get("contentEncoding").and_then(Value::as_str) == Some("base64") =>
        {
            JsonKind::Base64
        }
        _ => JsonKind::Utf8,
    };
    Ok((kind, nullable))
}

/// Writes one JSON value into a column of the given kind (semantics §3 coercion).
fn append_value(
    kind: JsonKind,
    builder: &mut ColumnBuilder,
    column: &JsonColumn,
    v: &Json,
) -> Result<(), CodecError> {
    if v.is_null() {
        if !column.nullable {
            return Err(CodecError::invalid(format!(
                "required JSON field is null: {}",
                column.name
            )));
        }
        builder.append_null();
        return Ok(());
    }
    let mismatch = || {
        CodecError::invalid(format!(
            "cannot convert JSON value {} to {kind:?} in column {}",
            v.to_text(),
            column.name
        ))
    };
    match (kind, builder) {
        (JsonKind::Int64, ColumnBuilder::Int64(b)) => {
            let Json::Number(n) = v else {
                return Err(mismatch());
            };
            match n.as_i64() {
                Some(i) => b.append_value(i),
                None if n.is_u64() => {
                    return Err(CodecError::invalid(format!("integer overflow: {n}")));
                }
                None => return Err(mismatch()),
            }
        }
        (JsonKind::Float64, ColumnBuilder::Float64(b)) => match v {
            Json::Number(n) => b.append_value(n.as_f64().ok_or_else(mismatch)?),
            _ => return Err(mismatch()),
        },
        (JsonKind::Bool, ColumnBuilder::Bool(b)) => match v {
            Json::Bool(x) => b.append_value(*x),
            _ => return Err(mismatch()),
        },
        (JsonKind::Utf8, ColumnBuilder::Utf8(b)) => match v {
            Json::String(s) => b.append_value(s),
            other => b.append_value(other.to_text()),
        },
        (JsonKind::JsonText, ColumnBuilder::Utf8(b)) => b.append_value(v.to_text()),
        (JsonKind::Base64, ColumnBuilder::Binary(b)) => {
            let Json::String(text) = v else {
                return Err(mismatch());
            };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| {
                    CodecError::invalid(format!("column {}: invalid base64: {e}", column.name))
                })?;
            b.append_value(bytes)
        }
        _ => return Err(mismatch()),
    }
    Ok(())
}

#[derive(Debug)]
enum ColumnBuilder {
    Int64(Int64Builder),
    Float64(Float64Builder),
    Bool(BooleanBuilder),
    Utf8(StringBuilder),
    Binary(BinaryBuilder),
}

impl ColumnBuilder {
    fn new(kind: JsonKind) -> Self {
        match kind {
            JsonKind::Int64 => ColumnBuilder::Int64(Int64Builder::new()),
            JsonKind::Float64 => ColumnBuilder::Float64(Float64Builder::new()),
            JsonKind::Bool => ColumnBuilder::Bool(BooleanBuilder::new()),
            JsonKind::Utf8 | JsonKind::JsonText => ColumnBuilder::Utf8(StringBuilder::new()),
            JsonKind::Base64 => ColumnBuilder::Binary(BinaryBuilder::new()),
        }
    }

    fn append_null(&mut self) {
        match self {
            ColumnBuilder::Int64(b) => b.append_null(),
            ColumnBuilder::Float64(b) => b.append_null(),
            ColumnBuilder::Bool(b) => b.append_null(),
            ColumnBuilder::Utf8(b) => b.append_null(),
            ColumnBuilder::Binary(b) => b.append_null(),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            ColumnBuilder::Int64(b) => Arc::new(b.finish()),
            ColumnBuilder::Float64(b) => Arc::new(b.finish()),
            ColumnBuilder::Bool(b) => Arc::new(b.finish()),
            ColumnBuilder::Utf8(b) => Arc::new(b.finish()),
            ColumnBuilder::Binary(b) => Arc::new(b.finish()),
        }
    }
}

/// Decodes JSON values (UTF-8 JSON text) into columns.
#[derive(Debug, Default)]
pub struct JsonDecoder {
    /// Fixed (from a JSON Schema) or sticky (inferred from the first non-empty batch).
    schema: Option<JsonRowSchema>,
    rows: Vec<Json>,
}

impl JsonDecoder {
    /// A decoder that infers its schema from the first non-empty batch.
    pub fn inferring() -> Self {
        JsonDecoder::default()
    }

    /// A decoder whose columns come from a JSON Schema.
    pub fn with_schema(schema: JsonRowSchema) -> Self {
        JsonDecoder {
            schema: Some(schema),
            rows: Vec::new(),
        }
    }

    pub fn schema(&self) -> Option<&JsonRowSchema> {
        self.schema.as_ref()
    }

    /// Builds the columns of `rows` under `schema`.
    pub fn build(schema: &JsonRowSchema, rows: &[Json]) -> Result<PayloadColumns, CodecError> {
        let fields = schema.fields();
        let mut builders: Vec<ColumnBuilder> = schema
            .columns
            .iter()
            .map(|c| ColumnBuilder::new(c.kind))
            .collect();
        let null = Json::Null;
        for row in rows {
            for (i, column) in schema.columns.iter().enumerate() {
                let v = if schema.scalar {
                    row
                } else {
                    row.get(&column.name).unwrap_or(&null)
                };
                append_value(column.kind, &mut builders[i], column, v)?;
            }
        }
        Ok(fields
            .into_iter()
            .zip(builders.iter_mut().map(ColumnBuilder::finish))
            .collect())
    }
}

impl ValueDecoder for JsonDecoder {
    fn append(&mut self, value: Option<&[u8]>) -> Result<usize, CodecError> {
        let v = match value {
            None => Json::Null,
            Some(bytes) => Json::parse(bytes).map_err(|e| {
                CodecError::invalid(format!("invalid JSON value: {e}{}", framed_hint(bytes)))
            })?,
        };
        // Check the row now so a failure names this record, not the batch.
        if let Some(schema) = &self.schema {
            Self::build(schema, std::slice::from_ref(&v))?;
        }
        self.rows.push(v);
        Ok(1)
    }

    fn finish(&mut self) -> Result<PayloadColumns, CodecError> {
        let rows = std::mem::take(&mut self.rows);
        if self.schema.is_none() {
            self.schema = JsonRowSchema::infer(&rows);
        }
        match &self.schema {
            Some(schema) => Self::build(schema, &rows),
            None => {
                // Every row so far is null: one Utf8 column `value` of nulls, schema not fixed yet.
                let field = Arc::new(Field::new(VALUE_COLUMN, DataType::Utf8, true));
                let mut b = StringBuilder::new();
                rows.iter().for_each(|_| b.append_null());
                Ok(vec![(field, Arc::new(b.finish()))])
            }
        }
    }

    fn reset(&mut self) {
        self.rows.clear();
    }
}

/// Bytes that start like a Confluent registry frame (magic byte 0, a 4-byte schema
/// id) are not plain JSON: say so, with the id, and name the formats that read them.
fn framed_hint(bytes: &[u8]) -> String {
    match bytes {
        [0, a, b, c, d, ..] => format!(
            " (the bytes start with the Confluent magic byte 0 and schema id {}: a registry-framed value; read it with json-sr, avro or protobuf)",
            u32::from_be_bytes([*a, *b, *c, *d])
        ),
        _ => String::new(),
    }
}

/// Converts one cell of a JSON-bridge column back to a JSON value.
pub fn cell_to_json(column: &dyn Array, field: &Field, row: usize) -> Result<Value, CodecError> {
    if column.is_null(row) {
        return Ok(Value::Null);
    }
    let any = column.as_any();
    if let Some(a) = any.downcast_ref::<Int64Array>() {
        return Ok(Value::from(a.value(row)));
    }
    if let Some(a) = any.downcast_ref::<Float64Array>() {
        return Ok(serde_json::Number::from_f64(a.value(row)).map_or(Value::Null, Value::Number));
    }
    if let Some(a) = any.downcast_ref::<BooleanArray>() {
        return Ok(Value::Bool(a.value(row)));
    }
    if let Some(a) = any.downcast_ref::<StringArray>() {
        let text = a.value(row);
        if field.metadata().get(JSON_KEY).is_some_and(|v| v == "true") {
            return serde_json::from_str(text).map_err(|e| {
                CodecError::invalid(format!("cannot convert Arrow row {row} to JSON: {e}"))
            });
        }
        return Ok(Value::String(text.to_string()));
    }
    if let Some(a) = any.downcast_ref::<BinaryArray>() {
        return Ok(Value::String(
            base64::engine::general_purpose::STANDARD.encode(a.value(row)),
        ));
    }
    // Narrower integers and float32 (Avro int/float, declared columns) are plain JSON numbers too.
    let number = match column.data_type() {
        DataType::Int8 => Some(Value::from(column.as_primitive::<Int8Type>().value(row))),
        DataType::Int16 => Some(Value::from(column.as_primitive::<Int16Type>().value(row))),
        DataType::Int32 => Some(Value::from(column.as_primitive::<Int32Type>().value(row))),
        DataType::UInt8 => Some(Value::from(column.as_primitive::<UInt8Type>().value(row))),
        DataType::UInt16 => Some(Value::from(column.as_primitive::<UInt16Type>().value(row))),
        DataType::UInt32 => Some(Value::from(column.as_primitive::<UInt32Type>().value(row))),
        DataType::UInt64 => Some(Value::from(column.as_primitive::<UInt64Type>().value(row))),
        DataType::Float32 => Some(
            serde_json::Number::from_f64(f64::from(
                column.as_primitive::<Float32Type>().value(row),
            ))
            .map_or(Value::Null, Value::Number),
        ),
        _ => None,
    };
    if let Some(number) = number {
        return Ok(number);
    }
    Err(CodecError::invalid(format!(
        "cannot convert Arrow row {row} to JSON: unsupported type {}",
        column.data_type()
    )))
}

/// Writes rows back as compact JSON: an object in column order, or the scalar `value`.
#[derive(Debug, Clone)]
pub struct JsonEncoder {
    pub schema: JsonRowSchema,
}

impl RowEncoder for JsonEncoder {
    fn encode_row(&self, batch: &RecordBatch, row: usize) -> Result<Option<Vec<u8>>, CodecError> {
        let value = if self.schema.scalar {
            let (idx, field) = batch
                .schema()
                .column_with_name(VALUE_COLUMN)
                .map(|(i, f)| (i, f.clone()))
                .ok_or_else(|| {
                    CodecError::invalid(format!("Arrow batch has no column {VALUE_COLUMN}"))
                })?;
            cell_to_json(batch.column(idx).as_ref(), &field, row)?
        } else {
            let mut map = Map::new();
            for c in &self.schema.columns {
                let schema = batch.schema();
                let (idx, field) = schema.column_with_name(&c.name).ok_or_else(|| {
                    CodecError::invalid(format!("Arrow batch has no column {}", c.name))
                })?;
                map.insert(
                    c.name.clone(),
                    cell_to_json(batch.column(idx).as_ref(), field, row)?,
                );
            }
            Value::Object(map)
        };
        Ok(Some(value.to_string().into_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(d: &mut JsonDecoder, rows: &[&str]) -> PayloadColumns {
        for r in rows {
            d.append(Some(r.as_bytes())).unwrap();
        }
        d.finish().unwrap()
    }

    #[test]
    fn inferred_columns_follow_first_appearance_and_first_non_null_type() {
        let mut d = JsonDecoder::inferring();
        let cols = decode(
            &mut d,
            &[r#"{"a":null,"b":1}"#, r#"{"c":1.5,"a":true,"d":[1]}"#],
        );
        let names: Vec<&str> = cols.iter().map(|(f, _)| f.name().as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
        let types: Vec<DataType> = cols.iter().map(|(f, _)| f.data_type().clone()).collect();
        assert_eq!(
            types,
            [
                DataType::Boolean,
                DataType::Int64,
                DataType::Float64,
                DataType::Utf8
            ]
        );
        assert_eq!(cols[3].0.metadata().get(JSON_KEY).unwrap(), "true");
    }

    #[test]
    fn a_scalar_schema_null_is_required_unless_the_type_lists_null() {
        let s = JsonRowSchema::from_json_schema(r#"{"type":["string","null"]}"#).unwrap();
        assert!(s.scalar && s.columns[0].nullable);
    }

    #[test]
    fn unresolved_refs_are_named() {
        let e = JsonRowSchema::from_json_schema(
            r##"{"type":"object","properties":{"a":{"$ref":"#/defs/x"}}}"##,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "unresolved JSON Schema reference #/defs/x");
    }

    #[test]
    fn narrow_integers_and_float32_cells_are_json_numbers() {
        use arrow_array::{Float32Array, Int8Array, Int32Array, UInt64Array};
        let cells: Vec<(ArrayRef, Value)> = vec![
            (Arc::new(Int8Array::from(vec![-3])), Value::from(-3)),
            (Arc::new(Int32Array::from(vec![7])), Value::from(7)),
            (
                Arc::new(UInt64Array::from(vec![u64::MAX])),
                Value::from(u64::MAX),
            ),
            (Arc::new(Float32Array::from(vec![1.5])), Value::from(1.5)),
            (Arc::new(Int32Array::from(vec![None])), Value::Null),
        ];
        for (column, want) in cells {
            let field = Field::new("n", column.data_type().clone(), true);
            assert_eq!(cell_to_json(column.as_ref(), &field, 0).unwrap(), want);
        }
    }
}
