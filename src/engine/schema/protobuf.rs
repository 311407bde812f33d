//! Protobuf with prost-reflect: `.proto` text compiled in memory by `protox` (a pure
//! Rust compiler, so no `protoc` is needed anywhere), message lookup by full name,
//! message-index paths (formats §2) and bodies to and from JSON.
//!
//! Registered text: the `.proto` file exactly as given (Go prints the descriptor back;
//! byte-identical printing across languages is not attainable, and the registry keys
//! identity on the text, so we keep the author's text). messageType = the full name.
//! Imports resolve against schema references (by their `name`) and the well-known
//! `google/protobuf/*.proto` files.

use std::collections::BTreeMap;

use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, FileDescriptor, Kind, MessageDescriptor};
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};

use crate::engine::schema::cache::{SchemaCache, WriterSchema};
use crate::engine::schema::error::{SchemaError, SchemaResult};
use crate::engine::schema::framing;
use crate::engine::schema::registry::{SchemaSpec, SchemaType};

/// The file name the main schema is compiled under when it has none.
pub const MAIN_FILE: &str = "schema.proto";

/// A compiled `.proto` file with its imports.
#[derive(Debug, Clone)]
pub struct ProtoSchema {
    pub pool: DescriptorPool,
    pub file: FileDescriptor,
}

/// Resolves imports from texts held in memory.
struct MemoryResolver {
    files: BTreeMap<String, String>,
}

impl FileResolver for MemoryResolver {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        match self.files.get(name) {
            Some(text) => File::from_source(name, text),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

impl ProtoSchema {
    /// Compiles `text` (imports taken from `references`: import name → text).
    /// Failure: `invalid Protobuf schema: …`.
    pub fn parse(text: &str, references: &[(String, String)]) -> SchemaResult<Self> {
        let mut files: BTreeMap<String, String> = references.iter().cloned().collect();
        files.insert(MAIN_FILE.to_string(), text.to_string());
        let mut chain = ChainFileResolver::new();
        chain.add(MemoryResolver { files });
        chain.add(GoogleFileResolver::new());
        let mut compiler = protox::Compiler::with_file_resolver(chain);
        compiler.include_imports(true);
        compiler
            .open_file(MAIN_FILE)
            .map_err(|e| SchemaError::invalid(format!("invalid Protobuf schema: {e}")))?;
        let pool = compiler.descriptor_pool();
        let file = pool.get_file_by_name(MAIN_FILE).ok_or_else(|| {
            SchemaError::invalid("invalid Protobuf schema: the file did not compile")
        })?;
        Ok(ProtoSchema { pool, file })
    }

    /// The writer schema of a cached id, references as imports.
    pub fn from_writer(writer: &WriterSchema) -> SchemaResult<Self> {
        let refs: Vec<(String, String)> = writer
            .references
            .iter()
            .map(|r| (r.name.clone(), r.spec_text.clone()))
            .collect();
        Self::parse(&writer.text, &refs).map_err(|e| {
            SchemaError::invalid(format!("invalid writer schema {}: {e}", writer.id as u32))
        })
    }

    /// The message by full name, or the file's first message when `name` is `None`.
    pub fn message(&self, name: Option<&str>) -> SchemaResult<MessageDescriptor> {
        match name {
            Some(n) => self
                .pool
                .get_message_by_name(n.trim_start_matches('.'))
                .ok_or_else(|| {
                    SchemaError::invalid(format!(
                        "Protobuf message {n} is not defined in the schema"
                    ))
                }),
            None => self
                .file
                .messages()
                .next()
                .ok_or_else(|| SchemaError::invalid("the Protobuf schema defines no message")),
        }
    }

