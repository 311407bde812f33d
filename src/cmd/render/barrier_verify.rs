//! How `barrier verify`'s report looks: the human report (cut, then each check's
//! partitions and differences) and its JSON document. Shared by `barrier verify` and the
//! demo; the checks themselves are `ops::barrier::verify`.

use std::io::Write;

use serde_json::{Value, json};

use crate::engine::columnar::barrier::selection::CutSelection;
use crate::engine::columnar::barrier::verify::{InputPartitionCheck, OffsetRanges};
use crate::engine::time::rfc3339_millis;
use crate::ops::barrier::verify::{
    CommittedReport, InputCheckReport, LayoutSource, SnapshotReport, VerifyReport,
};

/// The human report.
pub fn write_report(out: &mut dyn Write, report: &VerifyReport) -> std::io::Result<()> {
    let cut = match &report.selection {
        CutSelection::Complete(cut) => cut,
        other => {
            return writeln!(out, "NOT VERIFIED: {}", other.problem().unwrap_or_default());
        }
    };
    writeln!(
        out,
        "cut: barrier group {} epoch {} (complete, completed {}, {} partitions)",
        cut.group,
        cut.epoch,
        rfc3339_millis(cut.cut.completed_at),
        cut.cut.offsets().count()
    )?;
    if let Some(c) = &report.consumer_group {
        write_committed(out, c)?;
    }
    if let Some(s) = &report.snapshots {
        write_snapshots(out, s)?;
    }
    if let Some(i) = &report.input {
        write_input(out, i)?;
    }
    if report.verified() {
        writeln!(out, "VERIFIED")
    } else {
        writeln!(out, "NOT VERIFIED: {}", failed_checks(report).join(", "))
    }
}

fn write_committed(out: &mut dyn Write, c: &CommittedReport) -> std::io::Result<()> {
    let good = c.checks.iter().filter(|x| x.verdict.ok()).count();
    let rule = if c.at_least {
        "at or past the cut"
    } else {
        "at the cut"
    };
    writeln!(
        out,
        "committed offsets of consumer group {}: {good} of {} partitions {rule}",
        c.group,
        c.checks.len()
    )?;
    for x in c.checks.iter().filter(|x| !x.verdict.ok()) {
        let committed = x
            .committed
            .map_or_else(|| "nothing".to_owned(), |o| o.to_string());
        writeln!(
            out,
            "  {}: committed {committed}, cut offset {}: {}",
            x.partition,
            x.cut_offset,
            x.verdict.describe()
        )?;
    }
    Ok(())
}

fn layout_text(s: &SnapshotReport) -> String {
    let how = match s.layout_source {
        LayoutSource::Given => "given",
        LayoutSource::Detected => "detected",
        LayoutSource::Assumed => "assumed: no snapshot files in the directory",
    };
    format!("{}, {how}", s.layout)
}

fn write_snapshots(out: &mut dyn Write, s: &SnapshotReport) -> std::io::Result<()> {
    let good = s.checks.iter().filter(|c| c.ok()).count();
    writeln!(
        out,
        "snapshots in {} ({}) for epoch {}: {good} of {} logical partitions have a decodable snapshot",
        s.dir.display(),
        layout_text(s),
        s.epoch,
        s.checks.len()
    )?;
    for c in s.checks.iter().filter(|c| !c.ok()) {
        if c.files.is_empty() {
            writeln!(out, "  partition {}: missing {}", c.partition, c.expected)?;
        }
        for f in &c.files {
            if let Err(e) = &f.outcome {
                writeln!(out, "  partition {}: {}: {e}", c.partition, f.name)?;
            }
        }
    }
    Ok(())
}

fn write_input(out: &mut dyn Write, i: &InputCheckReport) -> std::io::Result<()> {
    let r = &i.report;
    let good = r.partitions.iter().filter(|p| p.ok()).count();
    writeln!(
        out,
        "input {} (topic {}, {} rows): {good} of {} partitions hold exactly the records before the cut",
        i.source,
        r.topic,
        i.rows,
        r.partitions.len()
    )?;
    for p in r.partitions.iter().filter(|p| !p.ok()) {
        writeln!(
            out,
            "  {}/{} (cut offset {}): {}",
            r.topic,
            p.partition,
            p.cut_offset,
            differences(p).join("; ")
        )?;
    }
    for (partition, rows) in &r.other_partitions {
        writeln!(
            out,
            "  {}/{partition}: {rows} rows of a partition the cut does not name",
            r.topic
        )?;
    }
    Ok(())
}

