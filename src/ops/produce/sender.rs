//! Sending: the partition of each record, the producer (idempotent, or one
//! transaction), `--on-error` for rows that cannot be encoded, and the counts of
//! the summary. A dry run does everything but send.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::Ordering;

use arrow_array::RecordBatch;
use base64::Engine as _;
use serde_json::json;

use crate::engine::columnar::json_values::batch_to_json_lines;
use crate::engine::columnar::record::OutRecord;
use crate::engine::columnar::runner::group::{Producer, RunnerError};
use crate::engine::murmur2::{murmur2, to_positive};
use crate::io::kafka::runner_producer::RunnerProducer;
use crate::ops::produce::feed::Feed;
use crate::ops::produce::input::LineInput;
use crate::ops::produce::rows::RowEncoder;
use crate::ops::produce::{
    Hooks, OnError, PartitionChoice, ProducePlan, Summary, cancelled, lines,
};
use crate::ops::{Error, ErrorKind, Result};

/// Lines between two checks of the delivery reports.
const LINES_PER_CHECK: u64 = 1000;

type KafkaResult<T> = std::result::Result<T, RunnerError>;

/// What sending needs from a producer: `io::kafka::RunnerProducer`, a fake in the tests.
pub trait Client {
    /// `partition` `None`: the producer's partitioner picks (librdkafka's, for a keyless record).
    fn send(&mut self, topic: &str, partition: Option<i32>, record: &OutRecord) -> KafkaResult<()>;
    /// Takes the delivery reports so far; a failed delivery is an error.
    fn acknowledged(&mut self) -> KafkaResult<()>;
    fn flush(&mut self) -> KafkaResult<()>;
    fn begin_transaction(&mut self) -> KafkaResult<()>;
    fn commit_transaction(&mut self) -> KafkaResult<()>;
    fn abort_transaction(&mut self) -> KafkaResult<()>;
    /// Records acknowledged per partition so far.
    fn delivered(&self) -> BTreeMap<i32, u64>;
}

impl Client for RunnerProducer {
    fn send(&mut self, topic: &str, partition: Option<i32>, record: &OutRecord) -> KafkaResult<()> {
        match partition {
            Some(p) => self.send_to(topic, p, record),
            None => Producer::send(self, topic, record),
        }
    }
    fn acknowledged(&mut self) -> KafkaResult<()> {
        Producer::acknowledged(self).map(|_| ())
    }
    fn flush(&mut self) -> KafkaResult<()> {
        Producer::flush(self)
    }
    fn begin_transaction(&mut self) -> KafkaResult<()> {
        Producer::begin_transaction(self)
    }
    fn commit_transaction(&mut self) -> KafkaResult<()> {
        Producer::commit_transaction(self)
    }
    fn abort_transaction(&mut self) -> KafkaResult<()> {
        Producer::abort_transaction(self)
    }
    fn delivered(&self) -> BTreeMap<i32, u64> {
        self.delivered_per_partition()
    }
}

