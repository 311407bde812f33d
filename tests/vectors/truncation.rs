//! `framing.json` frames cut short: every framed body of a writer schema, cut at every
//! byte, is an error on every decoding path — `schema decode`'s decoders, the serdes,
//! and the batch decoders `tail` and `run` read topics with (both the fast path and the
//! resolution onto another reader schema) — and so is a byte added at the end. For
//! Protobuf a cut at a top-level field boundary is a valid shorter message by the wire
//! format, so there every path must decode it; a cut inside a field must fail.

use std::collections::BTreeSet;
use std::sync::Arc;

use krabka_streams::engine::columnar::codec::ValueDecoder;
use krabka_streams::engine::columnarschema::avro::codec::AvroValueDecoder;
use krabka_streams::engine::columnarschema::json_schema::RegistryJsonDecoder;
use krabka_streams::engine::columnarschema::protobuf::ProtobufValueDecoder;
use krabka_streams::engine::schema::avro::{self, AvroSchema};
use krabka_streams::engine::schema::cache::{SchemaCache, WriterSchema};
use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::json_schema;
use krabka_streams::engine::schema::protobuf::{self, ProtoSchema};
use krabka_streams::engine::schema::registry::SchemaType;
use serde_json::Value;

use crate::support::{i64_of, id, of_kind, str_of, unhex};

/// The id 3 schema of the JVM-captured Protobuf frames: [0] a flat message, [1, 0] a
/// nested one, [2] a repeated string and an enum.
const JVM_PROTO: &str = r#"syntax = "proto3";
package demo;
message Flat { string id = 1; }
message Outer { message Inner { string id = 1; } }
message Tags { repeated string names = 1; Kind kind = 2; }
enum Kind { KIND_UNSPECIFIED = 0; KIND_ONE = 1; }
"#;

/// A message whose field 14 is an int32: the body `70 62` of FRAME-PB-7-IDX0 is field
/// 14 = 98 in it.
const FIELD14_PROTO: &str = r#"syntax = "proto3";
package demo;
message Fourteen { int32 n = 14; }
"#;

/// The writer schema each framed vector's body was written with. A vector whose body is
/// no message of any schema is listed in [`NOT_A_DATUM`] instead, so a new vector
/// cannot slip past this test unassigned.
fn writer_of(vector_id: &str) -> Option<(SchemaType, &'static str)> {
    Some(match vector_id {
        // "xy": the two bytes of a fixed(2).
        "FRAME-AVRO-258" => (
            SchemaType::Avro,
            r#"{"type":"record","name":"XY","fields":[{"name":"xy","type":{"type":"fixed","name":"Two","size":2}}]}"#,
        ),
        "FRAME-JVM-AVRO" => (
            SchemaType::Avro,
            r#"{"type":"record","name":"Id","fields":[{"name":"id","type":"string"}]}"#,
        ),
        "FRAME-JVM-JSON" => (
            SchemaType::Json,
            r#"{"type":"object","properties":{"id":{"type":"string"}}}"#,
        ),
        "FRAME-PB-7-IDX0" => (SchemaType::Protobuf, FIELD14_PROTO),
        "FRAME-JVM-PB-FLAT" | "FRAME-JVM-PB-NESTED" | "FRAME-JVM-PB-REPEATED-ENUM" => {
            (SchemaType::Protobuf, JVM_PROTO)
        }
        _ => return None,
    })
}

/// Framed vectors whose body is no valid message: the uncut frame must already fail.
const NOT_A_DATUM: &[(&str, &str, &str)] = &[(
    "FRAME-PB-9-IDX10",
    // The body 03 is a tag with field number 0, which no message has.
    "syntax = \"proto3\"; package demo; message A {} message B { message C { int32 x = 1; } }",
    "03",
)];

fn writer(id_: i32, schema_type: SchemaType, text: &str) -> WriterSchema {
    WriterSchema {
        id: id_,
        schema_type,
        text: text.into(),
        message_type: None,
        references: vec![],
    }
}

/// The ends of the top-level fields of a Protobuf body (0 included): the cuts that
/// leave a valid shorter message.
fn field_boundaries(body: &[u8]) -> BTreeSet<usize> {
    fn varint(b: &[u8], pos: &mut usize) -> u64 {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = b[*pos];
            *pos += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return v;
            }
        }
        panic!("test body has a varint longer than 64 bits");
    }
    let mut ends = BTreeSet::from([0]);
    let mut pos = 0;
    while pos < body.len() {
        let tag = varint(body, &mut pos);
        match tag & 7 {
            0 => {
                varint(body, &mut pos);
            }
            1 => pos += 8,
            2 => {
                let len = varint(body, &mut pos) as usize;
                pos += len;
            }
            5 => pos += 4,
            other => panic!("test body uses wire type {other}"),
        }
        ends.insert(pos);
    }
    assert_eq!(pos, body.len(), "test body is not whole fields");
    ends
}

