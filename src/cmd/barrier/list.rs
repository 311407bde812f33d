//! `barrier list`: groups and cuts of `__barrier_state` as a table, JSON, or data rows
//! (arguments and rendering; what is listed is `ops::barrier::list`).

use std::io::Write;
use std::path::PathBuf;

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, refuse_binary_on_tty, table};
use crate::cmd::render::barrier::{CUT_HEADERS, cut_row, cut_summary_json};
use crate::engine::columnar::barrier::{BARRIER_STATE_TOPIC, BarrierCut};
use crate::engine::time::rfc3339_millis;
use crate::io::batch_sink::{
    BatchSink, DEFAULT_ROW_GROUP_ROWS, DataFormat, SinkError, SinkOptions,
};
use crate::ops::barrier::list::{
    DefinitionEntry, InjectionEntry, ListPlan, list, rows as rows_batch,
};

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  krabka-streams -b localhost:9092 barrier list
  krabka-streams -b localhost:9092 barrier list --group orders-cut --all --output json
  krabka-streams -b localhost:9092 barrier list --format parquet --out cuts.parquet

Data rows (--format) have the columns group, epoch, status, triggered_at, completed_at (timestamps in \
milliseconds, UTC), topic, partition, offset; with --all a partial cut's missing partitions are rows \
with a null offset.

Exit codes: 0 listed, 1 a record of __barrier_state does not decode (the message names its partition \
and offset), 2 usage (e.g. binary data to a terminal), 4 broker unreachable.")]
pub struct ListArgs {
    /// Only this barrier group.
    #[arg(long, value_name = "GROUP")]
    pub group: Option<String>,

    /// Also list partial cuts, injection records and group definitions.
    #[arg(long)]
    pub all: bool,

    /// Write one row per (group, epoch, topic, partition, offset) as data instead of a report.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<DataFormat>,

    /// Where --format writes: a file (replaced atomically) or - for stdout.
    #[arg(long, value_name = "PATH", requires = "format", default_value = "-")]
    pub out: String,
}

/// `--format`: the clap side of the one output-format type, `io::batch_sink::DataFormat`
/// (io never derives clap traits); `barrier list` offers its binary formats.
impl ValueEnum for DataFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            DataFormat::ArrowStream,
            DataFormat::ArrowFile,
            DataFormat::Parquet,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            DataFormat::ArrowStream => {
                PossibleValue::new("arrow").help("Arrow IPC stream (.arrows)")
            }
            DataFormat::ArrowFile => {
                PossibleValue::new("arrow-file").help("Arrow IPC file (.arrow)")
            }
            DataFormat::Parquet => PossibleValue::new("parquet").help("Parquet, zstd-compressed"),
            DataFormat::Ndjson => return None,
        })
    }
}

/// Where `--out` sends the data rows.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Destination {
    Stdout,
    File(PathBuf),
}

impl Destination {
    /// `-` is stdout, anything else a file path.
    fn parse(text: &str) -> Self {
        if text == "-" {
            Destination::Stdout
        } else {
            Destination::File(PathBuf::from(text))
        }
    }
}

pub fn run(global: &GlobalArgs, command: &str, args: ListArgs) -> CliResult<()> {
    let destination = Destination::parse(&args.out);
    if args.format.is_some() && destination == Destination::Stdout {
        refuse_binary_on_tty("Arrow/Parquet data")?;
    }
    let read = global.connection.read_files();
    if let (false, Destination::File(out)) = (read.is_empty(), &destination) {
        use crate::io::path_conflict::{Named, check};
        let mut named = read;
        named.push(Named::output(format!("--out {}", out.display()), out));
        check(&named).map_err(CliError::usage)?;
    }
    let settings = global.connection.kafka_settings(command)?;
    let plan = ListPlan {
        group: args.group.clone(),
        all: args.all,
    };
    let listing = list(&settings, global.connection.timeout, &plan)?;
    let ui = Ui::new(&global.output);

    if let Some(format) = args.format {
        return write_rows(&ui, &listing.cuts, format, &destination);
    }

    let definitions: Vec<Row> = listing.definitions.iter().map(definition_row).collect();
    let injections: Vec<Row> = listing.injections.iter().map(injection_row).collect();
    let cuts = &listing.cuts;
    let data = json!({
        "topic": BARRIER_STATE_TOPIC,
        "topic_exists": listing.topic_exists,
        "partitions": listing.partitions,
        "records": listing.records,
        "groups": definitions.iter().map(|d| d.json.clone()).collect::<Vec<_>>(),
        "cuts": cuts.iter().map(cut_summary_json).collect::<Vec<_>>(),
        "injections": injections.iter().map(|i| i.json.clone()).collect::<Vec<_>>(),
    });
    ui.report(data, |out| {
        if !listing.topic_exists {
            return writeln!(
                out,
                "{BARRIER_STATE_TOPIC} does not exist: no barrier group has been defined on this cluster"
            );
        }
        writeln!(
            out,
            "{BARRIER_STATE_TOPIC}: {} partitions, {} records read",
            listing.partitions, listing.records
        )?;
        if args.all {
            write_table(out, "group definitions", &DEFINITION_HEADERS, &definitions)?;
        }
        let kind = if args.all { "cuts" } else { "complete cuts" };
        if cuts.is_empty() {
            writeln!(out, "no {kind}{}", for_group(&args.group))?;
        } else {
            let mut t = table(&CUT_HEADERS);
            for c in cuts {
                t.add_row(cut_row(c));
            }
            writeln!(out, "{kind}{}:\n{t}", for_group(&args.group))?;
        }
        if args.all {
            write_table(out, "injection records", &INJECTION_HEADERS, &injections)?;
        }
        Ok(())
    })?;
    listing.malformed_error().map_or(Ok(()), Err)
}

