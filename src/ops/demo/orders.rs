//! The demo's data set: Avro orders registered through the registry, framed,
//! keyed by user and carrying headers, produced to the embedded cluster and read back.

use std::time::{Duration, Instant};

use apache_avro::Schema;
use apache_avro::types::Value as AvroValue;
use serde_json::Value;

use crate::engine::columnar::headers::Header;
use crate::engine::columnar::record::OutRecord;
use crate::engine::columnar::runner::group::Producer;
use crate::engine::schema::avro::{AvroSchema, decode_body, registered_text};
use crate::engine::schema::framing;
use crate::engine::schema::registry::{Registry, SchemaSpec, subject_for};
use crate::io::kafka::runner_producer::RunnerProducer;
use crate::io::kafka::settings::KafkaSettings;
use crate::io::kafka::topic_reader::{RawRecord, TopicReader};
use crate::ops::demo::failed;
use crate::ops::{Error, Result};

pub const ORDERS_TOPIC: &str = "orders";
pub const ORDERS_PARTITIONS: i32 = 3;
/// The first order's timestamp (2024-11-29 09:00 UTC); one order a second after it.
pub const BASE_TS: i64 = 1_732_870_800_000;

/// The orders value schema, as a user would keep it in `orders.avsc`.
pub const ORDER_SCHEMA: &str = r#"{"type":"record","name":"Order","namespace":"demo","fields":[{"name":"order_id","type":"string"},{"name":"user","type":"string"},{"name":"country","type":"string"},{"name":"amount","type":"long"},{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}}]}"#;

/// How long producing may take to be acknowledged.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(10);
/// How long reading the orders back may take.
const READ_TIMEOUT: Duration = Duration::from_secs(20);

/// One order of the demo data set.
#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    pub order_id: String,
    pub user: String,
    pub country: String,
    pub amount: i64,
    pub ts: i64,
}

/// A small realistic data set: users in a few countries, amounts around the 100 threshold.
pub fn orders(base_ts: i64) -> Vec<Order> {
    let users = [
        ("alice", "NL"),
        ("bob", "BE"),
        ("carol", "DE"),
        ("dave", "NL"),
    ];
    let amounts = [120, 35, 260, 99, 101, 15, 480, 75, 150, 210, 5, 130];
    amounts
        .iter()
        .enumerate()
        .map(|(i, amount)| {
            let (user, country) = users[i % users.len()];
            Order {
                order_id: format!("o-{:04}", i + 1),
                user: user.to_string(),
                country: country.to_string(),
                amount: *amount,
                ts: base_ts + (i as i64) * 1_000,
            }
        })
        .collect()
}

fn avro_body(schema: &Schema, o: &Order) -> Result<Vec<u8>> {
    let value = AvroValue::Record(vec![
        ("order_id".into(), AvroValue::String(o.order_id.clone())),
        ("user".into(), AvroValue::String(o.user.clone())),
        ("country".into(), AvroValue::String(o.country.clone())),
        ("amount".into(), AvroValue::Long(o.amount)),
        ("ts".into(), AvroValue::TimestampMillis(o.ts)),
    ]);
    apache_avro::writer::datum::GenericDatumWriter::builder(schema)
        .build()
        .and_then(|w| w.write_value_to_vec(value))
        .map_err(|e| Error::failure(format!("cannot encode demo order: {e}")))
}

/// The orders' value subject and the id the registry gave its schema.
pub struct Registered {
    pub subject: String,
    pub id: i32,
}

/// Registers the value schema.
pub fn register(registry: &dyn Registry) -> Result<Registered> {
    let subject = subject_for(ORDERS_TOPIC, false);
    // The registered text is the canonical form (D1), as every serde registers it.
    let spec = SchemaSpec {
        schema: registered_text(ORDER_SCHEMA).map_err(failed)?,
        ..Default::default()
    };
    let id = registry
        .register(&subject, &spec)
        .map_err(|e| Error::failure(format!("register {subject}: {e}")))?;
    Ok(Registered { subject, id })
}

