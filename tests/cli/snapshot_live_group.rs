//! `snapshot restore` into the state of a consumer group that is running is
//! refused (issue 19): a live member keeps its partitions' state in memory and
//! would overwrite the restored live state at its next save. Against Tansu,
//! with a real `run` member whose state is in a state topic and in a
//! `state_dir` copy: both restores are refused (exit 1) naming the group and
//! the member, nothing changes; `--allow-live-members` lets the plan through;
//! once the member stopped, the same restores run. `snapshot copy` into the
//! running group's state is refused the same way.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use crate::run_online::start_runner;
use crate::run_state_kafka::{await_truth, signal, wait_exit};
use crate::support::orders_totals::{orders_to_totals, restore_live_args, write_topology};
use crate::support::unique_name;

fn topology(dir: &Path, group: &str, input: &str, output: &str) -> std::path::PathBuf {
    let state_dir = format!("state_dir: {}", dir.join("state").display());
    let settings = ["state_store: kafka", state_dir.as_str()];
    write_topology(&dir.join("topology.yaml"), group, input, output, &settings)
}

fn cli(args: &[&str]) -> Output {
    Command::new(crate::support::binary())
        .args(args)
        .env_remove("KRABKA_BOOTSTRAP_SERVER")
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_restore_into_the_state_of_a_running_group_is_refused_naming_the_group_and_its_member() {
    let (_tansu, bootstrap, input, output) = orders_to_totals(1);
    let group = unique_name("live-restore");
    let state_topic = format!("{group}-state");
    let machine = tempfile::tempdir().unwrap();
    let file = topology(machine.path(), &group, &input, &output);
    let state = machine.path().join("state");

    let mut truth = BTreeMap::new();
    let records: Vec<(i32, String, String)> = (0..20)
        .map(|u| {
            let user = format!("user-{u:02}");
            truth.insert(user.clone(), u as i64 + 1);
            (
                0,
                user.clone(),
                serde_json::json!({"user": user, "amount": u + 1}).to_string(),
            )
        })
        .collect();
    crate::run_online::produce(&bootstrap, &input, &records);
    let mut runner = start_runner(&bootstrap, &file, &[]);
    assert_eq!(await_truth(&bootstrap, &output, &truth), truth);

    // Epoch 1 of partition 0, the same owner's: in the directory, and in the
    // topic (copied there from a directory holding the run's manifest).
    let live = state.join("partition-0.snapshot");
    std::fs::copy(&live, state.join("partition-0-epoch-1.snapshot")).unwrap();
    let staging = tempfile::tempdir().unwrap();
    for name in ["krabka-state-identity.json", "partition-0-epoch-1.snapshot"] {
        std::fs::copy(state.join(name), staging.path().join(name)).unwrap();
    }
    let copy = |extra: &[&str]| {
        let mut args = vec![
            "-b",
            bootstrap.as_str(),
            "snapshot",
            "copy",
            "--from-dir",
            staging.path().to_str().unwrap(),
            "--to-topic",
            state_topic.as_str(),
            "--yes",
        ];
        args.extend_from_slice(extra);
        cli(&args)
    };
    // A copy into the running group's state is refused as a restore is, the
    // dry run too (it says what the copy would do).
    for refused in [copy(&[]), copy(&["--dry-run"])] {
        let text = stderr(&refused);
        assert_eq!(refused.status.code(), Some(1), "{text}");
        assert!(
            text.contains(&format!(
                "holds the state of consumer group {group}, which is running"
            )) && text.contains("--allow-live-members"),
            "{text}"
        );
    }
    let copied = copy(&["--allow-live-members"]);
    assert_eq!(copied.status.code(), Some(0), "{}", stderr(&copied));
    let live_before = std::fs::read(&live).unwrap();

    let dir_restore = |extra: &[&str]| {
        let source = [state.to_str().unwrap()];
        cli(&restore_live_args(Some(&bootstrap), &source, extra))
    };
    let topic_restore = |extra: &[&str]| {
        let source = ["--state-topic", state_topic.as_str()];
        cli(&restore_live_args(Some(&bootstrap), &source, extra))
    };

    for (what, refused) in [
        ("directory", dir_restore(&[])),
        ("topic", topic_restore(&[])),
    ] {
        let text = stderr(&refused);
        assert_eq!(refused.status.code(), Some(1), "{what}: {text}");
        assert!(
            text.contains(&format!(
                "holds the state of consumer group {group}, which is running"
            )) && text.contains("1 member: krabka-streams/")
                && text.contains("--allow-live-members")
                && text.contains("nothing was changed"),
            "{what}: {text}"
        );
    }
    assert_eq!(std::fs::read(&live).unwrap(), live_before);
    // Without a broker to ask, the directory restore says what to give.
    let offline = cli(&restore_live_args(None, &[state.to_str().unwrap()], &[]));
    assert_eq!(offline.status.code(), Some(2), "{}", stderr(&offline));
    assert!(
        stderr(&offline).contains(&format!(
            "holds the state of consumer group {group}: give the broker (-b)"
        )),
        "{}",
        stderr(&offline)
    );
    // The flag lets the plan through.
    for planned in [
        dir_restore(&["--allow-live-members", "--dry-run"]),
        topic_restore(&["--allow-live-members", "--dry-run"]),
    ] {
        assert_eq!(planned.status.code(), Some(0), "{}", stderr(&planned));
    }

    // Once the member has left, the same restores run.
    signal(&runner, "-TERM");
    assert_eq!(wait_exit(&mut runner).code(), Some(130));
    for (what, done) in [
        ("directory", dir_restore(&[])),
        ("topic", topic_restore(&[])),
    ] {
        assert_eq!(done.status.code(), Some(0), "{what}: {}", stderr(&done));
    }
}
