//! Every command line of the docs that needs a broker, a registry or data is run against
//! a world built here, in document order: Tansu, the in-repo registry, Avro orders on
//! `orders`, the schemas and files the lines name, a barrier group `orders-cut` with cuts
//! 40 and 41 that `orders-app` committed at, an empty `orders-copy` for the `produce` lines, and
//! snapshot files of those cuts in the
//! state directory the lines name. Hosts, ports and `/var/lib/app/state` are rewritten
//! to the world's. Each line must exit 0, or as the table [`EXPECTED`] says, with the
//! reason; a line that follows (waits for more records) is interrupted after a bound
//! and must then end with 130. The lines themselves come from `docs_commands`.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use apache_avro::types::Value as Avro;

use crate::barrier::fixture::{Cluster, GROUP_STATE_PARTITIONS, cut};
use crate::docs_commands::{doc_lines, tool_args, words};
use crate::snapshot::{container_of, group_by_payload};
use crate::support::admin::produce_bytes;
use crate::support::binary;
use crate::support::tansu::free_port;
use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::registry::{Registry, SchemaSpec};
use krabka_streams::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use krabka_streams::io::registry_server::{RegistryServer, RegistryServerOptions};

/// How long a line may take before it counts as following.
const BOUND: Duration = Duration::from_secs(25);

