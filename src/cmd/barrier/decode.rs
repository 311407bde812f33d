//! `barrier decode`: arguments and rendering; decoding raw `__barrier_state` or
//! barrier-marker bytes is `ops::barrier::decode` (`docs/formats.md` §7).

use std::io::Write;
use std::path::PathBuf;

use clap::{ArgGroup, Args};
use serde_json::{Value, json};

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::cmd::render::barrier::{cut_full_json, write_cut_detail};
use crate::engine::columnar::barrier::{
    BARRIER_MARKER_CONTROL_TYPE, BarrierCut, BarrierMarker, BarrierStateKey, BarrierStateValue,
    RecordKind,
};
use crate::engine::time::rfc3339_millis;
use crate::ops::barrier::decode::{Bytes, DecodePlan, Decoded, decode};

#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("key_input").required(true).args(["key", "key_file"])),
    after_help = "Hex may contain whitespace and a 0x prefix; files hold raw bytes. An empty \
value (--value '') is a tombstone.

Examples:
  krabka-streams barrier decode --key 00000002000a6f72646572732d6375740000000000000007
  krabka-streams barrier decode --marker --key 000003e8 --value-file marker.bin

Exit codes: 0 decoded, 1 the bytes do not decode (the message is the exact codec error, e.g. \
`truncated barrier state cut value`) or a file cannot be read, 2 usage (e.g. invalid hex)."
)]
pub struct DecodeArgs {
    /// Key bytes as hex.
    #[arg(long, value_name = "HEX")]
    pub key: Option<String>,

    /// File holding the raw key bytes.
    #[arg(long, value_name = "FILE", conflicts_with = "key")]
    pub key_file: Option<PathBuf>,

    /// Value bytes as hex (empty = tombstone).
    #[arg(long, value_name = "HEX")]
    pub value: Option<String>,

    /// File holding the raw value bytes.
    #[arg(long, value_name = "FILE", conflicts_with = "value")]
    pub value_file: Option<PathBuf>,

    /// The bytes are a barrier marker (control key 000003e8 and marker value), not a
    /// __barrier_state record.
    #[arg(long)]
    pub marker: bool,
}

pub fn run(global: &GlobalArgs, args: DecodeArgs) -> CliResult<()> {
    let key = bytes("--key", args.key, args.key_file)
        .ok_or_else(|| CliError::usage("pass --key HEX or --key-file FILE"))?;
    let plan = DecodePlan {
        key,
        value: bytes("--value", args.value, args.value_file),
        marker: args.marker,
    };
    let ui = Ui::new(&global.output);
    match decode(plan)? {
        Decoded::Marker { value } => render_marker(&ui, value.as_ref()),
        Decoded::State { key, value } => render_state_record(&ui, &key, value.as_ref()),
    }
}

/// Hex text or a file; `None` when neither is given.
fn bytes(flag: &'static str, hex_text: Option<String>, file: Option<PathBuf>) -> Option<Bytes> {
    match (hex_text, file) {
        (Some(text), _) => Some(Bytes::Hex { flag, text }),
        (None, Some(path)) => Some(Bytes::File { flag, path }),
        (None, None) => None,
    }
}

fn render_state_record(
    ui: &Ui,
    key: &BarrierStateKey,
    decoded: Option<&BarrierStateValue>,
) -> CliResult<()> {
    let (kind_name, kind_code) = kind_text(key.kind);
    let data = json!({
        "record": "__barrier_state",
        "key": {
            "version": 0,
            "kind": kind_code,
            "kind_name": kind_name,
            "group": key.group,
            "epoch": key.epoch,
        },
        "value": decoded.map(|v| value_json(key, v)),
    });
    ui.report(data, |out| {
        writeln!(
            out,
            "key:   {kind_name} (kind {kind_code}), group {}, epoch {}",
            key.group, key.epoch
        )?;
        match decoded {
            None => writeln!(out, "value: not given"),
            Some(v) => write_value(out, key, v),
        }
    })
}

