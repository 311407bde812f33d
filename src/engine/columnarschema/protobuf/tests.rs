use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, TimestampMicrosecondType, UInt64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::Schema;
use serde_json::json;

use super::ProtobufValueDecoder;
use crate::engine::columnar::codec::ValueDecoder;
use crate::engine::columnarschema::writer_schemas::{WriterSchema, WriterSchemas};
use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::error::{FetchPendingError, SchemaResult};
use crate::engine::schema::framing;
use crate::engine::schema::protobuf::{ProtoSchema, encode_body};
use crate::engine::schema::registry::SchemaType;
use crate::engine::schema::resolve::ResolvedReference;

const COMMON: &str = r#"syntax = "proto3";
package common;
message Money { string currency = 1; int64 units = 2; }
"#;

const ORDER: &str = r#"syntax = "proto3";
package shop;
import "common.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/duration.proto";

message Other { string x = 1; }
message Order {
  enum Status { NEW = 0; PAID = 1; }
  message Line { string sku = 1; uint32 qty = 2; }
  string id = 1;
  sint32 small = 2;
  fixed64 big = 3;
  double ratio = 4;
  bool paid = 5;
  bytes raw = 6;
  Status status = 7;
  repeated Line lines = 8;
  map<string, int64> counts = 9;
  common.Money total = 10;
  google.protobuf.Timestamp at = 11;
  google.protobuf.StringValue note = 12;
  google.protobuf.UInt32Value retries = 13;
  google.protobuf.Struct attrs = 14;
  google.protobuf.Duration took = 15;
  oneof pay { string card = 16; int64 account = 17; }
  optional int32 maybe = 18;
  repeated string tags = 19;
  Order parent = 20;
}
"#;

fn cache() -> SchemaCache {
    let cache = SchemaCache::offline();
    cache.seed_writer(WriterSchema {
        id: 4,
        schema_type: SchemaType::Protobuf,
        text: ORDER.into(),
        message_type: Some("shop.Order".into()),
        references: vec![ResolvedReference {
            name: "common.proto".into(),
            subject: "common".into(),
            version: 1,
            spec_text: COMMON.into(),
        }],
    });
    cache
}

fn framed(path: &[i32], value: serde_json::Value) -> Vec<u8> {
    let schema = ProtoSchema::parse(ORDER, &[("common.proto".into(), COMMON.into())]).unwrap();
    let msg = schema.message_at(path).unwrap();
    framing::encode_protobuf(4, path, &encode_body(&msg, &value).unwrap()).unwrap()
}

fn batch(d: &mut ProtobufValueDecoder) -> RecordBatch {
    let cols = d.finish().unwrap();
    let (fields, arrays): (Vec<_>, Vec<_>) = cols.into_iter().unzip();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

#[test]
fn every_protobuf_shape_decodes_into_its_mapped_arrow_column() {
    let mut d = ProtobufValueDecoder::new(Arc::new(cache()));
    d.append(Some(&framed(
        &[1],
        json!({
            "id": "o-1", "small": -3, "big": "18446744073709551615", "ratio": 0.5, "paid": true,
            "raw": "AAH/", "status": "PAID",
            "lines": [{"sku": "a", "qty": 4000000000u64}, {"sku": "b", "qty": 1}],
            "counts": {"z": 1, "a": -2}, "total": {"currency": "EUR", "units": 12},
            "at": "2024-11-29T10:00:00.123456789Z", "note": "fragile", "retries": 7,
            "attrs": {"k": [1, "x", null]}, "took": "1.5s", "card": "visa", "maybe": 0,
            "tags": ["t1"], "parent": {"id": "p"}
        }),
    )))
    .unwrap();
    d.append(Some(&framed(&[1], json!({"account": 9}))))
        .unwrap();
    let b = batch(&mut d);
    let schema = b.schema();
    let col = |n: &str| b.column(schema.index_of(n).unwrap()).clone();
    assert_eq!(b.num_rows(), 2);
    assert_eq!(col("id").as_string::<i32>().value(0), "o-1");
    assert_eq!(col("small").as_primitive::<Int32Type>().value(0), -3);
    assert_eq!(col("big").as_primitive::<UInt64Type>().value(0), u64::MAX);
    assert_eq!(col("raw").as_binary::<i32>().value(0), b"\x00\x01\xff");
    assert_eq!(col("status").as_string::<i32>().value(0), "PAID");
    assert_eq!(col("status").as_string::<i32>().value(1), "NEW");
    let lines = col("lines");
    let lines = lines.as_list::<i32>();
    let first = lines.value(0);
    let first = first.as_struct();
    assert_eq!(
        first.column(1).as_primitive::<Int64Type>().values(),
        &[4_000_000_000, 1]
    );
    assert_eq!(lines.value(1).len(), 0);
    let counts = col("counts");
    let counts = counts.as_map();
    assert_eq!(
        counts.keys().as_string::<i32>().value(0),
        "a",
        "sorted keys"
    );
    assert_eq!(
        counts.values().as_primitive::<Int64Type>().values(),
        &[-2, 1]
    );
    let total = col("total");
    assert_eq!(
        total
            .as_struct()
            .column(1)
            .as_primitive::<Int64Type>()
            .value(0),
        12
    );
    assert!(total.is_null(1), "an absent message field is null");
    let at = col("at");
    assert_eq!(
        at.as_primitive::<TimestampMicrosecondType>().value(0),
        1_732_874_400_123_456
    );
    assert!(at.is_null(1));
    assert_eq!(col("note").as_string::<i32>().value(0), "fragile");
    assert!(col("note").is_null(1));
    assert_eq!(col("retries").as_primitive::<Int64Type>().value(0), 7);
    assert_eq!(
        col("attrs").as_string::<i32>().value(0),
        r#"{"k":[1.0,"x",null]}"#
    );
    let took = col("took");
    assert_eq!(
        took.as_struct()
            .column(0)
            .as_primitive::<Int64Type>()
            .value(0),
        1
    );
    assert_eq!(col("card").as_string::<i32>().value(0), "visa");
    assert!(col("card").is_null(1));
    assert!(col("account").is_null(0));
    assert_eq!(col("account").as_primitive::<Int64Type>().value(1), 9);
    assert_eq!(col("maybe").as_primitive::<Int32Type>().value(0), 0);
    assert!(col("maybe").is_null(1), "proto3 optional keeps presence");
    assert_eq!(col("parent").as_string::<i32>().value(0), r#"{"id":"p"}"#);
    assert!(!schema.field_with_name("id").unwrap().is_nullable());
}

#[test]
fn the_message_index_path_picks_the_message_and_others_are_refused() {
    let mut d = ProtobufValueDecoder::new(Arc::new(cache()));
    d.append(Some(&framed(&[1, 0], json!({"sku": "s", "qty": 2}))))
        .unwrap();
    let names: Vec<String> = d
        .fields()
        .unwrap()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["sku", "qty"]);
    let e = d
        .append(Some(&framed(&[0], json!({"x": "y"}))))
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Protobuf message shop.Other differs from shop.Order.Line"),
        "{e}"
    );
    let e = d
        .append(Some(&framing::encode_protobuf(4, &[7], b"").unwrap()))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "writer schema 4: Protobuf message-index path [7] names no message of the schema"
    );
}

