//! Which registry format a sink writes. Apart from the registry sink so that the
//! schema files a sink may be given (`file_schema_sink`) and the sink itself both
//! name it without importing each other.

use crate::engine::columnarschema::avro_writer::avro_name;
use crate::engine::schema::registry::SchemaType;

/// The registry formats a sink can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkFormat {
    Avro,
    JsonSchema,
    Protobuf,
}

impl SinkFormat {
    pub(super) fn schema_type(self) -> SchemaType {
        match self {
            SinkFormat::Avro => SchemaType::Avro,
            SinkFormat::JsonSchema => SchemaType::Json,
            SinkFormat::Protobuf => SchemaType::Protobuf,
        }
    }

    /// The registered `messageType` of a sink writing `topic`: the derived file's
    /// top message (Protobuf only).
    pub(super) fn message_type(self, topic: &str) -> Option<String> {
        (self == SinkFormat::Protobuf).then(|| avro_name(topic))
    }
}
