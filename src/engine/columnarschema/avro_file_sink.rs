//! An `avro` sink whose writer schema is given as a file (`value:
//! avro:FILE.avsc`): the file's schema is registered instead of the derived one,
//! and every row is written with it. Rows are first written with the schema
//! derived from the batch (`avro_writer`), then resolved onto the file's schema
//! by Avro schema resolution — the same rules a reader applies — so fields are
//! matched by name, in the file's order, with the file's unions, promotions
//! (int → long, float → double) and defaults for fields no column holds;
//! columns the file does not name are left out. Whether a batch can be written
//! is decided once per distinct batch schema, before any row is: a field with
//! no column and no default, or a column whose type the field cannot hold, is an
//! error naming the field.

use std::collections::HashMap;
use std::sync::Mutex;

use apache_avro::Schema as Avro;
use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::schema::ResolvedSchema;
use apache_avro::writer::datum::GenericDatumWriter;
use arrow_array::RecordBatch;
use arrow_schema::{Field, Schema};

use crate::engine::columnarschema::avro_writer::{avro_bodies, avro_schema_of, payload_fields};
use crate::engine::schema::avro::resolution::problems as avro_reader_problems;
use crate::engine::schema::avro::{AvroSchema, registered_text, strict};

/// A writer schema read from a file.
#[derive(Debug)]
pub struct AvroFileSchema {
    /// The text registered (the Go-form canonical text, D1).
    pub registered: String,
    schema: AvroSchema,
    /// Per derived schema text: the derived schema, or why the file cannot hold it.
    derived: Mutex<HashMap<String, Result<AvroSchema, String>>>,
}

impl AvroFileSchema {
    /// Parses a schema file's text; the top level must be a record.
    pub fn parse(text: &str) -> Result<Self, String> {
        let schema = AvroSchema::parse(text).map_err(|e| e.to_string())?;
        if !matches!(schema.schema, Avro::Record(_)) {
            return Err("the top-level Avro schema must be a record".into());
        }
        let registered = registered_text(text).map_err(|e| e.to_string())?;
        Ok(AvroFileSchema {
            registered,
            schema,
            derived: Mutex::new(HashMap::new()),
        })
    }

    /// Whether batches of `input` (payload columns) can be written with this schema.
    pub fn check(&self, input: &Schema) -> Result<(), String> {
        self.derived_for(input).map(|_| ())
    }

    fn derived_for(&self, input: &Schema) -> Result<AvroSchema, String> {
        // The intermediate schema takes the file's record name: resolution matches
        // records by name before it compares their fields. Nested records, enums and
        // fixed types keep derived names, so only their shapes are compared.
        let Avro::Record(top) = &self.schema.schema else {
            unreachable!("parse admits records only")
        };
        let text = avro_schema_of(input, &top.name.fullname(None))?.to_string();
        let mut cache = self.derived.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .entry(text.clone())
            .or_insert_with(|| {
                let derived = AvroSchema::parse(&text).map_err(|e| e.to_string())?;
                let problems: Vec<String> = avro_reader_problems(&derived, &self.schema)
                    .map_err(|e| e.to_string())?
                    .into_iter()
                    .filter(|p| !p.contains(" name changed from "))
                    .map(|p| explain(&p))
                    .collect();
                if problems.is_empty() {
                    Ok(derived)
                } else {
                    Err(format!(
                        "the sink's columns cannot be written with the schema file: {}",
                        problems.join("; ")
                    ))
                }
            })
            .clone()
    }

