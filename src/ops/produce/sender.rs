//! Sending: the partition of each record, the producer (idempotent, or one
//! transaction), `--on-error` for rows that cannot be encoded, and the counts of
//! the summary. A dry run does everything but send.

use std::io::Write;

use arrow_array::RecordBatch;
use base64::Engine as _;
use serde_json::json;

use crate::engine::columnar::json_values::batch_to_json_lines;
use crate::engine::columnar::record::OutRecord;
use crate::engine::columnar::runner::group::{Producer, RunnerError};
use crate::engine::murmur2::{murmur2, to_positive};
use crate::io::kafka::runner_producer::RunnerProducer;
use crate::ops::produce::input::LineInput;
use crate::ops::produce::rows::RowEncoder;
use crate::ops::produce::{
    Hooks, OnError, PartitionChoice, ProducePlan, Summary, cancelled, lines,
};
use crate::ops::{Error, Result};

/// Lines between two checks of the delivery reports.
const LINES_PER_CHECK: u64 = 1000;

fn kafka_error(e: RunnerError) -> Error {
    if e.retriable {
        Error::unreachable(e.message)
    } else {
        Error::failure(e.message)
    }
}

pub struct Sender {
    producer: Option<RunnerProducer>,
    partitions: Option<i32>,
    in_transaction: bool,
    next_keyless: i32,
    dead_letter: Option<std::fs::File>,
    choice: PartitionChoice,
    topic: String,
    on_error: OnError,
    counts: Summary,
}

impl Sender {
    /// Opens the producer (a dry run only reads the topic's metadata, when it has a
    /// broker) and the dead-letter file, and checks the partition choice against the
    /// topic: all before the first record. The encoder is built first, so the input
    /// is checked before the broker is asked anything.
    pub fn open(plan: &ProducePlan, _encoder: Option<&RowEncoder>) -> Result<Sender> {
        let dead_letter = match (&plan.on_error, plan.dry_run) {
            (OnError::DeadLetter(path), false) => {
                Some(crate::io::atomic_file::open_append(path).map_err(|e| {
                    Error::usage(format!(
                        "--on-error dead-letter {}: cannot open it: {e}",
                        path.display()
                    ))
                })?)
            }
            _ => None,
        };
        let mut producer = None;
        let mut partitions = None;
        if let Some(kafka) = &plan.kafka {
            let mut settings = kafka.clone();
            let p = match (&plan.transactional_id, plan.dry_run) {
                (Some(id), false) => RunnerProducer::transactional(&settings, plan.timeout, id),
                _ => {
                    // Retries never duplicate or reorder a record (the default of
                    // Kafka's own producer since 3.0); `-X enable.idempotence=false` wins.
                    if settings.get("enable.idempotence").is_none() && !plan.dry_run {
                        settings.set("enable.idempotence", "true");
                    }
                    RunnerProducer::new(&settings, plan.timeout)
                }
            }
            .map_err(kafka_error)?;
            let count = p.partition_count(&plan.topic).map_err(Error::from)?;
            let Some(count) = count else {
                return Err(Error::failure(format!(
                    "topic {} does not exist; create it first (produce never creates topics)",
                    plan.topic
                )));
            };
            if let PartitionChoice::Fixed(n) = plan.partition
                && n >= count
            {
                return Err(Error::usage(format!(
                    "--partition {n}: topic {} has {count} partitions (0-{})",
                    plan.topic,
                    count - 1
                )));
            }
            partitions = Some(count);
            if !plan.dry_run {
                if plan.transactional_id.is_none() {
                    // A signal while the input blocks ends the process: what was handed
                    // to librdkafka is flushed first. (A transaction is left open: the
                    // broker aborts it, nothing of it is visible to read_committed.)
                    // SAFETY: `Sender`'s Drop and `finish` unregister it before it is dropped.
                    unsafe { crate::io::kafka::exit_flush::register(p.native()) };
                }
                producer = Some(p);
            }
        }
        let mut sender = Sender {
            producer,
            partitions,
            in_transaction: false,
            next_keyless: 0,
            dead_letter,
            choice: plan.partition,
            topic: plan.topic.clone(),
            on_error: plan.on_error.clone(),
            counts: Summary::default(),
        };
        if plan.transactional_id.is_some()
            && let Some(p) = sender.producer.as_mut()
        {
            p.begin_transaction().map_err(kafka_error)?;
            sender.in_transaction = true;
        }
        Ok(sender)
    }

