//! The setup of the tests that read registry-framed Avro orders: a Tansu broker, the
//! in-repo registry over HTTP, the topics, the orders' schema under `orders-value`
//! and the framed records on `orders`.

use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::registry::{Registry, SchemaSpec};
use krabka_streams::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use krabka_streams::io::registry_server::{RegistryServer, RegistryServerOptions};

use super::admin::{create_topics, produce_bytes};
use super::tansu::Tansu;

/// The running broker and registry (stopped on drop) and a client of the registry.
pub struct RegisteredOrders {
    pub tansu: Tansu,
    pub bootstrap: String,
    pub registry: RegistryServer,
    pub client: HttpRegistry,
}

/// Starts both servers, creates `topics` (name, partitions), registers the Avro
/// `schema` under `orders-value` and produces the bodies `bodies` encodes with it to
/// partition 0 of `orders`, framed with its id and keyed `o0`, `o1`, … in order.
pub fn start_registered_orders(
    topics: &[(&str, i32)],
    schema: &str,
    bodies: impl FnOnce(&apache_avro::Schema) -> Vec<Vec<u8>>,
) -> RegisteredOrders {
    let tansu = Tansu::start();
    let bootstrap = tansu.bootstrap();
    let registry = RegistryServer::start(RegistryServerOptions::default()).unwrap();
    create_topics(&bootstrap, topics);
    let client = HttpRegistry::new(HttpRegistryOptions::new(registry.url())).unwrap();
    let spec = SchemaSpec {
        schema: schema.into(),
        ..Default::default()
    };
    let id = client.register("orders-value", &spec).unwrap() as u32;
    let parsed = apache_avro::Schema::parse_str(schema).unwrap();
    let records: Vec<(i32, String, Vec<u8>)> = bodies(&parsed)
        .iter()
        .enumerate()
        .map(|(i, body)| (0, format!("o{i}"), framing::encode(id, body)))
        .collect();
    produce_bytes(&bootstrap, "orders", &records);
    RegisteredOrders {
        tansu,
        bootstrap,
        registry,
        client,
    }
}
