//! Bridges between registry schemas (Avro, Protobuf, JSON Schema) and Arrow: the type
//! mappings of semantics §3, as Arrow schemas built with `arrow-schema`. The batch
//! codecs (values ↔ Arrow arrays) build on these: `avro` decodes Avro binary straight
//! into Arrow builders, `protobuf` decodes framed Protobuf through prost-reflect into
//! builders shaped by `proto_arrow`, `json_schema` reads registry-framed JSON through
//! the JSON row bridge (whose schema mapping [`arrow_schema_for`] also shows), and
//! [`writer_schemas::WriterSchemas`] is the seam through which decoders get writer
//! schemas by id without ever blocking on the registry.

pub mod avro;
pub mod avro_arrow;
pub mod avro_file_sink;
pub mod avro_writer;
pub mod file_schema_sink;
pub mod json_schema;
pub mod json_schema_file_sink;
pub mod json_schema_writer;
pub mod proto_arrow;
pub mod proto_file_sink;
pub mod proto_writer;
pub mod protobuf;
pub mod registry_sink;
pub mod sink_format;
pub mod sink_rows;
pub mod topology_codecs;
pub mod writer_schemas;

use std::collections::BTreeMap;

use arrow_schema::Schema;

use crate::engine::columnar::codec::json::JsonRowSchema;
use crate::engine::schema::avro::AvroSchema;
use crate::engine::schema::protobuf::ProtoSchema;
use crate::engine::schema::registry::SchemaType;

/// The Arrow schema a registry schema maps to.
pub fn arrow_schema_for(
    schema_type: SchemaType,
    text: &str,
    message_type: Option<&str>,
    references: &[(String, String)],
) -> Result<Schema, String> {
    match schema_type {
        SchemaType::Avro => {
            let avro = AvroSchema::parse_with_named_references(text, references)
                .map_err(|e| e.to_string())?;
            avro_arrow::avro_to_arrow(&avro)
        }
        SchemaType::Protobuf => {
            let proto = ProtoSchema::parse(text, references).map_err(|e| e.to_string())?;
            let msg = proto.message(message_type).map_err(|e| e.to_string())?;
            proto_arrow::message_to_arrow(&msg)
        }
        // The row bridge `tail --value-format json-sr` decodes with: one mapping.
        SchemaType::Json => JsonRowSchema::from_json_schema(text)
            .map(|s| Schema::new(s.fields()))
            .map_err(|e| e.to_string()),
    }
}

/// The mapped Arrow schema as text, one field per line, nested fields indented,
/// field metadata with keys sorted.
pub fn describe_arrow(
    schema_type: SchemaType,
    text: &str,
    message_type: Option<&str>,
    references: &[(String, String)],
) -> Result<String, String> {
    let schema = arrow_schema_for(schema_type, text, message_type, references)?;
    let mut out = String::new();
    for f in schema.fields() {
        describe_field(f, 0, &mut out);
    }
    Ok(out.trim_end().to_string())
}

fn describe_field(f: &arrow_schema::Field, depth: usize, out: &mut String) {
    use arrow_schema::DataType;
    let indent = "  ".repeat(depth);
    let meta: BTreeMap<&String, &String> = f.metadata().iter().collect();
    let meta = if meta.is_empty() {
        String::new()
    } else {
        format!(
            " {{{}}}",
            meta.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let null = if f.is_nullable() { "" } else { " not null" };
    let (shown, children): (String, Vec<&arrow_schema::Field>) = match f.data_type() {
        DataType::Struct(children) => (
            "Struct".into(),
            children.iter().map(|c| c.as_ref()).collect(),
        ),
        DataType::List(item) => ("List".into(), vec![item.as_ref()]),
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) => ("Map".into(), kv.iter().map(|c| c.as_ref()).collect()),
            _ => ("Map".into(), vec![]),
        },
        other => (other.to_string(), vec![]),
    };
    out.push_str(&format!("{indent}{}: {shown}{null}{meta}\n", f.name()));
    for c in children {
        describe_field(c, depth + 1, out);
    }
}
