//! How `snapshot` reports look: the listing of `snapshot list`, the container of
//! `snapshot dump`, the restore report, and the pieces several of them share (a file's
//! owner and epoch, stale temp files, identity manifests, UTC times). Shared by the
//! `snapshot` subcommands and the demo; payload rendering is `snapshot_payload`.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::snapshot_payload::{payload_human, payload_json};
use crate::cmd::output::table;
use crate::engine::columnar::snapshot::container::Generation;
use crate::engine::columnar::snapshot::naming::SnapshotFileName;
use crate::engine::columnar::snapshot::payload::classify;
use crate::engine::columnar::snapshot::plan::epoch_label;
use crate::engine::time::rfc3339_millis;
use crate::io::atomic_file::temp_name::StaleTemp;
use crate::ops::snapshot::Identities;
use crate::ops::snapshot::dump::Dumped;
use crate::ops::snapshot::list::ListReport;
use crate::ops::snapshot::restore::{CopyReport, PreparedWrite};

/// The listing as the JSON document of `snapshot list`.
pub fn list_json(report: &ListReport) -> Value {
    let files: Vec<Value> = report
        .rows
        .iter()
        .map(|row| {
            let mut v = owner_json(&row.file.name);
            v["file"] = json!(row.file.file_name);
            v["size"] = json!(row.file.size);
            v["modified"] = json!(row.file.modified.map(utc_text));
            v["decodes"] = json!(row.decoded.is_ok());
            match &row.decoded {
                Ok((generation, entries)) => {
                    v["entries"] = json!(entries);
                    v["generation"] = json!(generation.label());
                }
                Err(e) => {
                    v["entries"] = Value::Null;
                    v["error"] = json!(e);
                }
            }
            v
        })
        .collect();
    json!({
        "dir": report.dir,
        "files": files,
        "ignored": report.ignored,
        "stale_temp_files": stale_temps_json(&report.stale_temps),
        "identities": identities_json(&report.identities),
    })
}

/// The listing as the table of `snapshot list`.
pub fn list_human(report: &ListReport, out: &mut dyn Write) -> std::io::Result<()> {
    if report.rows.is_empty() {
        writeln!(out, "no snapshot files in {}", report.dir)?;
    } else {
        let mut t = table(&[
            "file", "owner", "epoch", "size", "entries", "modified", "decodes",
        ]);
        for row in &report.rows {
            let (entries, decodes) = match &row.decoded {
                Ok((generation, entries)) => (
                    entries.to_string(),
                    match generation {
                        Generation::A => format!("yes, {}", generation.label()),
                        _ => "yes".to_owned(),
                    },
                ),
                Err(e) => ("-".to_owned(), format!("no: {e}")),
            };
            t.add_row(vec![
                row.file.file_name.clone(),
                owner_label(&row.file.name),
                epoch_text(&row.file.name),
                row.file.size.to_string(),
                entries,
                row.file.modified.map(utc_text).unwrap_or_default(),
                decodes,
            ]);
        }
        writeln!(out, "{t}")?;
        writeln!(
            out,
            "{} snapshot files in {}",
            report.rows.len(),
            report.dir
        )?;
    }
    if report.ignored > 0 {
        writeln!(
            out,
            "{} other files ignored (not snapshot file names)",
            report.ignored
        )?;
    }
    stale_temps_human(out, &report.stale_temps)?;
    identities_human(out, &report.identities)?;
    Ok(())
}

/// The container as the JSON document of `snapshot dump`.
pub fn dumped_json(dumped: &Dumped) -> Value {
    let entries: Vec<Value> = dumped
        .snapshot
        .entries
        .iter()
        .map(|e| {
            let payload = classify(&e.value);
            json!({
                "name": e.name,
                "size": e.value.len(),
                "kind": payload.kind(),
                "payload": payload_json(&payload, &e.value),
            })
        })
        .collect();
    json!({
        "file": dumped.source,
        "size": dumped.size,
        "generation": dumped.snapshot.generation.label(),
        "entries": entries,
    })
}

/// The container as the text of `snapshot dump`.
pub fn dumped_human(dumped: &Dumped, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{}: {} bytes, container {}, {} entries",
        dumped.source,
        dumped.size,
        match dumped.snapshot.generation {
            Generation::B => "gen B",
            other => other.label(),
        },
        dumped.snapshot.entries.len()
    )?;
    if dumped.snapshot.generation == Generation::A {
        writeln!(
            out,
            "legacy (Java ≤ 1.2): read-only; restoring it writes gen B only with --convert-legacy"
        )?;
    }
    for e in &dumped.snapshot.entries {
        let payload = classify(&e.value);
        writeln!(
            out,
            "\n── {} ({}, {} bytes)",
            e.name,
            payload.kind(),
            e.value.len()
        )?;
        writeln!(out, "{}", payload_human(&payload, &e.value))?;
    }
    Ok(())
}

/// One row of a restore report.
pub fn write_json(w: &PreparedWrite, written: bool) -> Value {
    json!({
        "target": w.target,
        "source": w.source,
        "bytes": w.bytes.len(),
        "action": w.action(),
        "written": written,
    })
}

