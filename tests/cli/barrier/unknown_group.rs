//! A barrier group `__barrier_state` holds no record of is one error with one exit code,
//! 1 (the operation failed: there is nothing to act on), on every command that names a
//! group — never 3 (a check that found a bad cut) nor an empty success.

use super::fixture::{Cluster, assert_code, cut, stderr};
use super::runner::{GROUP, counting_topology};
use crate::run_online::runner_command;
use crate::support::unique_name;

const TYPO: &str = "adit";

fn assert_unknown(out: &std::process::Output, command: &str) {
    assert_code(out, 1);
    let want = format!(
        "no such barrier group: {TYPO} (no record of it in __barrier_state; groups: {GROUP})"
    );
    assert!(stderr(out).contains(&want), "{command}: {}", stderr(out));
}

#[test]
fn an_unknown_group_exits_1_with_the_same_error_on_every_command() {
    let mut c = Cluster::start();
    c.create_barrier_state(3);
    let (input, output) = (unique_name("orders"), unique_name("totals"));
    c.create_topic(&input, 1, false);
    c.create_topic(&output, 1, false);
    c.write_cut(GROUP, 1, &cut(&input, &[(0, 0)], &[]));
    let dir = tempfile::tempdir().unwrap();
    let cg = unique_name("cg");
    let snapshots = dir.path().to_str().unwrap();

    let show = c.run(&["barrier", "show", "--group", TYPO, "--epoch", "latest"]);
    assert_unknown(&show, "barrier show");
    let verify = c.run(&[
        "barrier",
        "verify",
        "--group",
        TYPO,
        "--epoch",
        "latest",
        "--consumer-group",
        &cg,
    ]);
    assert_unknown(&verify, "barrier verify");
    let watch = c.run(&["barrier", "watch", "--group", TYPO, "--count", "1"]);
    assert_unknown(&watch, "barrier watch");
    let list = c.run(&["barrier", "list", "--group", TYPO]);
    assert_unknown(&list, "barrier list --group");
    let restore = c.run(&[
        "snapshot",
        "restore-cut",
        "--group",
        TYPO,
        "--epoch",
        "latest",
        "--snapshot-dir",
        snapshots,
        "--consumer-group",
        &cg,
    ]);
    assert_unknown(&restore, "snapshot restore-cut");

    let topology = counting_topology(dir.path(), &cg, &input, &output);
    let text = std::fs::read_to_string(&topology).unwrap().replace(
        &format!("barrier_group: {GROUP}"),
        &format!("barrier_group: {TYPO}"),
    );
    std::fs::write(&topology, text).unwrap();
    let run = runner_command(&c.bootstrap(), &topology, &["--restore-cut", "latest"])
        .output()
        .unwrap();
    assert_unknown(&run, "run --restore-cut");

    // The group that does exist still works.
    let known = c.run(&["barrier", "show", "--group", GROUP, "--epoch", "latest"]);
    assert_code(&known, 0);
}