    /// The message at a message-index path (formats §2) of this file.
    pub fn message_at(&self, path: &[i32]) -> SchemaResult<MessageDescriptor> {
        let missing = || {
            SchemaError::invalid(format!(
                "Protobuf message-index path {path:?} names no message of the schema"
            ))
        };
        let (first, rest) = path.split_first().ok_or_else(missing)?;
        let mut msg = usize::try_from(*first)
            .ok()
            .and_then(|i| self.file.messages().nth(i))
            .ok_or_else(missing)?;
        for i in rest {
            msg = usize::try_from(*i)
                .ok()
                .and_then(|i| msg.child_messages().nth(i))
                .ok_or_else(missing)?;
        }
        Ok(msg)
    }
}

/// The message-index path of `msg`: its position at each nesting level, outermost first.
pub fn message_index_path(msg: &MessageDescriptor) -> Vec<i32> {
    let mut path = Vec::new();
    let mut current = msg.clone();
    loop {
        let siblings: Vec<MessageDescriptor> = match current.parent_message() {
            Some(parent) => parent.child_messages().collect(),
            None => current.parent_file().messages().collect(),
        };
        let pos = siblings
            .iter()
            .position(|m| m.full_name() == current.full_name())
            .unwrap_or(0);
        path.push(pos as i32);
        match current.parent_message() {
            Some(parent) => current = parent,
            None => break,
        }
    }
    path.reverse();
    path
}

/// Decodes a protobuf body of `msg` into JSON (proto field names, enums as names,
/// 64-bit integers as strings as in the protobuf JSON mapping). Trailing garbage fails.
pub fn decode_body(msg: &MessageDescriptor, body: &[u8]) -> SchemaResult<serde_json::Value> {
    let dynamic = DynamicMessage::decode(msg.clone(), body)
        .map_err(|e| SchemaError::Deserialize(e.to_string()))?;
    to_json(&dynamic)
}

/// JSON of a decoded message with the options `decode_body` uses.
pub fn to_json(dynamic: &DynamicMessage) -> SchemaResult<serde_json::Value> {
    let options = prost_reflect::SerializeOptions::new().use_proto_field_name(true);
    dynamic
        .serialize_with_options(serde_json::value::Serializer, &options)
        .map_err(|e| SchemaError::Deserialize(e.to_string()))
}

/// Encodes a JSON value (protobuf JSON mapping) as a body of `msg`, map entries
/// sorted by key at every depth (D2: the same value always gives the same bytes).
pub fn encode_body(msg: &MessageDescriptor, value: &serde_json::Value) -> SchemaResult<Vec<u8>> {
    let dynamic = DynamicMessage::deserialize(msg.clone(), value.clone())
        .map_err(|e| SchemaError::Serialize(e.to_string()))?;
    sort_map_entries(msg, &dynamic.encode_to_vec()).map_err(SchemaError::Serialize)
}

/// Encodes a message, map entries sorted by key at every depth (D2).
pub fn encode_message(msg: &DynamicMessage) -> SchemaResult<Vec<u8>> {
    use prost_reflect::ReflectMessage as _;
    sort_map_entries(&msg.descriptor(), &msg.encode_to_vec()).map_err(SchemaError::Serialize)
}

fn map_key(v: &prost_reflect::Value) -> Result<prost_reflect::MapKey, String> {
    use prost_reflect::{MapKey, Value};
    Ok(match v {
        Value::Bool(b) => MapKey::Bool(*b),
        Value::I32(n) => MapKey::I32(*n),
        Value::I64(n) => MapKey::I64(*n),
        Value::U32(n) => MapKey::U32(*n),
        Value::U64(n) => MapKey::U64(*n),
        Value::String(s) => MapKey::String(s.clone()),
        other => return Err(format!("{other:?} is not a valid map key")),
    })
}

fn read_varint(buf: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos).ok_or("truncated varint")?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("varint is too long".into())
}

fn write_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The entries of one map field being collected: (tag, [(key, encoded entry)]).
type PendingMap = (u64, Vec<(prost_reflect::MapKey, Vec<u8>)>);

/// Re-emits an encoded message with each map field's entries sorted by key (entries of
/// one map field are contiguous, as prost-reflect writes them) and nested messages
/// rewritten the same way. Everything else is copied byte for byte.
fn sort_map_entries(msg: &MessageDescriptor, buf: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(buf.len());
    let mut pos = 0;
    let mut pending: Option<PendingMap> = None;
    let flush = |pending: &mut Option<PendingMap>, out: &mut Vec<u8>| {
        if let Some((tag, mut entries)) = pending.take() {
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            for (_, entry) in entries {
                write_varint(tag, out);
                write_varint(entry.len() as u64, out);
                out.extend_from_slice(&entry);
            }
        }
    };
    while pos < buf.len() {
        let start = pos;
        let tag = read_varint(buf, &mut pos)?;
        let (number, wire) = ((tag >> 3) as u32, (tag & 7) as u8);
        let field = msg.get_field(number);
        if pending.as_ref().is_some_and(|(t, _)| *t != tag) {
            flush(&mut pending, &mut out);
        }
        match wire {
            0 => {
                read_varint(buf, &mut pos)?;
            }
            1 => pos += 8,
            5 => pos += 4,
            2 => {
                let len = read_varint(buf, &mut pos)? as usize;
                let body = buf.get(pos..pos + len).ok_or("truncated field")?;
                pos += len;
                if let Some(f) = &field
                    && let Kind::Message(inner) = f.kind()
                {
                    let body = sort_map_entries(&inner, body)?;
                    if f.is_map() {
                        let entry = DynamicMessage::decode(inner.clone(), body.as_slice())
                            .map_err(|e| e.to_string())?;
                        let key = map_key(entry.get_field(&inner.map_entry_key_field()).as_ref())?;
                        pending
                            .get_or_insert_with(|| (tag, Vec::new()))
                            .1
                            .push((key, body));
                    } else {
                        write_varint(tag, &mut out);
                        write_varint(body.len() as u64, &mut out);
                        out.extend_from_slice(&body);
                    }
                    continue;
                }
            }
            3 | 4 => return Err("groups are not supported when sorting map entries".into()),
            other => return Err(format!("invalid wire type {other}")),
        }
        if pos > buf.len() {
            return Err("truncated field".into());
        }
        out.extend_from_slice(&buf[start..pos]);
    }
    flush(&mut pending, &mut out);
    Ok(out)
}

/// A Protobuf serde over the schema cache (semantics §2).
#[derive(Debug, Clone)]
pub struct ProtobufSerde {
    cache: SchemaCache,
    subject: String,
    message: MessageDescriptor,
}

impl ProtobufSerde {
    /// Compiles the schema, picks `message_type` (default: the first message) and
    /// interns the text with the message's full name.
    pub fn new(
        cache: &SchemaCache,
        subject: &str,
        text: &str,
        message_type: Option<&str>,
    ) -> SchemaResult<Self> {
        let schema = ProtoSchema::parse(text, &[])?;
        let message = schema.message(message_type)?;
        cache.intern(
            subject,
            SchemaSpec {
                schema: text.to_string(),
                schema_type: SchemaType::Protobuf,
                message_type: Some(message.full_name().to_string()),
                references: Vec::new(),
            },
        );
        Ok(ProtobufSerde {
            cache: cache.clone(),
            subject: subject.to_string(),
            message,
        })
    }

