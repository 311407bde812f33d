//! A `json-schema` sink whose writer schema is given as a file (`value:
//! json-schema:FILE.json`): the file's text is registered as is instead of the
//! derived schema, and every row — the object the derived sink writes (see
//! `sink_rows`) — is validated against it before it is produced. A row that does
//! not fit fails its batch with the row's source partition and offset (when the
//! batch carries them) and the failing JSON pointer, and is refused alone: the
//! topology's error policy decides what happens to it (fail stops the run,
//! skip and dead-letter treat that row only, the batch's other rows are written).
//!
//! What can be told from the columns alone is told before any row is written
//! (`run --check`, and each new batch schema): a `required` property no column
//! holds, and a column whose JSON type the property's `type` cannot hold
//! (integers fit `integer` or `number`; nested structs are checked against the
//! property's own `properties`). Nullability is left to row validation: a
//! nullable column is often never null. With `additionalProperties: false`,
//! columns the schema's `properties` do not name are left out of the rows
//! (as an Avro schema file leaves out the fields it does not name); otherwise
//! every payload column is written.

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_schema::{DataType, Field, Schema};
use serde_json::Value;

use crate::engine::columnar::metadata::{OFFSET_COLUMN, PARTITION_COLUMN};
use crate::engine::columnar::reserved::JSON_KEY;
use crate::engine::columnarschema::avro_writer::payload_fields;
use crate::engine::columnarschema::json_schema_writer::type_schema;
use crate::engine::columnarschema::sink_rows::payload_json_rows;
use crate::engine::schema::json_schema::JsonSchema;

/// A JSON Schema read from a file.
#[derive(Debug)]
pub struct JsonFileSchema {
    /// The text registered: the file exactly as given.
    pub registered: String,
    schema: JsonSchema,
    /// The top-level property names when `additionalProperties` is `false`.
    closed: Option<Vec<String>>,
}

impl JsonFileSchema {
    /// Parses a schema file's text; the top level must describe objects.
    pub fn parse(text: &str) -> Result<Self, String> {
        let schema = JsonSchema::parse(text).map_err(|e| e.to_string())?;
        let top = &schema.schema;
        if let Some(t) = top.get("type")
            && !types_of(t).iter().any(|t| t == "object")
        {
            return Err(format!(
                "the top-level JSON Schema must describe objects (a row is an object), not type {t}"
            ));
        }
        let closed = (top.get("additionalProperties") == Some(&Value::Bool(false))).then(|| {
            top.get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default()
        });
        Ok(JsonFileSchema {
            registered: text.to_owned(),
            schema,
            closed,
        })
    }

    /// Whether rows of `input` (payload columns) can fit this schema, as far as
    /// the column types tell.
    pub fn check(&self, input: &Schema) -> Result<(), String> {
        let fields: Vec<Field> = payload_fields(input).into_iter().map(|(_, f)| f).collect();
        let mut problems = Vec::new();
        check_object(&self.schema.schema, &fields, "", &mut problems);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the sink's columns cannot be written with the schema file: {}",
                problems.join("; ")
            ))
        }
    }

    /// Every row's JSON body, validated; the first row that does not fit fails.
    pub fn bodies(&self, batch: &RecordBatch) -> Result<Vec<Vec<u8>>, String> {
        self.rows(batch)?
            .into_iter()
            .map(|row| row.map_err(|refusal| refusal.message))
            .collect()
    }

    /// Every row's JSON body, validated one by one: a row that does not fit is
    /// refused alone (a batch whose columns cannot fit fails whole).
    pub fn rows(&self, batch: &RecordBatch) -> Result<Vec<Result<Vec<u8>, RowRefusal>>, String> {
        self.check(&batch.schema())?;
        let rows = payload_json_rows(batch).map_err(|e| e.to_string())?;
        rows.into_iter()
            .enumerate()
            .map(|(row, text)| {
                let mut value: Value =
                    serde_json::from_str(&text).map_err(|e| format!("row {row}: not JSON: {e}"))?;
                let kept = match (&self.closed, value.as_object_mut()) {
                    (Some(names), Some(object)) => {
                        let before = object.len();
                        object.retain(|k, _| names.contains(k));
                        object.len() != before
                    }
                    _ => false,
                };
                let body = if kept {
                    serde_json::to_vec(&value).map_err(|e| e.to_string())?
                } else {
                    text.into_bytes()
                };
                Ok(match self.schema.validate(&value) {
                    Ok(()) => Ok(body),
                    Err(e) => {
                        let (partition, offset) = origin(batch, row);
                        Err(RowRefusal {
                            message: format!("row {row}{}: {e}", source_of(batch, row)),
                            body,
                            partition: partition.and_then(|p| i32::try_from(p).ok()),
                            offset,
                        })
                    }
                })
            })
            .collect()
    }
}

/// A row the schema refuses: why, where it came from, and its body as it
/// would have been written.
#[derive(Debug, Clone, PartialEq)]
pub struct RowRefusal {
    pub message: String,
    pub body: Vec<u8>,
    pub partition: Option<i32>,
    pub offset: Option<i64>,
}

/// The source partition and offset cells of a row, where the batch has them.
fn origin(batch: &RecordBatch, row: usize) -> (Option<i64>, Option<i64>) {
    let cell = |name: &str| -> Option<i64> {
        let column = batch.column_by_name(name)?;
        if column.is_null(row) {
            return None;
        }
        match column.data_type() {
            DataType::Int32 => Some(column.as_primitive::<Int32Type>().value(row).into()),
            DataType::Int64 => Some(column.as_primitive::<Int64Type>().value(row)),
            _ => None,
        }
    };
    (cell(PARTITION_COLUMN), cell(OFFSET_COLUMN))
}

