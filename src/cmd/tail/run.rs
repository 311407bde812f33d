//! The tail: resolve positions, build the decoders and the output, then run the
//! pipeline — the poll side (`poll_side`, this thread) fills arenas from the client,
//! the decode side (`decode_side`, a thread of its own) decodes and writes them —
//! and on Ctrl-C or any stop close the output properly, commit (group mode) and
//! report.

use std::collections::{BTreeSet, HashMap};
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use arrow_schema::{Schema, SchemaRef};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::finish_stdout;
use crate::cmd::schema_cache::decoding_cache;
use crate::cmd::tail::dead_letter::DeadLetterFile;
use crate::cmd::tail::decode_side::{DecodeSide, Output, Report, Shared, Tp};
use crate::cmd::tail::formats::{self, FormatSpec};
use crate::cmd::tail::poll_side::{PollSide, Stops};
use crate::cmd::tail::positions::{Positions, Start, Stop};
use crate::cmd::tail::predicate::WherePredicate;
use crate::cmd::tail::{OnError, OutputFormat, OutputPlan};
use crate::engine::columnar::batch::{BatchDecoder, DECODED_KEY_COLUMN};
use crate::engine::columnar::raw_batch::RawBatch;
use crate::engine::columnar::record_filter::RecordFilter;
use crate::engine::columnar::reserved::{reserved_fields, topic_field, with_topic_column};
use crate::engine::columnar::reserved_types::typed_schema;
use crate::engine::columnar::text_view::TextView;
use crate::engine::columnarschema::writer_schemas::WriterSchemas;
use crate::io::batch_sink::{BatchSink, SinkError, SinkOptions};
use crate::io::kafka::tail_consumer::{TailConsumer, TailConsumerOptions};

/// Filled arenas queued for the decode side: with the one being filled and the one
/// being decoded, at most four arenas of up to 16 MiB of values each are alive.
const HANDOFF_ARENAS: usize = 2;

/// Everything `tail` was asked to do, validated.
pub struct TailPlan {
    pub topics: Vec<String>,
    /// Write the `__topic` column (several topics, or `--topic-column`).
    pub topic_column: bool,
    pub partitions: Vec<i32>,
    pub positions: Positions,
    pub max_records: Option<u64>,
    pub group: Option<String>,
    pub isolation: String,
    pub filter: RecordFilter,
    /// `--where`: rows of the decoded batches to keep.
    pub predicate: Option<WherePredicate>,
    pub columns: Vec<String>,
    pub key_specs: Vec<FormatSpec>,
    pub value_specs: Vec<FormatSpec>,
    pub output: OutputPlan,
    pub row_group_size: usize,
    pub rotate_rows: Option<u64>,
    pub rotate_bytes: Option<u64>,
    pub on_error: OnError,
    pub batch_records: usize,
    /// A `schema prewarm --write-cache` file seeding the schema cache.
    pub schema_cache: Option<std::path::PathBuf>,
    /// Print the summary (off when another command drives the tail, e.g. the demo).
    pub report: bool,
}

/// Sets the flag on Ctrl-C or SIGTERM.
fn watch_signals(flag: Arc<AtomicBool>) {
    // From here on the tail stops by itself (closing its output): signals only
    // raise the flag (`cmd::interrupt`).
    std::mem::forget(crate::cmd::interrupt::cooperate(flag.clone()));
    let _ = std::thread::Builder::new()
        .name("tail-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                let Ok(mut term) =
                    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                else {
                    return;
                };
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {},
                    _ = term.recv() => {},
                }
            });
            flag.store(true, Ordering::SeqCst);
        });
}

/// Counters for the summary.
#[derive(Default)]
struct Counters {
    records: u64,
    bytes: u64,
    skipped: u64,
    dead_lettered: u64,
}