    /// The partition of a record, `Ok(None)` when only the broker's metadata could
    /// say (a dry run without a broker), or why the row has none.
    fn partition_of(
        &mut self,
        record: &OutRecord,
        row: Option<i32>,
    ) -> std::result::Result<Option<i32>, String> {
        match self.choice {
            PartitionChoice::Fixed(n) => Ok(Some(n)),
            PartitionChoice::Keep => {
                let p = row
                    .filter(|p| *p >= 0)
                    .ok_or_else(|| "no __partition (--partition keep)".to_owned())?;
                match self.partitions {
                    Some(count) if p >= count => Err(format!(
                        "__partition {p}, and topic {} has {count} partitions",
                        self.topic
                    )),
                    _ => Ok(Some(p)),
                }
            }
            PartitionChoice::Hash => {
                let Some(count) = self.partitions else {
                    return Ok(None);
                };
                Ok(Some(match &record.key {
                    Some(key) => to_positive(murmur2(key)) % count,
                    None => {
                        let p = self.next_keyless % count;
                        self.next_keyless = (p + 1) % count;
                        p
                    }
                }))
            }
        }
    }

    /// Sends one record (a dry run counts it), or says why its row has no partition.
    fn send(
        &mut self,
        record: &OutRecord,
        row_partition: Option<i32>,
    ) -> Result<std::result::Result<(), String>> {
        let partition = match self.partition_of(record, row_partition) {
            Ok(p) => p,
            Err(why) => return Ok(Err(why)),
        };
        if let (Some(producer), Some(p)) = (self.producer.as_mut(), partition) {
            producer
                .send_to(&self.topic, p, record)
                .map_err(kafka_error)?;
        }
        self.counts.records += 1;
        self.counts.bytes += (record.key.as_ref().map_or(0, Vec::len)
            + record.value.as_ref().map_or(0, Vec::len)) as u64;
        match partition {
            Some(p) => *self.counts.partitions.entry(p).or_insert(0) += 1,
            None => self.counts.unassigned += 1,
        }
        Ok(Ok(()))
    }

    /// A row that cannot be sent, per `--on-error`; `row_json` is the row for a dead letter.
    fn refuse(
        &mut self,
        name: &str,
        message: &str,
        row_json: impl FnOnce() -> serde_json::Value,
        hooks: &mut Hooks<'_>,
    ) -> Result<()> {
        match &self.on_error {
            OnError::Fail => Err(Error::failure(format!(
                "{name}: {message} (--on-error skip or dead-letter FILE sets such rows aside)"
            ))),
            OnError::Skip => {
                self.counts.skipped += 1;
                (hooks.refused)(name, message);
                Ok(())
            }
            OnError::DeadLetter(path) => {
                let line = json!({
                    "topic": self.topic,
                    "row": name,
                    "error": message,
                    "data": row_json(),
                });
                if let Some(file) = self.dead_letter.as_mut() {
                    let mut text = line.to_string();
                    text.push('\n');
                    file.write_all(text.as_bytes()).map_err(|e| {
                        Error::failure(format!("cannot write {}: {e}", path.display()))
                    })?;
                }
                self.counts.dead_lettered += 1;
                (hooks.refused)(name, message);
                Ok(())
            }
        }
    }

    /// Checks the delivery reports so far: a failed delivery stops the run.
    fn check_deliveries(&mut self) -> Result<()> {
        if let Some(p) = self.producer.as_mut() {
            p.acknowledged().map_err(kafka_error)?;
        }
        Ok(())
    }