/// Every decoding path over one framed value: `Ok` when all accept it, else the first
/// path that refused and its message. Paths disagreeing is itself a failure.
struct Paths {
    schema_type: SchemaType,
    writer: WriterSchema,
    /// For Avro: a reader schema that differs from the writer (a field added with a
    /// default), so the batch decoders take the resolution path.
    avro_reader: Option<WriterSchema>,
}

impl Paths {
    fn cache(&self) -> Arc<SchemaCache> {
        let cache = SchemaCache::offline();
        cache.seed_writer(self.writer.clone());
        Arc::new(cache)
    }

    /// (path name, outcome) per path.
    fn outcomes(&self, frame: &[u8]) -> Vec<(&'static str, Result<(), String>)> {
        let w = &self.writer;
        let mut out: Vec<(&'static str, Result<(), String>)> = Vec::new();
        let batch = |mut d: Box<dyn ValueDecoder>| -> Result<(), String> {
            d.append(Some(frame)).map(|_| ()).map_err(|e| e.to_string())
        };
        match self.schema_type {
            SchemaType::Avro => {
                let parsed = AvroSchema::from_writer(w).unwrap();
                let body = framing::decode(frame).map_err(|e| e.to_string());
                out.push((
                    "schema decode (writer only)",
                    body.clone().and_then(|f| {
                        avro::decode_body(&parsed, w.id, None, f.body)
                            .map(drop)
                            .map_err(|e| e.to_string())
                    }),
                ));
                out.push((
                    "schema decode (resolved onto itself)",
                    body.and_then(|f| {
                        avro::decode_body(&parsed, w.id, Some(&parsed), f.body)
                            .map(drop)
                            .map_err(|e| e.to_string())
                    }),
                ));
                out.push((
                    "tail/run batch decoder",
                    batch(Box::new(AvroValueDecoder::new(self.cache()))),
                ));
                let reader = self.avro_reader.clone().expect("an Avro reader schema");
                out.push((
                    "tail/run batch decoder (resolving)",
                    batch(Box::new(
                        AvroValueDecoder::with_reader_schema(self.cache(), reader).unwrap(),
                    )),
                ));
            }
            SchemaType::Protobuf => {
                let schema = ProtoSchema::from_writer(w).unwrap();
                out.push((
                    "schema decode",
                    framing::decode_protobuf(frame)
                        .map_err(|e| e.to_string())
                        .and_then(|f| {
                            let msg = schema
                                .message_at(f.message_indexes.as_deref().unwrap())
                                .map_err(|e| e.to_string())?;
                            protobuf::decode_body(&msg, f.body)
                                .map(drop)
                                .map_err(|e| e.to_string())
                        }),
                ));
                out.push((
                    "tail/run batch decoder",
                    batch(Box::new(ProtobufValueDecoder::new(self.cache()))),
                ));
            }
            SchemaType::Json => {
                out.push((
                    "schema decode",
                    framing::decode(frame)
                        .map_err(|e| e.to_string())
                        .and_then(|f| {
                            json_schema::decode_body(f.body)
                                .map(drop)
                                .map_err(|e| e.to_string())
                        }),
                ));
                out.push((
                    "tail/run batch decoder",
                    batch(Box::new(RegistryJsonDecoder::new(self.cache()))),
                ));
            }
        }
        out
    }
}

/// An Avro record schema with one more field (a defaulted long) than `text`.
fn avro_reader_of(text: &str) -> String {
    let mut v: Value = serde_json::from_str(text).unwrap();
    v["fields"]
        .as_array_mut()
        .expect("a record schema")
        .push(serde_json::json!({"name":"added_by_reader","type":"long","default":7}));
    v.to_string()
}

/// Cuts `frame` (header and, for Protobuf, index path kept whole) at every byte of its
/// body and adds one byte: asserts every path's verdict. Returns the number of cuts.
fn check_cuts(label: &str, paths: &Paths, frame: &[u8]) -> usize {
    let (header_len, body) = match paths.schema_type {
        SchemaType::Protobuf => {
            let f = framing::decode_protobuf(frame).unwrap();
            (frame.len() - f.body.len(), f.body)
        }
        _ => (
            framing::FRAME_HEADER_LEN,
            &frame[framing::FRAME_HEADER_LEN..],
        ),
    };
    let valid_cuts = match paths.schema_type {
        SchemaType::Protobuf => field_boundaries(body),
        // A JSON document or an Avro datum has one end.
        _ => BTreeSet::new(),
    };
    for (path, outcome) in paths.outcomes(frame) {
        assert!(
            outcome.is_ok(),
            "{label}: {path} refuses the whole frame: {outcome:?}"
        );
    }
    for cut in 0..body.len() {
        let short = &frame[..header_len + cut];
        for (path, outcome) in paths.outcomes(short) {
            if valid_cuts.contains(&cut) {
                assert!(
                    outcome.is_ok(),
                    "{label}: {path}: a cut at field boundary {cut} is a valid message: {outcome:?}"
                );
            } else {
                assert!(
                    outcome.is_err(),
                    "{label}: {path} accepted the body cut to {cut} of {} bytes",
                    body.len()
                );
            }
        }
    }
    // Leftover bytes: for Protobuf a lone 0x00 is a tag of field 0 (invalid).
    let mut long = frame.to_vec();
    long.push(0);
    for (path, outcome) in paths.outcomes(&long) {
        assert!(outcome.is_err(), "{label}: {path} accepted a trailing byte");
    }
    body.len()
}

#[test]
fn every_framed_vector_cut_at_every_byte_is_refused_on_every_path() {
    let mut cut_total = 0;
    let mut checked = BTreeSet::new();
    for v in of_kind("framing", "framing.encode") {
        let vid = id(&v).to_string();
        let inputs = &v["inputs"];
        let frame = unhex(str_of(&v["expected"]["hex"], "hex"));
        let schema_id = i64_of(&inputs["schema_id"], "schema_id") as i32;
        if let Some((_, text, body_hex)) = NOT_A_DATUM.iter().find(|(i, _, _)| *i == vid) {
            assert_eq!(str_of(&inputs["body_hex"], "body_hex"), *body_hex, "{vid}");
            let paths = Paths {
                schema_type: SchemaType::Protobuf,
                writer: writer(schema_id, SchemaType::Protobuf, text),
                avro_reader: None,
            };
            for (path, outcome) in paths.outcomes(&frame) {
                assert!(
                    outcome.is_err(),
                    "{vid}: {path} accepted a body that is no message"
                );
            }
            checked.insert(vid);
            continue;
        }
        let (schema_type, text) =
            writer_of(&vid).unwrap_or_else(|| panic!("{vid}: no writer schema assigned"));
        let paths = Paths {
            schema_type,
            writer: writer(schema_id, schema_type, text),
            avro_reader: (schema_type == SchemaType::Avro)
                .then(|| writer(0, SchemaType::Avro, &avro_reader_of(text))),
        };
        cut_total += check_cuts(&vid, &paths, &frame);
        checked.insert(vid);
    }
    assert!(cut_total > 40, "only {cut_total} cuts were checked");
    assert!(checked.len() >= 8, "{checked:?}");
}

/// The orders the CLI tests frame (tests/cli/schema.rs): decimals, arrays and a
/// nullable string last, the field apache-avro alone read back as `null` when cut.
const ORDER: &str = r#"{"type":"record","name":"Order","namespace":"demo","doc":"an order",
 "fields":[{"name":"id","type":"string"},{"name":"amount","type":"long"},
 {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"paid","type":"boolean"},
 {"name":"attrs","type":{"type":"map","values":"long"}},
 {"name":"note","type":["null","string"],"default":null}]}"#;