fn for_group(group: &Option<String>) -> String {
    group
        .as_ref()
        .map(|g| format!(" of group {g}"))
        .unwrap_or_default()
}

/// Writes the rows as data; the summary goes to stdout only when the data does not.
fn write_rows(
    ui: &Ui,
    cuts: &[BarrierCut],
    format: DataFormat,
    destination: &Destination,
) -> CliResult<()> {
    let batch = rows_batch(cuts)?;
    let rows = batch.num_rows();
    // Through the one output writer (tail's): a file is published atomically when the
    // sink finishes, and its bytes are those tail would write for the same batch.
    let mut sink = BatchSink::new(SinkOptions {
        format,
        path: match destination {
            Destination::File(path) => Some(path.clone()),
            Destination::Stdout => None,
        },
        row_group_size: DEFAULT_ROW_GROUP_ROWS,
        rotate_rows: None,
        rotate_bytes: None,
    });
    let written = sink
        .write(&batch)
        .and_then(|()| sink.finish(&batch.schema()))
        .map(drop);
    let Destination::File(path) = destination else {
        match written {
            // The reader of stdout went away (`| head`): not a failure.
            Ok(()) | Err(SinkError::Closed) => {}
            Err(SinkError::Failed(e)) => {
                return Err(CliError::failure(format!("cannot write to stdout: {e}")));
            }
        }
        if ui.is_json() {
            eprintln!(
                "{}",
                json!({"data": {"rows": rows, "cuts": cuts.len(), "format": format.label(), "out": "-"}})
            );
        } else {
            tracing::info!(
                "wrote {rows} rows ({} cuts) to stdout as {}",
                cuts.len(),
                format.label()
            );
        }
        return Ok(());
    };
    // The sink's messages name the file already ("cannot create …", "cannot write …").
    written.map_err(|e| CliError::failure(e.to_string()))?;
    ui.report(
        json!({"rows": rows, "cuts": cuts.len(), "format": format.label(), "out": path.display().to_string()}),
        |out| {
            writeln!(
                out,
                "wrote {rows} rows ({} cuts) to {} as {}",
                cuts.len(),
                path.display(),
                format.label()
            )
        },
    )
}

/// A row of a secondary table with its JSON form.
struct Row {
    cells: Vec<String>,
    json: Value,
}

const DEFINITION_HEADERS: [&str; 6] = [
    "group",
    "state partition",
    "topics",
    "injection interval",
    "retained cuts",
    "last epoch",
];

const INJECTION_HEADERS: [&str; 5] = [
    "group",
    "epoch",
    "coordinator epoch",
    "triggered",
    "targets",
];

fn write_table(
    out: &mut dyn Write,
    title: &str,
    headers: &[&str],
    rows: &[Row],
) -> std::io::Result<()> {
    if rows.is_empty() {
        return writeln!(out, "no {title}");
    }
    let mut t = table(headers);
    for r in rows {
        t.add_row(r.cells.clone());
    }
    writeln!(out, "{title}:\n{t}")
}

fn definition_row(entry: &DefinitionEntry) -> Row {
    let (group, state_partition) = (&entry.group, entry.state_partition);
    let d = match &entry.definition {
        Ok(d) => d,
        Err(e) => {
            return Row {
                cells: vec![
                    group.clone(),
                    opt(state_partition),
                    format!("malformed: {e}"),
                    String::new(),
                    String::new(),
                    String::new(),
                ],
                json: json!({"group": group, "state_partition": state_partition, "error": e}),
            };
        }
    };
    let interval = if d.interval_ms < 0 {
        "none".to_owned()
    } else {
        format!("{} ms", d.interval_ms)
    };
    Row {
        cells: vec![
            group.clone(),
            opt(state_partition),
            d.topics.join(", "),
            interval,
            d.retained_cuts.to_string(),
            d.last_epoch.to_string(),
        ],
        json: json!({
            "group": group,
            "state_partition": state_partition,
            "topics": d.topics,
            "interval_ms": d.interval_ms,
            "retained_cuts": d.retained_cuts,
            "last_epoch": d.last_epoch,
        }),
    }
}

fn injection_row(entry: &InjectionEntry) -> Row {
    let (group, epoch) = (&entry.group, entry.epoch);
    let i = match &entry.injection {
        Ok(i) => i,
        Err(e) => {
            return Row {
                cells: vec![
                    group.clone(),
                    epoch.to_string(),
                    format!("malformed: {e}"),
                    String::new(),
                    String::new(),
                ],
                json: json!({"group": group, "epoch": epoch, "error": e}),
            };
        }
    };
    let targets: Vec<String> = i
        .targets
        .iter()
        .map(|t| format!("{} ×{}", t.topic, t.partition_count))
        .collect();
    Row {
        cells: vec![
            group.clone(),
            epoch.to_string(),
            i.coordinator_epoch.to_string(),
            rfc3339_millis(i.triggered_at),
            targets.join(", "),
        ],
        json: json!({
            "group": group,
            "epoch": epoch,
            "coordinator_epoch": i.coordinator_epoch,
            "triggered_at": rfc3339_millis(i.triggered_at),
            "triggered_at_ms": i.triggered_at,
            "targets": i.targets.iter().map(|t| json!({"topic": t.topic, "partitions": t.partition_count})).collect::<Vec<_>>(),
        }),
    }
}

fn opt(value: Option<u32>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}