    /// Ends the run: commits the transaction or waits for every acknowledgement; on
    /// an error aborts the transaction (nothing is visible to read_committed) or
    /// still delivers what was sent, and says so.
    pub fn finish(mut self, result: Result<()>, summary: &mut Summary) -> Result<()> {
        let counts = std::mem::take(&mut self.counts);
        summary.records = counts.records;
        summary.bytes = counts.bytes;
        summary.partitions = counts.partitions;
        summary.unassigned = counts.unassigned;
        summary.skipped = counts.skipped;
        summary.dead_lettered = counts.dead_lettered;
        if let Some(file) = self.dead_letter.as_mut() {
            let _ = file.flush();
        }
        let Some(mut producer) = self.producer.take() else {
            return result;
        };
        let finished = match result {
            Ok(()) if self.in_transaction => producer.commit_transaction().map_err(|e| {
                let e = kafka_error(e);
                let _ = producer.abort_transaction();
                summary.records = 0;
                e.context("the transaction was not committed, nothing is visible to read_committed readers")
            }),
            Ok(()) => producer.flush().map_err(|e| {
                kafka_error(e).context(format!(
                    "{} records were handed to the producer and not all are acknowledged",
                    summary.records
                ))
            }),
            Err(e) if self.in_transaction => {
                let sent = summary.records;
                summary.records = 0;
                // librdkafka aborts only once the delivery reports of the sends are
                // served; the records stay in the aborted transaction either way.
                let _ = producer.flush();
                match producer.abort_transaction() {
                    Ok(()) => Err(e.context(format!(
                        "aborted the transaction ({sent} records sent in it; none visible to read_committed readers)"
                    ))),
                    Err(abort) => Err(Error {
                        kind: e.kind,
                        message: format!(
                            "{}; aborting the transaction failed too ({}): the broker aborts it when it times out",
                            e.message, abort.message
                        ),
                    }),
                }
            }
            Err(e) => {
                let sent = summary.records;
                let delivered = producer.flush();
                let note = match delivered {
                    Ok(()) => format!("{sent} records before it were sent and stay in {}", summary.topic),
                    Err(d) => format!(
                        "{sent} records before it were handed to the producer, not all acknowledged: {}",
                        d.message
                    ),
                };
                Err(Error {
                    kind: e.kind,
                    message: format!("{} ({note})", e.message),
                })
            }
        };
        // Before `producer` is dropped at the end of this function.
        crate::io::kafka::exit_flush::unregister();
        finished
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        // Runs before the fields (the producer) are dropped.
        crate::io::kafka::exit_flush::unregister();
    }
}

/// The dead-letter data of one row.
fn row_json(batch: &RecordBatch, row: usize) -> serde_json::Value {
    batch_to_json_lines(&batch.slice(row, 1))
        .ok()
        .and_then(|lines| lines.into_iter().next())
        .and_then(|line| serde_json::from_str(&line).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// A batch and, for NDJSON, the 1-based line of each row.
pub type Batch = (RecordBatch, Option<Vec<u64>>);

/// Sends every batch `next` gives.
pub fn send_batches(
    encoder: &RowEncoder,
    next: &mut dyn FnMut() -> Option<Result<Batch>>,
    sender: &mut Sender,
    hooks: &mut Hooks<'_>,
) -> Result<()> {
    let mut row_base: u64 = 0;
    while let Some(batch) = next() {
        if cancelled(hooks) {
            return Err(Error::cancelled());
        }
        let (batch, lines) = batch?;
        let name = |row: usize| match &lines {
            Some(lines) => format!("line {}", lines[row]),
            None => format!("row {}", row_base + row as u64 + 1),
        };
        for (row, encoded) in encoder.encode(&batch)?.into_iter().enumerate() {
            let outcome = match encoded {
                Ok(e) => sender.send(&e.record, e.partition)?,
                Err(why) => Err(why),
            };
            if let Err(why) = outcome {
                sender.refuse(&name(row), &why, || row_json(&batch, row), hooks)?;
            }
        }
        row_base += batch.num_rows() as u64;
        sender.check_deliveries()?;
        (hooks.progress)(sender.counts.records, sender.counts.bytes);
    }
    Ok(())
}

/// Sends plain-text lines (kcat `-P`).
pub fn send_lines(
    plan: &ProducePlan,
    mut input: LineInput,
    sender: &mut Sender,
    hooks: &mut Hooks<'_>,
) -> Result<()> {
    let separator = plan.key_separator.as_deref();
    while let Some(line) = input.next_line()? {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let Some(record) = lines::line_record(&line, separator, &plan.headers, now) else {
            continue;
        };
        if let Err(why) = sender.send(&record, None)? {
            let name = format!("{} line {}", input.name, input.line);
            sender.refuse(
                &name,
                &why,
                || json!({"line": base64::engine::general_purpose::STANDARD.encode(&line)}),
                hooks,
            )?;
        }
        if input.line.is_multiple_of(LINES_PER_CHECK) {
            if cancelled(hooks) {
                return Err(Error::cancelled());
            }
            sender.check_deliveries()?;
            (hooks.progress)(sender.counts.records, sender.counts.bytes);
        }
    }
    Ok(())
}