/// ` (source partition P offset O)` when the batch carries its rows' origin.
fn source_of(batch: &RecordBatch, row: usize) -> String {
    match origin(batch, row) {
        (Some(p), Some(o)) => format!(" (source partition {p} offset {o})"),
        (None, Some(o)) => format!(" (source offset {o})"),
        _ => String::new(),
    }
}

/// A `type` keyword as a list of type names.
fn types_of(t: &Value) -> Vec<String> {
    match t {
        Value::String(s) => vec![s.clone()],
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// Checks `fields` against an object schema's `required` and `properties`.
fn check_object(schema: &Value, fields: &[Field], at: &str, problems: &mut Vec<String>) {
    let held = |name: &str| fields.iter().any(|f| f.name() == name);
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !held(name) {
            problems.push(format!(
                "property {at}/{name} is required and no column of the sink holds it"
            ));
        }
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for f in fields {
        if let Some(property) = properties.get(f.name()) {
            check_property(property, f, &format!("{at}/{}", f.name()), problems);
        }
    }
}

fn check_property(property: &Value, f: &Field, at: &str, problems: &mut Vec<String>) {
    // A JSON-text column may hold any JSON value.
    if f.metadata().get(JSON_KEY).is_some_and(|v| v == "true") {
        return;
    }
    let Ok(written) = type_schema(f) else {
        return; // a type no JSON row can hold is reported when the rows are written
    };
    let column_types = written.get("type").map(types_of).unwrap_or_default();
    if let Some(allowed) = property.get("type") {
        let allowed = types_of(allowed);
        let fits = column_types.iter().any(|t| {
            allowed.contains(t) || (t == "integer" && allowed.iter().any(|a| a == "number"))
        });
        if !fits {
            problems.push(format!(
                "property {at} has type {} and column {} ({}) is written as {}",
                allowed.join(" or "),
                f.name(),
                f.data_type(),
                column_types.join(" or ")
            ));
            return;
        }
    }
    match f.data_type() {
        DataType::Struct(children) => {
            let children: Vec<Field> = children.iter().map(|c| c.as_ref().clone()).collect();
            check_object(property, &children, at, problems);
        }
        DataType::List(item) | DataType::LargeList(item) => {
            if let Some(items) = property.get("items").filter(|i| i.is_object()) {
                check_property(items, item, &format!("{at}/items"), problems);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, StringArray};

    use super::*;

    const FILE: &str = r#"{"$schema":"http://json-schema.org/draft-07/schema#","title":"Total",
      "type":"object","additionalProperties":false,"required":["user","total"],
      "properties":{"user":{"type":"string"},"total":{"type":"number","maximum":280}}}"#;

    fn batch(totals: Vec<i64>) -> RecordBatch {
        let n = totals.len();
        let schema = Schema::new(vec![
            Field::new("user", DataType::Utf8, false),
            Field::new("total", DataType::Int64, false),
            Field::new("dropped", DataType::Utf8, true),
            Field::new(PARTITION_COLUMN, DataType::Int32, false),
            Field::new(OFFSET_COLUMN, DataType::Int64, false),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(StringArray::from(vec!["alice"; n])) as ArrayRef,
                Arc::new(Int64Array::from(totals)),
                Arc::new(StringArray::from(vec![Some("x"); n])),
                Arc::new(arrow_array::Int32Array::from(vec![1; n])),
                Arc::new(Int64Array::from_iter_values(40..40 + n as i64)),
            ],
        )
        .unwrap()
    }

    #[test]
    fn rows_that_fit_are_written_without_the_columns_a_closed_schema_does_not_name() {
        let file = JsonFileSchema::parse(FILE).unwrap();
        assert_eq!(file.registered, FILE);
        let bodies = file.bodies(&batch(vec![270])).unwrap();
        let row: Value = serde_json::from_slice(&bodies[0]).unwrap();
        assert_eq!(row, serde_json::json!({"user": "alice", "total": 270}));
        // An open schema keeps every column.
        let open =
            JsonFileSchema::parse(&FILE.replace(r#""additionalProperties":false,"#, "")).unwrap();
        let row: Value = serde_json::from_slice(&open.bodies(&batch(vec![1])).unwrap()[0]).unwrap();
        assert_eq!(row["dropped"], "x");
    }

    #[test]
    fn a_row_that_does_not_fit_fails_naming_its_source_offset_and_the_json_pointer() {
        let file = JsonFileSchema::parse(FILE).unwrap();
        let e = file.bodies(&batch(vec![270, 300])).unwrap_err();
        assert!(
            e.starts_with("row 1 (source partition 1 offset 41): JSON Schema validation failed: ")
                && e.ends_with(" at /total"),
            "{e}"
        );
    }

    #[test]
    fn a_required_property_no_column_holds_and_a_type_the_property_cannot_hold_are_refused() {
        let missing = FILE.replace(r#"["user","total"]"#, r#"["user","total","region"]"#);
        let e = JsonFileSchema::parse(&missing)
            .unwrap()
            .check(&batch(vec![]).schema())
            .unwrap_err();
        assert!(
            e.contains("property /region is required and no column of the sink holds it"),
            "{e}"
        );
        let mismatch = FILE.replace(r#"{"type":"string"}"#, r#"{"type":["integer","null"]}"#);
        let e = JsonFileSchema::parse(&mismatch)
            .unwrap()
            .check(&batch(vec![]).schema())
            .unwrap_err();
        assert!(
            e.contains("property /user has type integer or null and column user (Utf8) is written as string"),
            "{e}"
        );
        let e = JsonFileSchema::parse(r#"{"type":"array"}"#).unwrap_err();
        assert!(e.contains("must describe objects"), "{e}");
    }
}
