//! The schema-registry seam: types of the Confluent REST contract and the
//! [`Registry`] trait the engine talks through (the HTTP client lives in `io`).

use std::fmt;

/// The registry's schema kinds. Avro is the default and is never sent as `schemaType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum SchemaType {
    #[default]
    Avro,
    Protobuf,
    Json,
}

impl SchemaType {
    /// The `schemaType` wire value; `None` for Avro (omitted on the wire).
    pub fn wire_name(self) -> Option<&'static str> {
        match self {
            SchemaType::Avro => None,
            SchemaType::Protobuf => Some("PROTOBUF"),
            SchemaType::Json => Some("JSON"),
        }
    }

    /// Parses a `schemaType` value; absent means Avro.
    pub fn from_wire(text: Option<&str>) -> Result<Self, String> {
        match text.map(str::to_ascii_uppercase).as_deref() {
            None | Some("") | Some("AVRO") => Ok(SchemaType::Avro),
            Some("PROTOBUF") => Ok(SchemaType::Protobuf),
            Some("JSON") => Ok(SchemaType::Json),
            Some(other) => Err(format!("unknown schemaType {other}")),
        }
    }
}

impl fmt::Display for SchemaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.wire_name().unwrap_or("AVRO"))
    }
}

/// A reference from one schema to another registered schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaReference {
    pub name: String,
    pub subject: String,
    pub version: i32,
}

/// What is registered or looked up: the text and its identity fields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchemaSpec {
    pub schema: String,
    pub schema_type: SchemaType,
    /// krabka extension: full Protobuf message name.
    pub message_type: Option<String>,
    pub references: Vec<SchemaReference>,
}

/// A schema as the registry answers it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RegisteredSchema {
    pub subject: Option<String>,
    pub id: i32,
    pub version: Option<i32>,
    pub spec: SchemaSpec,
}

/// A failed registry call. `status` is the HTTP status, or −1 when no usable HTTP answer came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryError {
    pub status: i32,
    /// The registry's `error_code` (40401, 40403, 409, 42201, …) when the body had one.
    pub error_code: Option<i64>,
    pub message: String,
    /// No HTTP answer at all (connect, send, timeout or body read failed).
    pub transport: bool,
}

/// Registry `error_code`s callers branch on (semantics §1).
pub const SUBJECT_NOT_FOUND: i64 = 40401;
pub const VERSION_NOT_FOUND: i64 = 40402;
pub const SCHEMA_NOT_FOUND: i64 = 40403;
pub const INCOMPATIBLE_SCHEMA: i64 = 409;
pub const INVALID_SCHEMA: i64 = 42201;
pub const INVALID_VERSION: i64 = 42202;

impl RegistryError {
    /// An error with that status; −1 counts as a transport failure.
    pub fn new(status: i32, message: impl Into<String>) -> Self {
        RegistryError {
            status,
            error_code: None,
            message: message.into(),
            transport: status == -1,
        }
    }

    /// An answer that came but cannot be used (not JSON, missing field): status −1, never retried.
    pub fn protocol(message: impl Into<String>) -> Self {
        RegistryError {
            transport: false,
            ..RegistryError::new(-1, message)
        }
    }

    /// 429, 5xx and transport failures are worth another attempt.
    pub fn is_retriable(&self) -> bool {
        self.transport || self.status == 429 || self.status >= 500
    }

    /// No HTTP answer at all: the registry is unreachable or timed out.
    pub fn is_unreachable(&self) -> bool {
        self.transport
    }

