//! The Avro → Arrow mapping and decoder over every type of semantics §3, on bytes
//! written by hand (zigzag varints) and by apache-avro.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Int32Type, Int64Type, TimestampMillisecondType};
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};

use super::decoder::{ENUM_KEY, ENUM_SYMBOLS_KEY, FIXED_KEY, LOGICAL_KEY, RowDecoder, UNION_KEY};
use super::schema::AvroSchema;
use crate::engine::columnar::reserved::JSON_KEY;

fn long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        let b = (z & 0x7f) as u8;
        z >>= 7;
        if z == 0 {
            out.push(b);
            break;
        }
        out.push(b | 0x80);
    }
}

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    long(out, b.len() as i64);
    out.extend_from_slice(b);
}

const ALL_TYPES: &str = r#"{"type":"record","name":"All","namespace":"t","fields":[
  {"name":"b","type":"boolean"},
  {"name":"i","type":"int"},
  {"name":"l","type":"long"},
  {"name":"f","type":"float"},
  {"name":"d","type":"double"},
  {"name":"by","type":"bytes"},
  {"name":"s","type":"string"},
  {"name":"date","type":{"type":"int","logicalType":"date"}},
  {"name":"tm","type":{"type":"int","logicalType":"time-millis"}},
  {"name":"tu","type":{"type":"long","logicalType":"time-micros"}},
  {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"tsu","type":{"type":"long","logicalType":"timestamp-micros"}},
  {"name":"lts","type":{"type":"long","logicalType":"local-timestamp-millis"}},
  {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
  {"name":"big","type":{"type":"fixed","name":"Big","size":20,"logicalType":"decimal","precision":45,"scale":3}},
  {"name":"id","type":{"type":"string","logicalType":"uuid"}},
  {"name":"fx","type":{"type":"fixed","name":"Four","size":4}},
  {"name":"e","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}},
  {"name":"nested","type":{"type":"record","name":"Inner","fields":[{"name":"x","type":"int"}]}},
  {"name":"arr","type":{"type":"array","items":"int"}},
  {"name":"m","type":{"type":"map","values":"long"}},
  {"name":"opt","type":["null","string"]},
  {"name":"u","type":["null","int","string"]},
  {"name":"self","type":["null","All"]}
]}"#;

fn row(out: &mut Vec<u8>, amount_cents: i64, opt: Option<&str>, union_string: bool) {
    out.push(1); // b
    long(out, -7); // i
    long(out, 1 << 40); // l
    out.extend_from_slice(&1.5f32.to_le_bytes());
    out.extend_from_slice(&(-2.25f64).to_le_bytes());
    bytes(out, &[0, 255]);
    bytes(out, "héllo".as_bytes());
    long(out, 19_000); // date
    long(out, 3_600_000); // time-millis
    long(out, 1_000_001); // time-micros
    long(out, 1_732_870_800_000); // ts ms
    long(out, 1_732_870_800_000_123); // ts us
    long(out, 5); // local ts
    let dec = (amount_cents as i128).to_be_bytes();
    bytes(out, &dec[12..]); // 4-byte two's complement
    let mut big = [0u8; 20];
    big[19] = 0x2a;
    out.extend_from_slice(&big);
    bytes(out, b"6f1c3e52-7cd2-4b4e-8d0c-3f5a0d9c1e77");
    out.extend_from_slice(b"abcd");
    long(out, 1); // GREEN
    long(out, 9); // nested.x
    long(out, 2); // array block of 2
    long(out, 1);
    long(out, 2);
    long(out, 0);
    long(out, -1); // map block of 1 with byte size
    long(out, 3);
    bytes(out, b"k");
    long(out, 4);
    long(out, 0);
    match opt {
        None => long(out, 0),
        Some(s) => {
            long(out, 1);
            bytes(out, s.as_bytes());
        }
    }
    if union_string {
        long(out, 2);
        bytes(out, b"two");
    } else {
        long(out, 1);
        long(out, 7);
    }
    long(out, 1); // self: All
    // a minimal recursive value would need every field again: use null instead at depth 1
    // by writing branch 0 here — so rewind: replace with null.
    out.pop();
    long(out, 0);
}

fn column(
    cols: &[(arrow_schema::FieldRef, ArrayRef)],
    name: &str,
) -> (arrow_schema::FieldRef, ArrayRef) {
    cols.iter()
        .find(|(f, _)| f.name() == name)
        .cloned()
        .unwrap()
}