/// The orders' schema, versions 1 to 3 under `orders-value` (each adds a field with a
/// default, so every pair is backward compatible); `order.avsc` is version 3 and
/// `order-v4.avsc` adds one more.
fn order_schema(version: usize) -> String {
    let mut fields = vec![
        r#"{"name":"order_id","type":"string"}"#.to_owned(),
        r#"{"name":"user","type":"string"}"#.to_owned(),
        r#"{"name":"amount","type":"long"}"#.to_owned(),
    ];
    if version >= 2 {
        fields.push(r#"{"name":"country","type":"string","default":"DE"}"#.into());
        fields.push(
            r#"{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"},"default":0}"#
                .into(),
        );
    }
    if version >= 3 {
        fields.push(r#"{"name":"status","type":"string","default":"NEW"}"#.into());
    }
    if version >= 4 {
        fields.push(r#"{"name":"channel","type":["null","string"],"default":null}"#.into());
    }
    format!(
        r#"{{"type":"record","name":"Order","namespace":"shop","fields":[{}]}}"#,
        fields.join(",")
    )
}

fn avro_body(schema: &apache_avro::Schema, value: Avro) -> Vec<u8> {
    apache_avro::writer::datum::GenericDatumWriter::builder(schema)
        .build()
        .and_then(|w| w.write_value_to_vec(value))
        .unwrap()
}

/// What a line that does not exit 0 in this world must do instead, and why.
enum Outcome {
    Exit(i32, &'static str),
    /// Runs until stopped (waits for records that never come, serves): interrupted
    /// after [`BOUND`], it ends with this code.
    Follows(i32),
}

/// Lines (matched by a substring) that do not exit 0 here.
const EXPECTED: &[(&str, Outcome, &str)] = &[
    (
        "tail orders --from @-1h -n 100",
        Outcome::Follows(130),
        "the world has fewer than 100 orders, so the tail waits for more",
    ),
    (
        "--registry http://localhost:8081 run examples/topologies/large-orders-by-user.yaml",
        Outcome::Follows(130),
        "an online run runs until it is stopped",
    ),
    (
        "run large-orders-by-user.yaml -b HOST:9092",
        Outcome::Follows(130),
        "an online run runs until it is stopped",
    ),
    (
        "dev-cluster",
        Outcome::Follows(0),
        "the embedded cluster serves until Ctrl-C, its documented way to stop",
    ),
    (
        "leader resign --role billing --member node-1",
        Outcome::Exit(1, "member node-1 does not hold role billing"),
        "the README's leaders ran a job that ended, releasing the role; resign is refused for a member that does not hold it",
    ),
];

struct World {
    _cluster: Cluster,
    _registry: RegistryServer,
    bootstrap: String,
    registry_url: String,
    dir: tempfile::TempDir,
}

const ORDERS: usize = 24;
const PARTITIONS: i32 = 4;

fn build_world() -> World {
    let mut cluster = Cluster::start();
    cluster.create_barrier_state(GROUP_STATE_PARTITIONS);
    let bootstrap = cluster.bootstrap();
    cluster.create_topic("orders", PARTITIONS, false);
    cluster.create_topic("large-orders-by-user", PARTITIONS, false);
    cluster.create_topic("orders-copy", PARTITIONS, false);
    let registry = RegistryServer::start(RegistryServerOptions::default()).unwrap();
    let client = HttpRegistry::new(HttpRegistryOptions::new(registry.url())).unwrap();
    // Id 1 is a pair of ints, so `schema decode 0000000001020a` (1, 5) decodes whole.
    let pair = r#"{"type":"record","name":"Pair","fields":[{"name":"a","type":"int"},{"name":"b","type":"int"}]}"#;
    let spec = |schema: &str| SchemaSpec {
        schema: schema.into(),
        ..Default::default()
    };
    assert_eq!(client.register("pair-value", &spec(pair)).unwrap(), 1);
    let mut id = 0;
    for version in 1..=3 {
        id = client
            .register("orders-value", &spec(&order_schema(version)))
            .unwrap() as u32;
    }
    let schema = apache_avro::Schema::parse_str(&order_schema(3)).unwrap();
    let mut records = Vec::new();
    let mut ends = vec![0i64; PARTITIONS as usize];
    for i in 0..ORDERS {
        let record = Avro::Record(vec![
            ("order_id".into(), Avro::String(format!("o{i}"))),
            ("user".into(), Avro::String(format!("u{}", i % 5))),
            ("amount".into(), Avro::Long(40 * i as i64)),
            ("country".into(), Avro::String("DE".into())),
            (
                "ts".into(),
                Avro::TimestampMillis(1_733_000_000_000 + i as i64),
            ),
            (
                "status".into(),
                Avro::String(if i % 2 == 0 { "PAID" } else { "NEW" }.into()),
            ),
        ]);
        let body = avro_body(&schema, record);
        let partition = (i as i32) % PARTITIONS;
        ends[partition as usize] += 1;
        records.push((partition, format!("o{i}"), framing::encode(id, &body)));
    }
    produce_bytes(&bootstrap, "orders", &records);
    let offsets: Vec<(i32, i64)> = (0..PARTITIONS).map(|p| (p, ends[p as usize])).collect();
    cluster.write_group("orders-cut", &["orders"], 41);
    for epoch in [40, 41] {
        cluster.write_cut("orders-cut", epoch, &cut("orders", &offsets, &[]));
    }
    cluster.commit_as_group_member("orders-app", "orders", &offsets);

    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    fs::write(p.join("order.avsc"), order_schema(3)).unwrap();
    fs::write(p.join("order-v4.avsc"), order_schema(4)).unwrap();
    fs::write(
        p.join("subjects.json"),
        r#"[{"subject":"orders-value","schema_file":"order.avsc"}]"#,
    )
    .unwrap();
    let one = avro_body(
        &schema,
        Avro::Record(vec![
            ("order_id".into(), Avro::String("f".into())),
            ("user".into(), Avro::String("u".into())),
            ("amount".into(), Avro::Long(1)),
            ("country".into(), Avro::String("DE".into())),
            ("ts".into(), Avro::TimestampMillis(0)),
            ("status".into(), Avro::String("PAID".into())),
        ]),
    );
    fs::write(p.join("frame.bin"), framing::encode(id, &one)).unwrap();
    std::os::unix::fs::symlink(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"),
        p.join("examples"),
    )
    .unwrap();
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/topologies/large-orders-by-user.yaml"),
        p.join("large-orders-by-user.yaml"),
    )
    .unwrap();
    fs::write(p.join("billing-job"), "#!/bin/sh\nexit 0\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(p.join("billing-job"), fs::Permissions::from_mode(0o755)).unwrap();
    let state = p.join("state");
    fs::create_dir(&state).unwrap();
    for partition in 0..PARTITIONS {
        let bytes = container_of(&[("by_user", group_by_payload())]);
        fs::write(
            state.join(format!("partition-{partition}.snapshot")),
            &bytes,
        )
        .unwrap();
        for epoch in [40, 41] {
            fs::write(
                state.join(format!("partition-{partition}-epoch-{epoch}.snapshot")),
                &bytes,
            )
            .unwrap();
        }
    }
    // The capture `barrier verify --input orders.arrows` checks against cut 41, and
    // the input of the README's offline run.
    let out = Command::new(binary())
        .args([
            "-b",
            &bootstrap,
            "tail",
            "orders",
            "-e",
            "--value-format",
            "avro",
        ])
        .args(["--registry", &registry.url(), "--out", "orders.arrows"])
        .current_dir(p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    World {
        _cluster: cluster,
        registry_url: registry.url(),
        _registry: registry,
        bootstrap,
        dir,
    }
}

/// The line's arguments with the docs' hosts, ports and paths replaced by the world's.
fn localize(world: &World, args: &[String]) -> Vec<String> {
    let state = world.dir.path().join("state").display().to_string();
    let mut out: Vec<String> = Vec::new();
    for a in args {
        let a = a
            .replace("http://localhost:8081", &world.registry_url)
            .replace("http://REGISTRY:8081", &world.registry_url)
            .replace("localhost:9092", &world.bootstrap)
            .replace("HOST:9092", &world.bootstrap)
            .replace("/var/lib/app/state", &state);
        if out.last().is_some_and(|prev| prev == "--port") {
            out.push(free_port().to_string());
        } else {
            out.push(a);
        }
    }
    out
}

/// Runs one line: its exit code, or `None` when it was still running at [`BOUND`]
/// (then interrupted: the code after the interrupt is the second value).
fn run_line(dir: &Path, args: &[String]) -> (Option<i32>, Option<i32>, String) {
    let err_path = dir.join(".line-stderr");
    let mut child = Command::new(binary())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code(), None, fs::read_to_string(&err_path).unwrap());
        }
        if start.elapsed() > BOUND {
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                if let Some(status) = child.try_wait().unwrap() {
                    return (None, status.code(), fs::read_to_string(&err_path).unwrap());
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    return (None, None, fs::read_to_string(&err_path).unwrap());
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Lines that need nothing outside the repository are run by `docs_commands`.
fn needs_the_world(args: &[String]) -> bool {
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let outside =
        has("-b") || has("--bootstrap-server") || args.iter().any(|a| a.starts_with("--registry"));
    let data = matches!(
        args.first().map(String::as_str),
        Some("snapshot" | "dev-cluster" | "demo")
    ) || (args.first().map(String::as_str) == Some("run") && has("--input"));
    (outside || data) && !has("--help")
}

#[test]
fn every_command_line_of_the_docs_runs_against_a_test_world() {
    let world = build_world();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    let mut ran = 0;
    let mut matched = BTreeSet::new();
    for (file, line) in doc_lines() {
        let Some(args) = words(&line).and_then(|w| tool_args(&w)) else {
            continue;
        };
        if !needs_the_world(&args) || !seen.insert(args.clone()) {
            continue;
        }
        ran += 1;
        let local = localize(&world, &args);
        let (code, after_interrupt, stderr) = run_line(world.dir.path(), &local);
        let expected = EXPECTED
            .iter()
            .find(|(pattern, _, _)| line.contains(pattern))
            .map(|(pattern, outcome, _)| {
                matched.insert(*pattern);
                outcome
            });
        let documented = documented_exit(&line);
        let ok = match (expected, code) {
            (Some(Outcome::Follows(want)), None) => after_interrupt == Some(*want),
            (Some(Outcome::Exit(want, message)), Some(got)) => {
                got == *want && stderr.contains(message)
            }
            (None, Some(got)) => got == 0 || Some(got) == documented,
            _ => false,
        };
        if !ok {
            problems.push(format!(
                "{file}: {line}\n    exit {code:?} (after an interrupt at {BOUND:?}: {after_interrupt:?}): {}",
                stderr.trim().lines().last().unwrap_or("")
            ));
        }
    }
    assert!(ran >= 30, "only {ran} lines needed the world");
    for (pattern, _, why) in EXPECTED {
        if !matched.contains(pattern) {
            problems.push(format!(
                "no line of the docs matches the exception {pattern:?} ({why})"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {ran} command lines of the docs do not work as documented:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// `# exit N when …` in a line's comment: the other code the line may end with.
fn documented_exit(line: &str) -> Option<i32> {
    let (_, comment) = line.split_once("# exit ")?;
    comment.split_whitespace().next()?.parse().ok()
}