    /// Every row's Avro body in this schema.
    pub fn bodies(&self, batch: &RecordBatch) -> Result<Vec<Vec<u8>>, String> {
        let schema = batch.schema();
        let columns: Vec<(usize, Field)> = payload_fields(&schema);
        let input = Schema::new(columns.iter().map(|(_, f)| f.clone()).collect::<Vec<_>>());
        let derived = self.derived_for(&input)?;
        let written = avro_bodies(batch, &columns)?;
        let fail = |e: apache_avro::Error| format!("cannot write with the schema file: {e}");
        // Decimals stay raw bytes on both sides (see `AvroSchema::lowered`).
        let writer_low = derived.lowered();
        let reader_low = self.schema.lowered();
        let writer_names = ResolvedSchema::new_with_schemata(writer_low.all()).map_err(fail)?;
        let reader_names = ResolvedSchema::new_with_schemata(reader_low.all()).map_err(fail)?;
        let reader = GenericDatumReader::builder(&writer_low.schema)
            .resolved_writer_schemata(writer_names)
            .reader_schema(&reader_low.schema)
            .resolved_reader_schemata(reader_names)
            .build()
            .map_err(fail)?;
        let writer = GenericDatumWriter::builder(&reader_low.schema)
            .schemata(reader_low.all())
            .map_err(fail)?
            .build()
            .map_err(fail)?;
        written
            .iter()
            .enumerate()
            .map(|(row, body)| {
                let value = strict::read_whole_datum(&reader, body)
                    .map_err(|e| format!("row {row}: cannot write with the schema file: {e}"))?;
                writer
                    .write_value_to_vec(value)
                    .map_err(|e| format!("row {row}: {}", fail(e)))
            })
            .collect()
    }
}

/// A resolution problem in the sink's terms (the derived schema is the writer).
fn explain(problem: &str) -> String {
    problem.replace(
        "has no default and is absent from the writer",
        "has no default and no column of the sink holds it",
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Decimal128Array, Int32Array, StringArray};
    use arrow_schema::DataType;

    use super::*;
    use crate::engine::schema::avro::decode_body;

    /// Fields in another order than the columns, a union with null last, int → long
    /// promotion, a decimal, and a field only its default fills.
    const FILE: &str = r#"{"type":"record","name":"Total","namespace":"shop","fields":[
      {"name":"n","type":"long"},
      {"name":"user","type":["string","null"]},
      {"name":"total_eur","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
      {"name":"source","type":"string","default":"krabka"}]}"#;

    fn batch() -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("user", DataType::Utf8, false),
            Field::new("total_eur", DataType::Decimal128(12, 2), false),
            Field::new("n", DataType::Int32, false),
            Field::new("dropped", DataType::Utf8, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(StringArray::from(vec!["alice", "bob"])) as ArrayRef,
                Arc::new(
                    Decimal128Array::from(vec![27_000, -5])
                        .with_precision_and_scale(12, 2)
                        .unwrap(),
                ),
                Arc::new(Int32Array::from(vec![2, 1])),
                Arc::new(StringArray::from(vec![Some("x"), None])),
            ],
        )
        .unwrap()
    }

    #[test]
    fn rows_are_written_with_the_files_field_order_unions_promotions_and_defaults() {
        let file = AvroFileSchema::parse(FILE).unwrap();
        assert!(
            file.registered.contains(r#""name":"shop.Total""#),
            "{}",
            file.registered
        );
        let bodies = file.bodies(&batch()).unwrap();
        let schema = AvroSchema::parse(FILE).unwrap();
        let rows: Vec<serde_json::Value> = bodies
            .iter()
            .map(|b| decode_body(&schema, 1, None, b).unwrap())
            .collect();
        assert_eq!(
            rows,
            [
                serde_json::json!({"n": 2, "user": "alice", "total_eur": "270.00", "source": "krabka"}),
                serde_json::json!({"n": 1, "user": "bob", "total_eur": "-0.05", "source": "krabka"}),
            ]
        );
    }

    #[test]
    fn a_field_no_column_holds_without_default_and_a_type_mismatch_are_refused_by_name() {
        let missing = FILE.replace(r#","default":"krabka""#, "");
        let e = AvroFileSchema::parse(&missing)
            .unwrap()
            .check(&batch().schema())
            .unwrap_err();
        assert!(
            e.contains("source has no default and no column of the sink holds it"),
            "{e}"
        );
        let mismatch = FILE.replace(
            r#"{"name":"n","type":"long"}"#,
            r#"{"name":"n","type":"string"}"#,
        );
        let e = AvroFileSchema::parse(&mismatch)
            .unwrap()
            .check(&batch().schema())
            .unwrap_err();
        assert!(e.contains("n: type changed from int to string"), "{e}");
        let e = AvroFileSchema::parse(r#""string""#).unwrap_err();
        assert!(e.contains("must be a record"), "{e}");
    }
}