#[test]
fn every_avro_type_maps_to_its_arrow_type_and_decodes() {
    let schema = Arc::new(AvroSchema::parse(ALL_TYPES).unwrap());
    let mut d = RowDecoder::new(schema).unwrap();
    let mut body = Vec::new();
    row(&mut body, -12345, Some("x"), false);
    d.decode(&body).unwrap();
    let mut body = Vec::new();
    row(&mut body, 99, None, true);
    d.decode(&body).unwrap();
    let cols = d.finish().unwrap();
    let types: Vec<(String, DataType, bool)> = cols
        .iter()
        .map(|(f, _)| (f.name().clone(), f.data_type().clone(), f.is_nullable()))
        .collect();
    let ty = |n: &str| types.iter().find(|t| t.0 == n).unwrap().1.clone();
    assert_eq!(ty("date"), DataType::Date32);
    assert_eq!(ty("tm"), DataType::Time32(TimeUnit::Millisecond));
    assert_eq!(ty("tu"), DataType::Time64(TimeUnit::Microsecond));
    assert_eq!(
        ty("ts"),
        DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
    );
    assert_eq!(
        ty("tsu"),
        DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
    );
    assert_eq!(ty("lts"), DataType::Timestamp(TimeUnit::Millisecond, None));
    assert_eq!(ty("dec"), DataType::Decimal128(10, 2));
    assert_eq!(ty("big"), DataType::Decimal256(45, 3));
    assert_eq!(ty("fx"), DataType::FixedSizeBinary(4));
    assert!(matches!(ty("m"), DataType::Map(_, false)));
    assert!(matches!(ty("arr"), DataType::List(_)));
    assert!(
        !types.iter().find(|t| t.0 == "s").unwrap().2,
        "plain fields are not nullable"
    );
    assert!(types.iter().find(|t| t.0 == "opt").unwrap().2);

    let (f, id) = column(&cols, "id");
    assert_eq!(
        f.metadata().get(LOGICAL_KEY).map(String::as_str),
        Some("uuid")
    );
    assert_eq!(
        id.as_string::<i32>().value(0),
        "6f1c3e52-7cd2-4b4e-8d0c-3f5a0d9c1e77"
    );
    let (f, _) = column(&cols, "fx");
    assert_eq!(
        f.metadata().get(FIXED_KEY).map(String::as_str),
        Some("t.Four")
    );
    let (f, e) = column(&cols, "e");
    assert_eq!(
        f.metadata().get(ENUM_KEY).map(String::as_str),
        Some("t.Color")
    );
    assert_eq!(
        f.metadata().get(ENUM_SYMBOLS_KEY).map(String::as_str),
        Some("RED,GREEN")
    );
    assert_eq!(e.as_string::<i32>().value(1), "GREEN");
    let (_, dec) = column(&cols, "dec");
    assert_eq!(dec.as_primitive::<Decimal128Type>().value(0), -12345);
    let (_, ts) = column(&cols, "ts");
    assert_eq!(
        ts.as_primitive::<TimestampMillisecondType>().value(0),
        1_732_870_800_000
    );
    let (_, i) = column(&cols, "i");
    assert_eq!(i.as_primitive::<Int32Type>().value(0), -7);
    let (_, s) = column(&cols, "s");
    assert_eq!(s.as_string::<i32>().value(1), "héllo");
    let (_, arr) = column(&cols, "arr");
    let list = arr.as_list::<i32>();
    assert_eq!(list.value(0).as_primitive::<Int32Type>().values(), &[1, 2]);
    let (_, m) = column(&cols, "m");
    let map = m.as_map();
    assert_eq!(
        map.value(0).column(1).as_primitive::<Int64Type>().value(0),
        4
    );
    let (_, opt) = column(&cols, "opt");
    assert!(opt.is_valid(0) && opt.is_null(1));
    let (f, u) = column(&cols, "u");
    assert_eq!(
        f.metadata().get(UNION_KEY).map(String::as_str),
        Some("true")
    );
    let u = u.as_struct();
    assert_eq!(u.column_names(), ["int", "string"]);
    assert_eq!(u.column(0).as_primitive::<Int32Type>().value(0), 7);
    assert!(u.column(1).is_null(0) && u.column(0).is_null(1));
    assert_eq!(u.column(1).as_string::<i32>().value(1), "two");
    let (f, rec) = column(&cols, "self");
    assert_eq!(f.data_type(), &DataType::Utf8);
    assert_eq!(f.metadata().get(JSON_KEY).map(String::as_str), Some("true"));
    assert!(rec.is_null(0));
}

