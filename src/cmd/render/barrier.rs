//! How cuts look in reports: table rows, one-line summaries, the full view of `show`, and
//! their JSON shapes. Times are RFC 3339 UTC; JSON also carries the raw epoch milliseconds.

use std::io::Write;

use serde_json::{Value, json};

use crate::cmd::output::table;
use crate::engine::columnar::barrier::cut_log::BarrierCut;
use crate::engine::time::rfc3339_millis;

/// Columns of the cuts table.
pub const CUT_HEADERS: [&str; 7] = [
    "group",
    "epoch",
    "status",
    "triggered",
    "completed",
    "partitions",
    "missing",
];

/// How many missing partitions a table cell lists before summarising.
const MISSING_SHOWN: usize = 4;

/// The cut's row in the cuts table.
pub fn cut_row(c: &BarrierCut) -> Vec<String> {
    vec![
        c.group.clone(),
        c.epoch.to_string(),
        c.cut.status.to_string(),
        rfc3339_millis(c.cut.triggered_at),
        rfc3339_millis(c.cut.completed_at),
        c.cut.offsets().count().to_string(),
        missing_cell(c),
    ]
}

fn missing_cell(c: &BarrierCut) -> String {
    let missing = &c.cut.missing;
    if missing.is_empty() {
        return "-".into();
    }
    let shown: Vec<String> = missing
        .iter()
        .take(MISSING_SHOWN)
        .map(|tp| tp.to_string())
        .collect();
    match missing.len().saturating_sub(MISSING_SHOWN) {
        0 => shown.join(", "),
        more => format!("{} (+{more} more)", shown.join(", ")),
    }
}

/// The summary JSON of a cut (`list`, `watch`): no per-partition offsets.
pub fn cut_summary_json(c: &BarrierCut) -> Value {
    json!({
        "group": c.group,
        "epoch": c.epoch,
        "status": c.cut.status.to_string(),
        "triggered_at": rfc3339_millis(c.cut.triggered_at),
        "triggered_at_ms": c.cut.triggered_at,
        "completed_at": rfc3339_millis(c.cut.completed_at),
        "completed_at_ms": c.cut.completed_at,
        "partitions": c.cut.offsets().count(),
        "missing": c.cut.missing.iter().map(|tp| tp.to_string()).collect::<Vec<_>>(),
    })
}

/// The full JSON of a cut (`show`): the summary plus every topic, partition and offset.
pub fn cut_full_json(c: &BarrierCut) -> Value {
    let mut v = cut_summary_json(c);
    v["topics"] = c
        .cut
        .topics
        .iter()
        .map(|t| {
            json!({
                "topic": t.topic,
                "partitions": t.partitions.iter().map(|p| json!({"partition": p.partition, "offset": p.offset})).collect::<Vec<_>>(),
            })
        })
        .collect();
    v["missing"] = c
        .cut
        .missing
        .iter()
        .map(|tp| json!({"topic": tp.topic, "partition": tp.partition}))
        .collect();
    v
}

/// One line per cut for `watch`.
pub fn cut_line(c: &BarrierCut) -> String {
    let missing = if c.cut.missing.is_empty() {
        String::new()
    } else {
        format!(", missing {}", missing_cell(c))
    };
    format!(
        "{} epoch {} {}: completed {}, {} partitions{missing}",
        c.group,
        c.epoch,
        c.cut.status,
        rfc3339_millis(c.cut.completed_at),
        c.cut.offsets().count()
    )
}

/// The full human view of one cut.
pub fn write_cut_detail(out: &mut dyn Write, c: &BarrierCut) -> std::io::Result<()> {
    let took = c.cut.completed_at.saturating_sub(c.cut.triggered_at);
    writeln!(out, "group:      {}", c.group)?;
    writeln!(out, "epoch:      {}", c.epoch)?;
    writeln!(out, "status:     {}", c.cut.status)?;
    writeln!(out, "triggered:  {}", rfc3339_millis(c.cut.triggered_at))?;
    writeln!(
        out,
        "completed:  {} ({took} ms after the trigger)",
        rfc3339_millis(c.cut.completed_at)
    )?;
    writeln!(
        out,
        "partitions: {} in {} topic(s)",
        c.cut.offsets().count(),
        c.cut.topics.len()
    )?;
    if c.cut.missing.is_empty() {
        writeln!(out, "missing:    none")?;
    } else {
        let all: Vec<String> = c.cut.missing.iter().map(|tp| tp.to_string()).collect();
        writeln!(out, "missing:    {}", all.join(", "))?;
    }
    let mut t = table(&["topic", "partition", "offset"]);
    for (tp, offset) in c.cut.offsets() {
        t.add_row(vec![tp.topic, tp.partition.to_string(), offset.to_string()]);
    }
    writeln!(out, "{t}")
}
