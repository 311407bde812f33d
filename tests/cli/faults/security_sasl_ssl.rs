//! SASL_SSL end to end: the client speaks TLS to a front that trusts the test CA (and,
//! in the mutual case, asks for a client certificate signed by it), which relays to the
//! SASL front, which answers the login and relays to Tansu; Tansu advertises the TLS
//! front's port, so every connection (bootstrap and broker) goes through both layers.
//! `--command-config` carries `security.protocol=SASL_SSL`, SCRAM-SHA-512 and
//! `ssl.ca.location`. A wrong CA fails as TLS (exit 4, the certificate failure named),
//! a wrong password as the login (exit 1, `authentication failed…`), both at once, and
//! no password reaches stdout or stderr (`-vv`, `--output json`).

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use rdkafka::config::ClientConfig;

use super::security_sasl::{ALICE_PW, BOUND, WRONG_PW, assert_no_password};
use crate::support::admin::create_topic_with_values;
use crate::support::process::{Finished, Running};
use crate::support::sasl_front::{Login, SaslFront};
use crate::support::tansu::Tansu;
use crate::support::tls_proxy::{TestPki, TlsProxy};
use crate::support::unique_name;

/// A refusal (TLS or SASL) is final at once; `--timeout` is 20 s.
const FAST: Duration = Duration::from_secs(8);

/// client → TLS front → SASL front → Tansu.
struct SaslSslCluster {
    pki: TestPki,
    sasl: SaslFront,
    _tls: TlsProxy,
    _broker: Tansu,
    bootstrap: String,
}

fn sasl_ssl_cluster(dir: &Path, mutual: bool) -> SaslSslCluster {
    let pki_dir = dir.join("pki");
    std::fs::create_dir_all(&pki_dir).unwrap();
    let pki = TestPki::create(&pki_dir);
    let mut sasl = SaslFront::bind(&[("alice", ALICE_PW)]);
    let mut tls = TlsProxy::bind(&pki, mutual);
    let broker = Tansu::start_with(Some(tls.port()), &[]);
    sasl.serve(broker.addr());
    tls.serve(SocketAddr::from(([127, 0, 0, 1], sasl.port())));
    SaslSslCluster {
        bootstrap: format!("127.0.0.1:{}", tls.port()),
        pki,
        sasl,
        _tls: tls,
        _broker: broker,
    }
}

impl SaslSslCluster {
    /// A test client over both layers (librdkafka's names).
    fn client(&self) -> ClientConfig {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", &self.bootstrap)
            .set("security.protocol", "sasl_ssl")
            .set("ssl.ca.location", self.pki.file("ca.pem"))
            .set("ssl.certificate.location", self.pki.file("client.pem"))
            .set("ssl.key.location", self.pki.file("client.key"))
            .set("sasl.mechanisms", "SCRAM-SHA-512")
            .set("sasl.username", "alice")
            .set("sasl.password", ALICE_PW);
        c
    }

    fn topic_with(&self, records: u32) -> String {
        let topic = unique_name("sasl-ssl");
        create_topic_with_values(&self.client(), &topic, records);
        topic
    }

    fn accepted(&self) -> usize {
        let alice = Login {
            mechanism: "SCRAM-SHA-512".into(),
            user: "alice".into(),
            accepted: true,
        };
        self.sasl.logins().iter().filter(|l| **l == alice).count()
    }
}

