//! What `tail` shows: the sink it writes to (a data sink of `io::batch_sink`, or
//! the table preview drawn here on stdout), the progress spinner's condition, and
//! the summary of the typed answer (a line on stderr, or one JSON document).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use serde_json::json;

use crate::cmd::global::{GlobalArgs, OutputMode};
use crate::cmd::output::finish_stdout;
use crate::cmd::tail::plan::OutputPlan;
use crate::cmd::tail::{OutputFormat, TailArgs};
use crate::io::batch_sink::{BatchSink, SinkError, SinkOptions};
use crate::ops::tail::Summary;
use crate::ops::tail::sink::TailSink;

/// The table preview: one table per batch on stdout.
struct TableSink;

impl TailSink for TableSink {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), SinkError> {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        crate::cmd::batch_table::render(&mut out, batch)
            .and_then(|_| out.flush())
            .map_err(SinkError::from)
    }

    fn finish(self: Box<Self>, _fallback: &SchemaRef) -> Result<Vec<PathBuf>, SinkError> {
        Ok(Vec::new())
    }
}

/// The sink the output plan names.
pub fn sink(output: &OutputPlan, args: &TailArgs) -> Box<dyn TailSink> {
    match output.data_format() {
        Some(format) => {
            let mut sink = BatchSink::new(SinkOptions {
                format,
                path: output.path.clone(),
                row_group_size: args.row_group_size,
                rotate_rows: args.rotate_rows,
                rotate_bytes: args.rotate_bytes,
            });
            sink.set_threads(args.threads.resolve());
            Box::new(sink)
        }
        None => Box::new(TableSink),
    }
}

/// The spinner is for a person: stderr a terminal, not `-q`, not `--output json`.
pub fn shows_progress(global: &GlobalArgs) -> bool {
    std::io::stderr().is_terminal()
        && global.output.quiet == 0
        && !matches!(global.output.output, OutputMode::Json)
}

pub fn summary(global: &GlobalArgs, output: &OutputPlan, s: &Summary) {
    if global.output.output == OutputMode::Json {
        let doc = json!({"data": {
            "records": s.records,
            "bytes": s.bytes,
            "skipped": s.skipped,
            "dead_lettered": s.dead_lettered,
            "files": s.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        }});
        // Data on stdout → the report goes to stderr.
        if output.path.is_some() {
            let _ = finish_stdout(writeln!(std::io::stdout(), "{doc}"));
        } else {
            eprintln!("{doc}");
        }
        return;
    }
    let mut line = format!("Processed a total of {} records", s.records);
    if s.skipped > 0 {
        line.push_str(&format!(" ({} undecodable skipped)", s.skipped));
    }
    if s.dead_lettered > 0 {
        line.push_str(&format!(" ({} dead-lettered)", s.dead_lettered));
    }
    eprintln!("{line}");
    if output.format != OutputFormat::Table {
        for f in &s.files {
            tracing::info!("wrote {}", f.display());
        }
    }
}
