//! The demo's data set: Avro orders registered through the registry, framed,
//! keyed by user and carrying headers, produced to the embedded cluster and read back.

use std::time::{Duration, Instant};

use apache_avro::Schema;
use apache_avro::types::Value as AvroValue;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};

use crate::cmd::exit::{CliError, CliResult};
use crate::engine::schema::framing;
use crate::engine::schema::registry::{Registry, SchemaSpec, subject_for};
use crate::io::kafka::headers::message_headers;

pub const ORDERS_TOPIC: &str = "orders";
pub const ORDERS_PARTITIONS: i32 = 3;

/// The orders value schema, as a user would keep it in `orders.avsc`.
pub const ORDER_SCHEMA: &str = r#"{"type":"record","name":"Order","namespace":"demo","fields":[{"name":"order_id","type":"string"},{"name":"user","type":"string"},{"name":"country","type":"string"},{"name":"amount","type":"long"},{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}}]}"#;

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

fn avro_body(schema: &Schema, o: &Order) -> CliResult<Vec<u8>> {
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
        .map_err(|e| CliError::failure(format!("cannot encode demo order: {e}")))
}

/// Registers the value schema and returns (subject, id).
pub fn register(registry: &dyn Registry) -> CliResult<(String, i32)> {
    let subject = subject_for(ORDERS_TOPIC, false);
    // The registered text is the canonical form (D1), as every serde registers it.
    let schema = crate::engine::schema::avro::registered_text(ORDER_SCHEMA)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let spec = SchemaSpec {
        schema,
        ..Default::default()
    };
    let id = registry
        .register(&subject, &spec)
        .map_err(|e| CliError::failure(format!("register {subject}: {e}")))?;
    Ok((subject, id))
}

/// Produces the orders, framed with `schema_id`, keyed by user, with headers.
pub fn produce(bootstrap: &str, schema_id: i32, data: &[Order]) -> CliResult<()> {
    let schema = Schema::parse_str(ORDER_SCHEMA)
        .map_err(|e| CliError::failure(format!("invalid demo schema: {e}")))?;
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("linger.ms", "0")
        .set("partitioner", "murmur2_random")
        .create()
        .map_err(|e| CliError::failure(format!("create producer: {e}")))?;
    for (i, o) in data.iter().enumerate() {
        let value = framing::encode(schema_id as u32, &avro_body(&schema, o)?);
        let trace = format!("trace-{i:04}");
        let headers = OwnedHeaders::new()
            .insert(Header {
                key: "trace-id",
                value: Some(trace.as_bytes()),
            })
            .insert(Header {
                key: "source",
                value: Some("demo".as_bytes()),
            });
        let record = BaseRecord::to(ORDERS_TOPIC)
            .key(o.user.as_bytes())
            .payload(&value)
            .timestamp(o.ts)
            .headers(headers);
        producer
            .send(record)
            .map_err(|(e, _)| CliError::failure(format!("produce to {ORDERS_TOPIC}: {e}")))?;
        producer.poll(Duration::ZERO);
    }
    producer
        .flush(Duration::from_secs(10))
        .map_err(|e| CliError::unreachable(format!("flush {ORDERS_TOPIC}: {e}")))
}

/// One record read back: where it lives and what it holds.
#[derive(Debug, Clone)]
pub struct ReadBack {
    pub partition: i32,
    pub offset: i64,
    pub key: String,
    pub headers: Vec<(String, Option<String>)>,
    pub schema_id: i32,
    pub value: serde_json::Value,
}

/// Reads `expected` records from every partition and decodes them with the writer schema from the registry.
pub fn read_back(
    bootstrap: &str,
    registry: &dyn Registry,
    expected: usize,
) -> CliResult<Vec<ReadBack>> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "krabka-streams-demo-reader")
        .set("enable.auto.commit", "false")
        .create()
        .map_err(|e| CliError::failure(format!("create consumer: {e}")))?;
    let mut tpl = TopicPartitionList::new();
    for p in 0..ORDERS_PARTITIONS {
        tpl.add_partition_offset(ORDERS_TOPIC, p, Offset::Beginning)
            .map_err(|e| CliError::failure(e.to_string()))?;
    }
    consumer
        .assign(&tpl)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while out.len() < expected && Instant::now() < deadline {
        let Some(msg) = consumer.poll(Duration::from_millis(200)) else {
            continue;
        };
        let msg = msg.map_err(|e| CliError::failure(format!("consume {ORDERS_TOPIC}: {e}")))?;
        let payload = msg.payload().unwrap_or_default();
        let frame = framing::decode(payload).map_err(|e| {
            CliError::failure(format!(
                "{ORDERS_TOPIC}/{} offset {}: {e}",
                msg.partition(),
                msg.offset()
            ))
        })?;
        let writer = registry
            .schema_by_id(frame.schema_id)
            .map_err(|e| CliError::failure(format!("writer schema {}: {e}", frame.schema_id)))?;
        let schema = Schema::parse_str(&writer.spec.schema).map_err(|e| {
            CliError::failure(format!("invalid writer schema {}: {e}", frame.schema_id))
        })?;
        let mut body = frame.body;
        let value = apache_avro::reader::datum::GenericDatumReader::builder(&schema)
            .build()
            .and_then(|r| r.read_value(&mut body))
            .map_err(|e| {
                CliError::failure(format!(
                    "{ORDERS_TOPIC}/{} offset {}: {e}",
                    msg.partition(),
                    msg.offset()
                ))
            })?;
        let headers = message_headers(&msg)
            .into_iter()
            .map(|(key, value)| (key, value.map(|v| String::from_utf8_lossy(&v).into_owned())))
            .collect();
        out.push(ReadBack {
            partition: msg.partition(),
            offset: msg.offset(),
            key: String::from_utf8_lossy(msg.key().unwrap_or_default()).into_owned(),
            headers,
            schema_id: frame.schema_id,
            value: serde_json::Value::try_from(value)
                .map_err(|e| CliError::failure(format!("cannot show the decoded value: {e}")))?,
        });
    }
    if out.len() < expected {
        return Err(CliError::unreachable(format!(
            "read {} of {expected} demo records before the deadline",
            out.len()
        )));
    }
    out.sort_by_key(|r| (r.partition, r.offset));
    Ok(out)
}