    pub fn serialize(&self, value: Option<&serde_json::Value>) -> SchemaResult<Option<Vec<u8>>> {
        let Some(value) = value else {
            return Ok(None);
        };
        let id = self.cache.require_subject_id(&self.subject)?;
        let body = encode_body(&self.message, value)?;
        let path = message_index_path(&self.message);
        Ok(Some(framing::encode_protobuf(id as u32, &path, &body)?))
    }

    /// The writer id must be cached (so an unknown id takes the pending path); a cached
    /// messageType that differs from ours is refused. Index paths are not checked.
    pub fn deserialize(&self, data: Option<&[u8]>) -> SchemaResult<Option<serde_json::Value>> {
        let Some(data) = data else {
            return Ok(None);
        };
        let frame = framing::decode_protobuf(data)?;
        let writer = self.cache.writer_schema(frame.schema_id)?;
        let local = self.message.full_name();
        if let Some(w) = writer.message_type.as_deref()
            && w != local
        {
            return Err(SchemaError::Deserialize(format!(
                "Protobuf messageType mismatch: writer {w}, local {local}"
            )));
        }
        decode_body(&self.message, frame.body)
            .map(Some)
            .map_err(crate::engine::schema::avro::wrap_deserialize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORDERS: &str = r#"syntax = "proto3";
package demo;
message Order {
  string id = 1;
  int64 amount = 2;
  message Line { string sku = 1; }
  repeated Line lines = 3;
}
message Refund { string order_id = 1; }
"#;

    #[test]
    fn index_paths_follow_declaration_order_and_nesting() {
        let s = ProtoSchema::parse(ORDERS, &[]).unwrap();
        let order = s.message(Some("demo.Order")).unwrap();
        assert_eq!(message_index_path(&order), vec![0]);
        let line = s.message(Some("demo.Order.Line")).unwrap();
        assert_eq!(message_index_path(&line), vec![0, 0]);
        let refund = s.message(Some("demo.Refund")).unwrap();
        assert_eq!(message_index_path(&refund), vec![1]);
        assert_eq!(
            s.message_at(&[0, 0]).unwrap().full_name(),
            "demo.Order.Line"
        );
        assert!(s.message_at(&[2]).is_err());
    }

    #[test]
    fn bodies_round_trip_through_json() {
        let s = ProtoSchema::parse(ORDERS, &[]).unwrap();
        let order = s.message(Some("demo.Order")).unwrap();
        let v = serde_json::json!({"id": "o-1", "amount": "120", "lines": [{"sku": "a"}]});
        let body = encode_body(&order, &v).unwrap();
        assert_eq!(decode_body(&order, &body).unwrap(), v);
    }

    #[test]
    fn map_entries_are_encoded_sorted_by_key_at_every_depth() {
        let text = r#"syntax = "proto3";
message M { map<string, int32> a = 1; map<int64, M> nested = 2; string tail = 3; }"#;
        let s = ProtoSchema::parse(text, &[]).unwrap();
        let m = s.message(Some("M")).unwrap();
        let keys: Vec<String> = (0..40).map(|i| format!("k{i:02}")).collect();
        let mut a = serde_json::Map::new();
        for k in keys.iter().rev() {
            a.insert(k.clone(), serde_json::json!(1));
        }
        let v = serde_json::json!({"a": a, "nested": {"5": {"a": {"z": 1, "b": 2}}, "-1": {}}, "tail": "t"});
        let first = encode_body(&m, &v).unwrap();
        for _ in 0..5 {
            assert_eq!(encode_body(&m, &v).unwrap(), first);
        }
        // Decoding and comparing to the input proves nothing was lost.
        let back = decode_body(&m, &first).unwrap();
        assert_eq!(back["a"].as_object().unwrap().len(), 40);
        assert_eq!(back["nested"]["5"]["a"]["b"], 2);
        assert_eq!(back["tail"], "t");
        // The keys are in sorted order on the wire.
        let text_bytes = String::from_utf8_lossy(&first).into_owned();
        let positions: Vec<usize> = keys
            .iter()
            .map(|k| text_bytes.find(k.as_str()).unwrap())
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_messagetype_mismatch_is_refused() {
        let cache = SchemaCache::offline();
        let serde = ProtobufSerde::new(&cache, "o-value", ORDERS, Some("demo.Order")).unwrap();
        cache.seed_writer(WriterSchema {
            id: 3,
            schema_type: SchemaType::Protobuf,
            text: ORDERS.into(),
            message_type: Some("demo.Refund".into()),
            references: vec![],
        });
        let frame = framing::encode_protobuf(3, &[1], &[]).unwrap();
        let e = serde.deserialize(Some(&frame)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot deserialize schema value: Protobuf messageType mismatch: writer demo.Refund, local demo.Order"
        );
    }

    #[test]
    fn malformed_proto_text_is_an_invalid_schema() {
        let e = ProtoSchema::parse("syntax = \"proto3\"; message {", &[]).unwrap_err();
        assert!(
            e.to_string().starts_with("invalid Protobuf schema: "),
            "{e}"
        );
    }
}

#[cfg(test)]
mod hostile_tests {
    use super::*;

    #[test]
    fn deeply_nested_message_declarations_are_an_error_or_compile_without_overflow() {
        for depth in [40, 2_000] {
            let mut text = String::from("syntax = \"proto3\";\npackage deep;\n");
            for i in 0..depth {
                text.push_str(&format!("message M{i} {{ int32 v = 1;\n"));
            }
            text.push_str(&"}\n".repeat(depth));
            match ProtoSchema::parse(&text, &[]) {
                Ok(schema) => assert!(schema.message(Some("deep.M0")).is_ok()),
                Err(e) => assert!(e.to_string().contains("invalid Protobuf schema"), "{e}"),
            }
        }
    }

    #[test]
    fn a_deeply_nested_value_is_a_decode_error_not_a_stack_overflow() {
        let schema = ProtoSchema::parse(
            "syntax = \"proto3\";\npackage deep;\nmessage Node { Node child = 1; int32 v = 2; }\n",
            &[],
        )
        .unwrap();
        let node = schema.message(Some("deep.Node")).unwrap();
        // Field 1 (length-delimited) wrapping itself 100 000 times.
        let mut body: Vec<u8> = vec![0x10, 0x01];
        for _ in 0..100_000 {
            let mut outer = vec![0x0a];
            let mut len = body.len();
            while len >= 0x80 {
                outer.push((len as u8) | 0x80);
                len >>= 7;
            }
            outer.push(len as u8);
            outer.extend_from_slice(&body);
            body = outer;
        }
        let err = decode_body(&node, &body).unwrap_err().to_string();
        assert!(err.contains("recursion"), "{err}");
    }
}
