//! The human preview of batches on a terminal: one comfy-table per batch, binary
//! shown as text when it is printable UTF-8 and as hex otherwise, the `__headers`
//! cell as `name=value` pairs, long cells cut.

use std::io::Write;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;

use crate::cmd::output::table;
use crate::engine::columnar::headers::decode_headers;
use crate::engine::columnar::json_values::column_to_json;
use crate::engine::columnar::reserved::HEADERS_COLUMN;

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
        Ok(hs) => hs
            .iter()
            .map(|h| match &h.value {
                Some(v) => format!("{}={}", h.key, show_bytes(v)),
                None => format!("{}=null", h.key),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Err(e) => format!("<{e}>"),
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
            DataType::Utf8 => {
                let a = c.as_string::<i32>();
                a.iter()
                    .map(|v| v.map_or_else(|| "null".to_string(), str::to_string))
                    .collect()
            }
            _ => column_to_json(c.as_ref(), f)
                .unwrap_or_else(|e| vec![format!("<{e}>"); c.len()])
                .into_iter()
                .map(|s| s.trim_matches('"').to_string())
                .collect(),
        };
        columns.push(cells);
    }
    for row in 0..batch.num_rows() {
        t.add_row(columns.iter().map(|c| cut(c[row].clone())));
    }
    writeln!(out, "{t}")
}