fn differences(p: &InputPartitionCheck) -> Vec<String> {
    let mut out = Vec::new();
    let mut add = |what: &str, ranges: &OffsetRanges| {
        if !ranges.is_empty() {
            out.push(format!("{what} {ranges} ({} records)", ranges.count()));
        }
    };
    add("missing", &p.missing);
    add("past the cut", &p.past_cut);
    add("duplicated", &p.duplicates);
    add("not in the topic", &p.not_in_topic);
    out
}

/// The JSON report.
pub fn report_json(report: &VerifyReport) -> Value {
    let ranges = |r: &OffsetRanges| -> Value {
        r.ranges()
            .iter()
            .map(|(a, b)| json!([a, b]))
            .collect::<Vec<_>>()
            .into()
    };
    let mut checks = Vec::new();
    if let Some(c) = &report.consumer_group {
        checks.push(json!({
            "check": "consumer-group",
            "consumer_group": c.group,
            "at_least": c.at_least,
            "ok": c.ok(),
            "partitions": c.checks.iter().map(|x| json!({
                "topic": x.partition.topic,
                "partition": x.partition.partition,
                "cut_offset": x.cut_offset,
                "committed": x.committed,
                "verdict": x.verdict.describe(),
                "ok": x.verdict.ok(),
            })).collect::<Vec<_>>(),
        }));
    }
    if let Some(s) = &report.snapshots {
        checks.push(json!({
            "check": "snapshots",
            "dir": s.dir.display().to_string(),
            "layout": s.layout.as_str(),
            "layout_source": match s.layout_source {
                LayoutSource::Given => "given",
                LayoutSource::Detected => "detected",
                LayoutSource::Assumed => "assumed",
            },
            "epoch": s.epoch,
            "ok": s.ok(),
            "partitions": s.checks.iter().map(|c| json!({
                "partition": c.partition,
                "expected": c.expected,
                "ok": c.ok(),
                "files": c.files.iter().map(|f| match &f.outcome {
                    Ok(summary) => json!({
                        "name": f.name,
                        "ok": true,
                        "generation": summary.generation.label(),
                        "entries": summary.entries,
                        "bytes": summary.bytes,
                    }),
                    Err(e) => json!({"name": f.name, "ok": false, "error": e}),
                }).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        }));
    }
    if let Some(i) = &report.input {
        let r = &i.report;
        checks.push(json!({
            "check": "input",
            "source": i.source,
            "topic": r.topic,
            "rows": i.rows,
            "ok": r.ok(),
            "partitions": r.partitions.iter().map(|p| json!({
                "partition": p.partition,
                "cut_offset": p.cut_offset,
                "log_start": p.log_start,
                "expected": p.expected,
                "matched": p.matched,
                "missing": ranges(&p.missing),
                "past_cut": ranges(&p.past_cut),
                "duplicates": ranges(&p.duplicates),
                "not_in_topic": ranges(&p.not_in_topic),
                "before_log_start": p.before_log_start,
                "ok": p.ok(),
            })).collect::<Vec<_>>(),
            "other_partitions": r.other_partitions.iter().map(|(p, rows)| json!({"partition": p, "rows": rows})).collect::<Vec<_>>(),
        }));
    }
    json!({
        "group": report.group,
        "epoch": report.selection.cut().map(|c| c.epoch),
        "selector": report.selector.to_string(),
        "verified": report.verified(),
        "problem": report.selection.problem(),
        "cut": report.selection.cut().map(super::barrier::cut_summary_json),
        "checks": checks,
    })
}

/// The checks that did not hold, one phrase each (the report's and the error's words).
pub fn failed_checks(report: &VerifyReport) -> Vec<String> {
    let mut failed = Vec::new();
    if let Some(c) = report.consumer_group.as_ref().filter(|c| !c.ok()) {
        failed.push(format!("consumer group {} differs", c.group));
    }
    if let Some(s) = report.snapshots.as_ref().filter(|s| !s.ok()) {
        failed.push(format!("snapshots in {} differ", s.dir.display()));
    }
    if let Some(i) = report.input.as_ref().filter(|i| !i.report.ok()) {
        failed.push(format!("input {} differs", i.source));
    }
    failed
}
