//! The data the benches share: the 8-field registry-framed Avro `Order` of issue 5
//! (~120 B: strings, a decimal, an enum, a nested record, nullable unions), how many
//! records a run uses, and registering a value schema in the in-repo registry.
//! Shared by `tail`, `tail_broker` and `run_broker`.

#![allow(dead_code)]

use apache_avro::types::Value as Avro;
use krabka_streams::engine::schema::registry::{Registry, SchemaSpec};
use krabka_streams::io::registry_client::{HttpRegistry, HttpRegistryOptions};

pub const ORDER_SCHEMA: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[
 {"name":"order_id","type":"string"},
 {"name":"user","type":"string"},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
 {"name":"quantity","type":"int"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID","SHIPPED"]}},
 {"name":"address","type":{"type":"record","name":"Address","fields":[{"name":"street","type":"string"},{"name":"city","type":"string"},{"name":"zip","type":["null","string"],"default":null}]}},
 {"name":"note","type":["null","string"],"default":null}]}"#;

/// Order number `i` of [`ORDER_SCHEMA`]: deterministic, varied enough that no column
/// is constant (a zip is null every 4th order, a note every 2nd).
pub fn order(i: usize) -> Avro {
    let users = ["alice", "bob", "carol", "dave", "erin"];
    let cents = 1000 + (i as i64 * 37) % 100_000;
    let nullable = |present: bool, text: &str| {
        if present {
            Avro::Union(1, Box::new(Avro::String(text.into())))
        } else {
            Avro::Union(0, Box::new(Avro::Null))
        }
    };
    Avro::Record(vec![
        (
            "order_id".into(),
            Avro::String(format!(
                "{:08x}-2024-1129-{:04x}-{i:012x}",
                (i as u64).wrapping_mul(2_654_435_761) as u32,
                i % 65_536
            )),
        ),
        (
            "user".into(),
            Avro::String(format!("{}@example.com", users[i % users.len()])),
        ),
        (
            "amount".into(),
            Avro::Decimal(apache_avro::Decimal::from(cents.to_be_bytes().to_vec())),
        ),
        ("quantity".into(), Avro::Int((i % 17) as i32)),
        (
            "ts".into(),
            Avro::TimestampMillis(1_732_870_800_000 + i as i64),
        ),
        (
            "status".into(),
            Avro::Enum((i % 3) as u32, ["NEW", "PAID", "SHIPPED"][i % 3].into()),
        ),
        (
            "address".into(),
            Avro::Record(vec![
                (
                    "street".into(),
                    Avro::String(format!("{} Korenmarkt", i % 300)),
                ),
                ("city".into(), Avro::String("Ghent".into())),
                ("zip".into(), nullable(!i.is_multiple_of(4), "9000")),
            ]),
        ),
        (
            "note".into(),
            nullable(i.is_multiple_of(2), "leave at the door"),
        ),
    ])
}

/// Whether this is a `cargo bench` run, and how many records it uses: `var` when set,
/// else `bench_default`, else (`cargo test --all-targets` runs benches without
/// `--bench`) a 2000-record smoke run.
pub fn run_size(var: &str, bench_default: usize) -> (bool, usize) {
    let bench = std::env::args().any(|a| a == "--bench");
    let n = std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if bench { bench_default } else { 2_000 });
    (bench, n)
}

/// Registers `schema` (Avro) under `<topic>-value` at `registry_url`; its id.
pub fn register_value_schema(registry_url: &str, topic: &str, schema: &str) -> u32 {
    let client = HttpRegistry::new(HttpRegistryOptions::new(registry_url.to_owned())).unwrap();
    client
        .register(
            &format!("{topic}-value"),
            &SchemaSpec {
                schema: schema.into(),
                ..Default::default()
            },
        )
        .unwrap() as u32
}
