use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder};
use arrow_array::{
    Array, ArrayRef, BinaryArray, Decimal128Array, Int64Array, StringArray, StructArray,
    TimestampMillisecondArray,
};
use arrow_schema::{DataType, Field, Fields, SchemaRef, TimeUnit};

use super::*;
use crate::engine::columnar::record::Record;
use crate::engine::columnar::topology::spec::{CodecResolver, CodecSpec, Located};
use crate::engine::columnarschema::topology_codecs::OnlineCodecs;
use crate::engine::schema::cache::WriterSchema;
use crate::engine::schema::registry::{
    RegisteredSchema, RegistryError, RegistryResult, SubjectVersion,
};

fn orders() -> RecordBatch {
    let mut tags = ListBuilder::new(Int64Builder::new());
    tags.values().append_value(1);
    tags.values().append_value(2);
    tags.append(true);
    tags.append(false);
    let address = StructArray::new(
        Fields::from(vec![Field::new("city", DataType::Utf8, true)]),
        vec![Arc::new(StringArray::from(vec![Some("Gent"), None])) as ArrayRef],
        None,
    );
    let schema = Schema::new(vec![
        Field::new("user", DataType::Utf8, false),
        Field::new("amount", DataType::Int64, true),
        Field::new("price", DataType::Decimal128(10, 2), true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            true,
        ),
        Field::new("tags", tags.finish().data_type().clone(), true),
        Field::new("address", address.data_type().clone(), true),
        Field::new("__key", DataType::Binary, true),
    ]);
    let mut tags = ListBuilder::new(Int64Builder::new());
    tags.values().append_value(1);
    tags.values().append_value(2);
    tags.append(true);
    tags.append(false);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(StringArray::from(vec!["alice", "bob"])),
            Arc::new(Int64Array::from(vec![Some(150), None])),
            Arc::new(
                Decimal128Array::from(vec![Some(-1250), Some(99_999)])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
            Arc::new(
                TimestampMillisecondArray::from(vec![Some(1_700_000_000_123), None])
                    .with_timezone("UTC"),
            ),
            Arc::new(tags.finish()),
            Arc::new(address),
            Arc::new(BinaryArray::from(vec![Some(&b"k1"[..]), None])),
        ],
    )
    .unwrap()
}

fn spec(value: &str, topic: Option<&str>) -> CodecSpec {
    CodecSpec {
        value: Located::new(value.to_owned(), Default::default()),
        key: None,
        key_column: None,
        schema_file: None,
        key_schema_file: None,
        topic: topic.map(str::to_owned),
    }
}

/// Encodes `orders()` with the `format` sink and decodes the values with the source codec
/// of the same name, as `run` and `tail` would; returns both batches as JSON rows.
fn round_trip(format: &str, schema_type: SchemaType) -> (Vec<String>, Vec<String>, String) {
    let cache = SchemaCache::offline();
    let batch = orders();
    let codecs = OnlineCodecs {
        schemas: Some(cache.clone()),
    };
    let input: SchemaRef = batch.schema();
    let sink = codecs
        .resolve(&spec(format, Some("large-orders")), Some(&input))
        .unwrap();
    let interned = cache.interned_schema("large-orders-value").unwrap();
    cache.seed_subject_id("large-orders-value", 41);
    cache.seed_writer(WriterSchema {
        id: 41,
        schema_type,
        text: interned.spec.schema.clone(),
        message_type: None,
        references: Vec::new(),
    });
    let out = sink.encode("large-orders", &batch).unwrap();
    assert_eq!(out[0].key.as_deref(), Some(&b"k1"[..]));
    assert_eq!(&out[0].value.as_ref().unwrap()[..5], &[0, 0, 0, 0, 41]);
    let records: Vec<Record> = out
        .into_iter()
        .enumerate()
        .map(|(i, r)| Record {
            topic: "large-orders".into(),
            partition: 0,
            offset: i as i64,
            timestamp: 0,
            key: r.key,
            value: r.value,
            headers: Vec::new(),
        })
        .collect();
    let source = codecs.resolve(&spec(format, None), None).unwrap();
    let decoded = source.decode("large-orders", &records).unwrap();
    (
        payload_json_rows(&batch).unwrap(),
        payload_json_rows(&decoded).unwrap(),
        interned.spec.schema,
    )
}