#[test]
fn recursive_records_become_avro_json_text() {
    let schema = Arc::new(
        AvroSchema::parse(
            r#"{"type":"record","name":"Node","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","Node"]}]}"#,
        )
        .unwrap(),
    );
    let mut d = RowDecoder::new(schema).unwrap();
    let mut body = Vec::new();
    long(&mut body, 1);
    long(&mut body, 1); // next: Node
    long(&mut body, 2);
    long(&mut body, 1); // next: Node
    long(&mut body, 3);
    long(&mut body, 0); // null
    d.decode(&body).unwrap();
    let cols = d.finish().unwrap();
    assert_eq!(
        cols[1].1.as_string::<i32>().value(0),
        // Avro JSON text keeps the schema's field order (serde_json preserve_order).
        r#"{"v":2,"next":{"Node":{"v":3,"next":null}}}"#
    );
}

#[test]
fn mapping_errors_name_the_field() {
    let err = |s: &str| {
        RowDecoder::new(Arc::new(AvroSchema::parse(s).unwrap()))
            .err()
            .unwrap()
            .0
    };
    assert_eq!(
        err(r#"{"type":"record","name":"R","fields":[{"name":"n","type":"null"}]}"#),
        "Avro field has only null branches: n"
    );
    assert_eq!(
        err(r#"{"type":"record","name":"R","fields":[{"name":"u","type":["int","int"]}]}"#),
        "Avro union branch names collide in field u"
    );
    assert_eq!(
        err(
            r#"{"type":"record","name":"R","fields":[{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":80}}]}"#
        ),
        "Avro decimal precision above 76 is unsupported in field d: 80"
    );
}

#[test]
fn truncated_trailing_and_bad_branch_bytes_are_errors_not_panics() {
    let schema = Arc::new(AvroSchema::parse(ALL_TYPES).unwrap());
    let mut body = Vec::new();
    row(&mut body, 1, Some("x"), true);
    for cut in 0..body.len() {
        let mut d = RowDecoder::new(schema.clone()).unwrap();
        assert!(d.decode(&body[..cut]).is_err(), "cut at {cut}");
    }
    let mut d = RowDecoder::new(schema.clone()).unwrap();
    let mut long_body = body.clone();
    long_body.push(0);
    assert_eq!(
        d.decode(&long_body).unwrap_err().0,
        "1 trailing bytes after the Avro value"
    );
    let mut d = RowDecoder::new(schema.clone()).unwrap();
    let err = d.decode(&body[..body.len() - 1]).unwrap_err().0;
    assert!(err.starts_with("field \""), "names the field: {err}");
    assert!(err.contains("near byte "), "names the offset: {err}");
    // Random garbage never panics.
    let mut seed = 0x9e3779b97f4a7c15u64;
    for _ in 0..2000 {
        let mut junk = body.clone();
        for _ in 0..3 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = (seed as usize) % junk.len();
            junk[at] = (seed >> 32) as u8;
        }
        let mut d = RowDecoder::new(schema.clone()).unwrap();
        let _ = d.decode(&junk);
    }
}

#[test]
fn apache_avro_bytes_decode_to_the_same_values() {
    use apache_avro::types::Value;
    let text = r#"{"type":"record","name":"Order","fields":[
        {"name":"id","type":"string"},{"name":"amount","type":"long"},
        {"name":"tags","type":{"type":"array","items":"string"}},
        {"name":"note","type":["null","string"],"default":null}]}"#;
    let schema = apache_avro::Schema::parse_str(text).unwrap();
    let value = Value::Record(vec![
        ("id".into(), Value::String("o-1".into())),
        ("amount".into(), Value::Long(-42)),
        (
            "tags".into(),
            Value::Array(vec![Value::String("a".into()), Value::String("b".into())]),
        ),
        (
            "note".into(),
            Value::Union(1, Box::new(Value::String("n".into()))),
        ),
    ]);
    let body = apache_avro::writer::datum::GenericDatumWriter::builder(&schema)
        .build()
        .and_then(|w| w.write_value_to_vec(value))
        .unwrap();
    let mut d = RowDecoder::new(Arc::new(AvroSchema::parse(text).unwrap())).unwrap();
    d.decode(&body).unwrap();
    let cols = d.finish().unwrap();
    assert_eq!(cols[1].1.as_primitive::<Int64Type>().value(0), -42);
    assert_eq!(cols[3].1.as_string::<i32>().value(0), "n");
}

mod codec {
    use std::sync::Arc;

    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;

