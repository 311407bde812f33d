//! Protobuf compatibility on the wire: every writer message must exist in the reader,
//! a field number present on both sides must keep its wire type and cardinality, and a
//! proto2 `required` reader field must exist in the writer.

use prost_reflect::{Cardinality, Kind, MessageDescriptor};

use super::SchemaText;
use crate::engine::schema::error::{SchemaError, SchemaResult};
use crate::engine::schema::protobuf::ProtoSchema;

fn parse(text: SchemaText<'_>, which: &str) -> SchemaResult<ProtoSchema> {
    ProtoSchema::parse(text.text, text.references)
        .map_err(|e| SchemaError::invalid(format!("invalid {which} Protobuf schema: {e}")))
}

/// Standard wire types: 0 varint, 1 fixed64, 2 length-delimited, 3 group, 5 fixed32.
fn wire_type(kind: &Kind, is_group: bool) -> u8 {
    if is_group {
        return 3;
    }
    match kind {
        Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => 1,
        Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => 5,
        Kind::String | Kind::Bytes | Kind::Message(_) => 2,
        _ => 0,
    }
}

pub fn check(
    previous: SchemaText<'_>,
    candidate: SchemaText<'_>,
    backward: bool,
) -> SchemaResult<Vec<String>> {
    let p = parse(previous, "previous")?;
    let c = parse(candidate, "candidate")?;
    let (w, r) = if backward { (&p, &c) } else { (&c, &p) };
    let mut out = Vec::new();
    let main = |s: &ProtoSchema| -> Vec<MessageDescriptor> {
        s.pool
            .all_messages()
            .filter(|m| m.parent_file().name() == s.file.name() && !m.is_map_entry())
            .collect()
    };
    for wm in main(w) {
        let Some(rm) = r.pool.get_message_by_name(wm.full_name()) else {
            out.push(format!(
                "message {} is absent from the reader",
                wm.full_name()
            ));
            continue;
        };
        for wf in wm.fields() {
            if let Some(rf) = rm.get_field(wf.number()) {
                let same_wire =
                    wire_type(&wf.kind(), wf.is_group()) == wire_type(&rf.kind(), rf.is_group());
                let same_cardinality = wf.is_list() == rf.is_list() && wf.is_map() == rf.is_map();
                if !same_wire || !same_cardinality {
                    out.push(format!(
                        "{} field {} changed wire type or cardinality",
                        wm.full_name(),
                        wf.number()
                    ));
                }
            }
        }
        for rf in rm.fields() {
            if rf.cardinality() == Cardinality::Required && wm.get_field(rf.number()).is_none() {
                out.push(format!(
                    "{}.{} is required but absent from the writer",
                    rm.full_name(),
                    rf.name()
                ));
            }
        }
    }
    Ok(out)
}