#[test]
fn an_avro_sink_writes_framed_records_the_avro_source_decodes_to_the_same_rows() {
    let (sent, read, schema) = round_trip("avro", SchemaType::Avro);
    assert_eq!(sent, read);
    assert!(schema.contains(r#""name":"large_orders""#), "{schema}");
    assert!(
        schema.contains(r#"{"name":"user","type":"string"}"#),
        "{schema}"
    );
}

#[test]
fn a_json_schema_sink_writes_framed_objects_the_json_sr_source_decodes_to_the_same_values() {
    let (sent, read, schema) = round_trip("json-schema", SchemaType::Json);
    let sent: Vec<serde_json::Value> = sent
        .iter()
        .map(|r| serde_json::from_str(r).unwrap())
        .collect();
    let read: Vec<serde_json::Value> = read
        .iter()
        .map(|r| serde_json::from_str(r).unwrap())
        .collect();
    assert_eq!(sent, read);
    assert!(schema.contains(r#""required":["user"]"#), "{schema}");
}

#[test]
fn a_protobuf_sink_writes_framed_messages_the_protobuf_source_decodes_to_the_same_rows() {
    let (sent, read, schema) = round_trip("protobuf", SchemaType::Protobuf);
    // A repeated field has no presence: a null list reads back empty.
    let sent: Vec<String> = sent
        .iter()
        .map(|r| r.replace(r#""tags":null"#, r#""tags":[]"#))
        .collect();
    assert_eq!(sent, read);
    for line in [
        "message large_orders {",
        "  string user = 1;",
        "  optional int64 amount = 2;",
        "  optional string price = 3;",
        "  google.protobuf.Timestamp ts = 4;",
        "  repeated int64 tags = 5;",
        "  large_orders_address address = 6;",
        "message large_orders_address {\n  optional string city = 1;",
    ] {
        assert!(schema.contains(line), "{line} not in {schema}");
    }
}

const RICH: &str = r#"{"type":"record","name":"Rich","namespace":"shop","fields":[
  {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID"]}},
  {"name":"hash","type":{"type":"fixed","name":"Hash","size":2}},
  {"name":"either","type":["null","string","long"]},
  {"name":"counts","type":{"type":"map","values":"long"}},
  {"name":"lines","type":{"type":"array","items":{"type":"record","name":"Line","fields":[
    {"name":"sku","type":"string"},{"name":"qty","type":"int"}]}}},
  {"name":"id","type":{"type":"string","logicalType":"uuid"}},
  {"name":"day","type":{"type":"int","logicalType":"date"}},
  {"name":"at","type":{"type":"int","logicalType":"time-millis"}},
  {"name":"ratio","type":"float"},
  {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":6,"scale":2}}]}"#;

/// Long because it checks every column type of one schema in one round trip.
#[test]
fn avro_enum_fixed_union_map_array_and_logical_columns_go_back_out_as_the_types_they_came_from() {
    use crate::engine::schema::avro::AvroSchema;
    let schema = AvroSchema::parse(RICH).unwrap();
    let cache = SchemaCache::offline();
    cache.seed_writer(WriterSchema {
        id: 1,
        schema_type: SchemaType::Avro,
        text: RICH.into(),
        message_type: None,
        references: Vec::new(),
    });
    use apache_avro::types::Value as Avro;
    let row = |status: u32,
               symbol: &str,
               hash: [u8; 2],
               either: Avro,
               n: i64,
               id: &str,
               price: Vec<u8>| {
        Avro::Record(vec![
            ("status".into(), Avro::Enum(status, symbol.into())),
            ("hash".into(), Avro::Fixed(2, hash.to_vec())),
            ("either".into(), either),
            (
                "counts".into(),
                Avro::Map([("a".to_string(), Avro::Long(n))].into()),
            ),
            (
                "lines".into(),
                Avro::Array(vec![Avro::Record(vec![
                    ("sku".into(), Avro::String("x".into())),
                    ("qty".into(), Avro::Int(2)),
                ])]),
            ),
            ("id".into(), Avro::Uuid(id.parse().unwrap())),
            ("day".into(), Avro::Date(19_000)),
            ("at".into(), Avro::TimeMillis(1_000)),
            ("ratio".into(), Avro::Float(0.5)),
            ("price".into(), Avro::Decimal(price.into())),
        ])
    };
    let values = [
        row(
            1,
            "PAID",
            [0, 255],
            Avro::Union(2, Box::new(Avro::Long(7))),
            1,
            "0e3b4a9c-9a53-4f1e-8b53-2b8f1c8a7d10",
            vec![0x01, 0x02],
        ),
        row(
            0,
            "NEW",
            [0, 0],
            Avro::Union(0, Box::new(Avro::Null)),
            2,
            "0e3b4a9c-9a53-4f1e-8b53-2b8f1c8a7d11",
            vec![0xff],
        ),
    ];
    let record = |offset: i64, body: Vec<u8>| Record {
        topic: "rich".into(),
        partition: 0,
        offset,
        timestamp: 0,
        key: None,
        value: Some(body),
        headers: Vec::new(),
    };
    let writer = apache_avro::writer::datum::GenericDatumWriter::builder(&schema.schema)
        .build()
        .unwrap();
    let records: Vec<Record> = values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            record(
                i as i64,
                framing::encode(1, &writer.write_value_to_vec(v).unwrap()),
            )
        })
        .collect();
    let codecs = OnlineCodecs {
        schemas: Some(cache.clone()),
    };
    let source = codecs.resolve(&spec("avro", None), None).unwrap();
    let batch = source.decode("rich", &records).unwrap();
    let text = writer_schema_text(SinkFormat::Avro, &batch.schema(), "rich-out").unwrap();
    for kept in [
        r#"{"name":"shop.Status","type":"enum","symbols":["NEW","PAID"]}"#,
        r#"{"name":"shop.Hash","type":"fixed","size":2}"#,
        r#"["null","string","long"]"#,
        r#"{"type":"string","logicalType":"uuid"}"#,
    ] {
        assert!(text.contains(kept), "{kept} not in {text}");
    }
    let sink = codecs
        .resolve(&spec("avro", Some("rich-out")), Some(&batch.schema()))
        .unwrap();
    cache.seed_subject_id("rich-out-value", 2);
    cache.seed_writer(WriterSchema {
        id: 2,
        schema_type: SchemaType::Avro,
        text,
        message_type: None,
        references: Vec::new(),
    });
    let out = sink.encode("rich-out", &batch).unwrap();
    let again: Vec<Record> = out
        .into_iter()
        .enumerate()
        .map(|(i, r)| record(i as i64, r.value.unwrap()))
        .collect();
    // A fresh source: one codec instance resolves later writer schemas onto its first.
    let fresh = codecs.resolve(&spec("avro", None), None).unwrap();
    let back = fresh.decode("rich-out", &again).unwrap();
    assert_eq!(
        payload_json_rows(&back).unwrap(),
        payload_json_rows(&batch).unwrap()
    );
}

#[test]
fn schema_files_for_the_value_and_the_key_are_interned_under_their_subjects_with_their_types() {
    use crate::engine::columnar::topology::spec::SchemaFile;
    let file = |path: &str, message: Option<&str>, text: &str| SchemaFile {
        path: Located::new(path.to_owned(), Default::default()),
        message: message.map(|m| Located::new(m.to_owned(), Default::default())),
        text: Some(text.to_owned()),
        imports: Vec::new(),
    };
    let proto = "syntax = \"proto3\";\npackage shop;\nmessage A { string user = 1; }\nmessage B { int64 amount = 1; }\n";
    let key = r#"{"type":"object","required":["user"],"properties":{"user":{"type":"string"}}}"#;
    let cache = SchemaCache::offline();
    let codecs = OnlineCodecs {
        schemas: Some(cache.clone()),
    };
    let mut spec = spec("protobuf", Some("orders-out"));
    spec.schema_file = Some(file("o.proto", Some("shop.B"), proto));
    spec.key = Some(Located::new("json-schema".into(), Default::default()));
    spec.key_column = Some(Located::new("user".into(), Default::default()));
    spec.key_schema_file = Some(file("k.json", None, key));
    codecs.resolve(&spec, Some(&orders().schema())).unwrap();
    let value = cache.interned_schema("orders-out-value").unwrap().spec;
    assert_eq!(
        (
            value.schema.as_str(),
            value.schema_type,
            value.message_type.as_deref()
        ),
        (proto, SchemaType::Protobuf, Some("shop.B"))
    );
    let key_spec = cache.interned_schema("orders-out-key").unwrap().spec;
    assert_eq!(
        (key_spec.schema.as_str(), key_spec.schema_type),
        (key, SchemaType::Json)
    );
    // A key file the key column cannot be written with is refused when the topology is built.
    spec.key_schema_file = Some(file("k.json", None, &key.replace("string", "integer")));
    let e = codecs.resolve(&spec, Some(&orders().schema())).unwrap_err();
    assert!(
        e.starts_with("k.json: ") && e.contains("property /user has type integer"),
        "{e}"
    );
}

#[test]
fn a_sink_schema_no_reader_shares_is_refused_before_any_data_flows() {
    let schema = Schema::new(vec![Field::new(
        "at",
        DataType::Timestamp(TimeUnit::Nanosecond, None),
        true,
    )]);
    let e = writer_schema_text(SinkFormat::Avro, &schema, "t").unwrap_err();
    assert!(e.contains("timestamp[ns]"), "{e}");
    let odd = Schema::new(vec![Field::new("odd name", DataType::Int64, true)]);
    let e = writer_schema_text(SinkFormat::Avro, &odd, "t").unwrap_err();
    assert!(e.contains("not a valid Avro field name"), "{e}");
    assert!(writer_schema_text(SinkFormat::JsonSchema, &odd, "t").is_ok());
}

#[test]
fn without_a_registry_an_unprewarmed_subject_fails_the_batch_with_the_subject_named() {
    let cache = SchemaCache::offline();
    let codecs = OnlineCodecs {
        schemas: Some(cache),
    };
    let sink = codecs.resolve(&spec("avro", Some("out")), None).unwrap();
    let e = sink.encode("out", &orders()).unwrap_err();
    assert!(
        e.message.contains("subject out-value has no id"),
        "{}",
        e.message
    );
}

/// A registry that answers every registration with `status` (0: no answer at all).
struct Failing(i32);

impl crate::engine::schema::registry::Registry for Failing {
    fn register(&self, _: &str, _: &SchemaSpec) -> RegistryResult<i32> {
        let mut e = RegistryError::new(self.0, "refused");
        e.transport = self.0 == 0;
        Err(e)
    }
    fn lookup(&self, _: &str, _: &SchemaSpec) -> RegistryResult<RegisteredSchema> {
        unimplemented!()
    }
    fn latest(&self, _: &str) -> RegistryResult<RegisteredSchema> {
        unimplemented!()
    }
    fn version(&self, _: &str, _: i32) -> RegistryResult<RegisteredSchema> {
        unimplemented!()
    }
    fn versions(&self, _: &str) -> RegistryResult<Vec<i32>> {
        unimplemented!()
    }
    fn subjects(&self) -> RegistryResult<Vec<String>> {
        unimplemented!()
    }
    fn schema_by_id(&self, _: i32) -> RegistryResult<RegisteredSchema> {
        unimplemented!()
    }
    fn compatibility(&self, _: Option<&str>) -> RegistryResult<String> {
        unimplemented!()
    }
    fn set_compatibility(&self, _: Option<&str>, _: &str) -> RegistryResult<String> {
        unimplemented!()
    }
    fn delete_subject(&self, _: &str, _: bool) -> RegistryResult<Vec<i32>> {
        unimplemented!()
    }
    fn delete_version(&self, _: &str, _: i32, _: bool) -> RegistryResult<i32> {
        unimplemented!()
    }
    fn id_versions(&self, _: i32) -> RegistryResult<Vec<SubjectVersion>> {
        unimplemented!()
    }
}

#[test]
fn a_registry_that_is_down_fails_the_batch_as_retriable_and_a_refusal_does_not() {
    for (status, retriable) in [(0, true), (503, true), (409, false)] {
        let codecs = OnlineCodecs {
            schemas: Some(SchemaCache::new(Arc::new(Failing(status)))),
        };
        let sink = codecs.resolve(&spec("avro", Some("out")), None).unwrap();
        let e = sink.encode("out", &orders()).unwrap_err();
        assert_eq!(e.retriable, retriable, "{status}: {}", e.message);
        assert!(
            e.message
                .contains("cannot register the sink's writer schema under out-value"),
            "{}",
            e.message
        );
    }
}

#[test]
fn a_row_its_json_schema_file_refuses_is_handed_back_alone_and_the_others_are_framed() {
    // Gzip compresses the framed rows, never the refused row's body: its dead
    // letter reads as plain JSON whatever the sink's codec.
    for name in ["json-schema", "gzip+json-schema"] {
        refused_row_is_handed_back_plain(name);
    }
}

fn refused_row_is_handed_back_plain(name: &str) {
    use crate::engine::columnar::codec::gzip::decompress;
    use crate::engine::columnar::topology::spec::SchemaFile;
    let schema = r#"{"type":"object","properties":{"amount":{"type":"integer","maximum":100}}}"#;
    let cache = SchemaCache::offline();
    let codecs = OnlineCodecs {
        schemas: Some(cache.clone()),
    };
    let mut spec = spec(name, Some("checked"));
    spec.schema_file = Some(SchemaFile {
        path: Located::new("a.json".into(), Default::default()),
        message: None,
        text: Some(schema.into()),
        imports: Vec::new(),
    });
    let codec = codecs.resolve(&spec, None).unwrap();
    cache.seed_subject_id("checked-value", 9);
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("user", DataType::Utf8, false),
            Field::new("amount", DataType::Int64, false),
            Field::new("__partition", DataType::Int32, false),
            Field::new("__offset", DataType::Int64, false),
        ])),
        vec![
            Arc::new(StringArray::from(vec!["a", "b", "c"])) as ArrayRef,
            Arc::new(Int64Array::from(vec![5, 500, 7])),
            Arc::new(arrow_array::Int32Array::from(vec![2, 2, 2])),
            Arc::new(Int64Array::from(vec![40, 41, 42])),
        ],
    )
    .unwrap();
    let encoded = codec.encode_rows("checked", &batch).unwrap();
    let users: Vec<String> = encoded
        .records
        .iter()
        .map(|r| {
            let value = r.value.clone().unwrap();
            let value = match name.starts_with("gzip+") {
                true => decompress(&value, 1 << 20).unwrap(),
                false => value,
            };
            let frame = framing::decode(&value).unwrap();
            assert_eq!(frame.schema_id, 9, "{name}");
            let v: serde_json::Value = serde_json::from_slice(frame.body).unwrap();
            v["user"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(users, ["a", "c"], "{name}");
    let [refused] = encoded.refused.as_slice() else {
        panic!("{name}: {:?}", encoded.refused);
    };
    assert_eq!((refused.partition, refused.offset), (Some(2), Some(41)));
    assert!(
        refused
            .message
            .starts_with("cannot encode records for checked: row 1 (source partition 2 offset 41): JSON Schema validation failed"),
        "{}",
        refused.message
    );
    // The refused row's value is its body, unframed and uncompressed.
    let body: serde_json::Value =
        serde_json::from_slice(refused.record.value.as_deref().unwrap()).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"user": "b", "amount": 500}),
        "{name}"
    );
    // Encoded as a whole, the refused row fails the batch with the same message.
    let e = codec.encode("checked", &batch).unwrap_err();
    assert_eq!(e.message, refused.message);
}
