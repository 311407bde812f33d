//! Successful SASL logins (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) from `--command-config`,
//! through librdkafka (`tail`) and through the leader's own Kafka-protocol client, and
//! refused ones: exit 1, the mechanism and the user named, the password nowhere.
//!
//! Tansu 0.6.0 cannot hold a user (see `support::sasl_front`), so the logins terminate
//! at a SASL front on 127.0.0.1 that relays to Tansu once the login succeeded, as the
//! TLS tests use a TLS front.

use std::path::Path;
use std::time::Duration;

use rdkafka::config::ClientConfig;

use super::security::sasl_properties;
use crate::support::admin::create_topic_with_values;
use crate::support::process::{Finished, Running};
use crate::support::sasl_front::{Login, SaslFront};
use crate::support::tansu::Tansu;
use crate::support::unique_name;

pub(super) const BOUND: Duration = Duration::from_secs(60);
pub(super) const ALICE_PW: &str = "alice-SECRET-pw-1";
pub(super) const BOB_PW: &str = "bob-SECRET-pw-2";
pub(super) const WRONG_PW: &str = "wrong-SECRET-pw-3";

/// A broker reachable only through the SASL front (it advertises the front's port).
pub(super) struct SaslCluster {
    pub(super) front: SaslFront,
    _broker: Tansu,
    pub(super) bootstrap: String,
}

pub(super) fn sasl_cluster() -> SaslCluster {
    let mut front = SaslFront::bind(&[("alice", ALICE_PW), ("bob", BOB_PW)]);
    let broker = Tansu::start_with(Some(front.port()), &[]);
    front.serve(broker.addr());
    SaslCluster {
        bootstrap: format!("127.0.0.1:{}", front.port()),
        front,
        _broker: broker,
    }
}

impl SaslCluster {
    /// A test client logged in as alice with SCRAM-SHA-512 (librdkafka's own names).
    pub(super) fn client(&self) -> ClientConfig {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", &self.bootstrap)
            .set("security.protocol", "sasl_plaintext")
            .set("sasl.mechanisms", "SCRAM-SHA-512")
            .set("sasl.username", "alice")
            .set("sasl.password", ALICE_PW);
        c
    }

    pub(super) fn topic_with(&self, records: u32) -> String {
        let topic = unique_name("sasl");
        create_topic_with_values(&self.client(), &topic, records);
        topic
    }

    fn accepted(&self, mechanism: &str, user: &str) -> bool {
        self.front.logins().contains(&Login {
            mechanism: mechanism.into(),
            user: user.into(),
            accepted: true,
        })
    }
}

/// A `--command-config` file with a JAAS line, as Java clients write it.
pub(super) fn properties(dir: &Path, mechanism: &str, user: &str, password: &str) -> String {
    let name = format!("{mechanism}-{user}-{}.properties", password.len());
    sasl_properties(dir, &name, mechanism, user, password)
}

fn run(dir: &Path, bootstrap: &str, config: &str, args: &[&str]) -> Finished {
    let mut all = vec![
        "-b",
        bootstrap,
        "--command-config",
        config,
        "--timeout",
        "8s",
        "--request-timeout-ms",
        "3000",
    ];
    all.extend_from_slice(args);
    Running::start(dir, &all).wait(BOUND)
}

pub(super) fn assert_no_password(out: &Finished, what: &str) {
    let all = format!("{}\n{}", out.stdout_text(), out.stderr);
    for pw in [ALICE_PW, BOB_PW, WRONG_PW] {
        assert!(!all.contains(pw), "{what}: a password leaked:\n{all}");
    }
}

#[test]
fn tail_logs_in_with_scram_sha_256_scram_sha_512_and_plain_from_command_config() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let c = sasl_cluster();
    let topic = c.topic_with(3);
    for (mechanism, user, password) in [
        ("SCRAM-SHA-256", "alice", ALICE_PW),
        ("SCRAM-SHA-512", "bob", BOB_PW),
        ("PLAIN", "bob", BOB_PW),
    ] {
        let config = properties(d, mechanism, user, password);
        let out = run(
            d,
            &c.bootstrap,
            &config,
            &["-vv", "tail", &topic, "-e", "--format", "ndjson"],
        );
        assert_eq!(out.code(), 0, "{mechanism}: {}", out.stderr);
        assert_eq!(
            super::ndjson_offsets(&out.stdout_text()),
            [0, 1, 2],
            "{mechanism}"
        );
        assert!(c.accepted(mechanism, user), "{:?}", c.front.logins());
        assert_no_password(&out, mechanism);
    }
}