pub struct Sender {
    producer: Option<Box<dyn Client>>,
    partitions: Option<i32>,
    in_transaction: bool,
    dead_letter: Option<std::fs::File>,
    choice: PartitionChoice,
    topic: String,
    on_error: OnError,
    counts: Summary,
    /// Records the producer's partitioner placed (keyless with `--partition hash`):
    /// their partitions are known from the delivery reports only.
    partitioner_placed: u64,
    /// While a transaction is open: signals cancel (the sender aborts) instead of
    /// ending the process (`Hooks::catch_signals`).
    _signals: Option<Box<dyn std::any::Any>>,
    cancelled: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Sender {
    /// Opens the producer (a dry run only reads the topic's metadata, when it has a
    /// broker) and the dead-letter file, and checks the partition choice against the
    /// topic: all before the first record. The encoder is built first, so the input
    /// is checked before the broker is asked anything.
    pub fn open(
        plan: &ProducePlan,
        _encoder: Option<&RowEncoder>,
        hooks: &Hooks<'_>,
    ) -> Result<Sender> {
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
        let mut producer: Option<Box<dyn Client>> = None;
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
            .map_err(Error::from)?;
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
                    // to librdkafka is flushed first. (A transactional run catches
                    // signals instead and aborts: `with_client`.)
                    // SAFETY: `Sender`'s Drop and `finish` unregister it before it is dropped.
                    unsafe { crate::io::kafka::exit_flush::register(p.native()) };
                }
                producer = Some(Box::new(p));
            }
        }
        Sender::with_client(plan, producer, partitions, dead_letter, hooks)
    }

    /// A sender over `producer` (`None`: a dry run) for a topic of `partitions`;
    /// begins the transaction of a transactional plan.
    pub fn with_client(
        plan: &ProducePlan,
        producer: Option<Box<dyn Client>>,
        partitions: Option<i32>,
        dead_letter: Option<std::fs::File>,
        hooks: &Hooks<'_>,
    ) -> Result<Sender> {
        let mut sender = Sender {
            producer,
            partitions,
            in_transaction: false,
            dead_letter,
            choice: plan.partition,
            topic: plan.topic.clone(),
            on_error: plan.on_error.clone(),
            counts: Summary::default(),
            partitioner_placed: 0,
            _signals: None,
            cancelled: hooks.cancelled.clone(),
        };
        if plan.transactional_id.is_some()
            && let Some(p) = sender.producer.as_mut()
        {
            // From here a signal must abort the transaction, which only this thread
            // can do: it cancels instead of ending the process (kept until `finish`
            // has committed or aborted).
            sender._signals = hooks.catch_signals.map(|catch| catch());
            p.begin_transaction().map_err(Error::from)?;
            sender.in_transaction = true;
        }
        Ok(sender)
    }

    /// The partition of a record, `Ok(None)` when the producer's partitioner picks
    /// it (a keyless record with `--partition hash`) or only the broker's metadata
    /// could say (a dry run without a broker), or why the row has none.
    fn partition_of(
        &self,
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
                // A null key has no hash: librdkafka's partitioners (murmur2_random
                // here, consistent_random in kcat) place it on a random partition,
                // kept for `sticky.partitioning.linger.ms` — left to it, as kcat does.
                Ok(record
                    .key
                    .as_ref()
                    .map(|key| to_positive(murmur2(key)) % count))
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
        let sent = match self.producer.as_mut() {
            Some(producer) => {
                producer
                    .send(&self.topic, partition, record)
                    .map_err(Error::from)?;
                true
            }
            None => false,
        };
        self.counts.records += 1;
        self.counts.bytes += (record.key.as_ref().map_or(0, Vec::len)
            + record.value.as_ref().map_or(0, Vec::len)) as u64;
        match partition {
            Some(p) => *self.counts.partitions.entry(p).or_insert(0) += 1,
            None if sent => self.partitioner_placed += 1,
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
            p.acknowledged().map_err(Error::from)?;
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
        // A signal after the last record and before the commit still cancels: the
        // user asked for nothing to be written.
        let result = match result {
            Ok(()) if self.in_transaction && self.cancelled.load(Ordering::SeqCst) => {
                Err(Error::cancelled())
            }
            r => r,
        };
        let finished = match result {
            Ok(()) if self.in_transaction => producer.commit_transaction().map_err(|e| {
                let e = Error::from(e);
                let _ = producer.abort_transaction();
                summary.records = 0;
                e.context("the transaction was not committed, nothing is visible to read_committed readers")
            }),
            Ok(()) => producer.flush().map_err(|e| {
                Error::from(e).context(format!(
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
                let aborted = format!(
                    "aborted the transaction ({sent} records sent in it; none visible to read_committed readers)"
                );
                match producer.abort_transaction() {
                    // Nothing of the run is left in flight: say so instead of the
                    // generic "a request may have reached the broker".
                    Ok(()) if e.kind == ErrorKind::Cancelled => {
                        Err(Error::new(ErrorKind::Cancelled, format!("cancelled; {aborted}")))
                    }
                    Ok(()) => Err(e.context(aborted)),
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
        if finished.is_ok() && self.partitioner_placed > 0 {
            // Every record is acknowledged: the delivery reports say where each went.
            summary.partitions = producer.delivered();
        }
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
            if cancelled(hooks) {
                return Err(Error::cancelled());
            }
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
    let name = input.name.clone();
    let feed = Feed::spawn(move || {
        let line = input.next_line().transpose()?;
        Some(line.map(|l| (l, input.line)))
    })?;
    let flag = hooks.cancelled.clone();
    while let Some(item) = feed.next(&flag) {
        let (line, number) = item?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let Some(mut record) = lines::line_record(&line, separator, &plan.headers, now) else {
            continue;
        };
        if plan.line_key.is_some() {
            record.key = plan.line_key.clone();
        }
        if let Err(why) = sender.send(&record, None)? {
            let name = format!("{name} line {number}");
            sender.refuse(
                &name,
                &why,
                || json!({"line": base64::engine::general_purpose::STANDARD.encode(&line)}),
                hooks,
            )?;
        }
        if number.is_multiple_of(LINES_PER_CHECK) {
            sender.check_deliveries()?;
            (hooks.progress)(sender.counts.records, sender.counts.bytes);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use crate::ops::produce::InputFormat;

    /// Records every call; `cancel_on_send` plays a signal arriving while sending.
    struct Fake {
        calls: Arc<Mutex<Vec<String>>>,
        cancel_on_send: Option<Arc<AtomicBool>>,
    }

    impl Fake {
        fn note(&self, call: String) {
            self.calls.lock().unwrap().push(call);
        }
    }

    impl Client for Fake {
        fn send(&mut self, _: &str, p: Option<i32>, r: &OutRecord) -> KafkaResult<()> {
            let value = String::from_utf8_lossy(r.value.as_deref().unwrap_or_default());
            self.note(format!("send {p:?} {value}"));
            if let Some(flag) = &self.cancel_on_send {
                flag.store(true, Ordering::SeqCst);
            }
            Ok(())
        }
        fn acknowledged(&mut self) -> KafkaResult<()> {
            Ok(())
        }
        fn flush(&mut self) -> KafkaResult<()> {
            self.note("flush".into());
            Ok(())
        }
        fn begin_transaction(&mut self) -> KafkaResult<()> {
            self.note("begin".into());
            Ok(())
        }
        fn commit_transaction(&mut self) -> KafkaResult<()> {
            self.note("commit".into());
            Ok(())
        }
        fn abort_transaction(&mut self) -> KafkaResult<()> {
            self.note("abort".into());
            Ok(())
        }
        fn delivered(&self) -> BTreeMap<i32, u64> {
            BTreeMap::from([(0, 7)])
        }
    }

    fn plan(partition: PartitionChoice, transactional: bool) -> ProducePlan {
        ProducePlan {
            topic: "t".into(),
            input: "-".into(),
            format: InputFormat::Lines,
            value_format: "raw".into(),
            value_schema: None,
            key_column: None,
            drop_columns: Vec::new(),
            key_format: None,
            key_separator: None,
            line_key: None,
            headers: Vec::new(),
            binary: Default::default(),
            partition,
            transactional_id: transactional.then(|| "txn".to_owned()),
            on_error: OnError::Fail,
            dry_run: false,
            kafka: None,
            timeout: Duration::from_secs(5),
            schemas: None,
            batch_rows: 10,
        }
    }

    /// Sends `input`'s lines through a fake; the calls it saw and the outcome.
    fn run_lines(
        plan: &ProducePlan,
        input: LineInput,
        cancel_on_send: bool,
        cancel_after: Option<Duration>,
    ) -> (Vec<String>, Result<()>, Summary, bool) {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let cancelled = Arc::new(AtomicBool::new(false));
        let fake = Fake {
            calls: calls.clone(),
            cancel_on_send: cancel_on_send.then(|| cancelled.clone()),
        };
        let caught = Arc::new(AtomicBool::new(false));
        let catch = {
            let caught = caught.clone();
            move || -> Box<dyn std::any::Any> {
                caught.store(true, Ordering::SeqCst);
                Box::new(())
            }
        };
        if let Some(after) = cancel_after {
            let flag = cancelled.clone();
            std::thread::spawn(move || {
                std::thread::sleep(after);
                flag.store(true, Ordering::SeqCst);
            });
        }
        let (mut progress, mut refused) = (|_, _| {}, |_: &str, _: &str| {});
        let mut hooks = Hooks {
            cancelled,
            catch_signals: Some(&catch),
            progress: &mut progress,
            refused: &mut refused,
        };
        let mut sender =
            Sender::with_client(plan, Some(Box::new(fake)), Some(2), None, &hooks).unwrap();
        let r = send_lines(plan, input, &mut sender, &mut hooks);
        let mut summary = Summary::default();
        let r = sender.finish(r, &mut summary);
        let calls = calls.lock().unwrap().clone();
        (calls, r, summary, caught.load(Ordering::SeqCst))
    }

    #[test]
    fn a_signal_while_sending_aborts_the_open_transaction_and_never_commits() {
        let plan = plan(PartitionChoice::Fixed(1), true);
        let (calls, r, summary, caught) =
            run_lines(&plan, LineInput::for_tests("a\nb\nc\n"), true, None);
        assert!(caught, "signals are caught once the transaction is open");
        assert_eq!(calls, ["begin", "send Some(1) a", "flush", "abort"]);
        let e = r.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Cancelled);
        assert!(
            e.message
                .contains("aborted the transaction (1 records sent in it"),
            "{}",
            e.message
        );
        assert_eq!(summary.records, 0);
    }

    /// A reader that never answers, as stdin with nothing more typed.
    struct Silent;

    impl std::io::Read for Silent {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            loop {
                std::thread::park();
            }
        }
    }

    #[test]
    fn a_signal_while_the_input_waits_aborts_the_open_transaction() {
        let plan = plan(PartitionChoice::Fixed(0), true);
        let input = std::io::Read::chain(std::io::Cursor::new(b"a\nb\n".to_vec()), Silent);
        let input = LineInput::for_tests_reader(Box::new(std::io::BufReader::new(input)));
        let (calls, r, _, _) = run_lines(&plan, input, false, Some(Duration::from_millis(400)));
        assert_eq!(
            calls,
            [
                "begin",
                "send Some(0) a",
                "send Some(0) b",
                "flush",
                "abort"
            ]
        );
        assert_eq!(r.unwrap_err().kind, ErrorKind::Cancelled);
    }

    #[test]
    fn a_complete_input_commits_and_keyless_hash_records_are_left_to_the_partitioner() {
        let plan = plan(PartitionChoice::Hash, true);
        let (calls, r, summary, _) = run_lines(&plan, LineInput::for_tests("a\nb\n"), false, None);
        r.unwrap();
        assert_eq!(calls, ["begin", "send None a", "send None b", "commit"]);
        // Where the partitioner put them comes from the delivery reports.
        assert_eq!(summary.partitions, BTreeMap::from([(0, 7)]));
        assert_eq!(summary.records, 2);
    }
}
