//! Bridges between registry schemas (Avro, Protobuf, JSON Schema) and Arrow.
//! Filled in with the `tail` capability.