/// The report as the JSON document of `snapshot restore`.
pub fn copy_report_json(report: &CopyReport) -> Value {
    json!({
        "to": report.location,
        "files": report.files.iter().map(|(w, written)| write_json(w, *written)).collect::<Vec<_>>(),
        "written": report.files.iter().filter(|(_, w)| *w).count(),
    })
}

/// The report as the table of `snapshot restore`.
pub fn copy_report_human(report: &CopyReport, out: &mut dyn Write) -> std::io::Result<()> {
    let mut t = table(&["target", "source", "bytes", "action", "written"]);
    for (w, written) in &report.files {
        t.add_row(vec![
            w.target.clone(),
            w.source.clone(),
            w.bytes.len().to_string(),
            w.action().to_owned(),
            if *written { "yes" } else { "no" }.to_owned(),
        ]);
    }
    writeln!(out, "{t}")?;
    let replacing = report.files.iter().filter(|(w, _)| w.replaces).count();
    if report.dry_run {
        writeln!(
            out,
            "would write {} files in {} ({replacing} replacing existing files)",
            report.files.len(),
            report.location
        )
    } else {
        writeln!(
            out,
            "wrote {} files in {} ({replacing} replaced)",
            report.files.iter().filter(|(_, w)| *w).count(),
            report.location
        )
    }
}

/// Identity manifests as JSON: the file and its group, fingerprint and stateful
/// nodes, or the error.
pub fn identities_json(found: &Identities) -> serde_json::Value {
    found
        .iter()
        .map(|(file, read)| match read {
            Ok(identity) => {
                let mut v = identity.to_json();
                if let Some(object) = v.as_object_mut() {
                    object.remove("format");
                    object.remove("version");
                    object.insert("file".into(), serde_json::json!(file));
                }
                v
            }
            Err(e) => serde_json::json!({"file": file, "error": e}),
        })
        .collect()
}

/// One human line per identity manifest.
pub fn identities_human(out: &mut dyn std::io::Write, found: &Identities) -> std::io::Result<()> {
    for (file, read) in found {
        match read {
            Ok(identity) => writeln!(out, "state identity ({file}): {identity}")?,
            Err(e) => writeln!(out, "state identity ({file}): does not decode: {e}")?,
        }
    }
    Ok(())
}

/// Who a file belongs to: `partition 3`, or the Rust group and task when the name tells them.
pub fn owner_label(name: &SnapshotFileName) -> String {
    match name {
        SnapshotFileName::JavaGo { partition, .. } => format!("partition {partition}"),
        SnapshotFileName::Rust(rust) => match rust.group_and_task() {
            Some((group, task)) => format!("group {group} task {task}"),
            None => format!("{} (group-task)", rust.stem),
        },
    }
}

/// The owner as JSON fields.
pub fn owner_json(name: &SnapshotFileName) -> serde_json::Value {
    match name {
        SnapshotFileName::JavaGo { partition, epoch } => serde_json::json!({
            "layout": "java-go", "partition": partition, "epoch": epoch, "live": *epoch == crate::engine::columnar::snapshot::naming::NO_EPOCH,
        }),
        SnapshotFileName::Rust(rust) => {
            let (group, task) = match rust.group_and_task() {
                Some((g, t)) => (Some(g), Some(t)),
                None => (None, None),
            };
            serde_json::json!({
                "layout": "rust", "stem": rust.stem, "group": group, "task": task,
                "epoch": rust.epoch, "live": false,
            })
        }
    }
}

pub fn epoch_text(name: &SnapshotFileName) -> String {
    epoch_label(name.epoch())
}

/// Stale temp files (their writer was killed) as JSON: file name, target, pid.
pub fn stale_temps_json(stale: &[StaleTemp]) -> serde_json::Value {
    stale
        .iter()
        .map(|s| {
            serde_json::json!({
                "file": s.path.file_name().map(|n| n.to_string_lossy().into_owned()),
                "target": s.target,
                "pid": s.pid,
            })
        })
        .collect()
}

/// The human line for stale temp files, if any.
pub fn stale_temps_human(out: &mut dyn std::io::Write, stale: &[StaleTemp]) -> std::io::Result<()> {
    if stale.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = stale
        .iter()
        .filter_map(|s| s.path.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    writeln!(
        out,
        "{} stale temp files of killed writers (removed by the next write of the same file): {}",
        stale.len(),
        names.join(", ")
    )
}

/// RFC 3339 in UTC with millisecond precision (`2024-11-29T09:00:00.000Z`).
pub fn utc_text(time: SystemTime) -> String {
    let epoch_ms = match time.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
    };
    rfc3339_millis(epoch_ms)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn utc_text_is_rfc3339() {
        assert_eq!(utc_text(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            utc_text(UNIX_EPOCH + Duration::from_millis(1_732_870_800_123)),
            "2024-11-29T09:00:00.123Z"
        );
        assert_eq!(
            utc_text(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00.000Z"
        );
        assert_eq!(
            utc_text(UNIX_EPOCH - Duration::from_millis(1)),
            "1969-12-31T23:59:59.999Z"
        );
    }
}