#[test]
fn a_refused_login_exits_1_naming_mechanism_and_user_never_the_password() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let c = sasl_cluster();
    let topic = c.topic_with(1);
    let setup_logins = c.front.logins().len();
    for mechanism in ["SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"] {
        let config = properties(d, mechanism, "alice", WRONG_PW);
        // librdkafka (tail), human and JSON.
        let out = run(d, &c.bootstrap, &config, &["tail", &topic, "-e"]);
        assert_eq!(out.code(), 1, "{mechanism}: {}", out.stderr);
        let last = out.stderr.lines().last().unwrap_or_default();
        assert!(
            last.contains(&format!(
                "authentication failed: the broker refused the SASL {mechanism} login as user \"alice\""
            )) && last.contains("invalid credentials"),
            "{mechanism}: {}",
            out.stderr
        );
        // The refusal ends the wait: well before --timeout (8 s).
        assert!(out.elapsed < Duration::from_secs(6), "{:?}", out.elapsed);
        assert_no_password(&out, mechanism);
        let out = run(
            d,
            &c.bootstrap,
            &config,
            &["--output", "json", "tail", &topic, "-e"],
        );
        assert_eq!(out.code(), 1, "{mechanism}: {}", out.stderr);
        let error: serde_json::Value =
            serde_json::from_str(out.stderr.lines().last().unwrap_or_default())
                .unwrap_or_else(|e| panic!("{e}: {}", out.stderr));
        assert_eq!(error["error"]["code"], 1, "{error}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains("\"alice\""), "{message}");
        assert_no_password(&out, mechanism);

        // The leader's own client.
        let out = run(
            d,
            &c.bootstrap,
            &config,
            &["leader", "list", "--topic", "coordination"],
        );
        assert_eq!(out.code(), 1, "{mechanism}: {}", out.stderr);
        assert!(
            out.stderr.contains(&format!(
                "SASL {mechanism} login as user \"alice\" at {}",
                c.bootstrap
            )) && out.stderr.contains("SASL_AUTHENTICATION_FAILED (58)"),
            "{mechanism}: {}",
            out.stderr
        );
        assert_no_password(&out, mechanism);
        let out = run(
            d,
            &c.bootstrap,
            &config,
            &[
                "--output",
                "json",
                "leader",
                "list",
                "--topic",
                "coordination",
            ],
        );
        assert_eq!(out.code(), 1, "{mechanism}: {}", out.stderr);
        let error: serde_json::Value =
            serde_json::from_str(out.stderr.lines().last().unwrap_or_default())
                .unwrap_or_else(|e| panic!("{e}: {}", out.stderr));
        assert_eq!(error["error"]["code"], 1, "{error}");
        assert_no_password(&out, mechanism);
    }
    // Each attempt reached the front as a login of alice, and each was refused.
    let attempts = c.front.logins()[setup_logins..].to_vec();
    for mechanism in ["SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"] {
        assert!(
            attempts.iter().any(|l| l.mechanism == mechanism),
            "{attempts:?}"
        );
    }
    assert!(
        attempts.iter().all(|l| l.user == "alice" && !l.accepted),
        "{attempts:?}"
    );
}

#[test]
fn the_leader_coordination_client_logs_in_with_scram_and_plain() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let c = sasl_cluster();
    let (role, topic) = (unique_name("role"), unique_name("coordination"));
    let scram256 = properties(d, "SCRAM-SHA-256", "alice", ALICE_PW);
    let out = run(
        d,
        &c.bootstrap,
        &scram256,
        &super::leader_run_args(&role, &topic, &["true"]),
    );
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(c.accepted("SCRAM-SHA-256", "alice"));
    assert_no_password(&out, "leader run");
    for (mechanism, user, password) in [("SCRAM-SHA-512", "bob", BOB_PW), ("PLAIN", "bob", BOB_PW)]
    {
        let config = properties(d, mechanism, user, password);
        let out = run(
            d,
            &c.bootstrap,
            &config,
            &[
                "--output", "json", "leader", "status", "--role", &role, "--topic", &topic,
            ],
        );
        assert_eq!(out.code(), 0, "{mechanism}: {}", out.stderr);
        let status: serde_json::Value = serde_json::from_str(&out.stdout_text()).unwrap();
        assert!(status["data"]["epoch"].is_object(), "{status}");
        assert!(c.accepted(mechanism, user), "{:?}", c.front.logins());
        assert_no_password(&out, mechanism);
    }
}