/// A `--command-config` file: SASL_SSL, SCRAM-SHA-512 as JAAS, the CA as
/// `ssl.ca.location`, and a client certificate when given.
fn properties(dir: &Path, name: &str, ca: &str, password: &str, cert: Option<&TestPki>) -> String {
    let mut text = format!(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n\
         sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
         username=\"alice\" password=\"{password}\";\nssl.ca.location={ca}\n"
    );
    if let Some(pki) = cert {
        text.push_str(&format!(
            "ssl.keystore.location={}\nssl.key.location={}\n",
            pki.file("client.pem"),
            pki.file("client.key")
        ));
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn run(dir: &Path, bootstrap: &str, config: &str, args: &[&str]) -> Finished {
    let mut all = vec![
        "-b",
        bootstrap,
        "--command-config",
        config,
        "--timeout",
        "20s",
        "--request-timeout-ms",
        "3000",
    ];
    all.extend_from_slice(args);
    Running::start(dir, &all).wait(BOUND)
}

fn tail(dir: &Path, bootstrap: &str, config: &str, extra: &[&str], topic: &str) -> Finished {
    let mut args = extra.to_vec();
    args.extend_from_slice(&["tail", topic, "-e", "--format", "ndjson"]);
    run(dir, bootstrap, config, &args)
}

#[test]
fn sasl_ssl_with_scram_sha_512_and_the_custom_ca_serves_tail_and_the_leader_client() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let c = sasl_ssl_cluster(d, false);
    let topic = c.topic_with(3);
    let config = properties(
        d,
        "sasl-ssl.properties",
        &c.pki.file("ca.pem"),
        ALICE_PW,
        None,
    );

    let logins = c.accepted();
    // librdkafka's own security, configuration and broker debug output included.
    let out = tail(
        d,
        &c.bootstrap,
        &config,
        &["-vv", "-X", "debug=security,conf,broker"],
        &topic,
    );
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(super::ndjson_offsets(&out.stdout_text()), [0, 1, 2]);
    assert!(c.accepted() > logins, "tail logged in over TLS");
    assert_no_password(&out, "tail");

    let (role, coordination) = (unique_name("role"), unique_name("coordination"));
    let logins = c.accepted();
    let out = run(
        d,
        &c.bootstrap,
        &config,
        &[
            &["-vv"][..],
            &super::leader_run_args(&role, &coordination, &["true"]),
        ]
        .concat(),
    );
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(c.accepted() > logins, "leader run logged in over TLS");
    assert_no_password(&out, "leader run");
    let out = run(
        d,
        &c.bootstrap,
        &config,
        &[
            "-vv",
            "--output",
            "json",
            "leader",
            "status",
            "--role",
            &role,
            "--topic",
            &coordination,
        ],
    );
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let status: serde_json::Value = serde_json::from_str(&out.stdout_text()).unwrap();
    assert!(status["data"]["epoch"].is_object(), "{status}");
    assert_no_password(&out, "leader status");
}

/// The online runner over both layers: its consumer group reads the input, its producer
/// writes the sink topic, its offsets are committed — every client logged in over TLS.
#[test]
fn sasl_ssl_serves_run_online_consumer_producer_and_commits() {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::message::Message;
    use rdkafka::{Offset, TopicPartitionList};

    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let c = sasl_ssl_cluster(d, false);
    let (input, output) = (c.topic_with(3), c.topic_with(0));
    let config = properties(d, "run.properties", &c.pki.file("ca.pem"), ALICE_PW, None);
    let topology = d.join("copy.yaml");
    let group = unique_name("cg");
    std::fs::write(
        &topology,
        format!(
            "version: 1\nsettings:\n  consumer_group: {group}\nnodes:\n  - source: lines\n    \
             topics: [{input}]\n    value: string\n  - pass_through: copy\n    parent: lines\n    \
             topic: {output}\n"
        ),
    )
    .unwrap();
    let logins = c.accepted();
    let runner = Running::start(
        d,
        &[
            "-b",
            &c.bootstrap,
            "--command-config",
            &config,
            "-X",
            "linger.ms=0",
            "-X",
            "batch.num.messages=1",
            "-vv",
            "run",
            topology.to_str().unwrap(),
        ],
    );
    let reader: BaseConsumer = c
        .client()
        .set("group.id", unique_name("reader"))
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(&output, 0, Offset::Beginning)
        .unwrap();
    reader.assign(&tpl).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    let mut copied = Vec::new();
    while copied.len() < 3 && std::time::Instant::now() < deadline {
        if let Some(Ok(m)) = reader.poll(Duration::from_millis(200)) {
            copied.push(String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned());
        }
    }
    assert_eq!(
        copied,
        ["v0", "v1", "v2"],
        "runner stderr so far: {}",
        runner.stderr_so_far()
    );
    assert!(c.accepted() > logins, "the runner logged in over TLS");
    let out = runner.interrupt_and_wait(BOUND);
    assert_eq!(out.code(), 130, "{}", out.stderr);
    assert_no_password(&out, "run");
    // The group's offsets were committed over TLS as well: all three records consumed.
    let group_reader: BaseConsumer = c.client().set("group.id", &group).create().unwrap();
    let mut input_tpl = TopicPartitionList::new();
    input_tpl.add_partition(&input, 0);
    let committed = group_reader
        .committed_offsets(input_tpl, Duration::from_secs(20))
        .unwrap();
    assert_eq!(
        committed.find_partition(&input, 0).map(|e| e.offset()),
        Some(Offset::Offset(3))
    );
}

#[test]
fn sasl_ssl_with_a_client_certificate_reads_and_without_one_is_refused_by_tls() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let c = sasl_ssl_cluster(d, true);
    let topic = c.topic_with(2);
    let ca = c.pki.file("ca.pem");
    let mutual = properties(d, "mutual.properties", &ca, ALICE_PW, Some(&c.pki));
    let out = tail(d, &c.bootstrap, &mutual, &[], &topic);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(super::ndjson_offsets(&out.stdout_text()), [0, 1]);
    let out = run(
        d,
        &c.bootstrap,
        &mutual,
        &["leader", "list", "--topic", &unique_name("coordination")],
    );
    assert_eq!(out.code(), 0, "{}", out.stderr);

    // No client certificate: the TLS front refuses before any login is tried.
    let logins = c.sasl.logins().len();
    let ca_only = properties(d, "ca-only.properties", &ca, ALICE_PW, None);
    let out = tail(d, &c.bootstrap, &ca_only, &[], &topic);
    assert_eq!(out.code(), 4, "{}", out.stderr);
    assert_no_password(&out, "no client certificate");
    assert_eq!(c.sasl.logins().len(), logins, "{:?}", c.sasl.logins());
}