/// Produces the orders, framed with `schema_id`, keyed by user (partitioned by the
/// murmur2 of the key, as the Java client does), with headers.
pub fn produce(kafka: &KafkaSettings, schema_id: i32, data: &[Order]) -> Result<()> {
    let schema = Schema::parse_str(ORDER_SCHEMA)
        .map_err(|e| Error::failure(format!("invalid demo schema: {e}")))?;
    let mut kafka = kafka.clone();
    kafka.set("linger.ms", "0");
    let mut producer = RunnerProducer::new(&kafka, FLUSH_TIMEOUT)?;
    for (i, o) in data.iter().enumerate() {
        let header = |key: &str, value: &str| Header {
            key: key.to_owned(),
            value: Some(value.as_bytes().to_vec()),
        };
        let record = OutRecord {
            key: Some(o.user.as_bytes().to_vec()),
            value: Some(framing::encode(schema_id as u32, &avro_body(&schema, o)?)),
            timestamp: o.ts,
            headers: vec![
                header("trace-id", &format!("trace-{i:04}")),
                header("source", "demo"),
            ],
        };
        producer.send(ORDERS_TOPIC, &record)?;
    }
    Ok(producer.flush()?)
}

/// One record read back: where it lives and what it holds.
#[derive(Debug, Clone)]
pub struct ReadBack {
    pub partition: i32,
    pub offset: i64,
    pub key: String,
    pub headers: Vec<(String, Option<String>)>,
    pub schema_id: i32,
    pub value: Value,
}

/// A registry-framed Avro value decoded with its writer schema from the registry:
/// (the schema id, the value as JSON).
pub fn decode_framed(
    registry: &dyn Registry,
    payload: &[u8],
) -> std::result::Result<(i32, Value), String> {
    let frame = framing::decode(payload).map_err(|e| e.to_string())?;
    let writer = registry
        .schema_by_id(frame.schema_id)
        .map_err(|e| format!("writer schema {}: {e}", frame.schema_id))?;
    let schema = AvroSchema::parse(&writer.spec.schema)
        .map_err(|e| format!("invalid writer schema {}: {e}", frame.schema_id))?;
    let value =
        decode_body(&schema, frame.schema_id, None, frame.body).map_err(|e| e.to_string())?;
    Ok((frame.schema_id, value))
}

/// Reads `topic` from the beginning of every partition until `expected` records came
/// or `timeout` passed; answers what came, in arrival order.
pub(crate) fn read_from_start(
    kafka: &KafkaSettings,
    topic: &str,
    expected: usize,
    timeout: Duration,
) -> Result<Vec<RawRecord>> {
    // One bound for finding the topic and reading it.
    let deadline = Instant::now() + timeout;
    let reader = TopicReader::open(kafka, topic, timeout)?
        .ok_or_else(|| Error::failure(format!("topic {topic} does not exist")))?;
    let mut records = Vec::new();
    if expected > 0 {
        reader.follow(true, &|| Instant::now() >= deadline, |record| {
            records.push(record);
            records.len() < expected
        })?;
    }
    Ok(records)
}

/// Reads `expected` records from every partition and decodes them with the writer schema from the registry.
pub fn read_back(
    kafka: &KafkaSettings,
    registry: &dyn Registry,
    expected: usize,
) -> Result<Vec<ReadBack>> {
    let records = read_from_start(kafka, ORDERS_TOPIC, expected, READ_TIMEOUT)?;
    if records.len() < expected {
        return Err(Error::unreachable(format!(
            "read {} of {expected} demo records before the deadline",
            records.len()
        )));
    }
    let mut out = records
        .into_iter()
        .map(|r| {
            let (schema_id, value) =
                decode_framed(registry, r.value.as_deref().unwrap_or_default()).map_err(|e| {
                    Error::failure(format!(
                        "{ORDERS_TOPIC}/{} offset {}: {e}",
                        r.partition, r.offset
                    ))
                })?;
            let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
            Ok(ReadBack {
                partition: r.partition,
                offset: r.offset,
                key: text(r.key.as_deref().unwrap_or_default()),
                headers: r
                    .headers
                    .iter()
                    .map(|(key, value)| (key.clone(), value.as_deref().map(text)))
                    .collect(),
                schema_id,
                value,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    out.sort_by_key(|r| (r.partition, r.offset));
    Ok(out)
}