fn kind_text(kind: RecordKind) -> (&'static str, i16) {
    let name = match kind {
        RecordKind::Group => "group definition",
        RecordKind::InjectionStart => "injection start",
        RecordKind::Cut => "cut",
        RecordKind::Unknown(_) => "unknown kind",
    };
    (name, kind.code())
}

fn value_json(key: &BarrierStateKey, value: &BarrierStateValue) -> Value {
    match value {
        BarrierStateValue::Tombstone => json!({"tombstone": true}),
        BarrierStateValue::Group(d) => json!({
            "topics": d.topics,
            "interval_ms": d.interval_ms,
            "retained_cuts": d.retained_cuts,
            "last_epoch": d.last_epoch,
        }),
        BarrierStateValue::InjectionStart(i) => json!({
            "coordinator_epoch": i.coordinator_epoch,
            "triggered_at": rfc3339_millis(i.triggered_at),
            "triggered_at_ms": i.triggered_at,
            "targets": i.targets.iter().map(|t| json!({"topic": t.topic, "partitions": t.partition_count})).collect::<Vec<_>>(),
        }),
        BarrierStateValue::Cut(cut) => cut_full_json(&BarrierCut {
            group: key.group.clone(),
            epoch: key.epoch,
            cut: cut.clone(),
        }),
        BarrierStateValue::Skipped => {
            json!({"skipped": "unknown key kind: readers skip the value undecoded"})
        }
    }
}

fn write_value(
    out: &mut dyn Write,
    key: &BarrierStateKey,
    value: &BarrierStateValue,
) -> std::io::Result<()> {
    match value {
        BarrierStateValue::Tombstone => {
            writeln!(out, "value: tombstone (deletes this key's record)")
        }
        BarrierStateValue::Group(d) => {
            writeln!(out, "value: group definition")?;
            writeln!(out, "  topics:        {}", d.topics.join(", "))?;
            writeln!(
                out,
                "  interval:      {} ms (-1 = no periodic injection)",
                d.interval_ms
            )?;
            writeln!(out, "  retained cuts: {}", d.retained_cuts)?;
            writeln!(out, "  last epoch:    {}", d.last_epoch)
        }
        BarrierStateValue::InjectionStart(i) => {
            writeln!(out, "value: injection start")?;
            writeln!(out, "  coordinator epoch: {}", i.coordinator_epoch)?;
            writeln!(
                out,
                "  triggered:         {}",
                rfc3339_millis(i.triggered_at)
            )?;
            for t in &i.targets {
                writeln!(
                    out,
                    "  target:            {} ({} partitions)",
                    t.topic, t.partition_count
                )?;
            }
            Ok(())
        }
        BarrierStateValue::Cut(cut) => {
            writeln!(out, "value: cut")?;
            write_cut_detail(
                out,
                &BarrierCut {
                    group: key.group.clone(),
                    epoch: key.epoch,
                    cut: cut.clone(),
                },
            )
        }
        BarrierStateValue::Skipped => writeln!(
            out,
            "value: not decoded (unknown key kind; readers skip it, forward compatible)"
        ),
    }
}

fn render_marker(ui: &Ui, marker: Option<&BarrierMarker>) -> CliResult<()> {
    let data = json!({
        "record": "barrier marker",
        "key": {"version": 0, "control_type": BARRIER_MARKER_CONTROL_TYPE},
        "value": marker.map(|m| json!({
            "group": m.group,
            "epoch": m.epoch,
            "triggered_at": rfc3339_millis(m.triggered_at),
            "triggered_at_ms": m.triggered_at,
        })),
    });
    ui.report(data, |out| {
        writeln!(
            out,
            "key:   barrier marker control key (version 0, type {BARRIER_MARKER_CONTROL_TYPE})"
        )?;
        match marker {
            None => writeln!(out, "value: not given"),
            Some(m) => writeln!(
                out,
                "value: group {}, epoch {}, triggered {}",
                m.group,
                m.epoch,
                rfc3339_millis(m.triggered_at)
            ),
        }
    })
}
