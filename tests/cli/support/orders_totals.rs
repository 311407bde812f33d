//! The set-up the runner state tests share (`run_fenced`, `run_state_*`,
//! `snapshot_live_group`): a broker with an orders topic and a totals topic, and the
//! topology that sums orders per user into totals (JSON in and out).

use std::path::{Path, PathBuf};

use crate::support::admin::create_topic;
use crate::support::tansu::Tansu;
use crate::support::unique_name;

/// A fresh broker with an orders topic of `input_partitions` and a one-partition totals
/// topic: (the broker, kept so it lives as long as the test; its bootstrap; orders; totals).
pub fn orders_to_totals(input_partitions: i32) -> (Tansu, String, String, String) {
    let tansu = Tansu::start();
    let bootstrap = tansu.bootstrap();
    let (input, output) = (unique_name("orders"), unique_name("totals"));
    create_topic(&bootstrap, &input, input_partitions);
    create_topic(&bootstrap, &output, 1);
    (tansu, bootstrap, input, output)
}

/// Writes to `path` the topology that sums `amount` per `user` from `input` into
/// `output` for `group`; `settings` are more lines of its `settings:` block, after
/// `consumer_group` (e.g. `state_store: kafka`).
pub fn write_topology(
    path: &Path,
    group: &str,
    input: &str,
    output: &str,
    settings: &[&str],
) -> PathBuf {
    let settings: String = settings.iter().map(|s| format!("  {s}\n")).collect();
    std::fs::write(
        path,
        format!(
            r#"version: 1
settings:
  consumer_group: {group}
{settings}nodes:
  - source: orders
    topics: [{input}]
    value: json
  - group_by: per-user
    parent: orders
    keys: [user]
    aggregates: [sum(amount) AS total]
  - sink: out
    parent: per-user
    topic: {output}
    value: json
"#
        ),
    )
    .unwrap();
    path.to_path_buf()
}

/// Two "machines" (temporary folders), each with its own copy of the topology `write` puts
/// in the folder it is given.
pub fn two_machines(write: impl Fn(&Path) -> PathBuf) -> (Vec<tempfile::TempDir>, Vec<PathBuf>) {
    let machines: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let files = machines.iter().map(|m| write(m.path())).collect();
    (machines, files)
}

/// The arguments of `snapshot restore` of partition 0 from epoch 1 onto the live state
/// (`--yes`): `-b bootstrap` first when given, then `source` (a state folder, or
/// `--state-topic T`), then `extra`.
pub fn restore_live_args<'a>(
    bootstrap: Option<&'a str>,
    source: &[&'a str],
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = Vec::new();
    if let Some(b) = bootstrap {
        args.extend(["-b", b]);
    }
    args.extend(["snapshot", "restore"]);
    args.extend_from_slice(source);
    args.extend([
        "--partition",
        "0",
        "--from-epoch",
        "1",
        "--to-epoch",
        "live",
        "--yes",
    ]);
    args.extend_from_slice(extra);
    args
}

/// The total per user in a container, as `snapshot dump` decodes it.
pub fn dumped_totals(file: &Path) -> String {
    let dump = std::process::Command::new(crate::support::binary())
        .args([
            "--output",
            "json",
            "snapshot",
            "dump",
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        dump.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    String::from_utf8_lossy(&dump.stdout).into_owned()
}
