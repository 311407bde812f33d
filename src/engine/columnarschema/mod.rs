//! Bridges between registry schemas and Arrow: the Avro → Arrow type mapping and a
//! decoder from Avro binary straight into Arrow builders (behaviour §3), and the
//! [`writer_schemas::WriterSchemas`] seam through which decoders get writer schemas
//! by id without ever blocking on the registry.

pub mod avro;
pub mod json_schema;
pub mod writer_schemas;