#[test]
fn sasl_ssl_a_wrong_ca_fails_as_tls_and_a_wrong_password_as_the_login_both_at_once() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let c = sasl_ssl_cluster(d, false);
    let topic = c.topic_with(1);
    let other_dir = d.join("other-ca");
    std::fs::create_dir_all(&other_dir).unwrap();
    let other = TestPki::create(&other_dir);
    let logins = c.sasl.logins().len();

    // A CA that did not sign the broker's certificate: exit 4 (no broker was reached),
    // the certificate failure named in the final line, not after --timeout.
    let wrong_ca = properties(
        d,
        "wrong-ca.properties",
        &other.file("ca.pem"),
        ALICE_PW,
        None,
    );
    for extra in [vec!["-vv"], vec!["--output", "json"]] {
        let out = tail(d, &c.bootstrap, &wrong_ca, &extra, &topic);
        assert_eq!(out.code(), 4, "{}", out.stderr);
        let last = out.stderr.lines().last().unwrap_or_default();
        assert!(
            last.contains("TLS") && last.contains("certificate verify failed"),
            "{}",
            out.stderr
        );
        assert!(out.elapsed < FAST, "took {:?}", out.elapsed);
        assert_no_password(&out, "wrong CA");
    }
    let out = run(
        d,
        &c.bootstrap,
        &wrong_ca,
        &["leader", "list", "--topic", "coordination"],
    );
    assert_eq!(out.code(), 4, "{}", out.stderr);
    assert!(
        out.stderr.contains("TLS handshake failed")
            && out.stderr.contains("certificate verify failed"),
        "{}",
        out.stderr
    );
    assert!(out.elapsed < FAST, "took {:?}", out.elapsed);
    assert_eq!(
        c.sasl.logins().len(),
        logins,
        "no login crossed a failed TLS"
    );

    // The right CA and a wrong password: TLS holds, the login is refused.
    let ca = c.pki.file("ca.pem");
    let wrong_pw = properties(d, "wrong-pw.properties", &ca, WRONG_PW, None);
    let out = tail(
        d,
        &c.bootstrap,
        &wrong_pw,
        &["-vv", "-X", "debug=security,conf,broker"],
        &topic,
    );
    assert_eq!(out.code(), 1, "{}", out.stderr);
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains(
            "authentication failed: the broker refused the SASL SCRAM-SHA-512 login as user \"alice\""
        ),
        "{}",
        out.stderr
    );
    assert!(out.elapsed < FAST, "took {:?}", out.elapsed);
    assert_no_password(&out, "wrong password, -vv");
    let out = tail(d, &c.bootstrap, &wrong_pw, &["--output", "json"], &topic);
    assert_eq!(out.code(), 1, "{}", out.stderr);
    let error: serde_json::Value =
        serde_json::from_str(out.stderr.lines().last().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}: {}", out.stderr));
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("authentication failed")),
        "{error}"
    );
    assert_no_password(&out, "wrong password, json");
    let out = run(
        d,
        &c.bootstrap,
        &wrong_pw,
        &["-vv", "leader", "list", "--topic", "coordination"],
    );
    assert_eq!(out.code(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("SASL_AUTHENTICATION_FAILED (58)"),
        "{}",
        out.stderr
    );
    assert_no_password(&out, "leader, wrong password");
    assert!(
        c.sasl.logins()[logins..]
            .iter()
            .any(|l| l.user == "alice" && !l.accepted),
        "{:?}",
        c.sasl.logins()
    );
}