#[test]
fn malformed_bodies_and_tombstones_into_required_columns_fail_without_panicking() {
    let mut d = ProtobufValueDecoder::new(Arc::new(cache()));
    assert!(d.append(None).is_err(), "no columns before the first value");
    d.append(Some(&framed(&[1], json!({"id": "a"})))).unwrap();
    let mut bad = framed(&[1], json!({"id": "a"}));
    bad.truncate(bad.len() - 1);
    let e = d.append(Some(&bad)).unwrap_err();
    assert!(!e.is_retriable());
    assert!(
        e.to_string().starts_with(
            "cannot deserialize schema value: Protobuf message shop.Order of writer schema 4:"
        ),
        "{e}"
    );
    let e = d.append(None).unwrap_err();
    assert_eq!(e.to_string(), "required Protobuf field is null: id");
    d.reset();
    d.append(Some(&framed(&[1], json!({"id": "b"})))).unwrap();
    assert_eq!(batch(&mut d).num_rows(), 1);
}

struct AlwaysPending;
impl WriterSchemas for AlwaysPending {
    fn writer_schema(&self, id: i32) -> SchemaResult<Arc<WriterSchema>> {
        Err(FetchPendingError { id: id as u32 }.into())
    }
}

#[test]
fn an_unknown_writer_id_is_retriable_and_a_non_protobuf_writer_is_refused() {
    let mut d = ProtobufValueDecoder::new(Arc::new(AlwaysPending));
    let e = d
        .append(Some(&framing::encode_protobuf(9, &[0], b"").unwrap()))
        .unwrap_err();
    assert!(e.is_retriable());
    assert_eq!(e.to_string(), "writer schema for id 9 is pending fetch");
    let cache = SchemaCache::offline();
    cache.seed_writer(WriterSchema {
        id: 2,
        schema_type: SchemaType::Avro,
        text: "\"string\"".into(),
        message_type: None,
        references: vec![],
    });
    let mut d = ProtobufValueDecoder::new(Arc::new(cache));
    let e = d
        .append(Some(&framing::encode_protobuf(2, &[0], b"").unwrap()))
        .unwrap_err();
    assert_eq!(e.to_string(), "writer schema 2 is AVRO, not PROTOBUF");
}

#[test]
fn a_later_writer_of_the_same_message_fills_the_first_columns_by_field_name() {
    const V1: &str = "syntax = \"proto3\";\npackage p;\nmessage M { string a = 1; int64 b = 2; }\n";
    const V2: &str =
        "syntax = \"proto3\";\npackage p;\nmessage M { string a = 1; string c = 3; }\n";
    let cache = SchemaCache::offline();
    for (id, text) in [(1, V1), (2, V2)] {
        cache.seed_writer(WriterSchema {
            id,
            schema_type: SchemaType::Protobuf,
            text: text.into(),
            message_type: None,
            references: vec![],
        });
    }
    let frame = |id: u32, text: &str, value: serde_json::Value| {
        let msg = ProtoSchema::parse(text, &[])
            .unwrap()
            .message(None)
            .unwrap();
        framing::encode_protobuf(id, &[0], &encode_body(&msg, &value).unwrap()).unwrap()
    };
    let mut d = ProtobufValueDecoder::new(Arc::new(cache));
    d.append(Some(&frame(1, V1, json!({"a": "x", "b": 5}))))
        .unwrap();
    d.append(Some(&frame(2, V2, json!({"a": "y", "c": "dropped"}))))
        .unwrap();
    let b = batch(&mut d);
    assert_eq!(b.num_columns(), 2, "columns of the first writer only");
    assert_eq!(b.column(0).as_string::<i32>().value(1), "y");
    assert_eq!(
        b.column(1).as_primitive::<Int64Type>().values(),
        &[5, 0],
        "a field the writer lacks reads as its proto3 default"
    );
}
