//! The demo's steps as the user reads them: a title, human text (tables and the
//! subcommands' own renderers) and the JSON result, from `ops::demo`'s typed answers.

use std::collections::BTreeMap;
use std::time::Duration;

use arrow_array::RecordBatch;
use serde_json::{Value, json};

use crate::cmd::exit::CliResult;
use crate::cmd::output::table;
use crate::cmd::render::barrier::{CUT_HEADERS, cut_row, cut_summary_json};
use crate::cmd::render::barrier_verify::{report_json, write_report};
use crate::cmd::render::snapshot::{
    copy_report_human, copy_report_json, dumped_human, dumped_json, list_human, list_json,
};
use crate::ops::demo::barrier::{BARRIER_GROUP, BarrierSteps, CONSUMER_GROUP, STATE_PARTITIONS};
use crate::ops::demo::leader::{Failover, ROLE};
use crate::ops::demo::orders::{ORDERS_PARTITIONS, ORDERS_TOPIC, ReadBack};
use crate::ops::demo::replay::{REPLAY_TOPIC, Replayed};
use crate::ops::demo::schema_files::{IMPORT, SINK_TOPIC as PROTO_SINK_TOPIC, SchemaFilesRun};
use crate::ops::demo::schemas::Prewarmed;
use crate::ops::demo::snapshots::{NODE, SnapshotSteps};
use crate::ops::demo::tail::Tailed;
use crate::ops::demo::topology::UserTotal;
use crate::ops::demo::{Walkthrough, online};

/// One step as printed.
pub struct Step {
    pub title: String,
    pub text: String,
    pub data: Value,
}

impl Step {
    fn new(title: impl Into<String>, text: String, data: Value) -> Self {
        Step {
            title: title.into(),
            text,
            data,
        }
    }

    /// The step in the JSON report.
    pub fn json(&self) -> Value {
        json!({"step": self.title, "result": self.data})
    }
}

/// Every step of the walkthrough, in order.
pub fn steps(w: &Walkthrough) -> CliResult<Vec<Step>> {
    let mut steps = vec![
        cluster(w),
        schemas(&w.schemas),
        Step::new(
            "register the Avro schema",
            format!(
                "subject {} -> schema id {} (already registered by prewarm: same id)",
                w.registered.subject, w.registered.id
            ),
            json!({"subject": w.registered.subject, "id": w.registered.id}),
        ),
        Step::new(
            "produce orders",
            format!(
                "{} Avro orders to `{ORDERS_TOPIC}`, Confluent-framed with id {}, keyed by user, headers trace-id and source",
                w.produced, w.registered.id
            ),
            json!({"records": w.produced}),
        ),
        read_back(&w.read_back),
        replay(&w.replay, &w.registry_url)?,
    ];
    steps.extend(barrier(&w.barrier)?);
    steps.push(leader(&w.leader));
    steps.extend(snapshots(&w.snapshots)?);
    steps.push(offline(&w.offline));
    steps.push(online_run(w));
    steps.push(Step::new(
        "tail the registry-framed sink topic",
        format!(
            "krabka-streams tail {} -e --key-format string --value-format avro --registry {} --out {}\n{} rows; first rows:\n{}",
            w.sink_tail.topic,
            w.registry_url,
            w.sink_tail.file.display(),
            w.sink_tail.rows,
            preview(&w.sink_tail.preview)?
        ),
        json!({"topic": w.sink_tail.topic, "rows": w.sink_tail.rows}),
    ));
    steps.push(schema_files(&w.schema_files, &w.registry_url)?);
    steps.push(parquet(&w.parquet, w)?);
    Ok(steps)
}