    /// The registry's `error_code`, or the HTTP status when the body had none.
    pub fn code(&self) -> Option<i64> {
        self.error_code
            .or((self.status > 0).then_some(i64::from(self.status)))
    }
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RegistryError {}

pub type RegistryResult<T> = Result<T, RegistryError>;

/// The Confluent-compatible registry operations the engine needs.
pub trait Registry: Send + Sync {
    /// `POST /subjects/{s}/versions`: registers (idempotently) and returns the id.
    fn register(&self, subject: &str, spec: &SchemaSpec) -> RegistryResult<i32>;
    /// `POST /subjects/{s}`: the exact schema under the subject, or 40403.
    fn lookup(&self, subject: &str, spec: &SchemaSpec) -> RegistryResult<RegisteredSchema>;
    /// `GET /subjects/{s}/versions/latest`.
    fn latest(&self, subject: &str) -> RegistryResult<RegisteredSchema>;
    /// `GET /subjects/{s}/versions/{v}`.
    fn version(&self, subject: &str, version: i32) -> RegistryResult<RegisteredSchema>;
    /// `GET /subjects/{s}/versions`.
    fn versions(&self, subject: &str) -> RegistryResult<Vec<i32>>;
    /// `GET /subjects`.
    fn subjects(&self) -> RegistryResult<Vec<String>>;
    /// `GET /schemas/ids/{id}` (the id printed as unsigned 32-bit).
    fn schema_by_id(&self, id: i32) -> RegistryResult<RegisteredSchema>;
    /// `GET /config[/{s}]` → `compatibilityLevel`.
    fn compatibility(&self, subject: Option<&str>) -> RegistryResult<String>;
    /// `PUT /config[/{s}]` with `{"compatibility": level}` → the stored `compatibility`.
    fn set_compatibility(&self, subject: Option<&str>, level: &str) -> RegistryResult<String>;
    /// `DELETE /subjects/{s}[?permanent=true]` → the versions it had.
    fn delete_subject(&self, subject: &str, permanent: bool) -> RegistryResult<Vec<i32>>;
    /// `DELETE /subjects/{s}/versions/{v}[?permanent=true]` → the deleted version.
    fn delete_version(&self, subject: &str, version: i32, permanent: bool) -> RegistryResult<i32>;
    /// `GET /schemas/ids/{id}/versions` → every (subject, version) using the id.
    fn id_versions(&self, id: i32) -> RegistryResult<Vec<SubjectVersion>>;
}

/// One (subject, version) pair, as `GET /schemas/ids/{id}/versions` lists them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SubjectVersion {
    pub subject: String,
    pub version: i32,
}

/// Percent-encodes one path segment: every byte outside RFC 3986 unreserved (decision D8).
pub fn escape_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `TopicNameStrategy`: `<topic>-key` or `<topic>-value`.
pub fn subject_for(topic: &str, is_key: bool) -> String {
    format!("{topic}-{}", if is_key { "key" } else { "value" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_are_one_escaped_path_segment() {
        assert_eq!(escape_segment("a/b c"), "a%2Fb%20c");
        assert_eq!(escape_segment("orders-value"), "orders-value");
        assert_eq!(escape_segment("a+b~"), "a%2Bb~");
        assert_eq!(escape_segment("röle"), "r%C3%B6le");
    }

    #[test]
    fn avro_is_never_sent_as_a_schema_type() {
        assert_eq!(SchemaType::Avro.wire_name(), None);
        assert_eq!(SchemaType::from_wire(None).unwrap(), SchemaType::Avro);
        assert_eq!(
            SchemaType::from_wire(Some("PROTOBUF")).unwrap(),
            SchemaType::Protobuf
        );
        assert!(SchemaType::from_wire(Some("XML")).is_err());
    }

    #[test]
    fn only_429_5xx_and_transport_errors_are_retriable() {
        assert!(!RegistryError::protocol("cannot parse schema registry response").is_retriable());
        assert!(RegistryError::new(500, "x").is_retriable());
        assert!(RegistryError::new(429, "x").is_retriable());
        assert!(RegistryError::new(-1, "x").is_retriable());
        assert!(!RegistryError::new(404, "x").is_retriable());
        assert!(!RegistryError::new(422, "x").is_retriable());
    }
}