    use crate::engine::columnar::codec::{CodecError, ValueDecoder};
    use crate::engine::columnarschema::avro::codec::AvroValueDecoder;
    use crate::engine::columnarschema::writer_schemas::{WriterSchema, WriterSchemas};
    use crate::engine::schema::cache::SchemaCache;
    use crate::engine::schema::error::{FetchPendingError, SchemaResult};
    use crate::engine::schema::framing;
    use crate::engine::schema::registry::SchemaType;

    const V1: &str = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"}]}"#;
    const V2: &str = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"},{"name":"b","type":"string","default":"dflt"}]}"#;

    /// An offline cache holding Avro writer schemas without references.
    fn seeded(schemas: &[(i32, &str)]) -> SchemaCache {
        let cache = SchemaCache::offline();
        for (id, text) in schemas {
            cache.seed_writer(WriterSchema {
                id: *id,
                schema_type: SchemaType::Avro,
                text: text.to_string(),
                message_type: None,
                references: Vec::new(),
            });
        }
        cache
    }

    fn body(text: &str, fields: Vec<(&str, apache_avro::types::Value)>) -> Vec<u8> {
        let schema = apache_avro::Schema::parse_str(text).unwrap();
        let v = apache_avro::types::Value::Record(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        );
        apache_avro::writer::datum::GenericDatumWriter::builder(&schema)
            .build()
            .and_then(|w| w.write_value_to_vec(v))
            .unwrap()
    }

    #[test]
    fn records_of_another_writer_schema_are_resolved_against_the_reader_schema() {
        use apache_avro::types::Value as V;
        let schemas: Arc<dyn WriterSchemas> = Arc::new(seeded(&[(1, V1), (2, V2)]));
        // Reader = first writer schema (v1): a v2 record drops the added field.
        let mut d = AvroValueDecoder::new(schemas.clone());
        d.append(Some(&framing::encode(
            1,
            &body(V1, vec![("a", V::Long(1))]),
        )))
        .unwrap();
        d.append(Some(&framing::encode(
            2,
            &body(V2, vec![("a", V::Long(2)), ("b", V::String("x".into()))]),
        )))
        .unwrap();
        let cols = d.finish().unwrap();
        assert_eq!(cols.len(), 1);
        assert_eq!(cols[0].1.as_primitive::<Int64Type>().values(), &[1, 2]);
        // Reader fixed to v2: a v1 record gets the default.
        let reader = WriterSchema {
            id: -1,
            schema_type: SchemaType::Avro,
            text: V2.into(),
            message_type: None,
            references: Vec::new(),
        };
        let mut d = AvroValueDecoder::with_reader_schema(schemas, reader).unwrap();
        d.append(Some(&framing::encode(
            1,
            &body(V1, vec![("a", V::Long(7))]),
        )))
        .unwrap();
        let cols = d.finish().unwrap();
        assert_eq!(cols[1].1.as_string::<i32>().value(0), "dflt");
    }

    #[test]
    fn invalid_utf8_found_in_bulk_is_traced_back_to_its_record() {
        use crate::engine::columnar::batch::BatchDecoder;
        use crate::engine::columnar::record::Record;
        const S: &str = r#"{"type":"record","name":"S","fields":[{"name":"s","type":"string"}]}"#;
        let schemas: Arc<dyn WriterSchemas> = Arc::new(seeded(&[(1, S)]));
        let mut decoder = BatchDecoder::new(None, Box::new(AvroValueDecoder::new(schemas)));
        let record = |offset: i64, body: &[u8]| Record {
            offset,
            value: Some(framing::encode(1, body)),
            ..Default::default()
        };
        let records = [
            record(0, b"\x04ok"),
            record(1, b"\x04\xff\xfe"),
            record(2, b"\x04ok"),
        ];
        let refs: Vec<&Record> = records.iter().collect();
        let failure = decoder.decode(&refs).unwrap_err();
        assert_eq!(failure.index, 1, "{}", failure.error);
        assert_eq!(
            failure.error.to_string(),
            "cannot deserialize schema value: invalid UTF-8 in Avro string"
        );
        let refs = [&records[0], &records[2]];
        assert_eq!(decoder.decode(&refs).unwrap().num_rows(), 2);
    }

    struct AlwaysPending;
    impl WriterSchemas for AlwaysPending {
        fn writer_schema(&self, id: i32) -> SchemaResult<Arc<WriterSchema>> {
            Err(FetchPendingError { id: id as u32 }.into())
        }
    }

