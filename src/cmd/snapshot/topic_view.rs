//! Rendering of `snapshot list|verify --state-topic`: the same report shapes
//! as for a directory, one row per key of the topic (`ops::state_inspect`).

use std::io::Write;

use serde_json::{Value, json};

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::output::{Ui, table};
use crate::engine::columnar::snapshot::container::ReadSnapshot;
use crate::engine::columnar::snapshot::plan::epoch_label;
use crate::engine::columnar::snapshot::state_record::encode_offsets;
use crate::engine::topic_partition::TopicPartition;
use crate::ops::state_inspect::{TopicEntry, TopicListing};

fn entry_json(e: &TopicEntry) -> Value {
    let mut v = json!({
        "key": e.key,
        "state_partition": e.state_partition,
        "partition": e.partition,
        "epoch": e.epoch,
        "live": e.epoch < 0,
        "offset": e.offset,
        "size": e.bytes,
        "chunks": e.chunks,
        "consumer_group": e.group,
        "fingerprint": e.fingerprint,
        "input_offsets": e.offsets.iter().map(|(TopicPartition { topic: t, partition: p }, o)| json!({"topic": t, "partition": p, "offset": o})).collect::<Vec<_>>(),
        "decodes": e.decoded.is_ok(),
    });
    match &e.decoded {
        Ok(snapshot) => {
            v["entries"] = json!(snapshot.entries.len());
            v["generation"] = json!(snapshot.generation.label());
        }
        Err(err) => {
            v["entries"] = Value::Null;
            v["error"] = json!(err);
        }
    }
    v
}

pub fn listing_json(listing: &TopicListing) -> Value {
    json!({
        "state_topic": listing.topic.name,
        "partitions": listing.topic.partitions,
        "snapshots": listing.entries.iter().map(entry_json).collect::<Vec<_>>(),
    })
}

pub fn listing_human(listing: &TopicListing, out: &mut dyn Write) -> std::io::Result<()> {
    let name = &listing.topic.name;
    if listing.entries.is_empty() {
        return writeln!(out, "no snapshots in the state topic {name}");
    }
    let mut t = table(&[
        "key",
        "epoch",
        "offset",
        "size",
        "entries",
        "owner",
        "input offsets",
        "decodes",
    ]);
    for e in &listing.entries {
        let (entries, decodes) = match &e.decoded {
            Ok(s) => (s.entries.len().to_string(), "yes".to_owned()),
            Err(err) => ("-".to_owned(), format!("no: {err}")),
        };
        t.add_row(vec![
            e.key.clone(),
            epoch_label(e.epoch),
            e.offset.map(|o| o.to_string()).unwrap_or_default(),
            e.bytes.map(|b| b.to_string()).unwrap_or_default(),
            entries,
            format!(
                "{} {}",
                e.group.as_deref().unwrap_or("(none)"),
                e.fingerprint.as_deref().unwrap_or("")
            ),
            encode_offsets(&e.offsets),
            decodes,
        ]);
    }
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "{} snapshots in the state topic {name} ({} partitions)",
        listing.entries.len(),
        listing.topic.partitions
    )
}

/// `snapshot verify --state-topic`: exit 3 when a snapshot cannot be assembled,
/// does not decode or shows a problem, or when there is none (unless `allow_empty`).
pub fn verify(
    ui: &Ui,
    listing: &TopicListing,
    allow_empty: bool,
    problems: fn(&ReadSnapshot) -> Vec<String>,
) -> CliResult<()> {
    let name = &listing.topic.name;
    let mut bad: Vec<(String, String)> = Vec::new();
    for e in &listing.entries {
        match &e.decoded {
            Err(err) => bad.push((e.key.clone(), err.clone())),
            Ok(snapshot) => {
                for problem in problems(snapshot) {
                    bad.push((e.key.clone(), problem));
                }
            }
        }
    }
    let checked = listing.entries.len();
    let mut bad_keys: Vec<&str> = bad.iter().map(|(k, _)| k.as_str()).collect();
    bad_keys.dedup();
    let data = json!({
        "state_topic": name,
        "checked": checked,
        "bad": bad.iter().map(|(key, problem)| json!({"key": key, "problem": problem})).collect::<Vec<_>>(),
        "ok": bad.is_empty() && (checked > 0 || allow_empty),
    });
    ui.report(data, |out| {
        if !bad.is_empty() {
            let mut t = table(&["key", "problem"]);
            for (key, problem) in &bad {
                t.add_row(vec![key.clone(), problem.clone()]);
            }
            writeln!(out, "{t}")?;
        }
        writeln!(
            out,
            "{} of {checked} snapshots in the state topic {name} are bad",
            bad_keys.len()
        )
    })?;
    if checked == 0 && !allow_empty {
        Err(CliError::check_failed(format!(
            "the state topic {name} holds no snapshot: nothing was verified (pass --allow-empty if that is expected)"
        )))
    } else if bad.is_empty() {
        Ok(())
    } else {
        Err(CliError::check_failed(format!(
            "{} of {checked} snapshots are bad: {}",
            bad_keys.len(),
            bad_keys.join(", ")
        )))
    }
}
