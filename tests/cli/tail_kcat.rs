//! kcat (Debian's, /usr/bin/kcat) as the reference reader: the same topics tailed by
//! kcat and by `tail` on `dev-cluster`, the embedded cluster, compared record by
//! record (topic, partition, offset, key, value) — several topics whose partitions
//! share numbers, empty partitions, one much longer partition; with and without a
//! group and `-p`.

use std::process::Command;

use base64::Engine as _;
use rdkafka::ClientConfig;
use rdkafka::producer::BaseRecord;

use crate::support::checked_producer::CheckedProducer;

use crate::support::dev_cluster::dev_cluster;
use crate::support::unique_name;
use crate::tail_topics::{Row, arrow_rows, assert_same_rows, run_tail, sorted};

const KCAT: &str = "/usr/bin/kcat";

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// kcat's `-f` line: topic, partition, offset, key length (-1: null), key, value
/// length (-1: null), value; tab-separated (the test's values hold no tabs).
fn parse_kcat(text: &str) -> Vec<Row> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.splitn(7, '\t').collect();
            assert_eq!(f.len(), 7, "kcat line {l:?}");
            let part = |len: &str, text: &str| (len != "-1").then(|| b64(text.as_bytes()));
            (
                f[0].to_owned(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                part(f[3], f[4]),
                part(f[5], f[6]),
            )
        })
        .collect()
}

/// Every record of `topic` (or of its partition `partition`) with kcat, to the end.
fn kcat(bootstrap: &str, topic: &str, partition: Option<i32>) -> Vec<Row> {
    let mut cmd = Command::new(KCAT);
    cmd.args([
        "-C",
        "-b",
        bootstrap,
        "-t",
        topic,
        "-o",
        "beginning",
        "-e",
        "-q",
    ])
    .args(["-f", "%t\\t%p\\t%o\\t%K\\t%k\\t%S\\t%s\\n"]);
    if let Some(p) = partition {
        cmd.args(["-p", &p.to_string()]);
    }
    let out = cmd
        .output()
        .expect("run /usr/bin/kcat (apt-get install kcat)");
    assert!(
        out.status.success(),
        "kcat: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse_kcat(&String::from_utf8(out.stdout).unwrap())
}

#[test]
fn tail_reads_what_kcat_reads_from_several_topics_on_the_dev_cluster() {
    let (ta, tb) = (unique_name("ta"), unique_name("tb"));
    let cluster = dev_cluster(&[&format!("{ta}:4"), &format!("{tb}:3")]);
    let producer =
        CheckedProducer::new(ClientConfig::new().set("bootstrap.servers", &cluster.bootstrap));
    // ta/0 and tb/0, tb/1 empty; ta/3 long; tb/2 short with the same numbers as ta's.
    let mut sends: Vec<(String, i32, Option<String>, String)> = Vec::new();
    for i in 0..30 {
        sends.push((
            ta.clone(),
            1,
            Some(format!("user-{}", i % 4)),
            format!("a1 {i}"),
        ));
    }
    for i in 0..5 {
        sends.push((ta.clone(), 2, None, format!("a2 {i}")));
    }
    for i in 0..400 {
        sends.push((
            ta.clone(),
            3,
            Some(format!("k{i}")),
            format!("a3 {i} {}", "x".repeat(200)),
        ));
    }
    for i in 0..7 {
        sends.push((tb.clone(), 2, Some("b".into()), format!("b2 {i}")));
    }
    for (t, p, k, v) in &sends {
        let mut r: BaseRecord<'_, str, str> = BaseRecord::to(t).partition(*p).payload(v);
        if let Some(k) = k {
            r = r.key(k);
        }
        producer.send(r);
    }
    producer.flush();

    let mut both = kcat(&cluster.bootstrap, &ta, None);
    both.extend(kcat(&cluster.bootstrap, &tb, None));
    assert_eq!(both.len(), sends.len(), "kcat reads every record");
    let both = sorted(&both);
    let dir = tempfile::tempdir().unwrap();

    for extra in [&["--batch-records", "7"][..], &[]] {
        let mut args = vec![ta.as_str(), tb.as_str(), "-e"];
        args.extend_from_slice(extra);
        let run = run_tail(dir.path(), &cluster.bootstrap, &args);
        assert_eq!(run.code(), 0, "{}", run.stderr);
        let (rows, _) = arrow_rows(dir.path(), &run.stdout);
        assert_same_rows(&rows, &both, &format!("tail ta tb -e {extra:?} vs kcat"));
    }

    let group = unique_name("fresh");
    let run = run_tail(
        dir.path(),
        &cluster.bootstrap,
        &[&ta, &tb, "-e", "-g", &group],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert_same_rows(
        &arrow_rows(dir.path(), &run.stdout).0,
        &both,
        "tail ta tb -e -g vs kcat",
    );

    let mut third = kcat(&cluster.bootstrap, &ta, Some(2));
    third.extend(kcat(&cluster.bootstrap, &tb, Some(2)));
    let group = unique_name("freshD");
    let run = run_tail(
        dir.path(),
        &cluster.bootstrap,
        &[&ta, &tb, "-e", "-p", "2", "-g", &group],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert_same_rows(
        &arrow_rows(dir.path(), &run.stdout).0,
        &sorted(&third),
        "tail ta tb -e -p 2 -g vs kcat -p 2",
    );
}