    #[test]
    fn an_unknown_writer_id_is_a_retriable_pending_error_and_frames_are_checked_first() {
        let mut d = AvroValueDecoder::new(Arc::new(AlwaysPending));
        let err = d.append(Some(&framing::encode(7, b"\x02"))).unwrap_err();
        assert!(err.is_retriable());
        assert_eq!(err.to_string(), "writer schema for id 7 is pending fetch");
        let err = d.append(Some(b"\x01\x00\x00\x00\x07")).unwrap_err();
        assert_eq!(
            err,
            CodecError::invalid("invalid schema frame magic byte 0x01")
        );
        assert!(
            d.append(None).is_err(),
            "a tombstone before any value has no columns"
        );
    }

    #[test]
    fn a_tombstone_into_required_columns_names_the_field() {
        let schemas: Arc<dyn WriterSchemas> = Arc::new(seeded(&[(1, V1)]));
        let mut d = AvroValueDecoder::new(schemas);
        d.append(Some(&framing::encode(
            1,
            &body(V1, vec![("a", apache_avro::types::Value::Long(1))]),
        )))
        .unwrap();
        let err = d.append(None).unwrap_err();
        assert_eq!(err.to_string(), "required Avro field is null: a");
        d.reset();
        assert!(d.finish().unwrap()[0].1.is_empty());
    }
}

fn nested_arrays(depth: usize) -> String {
    let mut text = String::from(r#""long""#);
    for _ in 0..depth {
        text = format!(r#"{{"type":"array","items":{text}}}"#);
    }
    text
}

#[test]
fn a_schema_nested_past_the_depth_limit_is_a_clear_error() {
    for depth in [super::schema::MAX_AVRO_DEPTH, 5_000] {
        let err = AvroSchema::parse(&nested_arrays(depth)).err().unwrap();
        assert!(
            err.0.contains("more than 32 deep") || err.0.contains("recursion limit"),
            "{}",
            err.0
        );
    }
    // Depth built from named records referring to earlier ones, not from JSON nesting.
    let mut text =
        String::from(r#"[{"type":"record","name":"R0","fields":[{"name":"v","type":"long"}]}"#);
    for i in 1..40 {
        text.push_str(&format!(
            r#",{{"type":"record","name":"R{i}","fields":[{{"name":"f","type":"R{}"}}]}}"#,
            i - 1
        ));
    }
    text.push(']');
    let err = AvroSchema::parse(&text).err().unwrap();
    assert!(err.0.contains("more than 32 deep"), "{}", err.0);
}

#[test]
fn a_schema_that_expands_exponentially_is_refused() {
    let mut text =
        String::from(r#"[{"type":"record","name":"R0","fields":[{"name":"v","type":"long"}]}"#);
    for i in 1..30 {
        text.push_str(&format!(
            r#",{{"type":"record","name":"R{i}","fields":[{{"name":"a","type":"R{p}"}},{{"name":"b","type":"R{p}"}}]}}"#,
            p = i - 1
        ));
    }
    text.push(']');
    let err = AvroSchema::parse(&text).err().unwrap();
    assert!(
        err.0.contains("expands to more than 100000 types"),
        "{}",
        err.0
    );
}

#[test]
fn the_deepest_schema_allowed_maps_and_decodes_on_a_small_stack() {
    let depth = super::schema::MAX_AVRO_DEPTH - 1;
    let schema = Arc::new(AvroSchema::parse(&nested_arrays(depth)).unwrap());
    let mut decoder = RowDecoder::new(schema).unwrap();
    // One item per level down to a single long, then each level's end-of-blocks.
    let mut body = Vec::new();
    for _ in 0..depth {
        long(&mut body, 1);
    }
    long(&mut body, 7);
    body.extend(std::iter::repeat_n(0, depth));
    decoder.decode(&body).unwrap();
    decoder.finish().unwrap();
}

#[test]
fn a_deeply_recursive_value_is_a_decode_error_not_a_stack_overflow() {
    let schema = Arc::new(
        AvroSchema::parse(
            r#"{"type":"record","name":"Top","fields":[{"name":"list","type":
                {"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"]}]}}]}"#,
        )
        .unwrap(),
    );
    let mut decoder = RowDecoder::new(schema).unwrap();
    // Branch 1 (Node) 100 000 times, then branch 0 (null).
    let mut body = Vec::new();
    for _ in 0..100_000 {
        long(&mut body, 1);
    }
    long(&mut body, 0);
    let err = decoder.decode(&body).unwrap_err();
    assert!(err.0.contains("nested too deeply"), "{}", err.0);
}
