//! `--on-error dead-letter FILE`: each record that cannot be decoded is appended to
//! FILE as one JSON line — key, value and header values as base64 — with the
//! dead-letter headers of docs/formats.md §10 appended to its own headers. The
//! decode side writes through [`DeadLetterSink`], so a unit test can see what was
//! dead-lettered without a file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::engine::columnar::headers::{
    DLQ_ERROR_CLASS, DLQ_ERROR_MESSAGE, DLQ_SOURCE_OFFSET, DLQ_SOURCE_PARTITION, DLQ_SOURCE_TOPIC,
};
use crate::engine::columnar::record::Record;

/// The stable error class written into `krabka.error.class` (decision D11).
pub const DECODE_ERROR_CLASS: &str = "krabka_streams::DecodeError";

/// Where undecodable records go under `--on-error dead-letter`.
pub trait DeadLetterSink: Send {
    /// Appends `record` (its topic, partition and offset included) with why it failed.
    fn append(&mut self, record: &Record, message: &str) -> std::io::Result<()>;
}

pub struct DeadLetterFile {
    out: BufWriter<File>,
}

fn b64(b: &[u8]) -> Value {
    Value::String(base64::engine::general_purpose::STANDARD.encode(b))
}

impl DeadLetterFile {
    pub fn create(path: &Path) -> std::io::Result<Self> {
        // Appended to; a device or descriptor written in place (`io::atomic_file`).
        let file = crate::io::atomic_file::open_append(path)?;
        Ok(DeadLetterFile {
            out: BufWriter::new(file),
        })
    }
}

impl DeadLetterSink for DeadLetterFile {
    fn append(&mut self, r: &Record, message: &str) -> std::io::Result<()> {
        let mut headers: Vec<Value> = r
            .headers
            .iter()
            .map(|h| json!({"key": h.key, "value": h.value.as_deref().map(b64)}))
            .collect();
        let partition = r.partition.to_string();
        let offset = r.offset.to_string();
        for (k, v) in [
            (DLQ_ERROR_CLASS, DECODE_ERROR_CLASS),
            (DLQ_ERROR_MESSAGE, message),
            (DLQ_SOURCE_TOPIC, r.topic.as_str()),
            (DLQ_SOURCE_PARTITION, partition.as_str()),
            (DLQ_SOURCE_OFFSET, offset.as_str()),
        ] {
            headers.push(json!({"key": k, "value": b64(v.as_bytes())}));
        }
        let line = json!({
            "topic": r.topic,
            "partition": r.partition,
            "offset": r.offset,
            "timestamp": r.timestamp,
            "key": r.key.as_deref().map(b64),
            "value": r.value.as_deref().map(b64),
            "headers": headers,
        });
        serde_json::to_writer(&mut self.out, &line)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}
