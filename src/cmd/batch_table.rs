//! The human preview of batches on a terminal (`tail`'s table output, the demo's
//! previews): one comfy-table per batch, of the
//! text view (`engine::columnar::text_view`): JSON-text cells shown as their text
//! when they are a string and as compact JSON otherwise (the `__headers` object),
//! other binary as text when it is printable UTF-8 and as hex otherwise, control
//! characters escaped (a cell never drives the terminal), long cells cut.

use std::io::Write;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;

use crate::cmd::output::table;
use crate::engine::columnar::headers::decode_headers;
use crate::engine::columnar::json_values::column_to_json;
use crate::engine::columnar::reserved::{HEADERS_COLUMN, JSON_KEY};
use crate::engine::columnar::text_view::{BinaryText, headers_json};

const MAX_CELL: usize = 48;

fn cut(mut s: String) -> String {
    if s.chars().count() > MAX_CELL {
        s = s.chars().take(MAX_CELL - 1).collect();
        s.push('…');
    }
    s
}

fn show_bytes(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(t) if t.chars().all(|c| !c.is_control()) => t.to_string(),
        _ => format!("0x{}", hex::encode(b)),
    }
}

fn show_headers(cell: &[u8]) -> String {
    match decode_headers(cell) {
        Ok(hs) => headers_json(&hs, BinaryText::Auto).to_string(),
        Err(e) => format!("<{e}>"),
    }
}

/// A JSON fragment as a person reads it: a string as its text (quoted as JSON
/// when it holds control characters), anything else as compact JSON.
fn show_json(fragment: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(fragment) {
        Ok(serde_json::Value::String(t)) if !t.chars().any(char::is_control) => t,
        Ok(v) => v.to_string(),
        Err(_) => fragment.to_string(),
    }
}

/// Renders one batch as a table.
pub fn render(out: &mut dyn Write, batch: &RecordBatch) -> std::io::Result<()> {
    let schema = batch.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let mut t = table(&names);
    let mut columns: Vec<Vec<String>> = Vec::with_capacity(names.len());
    for (f, c) in schema.fields().iter().zip(batch.columns()) {
        let cells: Vec<String> = match c.data_type() {
            DataType::Binary => {
                let a = c.as_binary::<i32>();
                (0..a.len())
                    .map(|i| {
                        if a.is_null(i) {
                            "null".to_string()
                        } else if f.name() == HEADERS_COLUMN {
                            show_headers(a.value(i))
                        } else {
                            show_bytes(a.value(i))
                        }
                    })
                    .collect()
            }
            DataType::Utf8 if f.metadata().get(JSON_KEY).is_some_and(|v| v == "true") => {
                column_to_json(c.as_ref(), f)
                    .unwrap_or_else(|e| vec![format!("<{e}>"); c.len()])
                    .iter()
                    .map(|s| show_json(s))
                    .collect()
            }
            DataType::Utf8 => {
                let a = c.as_string::<i32>();
                a.iter()
                    .map(|v| match v {
                        None => "null".to_string(),
                        Some(t) if t.chars().any(char::is_control) => {
                            serde_json::Value::String(t.to_string()).to_string()
                        }
                        Some(t) => t.to_string(),
                    })
                    .collect()
            }
            _ => column_to_json(c.as_ref(), f)
                .unwrap_or_else(|e| vec![format!("<{e}>"); c.len()])
                .iter()
                .map(|s| show_json(s))
                .collect(),
        };
        columns.push(cells);
    }
    for row in 0..batch.num_rows() {
        t.add_row(columns.iter().map(|c| cut(c[row].clone())));
    }
    writeln!(out, "{t}")
}