/// The first rows of a tailed file as a table; empty when it had none.
fn preview(batch: &Option<RecordBatch>) -> CliResult<String> {
    let mut out = Vec::new();
    if let Some(batch) = batch {
        crate::cmd::batch_table::render(&mut out, batch)?;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// A report a subcommand's renderer writes, without its last newline.
fn written(write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> CliResult<String> {
    let mut out = Vec::new();
    write(&mut out)?;
    Ok(String::from_utf8_lossy(&out).trim_end().to_owned())
}

fn cluster(w: &Walkthrough) -> Step {
    Step::new(
        "embedded cluster and registry",
        format!(
            "Kafka-protocol cluster (librdkafka mock) at {}\nschema registry at {}\ntopic `{ORDERS_TOPIC}` with {ORDERS_PARTITIONS} partitions",
            w.bootstrap, w.registry_url
        ),
        json!({"bootstrap": w.bootstrap, "registry": w.registry_url}),
    )
}

fn schemas(p: &Prewarmed) -> Step {
    let mut t = table(&["subject", "id", "mode"]);
    for (subject, id) in &p.resolved {
        t.add_row(vec![
            subject.clone(),
            (*id as u32).to_string(),
            "auto-register".into(),
        ]);
    }
    let latest = &p.latest;
    let text = format!(
        "{t}\nwrote schema cache {} (`schema prewarm --write-cache`)\n`schema inspect get {} --arrow`: id {}, version {}, {}\n{}\narrow schema:\n{}",
        p.cache_file.display(),
        p.value_subject,
        latest.id as u32,
        latest.version.unwrap_or(0),
        latest.spec.schema_type,
        latest.spec.schema,
        p.arrow,
    );
    let data = json!({
        "resolved": p.resolved,
        "cache_file": p.cache_file.display().to_string(),
        "inspect": {
            "subject": p.value_subject,
            "id": latest.id as u32,
            "version": latest.version,
            "schema": latest.spec.schema,
            "arrow": p.arrow.lines().collect::<Vec<_>>(),
        },
    });
    Step::new("schema prewarm and inspect the orders subjects", text, data)
}

fn read_back(back: &[ReadBack]) -> Step {
    let mut t = table(&[
        "partition",
        "offset",
        "key",
        "schema id",
        "value",
        "headers",
    ]);
    for r in back {
        t.add_row(vec![
            r.partition.to_string(),
            r.offset.to_string(),
            r.key.clone(),
            r.schema_id.to_string(),
            r.value.to_string(),
            r.headers
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_deref().unwrap_or("null")))
                .collect::<Vec<_>>()
                .join(", "),
        ]);
    }
    let records: Vec<Value> = back
        .iter()
        .map(|r| json!({"partition": r.partition, "offset": r.offset, "key": r.key, "value": r.value}))
        .collect();
    Step::new(
        "read back and decode with the writer schema from the registry",
        t.to_string(),
        json!({ "records": records }),
    )
}

fn replay(r: &Replayed, registry_url: &str) -> CliResult<Step> {
    let per_partition = r
        .summary
        .partitions
        .iter()
        .map(|(p, n)| format!("{p}: {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let text = format!(
        "krabka-streams tail {source} -e --value-format avro --out {capture}\nkrabka-streams produce {REPLAY_TOPIC} --input {capture} --value-format avro --partition keep --drop-columns key --registry {registry_url}\n{} records ({} bytes) replayed [{per_partition}], keys, timestamps and headers as captured, the schema derived from the columns under `{REPLAY_TOPIC}-value`; tailed back, first rows:\n{}",
        r.summary.records,
        r.summary.bytes,
        preview(&r.preview)?,
        source = r.source,
        capture = r.capture.display(),
    );
    Ok(Step::new(
        "replay a capture into a topic with produce, and tail it back",
        text,
        json!({"captured": r.captured, "replayed": r.summary.records, "read_back": r.read_back, "topic": REPLAY_TOPIC}),
    ))
}

/// `barrier list --all`, then `barrier verify`.
fn barrier(b: &BarrierSteps) -> CliResult<[Step; 2]> {
    let mut t = table(&CUT_HEADERS);
    for c in &b.cuts {
        t.add_row(cut_row(c));
    }
    let listed = Step::new(
        "publish barrier cuts and list them (barrier list --all)",
        format!(
            "{} records for group {BARRIER_GROUP} in __barrier_state partition {} of {STATE_PARTITIONS} (abs(murmur2(group)) % partitions)\n{t}\n`barrier list` without --all hides the partial cut 2",
            b.published.records, b.published.state_partition,
        ),
        json!({"state_partition": b.published.state_partition, "cuts": b.cuts.iter().map(cut_summary_json).collect::<Vec<_>>()}),
    );
    let verified = Step::new(
        "verify cut 3 (barrier verify --consumer-group orders-app --snapshot-dir DIR)",
        format!(
            "consumer group {CONSUMER_GROUP} committed at the cut; snapshots saved in {}\n{}",
            b.snapshot_dir.display(),
            written(|out| write_report(out, &b.report))?
        ),
        report_json(&b.report),
    );
    Ok([listed, verified])
}

fn seconds(d: Duration) -> String {
    format!("{:.2}s", d.as_secs_f64())
}

fn leader(f: &Failover) -> Step {
    let lease = Duration::from_millis(crate::ops::demo::leader::LEASE_MS as u64);
    let failover = f.failover();
    let text = format!(
        "role `{ROLE}` on {partition}; lease 2s, renew 500ms, stagger 1s, poll 200ms\n\
         node-1 holds with token {t1} (InitProducerId for transactional.id={ROLE})\n\
         node-2 registers and waits its turn (roster: {roster})\n\
         node-1 crashes at +{crash} (stops renewing); its lease runs out {lease} later\n\
         node-2 holds with token {t2} at +{over}: failover {failover} after the crash (bound: lease + stagger + poll = {bound})\n\
         note: the embedded cluster (librdkafka mock) hands out a random producer id on every\n\
         InitProducerId instead of bumping the epoch, and never fences, so token order means nothing\n\
         here; a real broker bumps the epoch of the role's producer id (1:0 -> 1:1) and rejects\n\
         node-1's next write (tested against Tansu).",
        partition = f.partition,
        t1 = f.first,
        t2 = f.second,
        roster = f.roster.join(", "),
        crash = seconds(f.crashed),
        lease = seconds(lease),
        over = seconds(f.took_over),
        failover = seconds(failover),
        bound = seconds(f.bound),
    );
    let data = json!({
        "role": ROLE,
        "first": {"member": "node-1", "token": f.first.to_string()},
        "second": {"member": "node-2", "token": f.second.to_string()},
        "failover_ms": failover.as_millis() as u64,
        "bound_ms": f.bound.as_millis() as u64,
        "within_bound": failover <= f.bound,
    });
    Step::new(
        "leader election: two members, the holder crashes, the standby takes over",
        text,
        data,
    )
}

/// Written, `snapshot list`, `snapshot dump`, `snapshot restore`.
fn snapshots(s: &SnapshotSteps) -> CliResult<[Step; 4]> {
    let dir = s.dir.display();
    Ok([
        Step::new(
            "write GroupBy snapshots (Go payload, Java/Go layout)",
            format!(
                "{} files in {dir}: node `{NODE}` = Sum(amount), Count per user, at barrier epochs 1 and 2",
                s.written
            ),
            json!({"dir": dir.to_string(), "files": s.written}),
        ),
        Step::new(
            format!("snapshot list {dir}"),
            written(|out| list_human(&s.listing, out))?,
            list_json(&s.listing),
        ),
        Step::new(
            format!("snapshot dump {dir} --partition 0 --epoch 2"),
            written(|out| dumped_human(&s.dumped, out))?,
            dumped_json(&s.dumped),
        ),
        Step::new(
            format!(
                "snapshot restore {dir} --partition 0-{} --from-epoch 2 --to-epoch live",
                ORDERS_PARTITIONS - 1
            ),
            written(|out| copy_report_human(&s.restored, out))?,
            copy_report_json(&s.restored),
        ),
    ])
}

fn offline(totals: &[UserTotal]) -> Step {
    let mut t = table(&["partition", "user", "total", "n"]);
    for r in totals {
        t.add_row(vec![
            r.partition.to_string(),
            r.user.clone(),
            r.total.to_string(),
            r.n.to_string(),
        ]);
    }
    Step::new(
        "run a topology offline (examples/topologies/large-orders-by-user.yaml)",
        format!(
            "orders with amount > 100, summed per user, state per partition:\n{t}\n(the same as `tail orders --format arrow --out - | krabka-streams run large-orders-by-user.yaml --input orders=- --sink large-orders-by-user=-`)"
        ),
        json!({"totals": totals.iter().map(|r| json!({"partition": r.partition, "user": r.user, "total": r.total, "n": r.n})).collect::<Vec<_>>()}),
    )
}

fn online_run(w: &Walkthrough) -> Step {
    let totals: &BTreeMap<String, (i64, i64)> = &w.online;
    let mut t = table(&["user", "total", "n"]);
    for (user, (total, n)) in totals {
        t.add_row(vec![user.clone(), total.to_string(), n.to_string()]);
    }
    let sink = online::SINK_TOPIC;
    Step::new(
        "run the same topology online (consumer group, at-least-once)",
        format!(
            "krabka-streams run large-orders-by-user.yaml -b {} --registry {}\nconsumer group `large-orders-by-user` over `{ORDERS_TOPIC}`, the sink as `value: avro` (schema derived from its columns, registered under `{sink}-value`): Avro totals on `{sink}` (last row per user, decoded with the registered schema), equal to the offline totals:\n{t}",
            w.bootstrap, w.registry_url
        ),
        json!({"totals": totals.iter().map(|(u, (total, n))| json!({"user": u, "total": total, "n": n})).collect::<Vec<_>>()}),
    )
}

fn schema_files(s: &SchemaFilesRun, registry_url: &str) -> CliResult<Step> {
    let references: Vec<String> = s
        .root
        .spec
        .references
        .iter()
        .map(|r| format!("{} -> {} v{}", r.name, r.subject, r.version))
        .collect();
    let text = format!(
        "krabka-streams run schema-files.yaml -b … --registry {registry_url}\n\
         sink `value: protobuf:order.proto:demo.LargeOrder`; order.proto imports {IMPORT}:\n\
         {IMPORT} registered first (id {}), then {} (id {}) with references [{}]\n\
         {} orders above 100 written; read back with\n\
         krabka-streams tail {PROTO_SINK_TOPIC} -e --value-format protobuf --registry {registry_url} --out {}\n\
         {} rows; first rows:\n{}",
        s.import.id,
        s.subject,
        s.root.id,
        references.join(", "),
        s.written,
        s.tailed.file.display(),
        s.tailed.rows,
        preview(&s.tailed.preview)?,
    );
    let data = json!({
        "topic": PROTO_SINK_TOPIC,
        "subject": s.subject,
        "id": s.root.id,
        "references": s.root.spec.references.iter().map(|r| json!({"name": r.name, "subject": r.subject, "version": r.version})).collect::<Vec<_>>(),
        "written": s.written,
        "rows": s.tailed.rows,
    });
    Ok(Step::new(
        "a sink written with your own schema files (protobuf:FILE.proto with an import)",
        text,
        data,
    ))
}

fn parquet(t: &Tailed, w: &Walkthrough) -> CliResult<Step> {
    Ok(Step::new(
        "tail the topic to Parquet",
        format!(
            "krabka-streams tail {} -e --key-format string --value-format avro --schema-cache {} --out {}\n{} rows, {} bytes (zstd); first rows:\n{}",
            t.topic,
            w.schema_cache.display(),
            t.file.display(),
            t.rows,
            t.bytes,
            preview(&t.preview)?
        ),
        json!({"file": t.file.display().to_string(), "rows": t.rows, "bytes": t.bytes}),
    ))
}