const ORDER_PROTO: &str = r#"syntax = "proto3";
package demo;
message Order {
  string id = 1;
  int64 amount = 2;
  message Line { string sku = 1; int32 qty = 2; }
  repeated Line lines = 3;
  double weight = 4;
  fixed32 code = 5;
}
"#;

#[test]
fn the_test_orders_cut_at_every_byte_are_refused_on_every_path() {
    let avro = Paths {
        schema_type: SchemaType::Avro,
        writer: writer(11, SchemaType::Avro, ORDER),
        avro_reader: Some(writer(0, SchemaType::Avro, &avro_reader_of(ORDER))),
    };
    let parsed = AvroSchema::parse(ORDER).unwrap();
    for value in [
        serde_json::json!({"id":"o-1","amount":120,"price":"12.34","tags":["x","yz"],"paid":true,
            "attrs":{"a":1},"note":"fragile, handle with care"}),
        serde_json::json!({"id":"","amount":-1,"price":"0.00","tags":[],"paid":false,"attrs":{},"note":null}),
    ] {
        let body = avro::encode_body(&parsed, &value).unwrap();
        check_cuts(
            &format!("Avro order {value}"),
            &avro,
            &framing::encode(11, &body),
        );
    }

    let proto = Paths {
        schema_type: SchemaType::Protobuf,
        writer: writer(12, SchemaType::Protobuf, ORDER_PROTO),
        avro_reader: None,
    };
    let schema = ProtoSchema::from_writer(&proto.writer).unwrap();
    let order = schema.message(Some("demo.Order")).unwrap();
    let body = protobuf::encode_body(
        &order,
        &serde_json::json!({"id":"o-1","amount":"-5","lines":[{"sku":"a","qty":2},{"sku":"bc","qty":300}],
            "weight":2.5,"code":7}),
    )
    .unwrap();
    let frame = framing::encode_protobuf(12, &[0], &body).unwrap();
    check_cuts("Protobuf order", &proto, &frame);

    let json = Paths {
        schema_type: SchemaType::Json,
        writer: writer(
            13,
            SchemaType::Json,
            r#"{"type":"object","properties":{"id":{"type":"string"},"amount":{"type":"integer"},
                "tags":{"type":"array","items":{"type":"string"}},"note":{"type":["null","string"]},
                "paid":{"type":"boolean"}}}"#,
        ),
        avro_reader: None,
    };
    let body = br#"{"id":"o-1","amount":120,"tags":["x"],"note":null,"paid":true}"#;
    check_cuts("JSON order", &json, &framing::encode(13, body));
}