pub fn run(global: &GlobalArgs, mut plan: TailPlan) -> CliResult<()> {
    let settings = global.connection.kafka_settings("tail")?;
    let timeout = global.connection.timeout;
    // The cache file is read before the broker is touched: a bad file fails fast.
    let schemas: Option<Arc<dyn WriterSchemas>> =
        decoding_cache(global, plan.schema_cache.as_deref())?
            .map(|c| Arc::new(c) as Arc<dyn WriterSchemas>);
    let mut decoders: HashMap<String, BatchDecoder> = HashMap::new();
    for t in &plan.topics {
        let key = formats::decoder(
            &formats::format_for(&plan.key_specs, t),
            true,
            schemas.as_ref(),
        )?;
        let value = formats::decoder(
            &formats::format_for(&plan.value_specs, t),
            false,
            schemas.as_ref(),
        )?
        .expect("value decoders always exist");
        let mut decoder = BatchDecoder::new(key, value);
        if let Some(predicate) = plan.predicate.as_mut() {
            // An empty batch shows the columns the codecs know before any record.
            let learned = formats::format_for(&plan.key_specs, t).columns_from_data()
                || formats::format_for(&plan.value_specs, t).columns_from_data();
            if let Ok(empty) = decoder.decode(&[]) {
                let empty = match plan.topic_column {
                    true => with_topic_column(&empty, t)
                        .map_err(|e| CliError::failure(e.to_string()))?,
                    false => empty,
                };
                predicate.check_known_columns(t, &empty.schema(), learned)?;
            }
        }
        decoders.insert(t.clone(), decoder);
    }
    let dead_letter = match &plan.on_error {
        OnError::DeadLetter(p) => Some(DeadLetterFile::create(p).map_err(|e| {
            CliError::usage(format!("cannot open dead-letter file {}: {e}", p.display()))
        })?),
        _ => None,
    };

    let mut consumer = TailConsumer::new(
        &settings,
        &TailConsumerOptions {
            group: plan.group.clone(),
            isolation: plan.isolation.clone(),
            auto_offset_reset: if plan.positions.start == Start::End {
                "latest".into()
            } else {
                "earliest".into()
            },
            timeout,
        },
    )?;
    let mut stops = Stops {
        bounded: plan.positions.stop != Stop::Never,
        // A group is assigned partitions of every number: -p reads only its own.
        only: (plan.group.is_some() && !plan.partitions.is_empty())
            .then(|| plan.partitions.iter().copied().collect()),
        ..Default::default()
    };
    let mut all_partitions: Vec<Tp> = Vec::new();
    for t in &plan.topics {
        for p in consumer.partitions(t)? {
            if plan.partitions.is_empty() || plan.partitions.contains(&p) {
                all_partitions.push((t.clone(), p));
            }
        }
    }
    if let Some(&p) = plan
        .partitions
        .iter()
        .find(|p| !all_partitions.iter().any(|(_, q)| q == *p))
    {
        return Err(CliError::usage(format!(
            "partition {p} does not exist in the tailed topics"
        )));
    }
    let mut assignment = Vec::new();
    for (t, p) in &all_partitions {
        let bounded = plan.positions.stop != Stop::Never;
        let needs_marks = bounded
            || !matches!(plan.positions.start, Start::Beginning | Start::End)
            || plan.group.is_none();
        let (low, high) = if needs_marks {
            consumer.watermarks(t, *p)?
        } else {
            (0, 0)
        };
        let stop = match plan.positions.stop {
            Stop::Never => None,
            Stop::End => Some(high),
            Stop::Offset(o) => Some(o),
            Stop::Time(ts) => Some(consumer.offset_for_time(t, *p, ts)?.unwrap_or(high)),
        };
        if plan.group.is_some() {
            stops.add((t.clone(), *p), None, stop);
            continue;
        }
        let start = match plan.positions.start {
            Start::Beginning => low,
            Start::End => high,
            Start::AfterStart(n) => (low + n).min(high),
            Start::BeforeEnd(n) => (high - n).max(low),
            // Below the log start the first record left is the one asked for.
            Start::Offset(o) => o.max(low),
            Start::Time(ts) => consumer.offset_for_time(t, *p, ts)?.unwrap_or(high),
        };
        if stops.add((t.clone(), *p), Some(start), stop) {
            if start > high {
                // The broker answers a fetch past the end "out of range", and the client
                // then restarts at auto.offset.reset (the log start): a wrong answer.
                return Err(CliError::usage(format!(
                    "--from: offset {start} is past the end of {t}/{p} (its next offset is {high}); use --from end to follow new records, or stop before the start (e.g. -e)"
                )));
            }
            assignment.push((t.clone(), *p, start));
        }
    }
    match &plan.group {
        Some(_) => consumer.subscribe(&plan.topics)?,
        None => consumer.assign(&assignment)?,
    }

    let cancelled = Arc::new(AtomicBool::new(false));
    watch_signals(cancelled.clone());
    let output = match plan.output.data_format() {
        Some(format) => Output::Data(Box::new(BatchSink::new(SinkOptions {
            format,
            path: plan.output.path.clone(),
            row_group_size: plan.row_group_size,
            rotate_rows: plan.rotate_rows,
            rotate_bytes: plan.rotate_bytes,
        }))),
        None => Output::Table,
    };
    let show_progress = std::io::stderr().is_terminal()
        && global.output.quiet == 0
        && !matches!(global.output.output, crate::cmd::global::OutputMode::Json);
    let progress = show_progress.then(|| {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    });

    let views = plan.output.is_text().then(|| text_views(&plan));
    let mut decode_side = DecodeSide::new(
        decoders,
        std::mem::take(&mut plan.filter),
        plan.predicate.take(),
        std::mem::take(&mut plan.columns),
        plan.max_records,
        plan.on_error.clone(),
        dead_letter,
        output,
        timeout,
        plan.group.is_some(),
        plan.batch_records,
        plan.topic_column,
    );
    if let Some(views) = views {
        decode_side.text_views = views;
    }
    decode_side.typed_reserved = plan.output.typed_reserved && !plan.output.is_text();
    let shared = Arc::new(Shared::new(cancelled.clone()));
    if let Some(waker) = consumer.waker() {
        let _ = shared.wake_poll.set(waker);
    }
    // The hand-off: arenas go to the decode side through a short queue and come back
    // for the next fetches; reports (holds, written offsets) come back unbounded, as
    // the decode side must never wait for the poll side.
    let (work_tx, work_rx) = std::sync::mpsc::sync_channel::<RawBatch>(HANDOFF_ARENAS);
    let (free_tx, free_rx) = std::sync::mpsc::channel::<RawBatch>();
    let (report_tx, report_rx) = std::sync::mpsc::channel::<Report>();
    let decoding = {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("tail-decode".into())
            .spawn(move || {
                let outcome = decode_side.serve(&work_rx, &free_tx, &report_tx, &shared);
                (decode_side, outcome)
            })
            .map_err(|e| CliError::failure(format!("cannot start the decode thread: {e}")))?
    };
    let mut poll_side = PollSide {
        consumer: &mut consumer,
        stops,
        assignment,
        all_partitions,
        group: plan.group.is_some(),
        batch_records: plan.batch_records,
        timeout,
        cancelled: &cancelled,
        shared: &shared,
        progress,
        bytes: 0,
    };
    let polled = poll_side.fetch(&work_tx, &free_rx, &report_rx);
    if polled.is_err() {
        shared.abort.store(true, Ordering::SeqCst);
    }
    // Closing the hand-off lets the decode side write what it was given, then end.
    drop(work_tx);
    let (decode_side, decoded) = match decoding.join() {
        Ok(ended) => ended,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    // Offsets written after the poll side stopped are stored too, before the commit.
    let mut paused = BTreeSet::new();
    let mut stored: CliResult<()> = Ok(());
    for report in report_rx.try_iter() {
        if let Report::Processed(_) = report
            && stored.is_ok()
        {
            stored = poll_side.act_on(report, &mut paused);
        }
    }
    let progress = poll_side.progress.take();
    let bytes = poll_side.bytes;
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let outcome = polled.and(decoded).and(stored);
    let counters = Counters {
        records: decode_side.records,
        bytes,
        skipped: decode_side.skipped,
        dead_lettered: decode_side.dead_lettered,
    };
    let fallback: SchemaRef = decode_side.first_schema.clone().unwrap_or_else(|| {
        let mut fields = reserved_fields().to_vec();
        if plan.topic_column {
            fields.insert(0, topic_field());
        }
        let library = Schema::new(fields);
        Arc::new(if plan.output.typed_reserved && !plan.output.is_text() {
            typed_schema(&library)
        } else {
            library
        })
    });
    let files = match decode_side.output {
        Output::Data(sink) => {
            if outcome
                .as_ref()
                .is_err_and(|e| e.kind != crate::cmd::exit::ExitCode::Cancelled)
            {
                // A failed tail publishes nothing (the temp file is removed on drop).
                drop(sink);
                Vec::new()
            } else {
                match sink.finish(&fallback) {
                    Ok(f) => f,
                    Err(SinkError::Closed) => Vec::new(),
                    Err(SinkError::Failed(m)) => return Err(CliError::failure(m)),
                }
            }
        }
        Output::Table => Vec::new(),
    };
    if outcome.is_ok()
        || outcome
            .as_ref()
            .is_err_and(|e| e.kind == crate::cmd::exit::ExitCode::Cancelled)
    {
        consumer.commit_stored()?;
    }
    if plan.report {
        summary(global, &plan, &counters, &files);
    }
    outcome
}

/// How each topic's rows are shown in NDJSON and the table.
fn text_views(plan: &TailPlan) -> HashMap<String, TextView> {
    plan.topics
        .iter()
        .map(|t| {
            let view = TextView {
                binary: plan.output.binary,
                raw_value: formats::format_for(&plan.value_specs, t).is_raw(),
                decoded_key: formats::format_for(&plan.key_specs, t) != formats::Format::Raw,
                keep_decoded_key: plan.columns.iter().any(|c| c == DECODED_KEY_COLUMN),
                key_is_json: matches!(
                    formats::format_for(&plan.key_specs, t),
                    formats::Format::Json(_)
                ),
            };
            (t.clone(), view)
        })
        .collect()
}

fn summary(global: &GlobalArgs, plan: &TailPlan, c: &Counters, files: &[std::path::PathBuf]) {
    if global.output.output == crate::cmd::global::OutputMode::Json {
        let doc = json!({"data": {
            "records": c.records,
            "bytes": c.bytes,
            "skipped": c.skipped,
            "dead_lettered": c.dead_lettered,
            "files": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        }});
        // Data on stdout → the report goes to stderr.
        if plan.output.path.is_some() {
            let _ = finish_stdout(writeln!(std::io::stdout(), "{doc}"));
        } else {
            eprintln!("{doc}");
        }
        return;
    }
    let mut line = format!("Processed a total of {} records", c.records);
    if c.skipped > 0 {
        line.push_str(&format!(" ({} undecodable skipped)", c.skipped));
    }
    if c.dead_lettered > 0 {
        line.push_str(&format!(" ({} dead-lettered)", c.dead_lettered));
    }
    eprintln!("{line}");
    if plan.output.format != OutputFormat::Table {
        for f in files {
            tracing::info!("wrote {}", f.display());
        }
    }
}
