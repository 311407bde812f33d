//! Barrier alignment of a runner that keeps up with its input, and of a restarted one,
//! against Tansu with cuts and injection starts written to `__barrier_state` in the broker's
//! format. Tansu writes no barrier markers, so a cut at offset N here means "records below N
//! are before the cut", as the marker at N would mean on a krabka broker.

use super::fixture::{Cluster, GROUP_STATE_PARTITIONS, StderrLines, assert_code, cut};
use super::runner::{
    GROUP, counting_topology, counts, interrupt, metrics, read_until, start, wait_for,
};
use crate::support::unique_name;

const ORDER: &[u8] = br#"{"user":"a","amount":1}"#;

#[test]
fn a_caught_up_runner_holds_its_records_from_the_injection_start_and_snapshots_at_the_cut() {
    let mut cluster = Cluster::start();
    cluster.create_barrier_state(GROUP_STATE_PARTITIONS);
    let (input, output) = (unique_name("orders"), unique_name("totals"));
    cluster.create_topic(&input, 1, false);
    cluster.create_topic(&output, 1, false);
    for _ in 0..3 {
        cluster.send(&input, 0, None, Some(ORDER));
    }
    let dir = tempfile::tempdir().unwrap();
    let topology = counting_topology(dir.path(), &unique_name("g"), &input, &output);
    let bootstrap = cluster.bootstrap();

    let mut runner = start(&bootstrap, &topology, &[]);
    let lines = StderrLines::watch(&mut runner);
    read_until(&bootstrap, &output, |r| counts(r).contains(&3));
    // The broker starts epoch 1: its injection start comes first, the cut only once every
    // marker is written. Records keep arriving meanwhile, past the marker (offset 3).
    cluster.write_injection(GROUP, 1, &input, 1);
    lines.wait_for("barrier epoch 1 of group audit is being injected");
    for _ in 0..3 {
        cluster.send(&input, 0, None, Some(ORDER));
    }
    lines.wait_for(&format!(
        "holding {input}-0 from offset 3 for barrier epoch 1"
    ));
    cluster.write_cut(GROUP, 1, &cut(&input, &[(0, 3)], &[]));
    let snapshot = dir.path().join("state/partition-0-epoch-1.snapshot");
    wait_for(&snapshot);
    let first = read_until(&bootstrap, &output, |r| counts(r).contains(&6));
    let out = interrupt(runner);
    assert_code(&out, 130);
    assert!(
        lines.matching("began after").is_empty(),
        "the epoch is not late: {:#?}",
        lines.all()
    );
    assert_eq!(counts(&first).last(), Some(&6));

    // The snapshot holds the state at the cut: a run restored to epoch 1 counts on from 3.
    let runner = start(&bootstrap, &topology, &["--restore-cut", "1"]);
    let all = read_until(&bootstrap, &output, |r| {
        r.len() > first.len() && counts(r).last() == Some(&6)
    });
    let out = interrupt(runner);
    assert_code(&out, 130);
    let again = counts(&all[first.len()..]);
    assert_eq!(again.last(), Some(&6));
    assert!(again.iter().all(|n| *n > 3), "{again:?}");
    assert_eq!(metrics(&out)["input_records"], 3, "restarted at offset 3");
}

#[test]
fn a_restart_skips_the_cuts_the_group_had_passed_with_one_notice_and_aligns_on_new_ones() {
    let mut cluster = Cluster::start();
    cluster.create_barrier_state(GROUP_STATE_PARTITIONS);
    let (input, output) = (unique_name("orders"), unique_name("totals"));
    cluster.create_topic(&input, 1, false);
    cluster.create_topic(&output, 1, false);
    for _ in 0..6 {
        cluster.send(&input, 0, None, Some(ORDER));
    }
    for epoch in 1..=3 {
        cluster.write_cut(GROUP, epoch, &cut(&input, &[(0, epoch)], &[]));
    }
    let dir = tempfile::tempdir().unwrap();
    let topology = counting_topology(dir.path(), &unique_name("g"), &input, &output);
    let bootstrap = cluster.bootstrap();
    let state = dir.path().join("state");

    let runner = start(&bootstrap, &topology, &[]);
    wait_for(&state.join("partition-0-epoch-3.snapshot"));
    read_until(&bootstrap, &output, |r| counts(r).contains(&6));
    assert_code(&interrupt(runner), 130);
    for epoch in 1..=3 {
        assert!(
            state
                .join(format!("partition-0-epoch-{epoch}.snapshot"))
                .exists()
        );
    }

    for _ in 0..2 {
        cluster.send(&input, 0, None, Some(ORDER));
    }
    let mut runner = start(&bootstrap, &topology, &[]);
    let lines = StderrLines::watch(&mut runner);
    read_until(&bootstrap, &output, |r| counts(r).contains(&8));
    // A new cut exactly at the runner's position aligns.
    cluster.write_cut(GROUP, 4, &cut(&input, &[(0, 8)], &[]));
    wait_for(&state.join("partition-0-epoch-4.snapshot"));
    let out = interrupt(runner);
    assert_code(&out, 130);
    assert!(
        lines.matching("began after").is_empty(),
        "old epochs are not reported late: {:#?}",
        lines.all()
    );
    assert_eq!(
        lines
            .matching("had committed past 3 complete cut(s) up to epoch 3")
            .len(),
        1,
        "{:#?}",
        lines.all()
    );
}
