//! The security surface against real listeners on 127.0.0.1: TLS with a custom CA and a
//! client certificate (a mutual-TLS front before Tansu, which accepts `--cert` but speaks
//! plain TCP), SASL/SCRAM and PLAIN configured through `--command-config`, and secrets
//! (SASL and registry passwords, registry tokens) that never reach stdout or stderr —
//! not with `-vv`, not with librdkafka's own debug output, not in `--output json` errors.

use std::path::Path;
use std::time::Duration;

use rdkafka::config::ClientConfig;

use crate::support::admin::create_topic_with_values;
use crate::support::process::{Finished, Running};
use crate::support::tansu::Tansu;
use crate::support::tls_proxy::{TestPki, TlsProxy};
use crate::support::unique_name;

const BOUND: Duration = Duration::from_secs(60);

/// A broker reachable only through a mutual-TLS front.
struct TlsCluster {
    pki: TestPki,
    _proxy: TlsProxy,
    _broker: Tansu,
    bootstrap: String,
}

fn tls_cluster(dir: &Path) -> TlsCluster {
    let pki = TestPki::create(dir);
    let mut proxy = TlsProxy::bind(&pki, true);
    let broker = Tansu::start_with(Some(proxy.port()), &[]);
    proxy.serve(broker.addr());
    TlsCluster {
        bootstrap: format!("127.0.0.1:{}", proxy.port()),
        pki,
        _proxy: proxy,
        _broker: broker,
    }
}

impl TlsCluster {
    /// A test client configured with librdkafka's own names.
    fn client(&self) -> ClientConfig {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", &self.bootstrap)
            .set("security.protocol", "ssl")
            .set("ssl.ca.location", self.pki.file("ca.pem"))
            .set("ssl.certificate.location", self.pki.file("client.pem"))
            .set("ssl.key.location", self.pki.file("client.key"));
        c
    }

    fn topic_with(&self, records: u32) -> String {
        let topic = unique_name("tls");
        create_topic_with_values(&self.client(), &topic, records);
        topic
    }

    /// A `--command-config` file with the Java property names.
    fn properties(&self, dir: &Path, name: &str, lines: &[&str]) -> String {
        let path = dir.join(name);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path.display().to_string()
    }
}

fn tail(dir: &Path, bootstrap: &str, config: &str, topic: &str) -> Finished {
    Running::start(
        dir,
        &[
            "-b",
            bootstrap,
            "--command-config",
            config,
            "--timeout",
            "6s",
            "--request-timeout-ms",
            "3000",
            "tail",
            topic,
            "-e",
            "--format",
            "ndjson",
        ],
    )
    .wait(BOUND)
}

#[test]
fn tls_with_a_custom_ca_and_a_client_certificate_from_command_config_reads_records() {
    let work = tempfile::tempdir().unwrap();
    let c = tls_cluster(work.path());
    let topic = c.topic_with(3);
    let d = work.path();
    let ca = format!("ssl.truststore.location={}", c.pki.file("ca.pem"));
    let cert = format!("ssl.keystore.location={}", c.pki.file("client.pem"));
    let key = format!("ssl.key.location={}", c.pki.file("client.key"));
    let full = c.properties(
        d,
        "mtls.properties",
        &[
            "security.protocol=SSL",
            &ca,
            "ssl.truststore.type=PEM",
            &cert,
            "ssl.keystore.type=PEM",
            &key,
        ],
    );
    let out = tail(d, &c.bootstrap, &full, &topic);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert_eq!(super::ndjson_offsets(&out.stdout_text()), [0, 1, 2]);

    // No client certificate: the front refuses the handshake → unreachable, said clearly.
    let no_cert = c.properties(d, "ca-only.properties", &["security.protocol=SSL", &ca]);
    let out = tail(d, &c.bootstrap, &no_cert, &topic);
    assert_eq!(out.code(), 4, "{}", out.stderr);
    assert!(
        out.stderr.contains("SSL") || out.stderr.contains("TLS/SASL"),
        "the handshake failure is named, or at least TLS as a cause: {}",
        out.stderr
    );

    // No custom CA: the server certificate is not trusted.
    let no_ca = c.properties(
        d,
        "cert-only.properties",
        &["security.protocol=SSL", &cert, &key],
    );
    let out = tail(d, &c.bootstrap, &no_ca, &topic);
    assert_eq!(out.code(), 4, "{}", out.stderr);
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains("TLS handshake failed") && last.contains("certificate verify failed"),
        "the final error names the untrusted certificate: {}",
        out.stderr
    );

    // A JKS store is refused before any connection, naming the key.
    let jks = c.properties(
        d,
        "jks.properties",
        &["security.protocol=SSL", &ca, "ssl.truststore.type=JKS"],
    );
    let out = tail(d, &c.bootstrap, &jks, &topic);
    assert_eq!(out.code(), 2, "{}", out.stderr);
    assert!(out.stderr.contains("ssl.truststore.type"), "{}", out.stderr);
}

pub(super) fn sasl_properties(
    dir: &Path,
    name: &str,
    mechanism: &str,
    user: &str,
    password: &str,
) -> String {
    let module = if mechanism == "PLAIN" {
        "org.apache.kafka.common.security.plain.PlainLoginModule"
    } else {
        "org.apache.kafka.common.security.scram.ScramLoginModule"
    };
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism={mechanism}\n\
             sasl.jaas.config={module} required username=\"{user}\" password=\"{password}\";\n"
        ),
    )
    .unwrap();
    path.display().to_string()
}

fn barrier_list(dir: &Path, bootstrap: &str, config: &str, extra: &[&str]) -> Finished {
    let mut args = vec![
        "-b",
        bootstrap,
        "--command-config",
        config,
        "--timeout",
        "6s",
        "--request-timeout-ms",
        "3000",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["barrier", "list"]);
    Running::start(dir, &args).wait(BOUND)
}

/// SASL against Tansu 0.6.0 itself, as far as it goes: with `--authentication` it runs
/// a real SCRAM exchange, but no login can succeed there — its storage engines keep no
/// user (`tansu user create` answers success and stores nothing), so every SCRAM login
/// ends in `unknown-user`, and it hangs up on a PLAIN handshake. Successful logins are
/// in `security_sasl` (through a SASL front). This proves that `sasl.jaas.config`
/// reaches librdkafka, that the exchange runs, and that the refusal librdkafka reports
/// on the side is the command's final error: exit 1 (the broker answered), mechanism and
/// user named, the password never.
#[test]
fn sasl_scram_from_command_config_runs_the_exchange_against_tansu_and_fails_clearly() {
    let broker = Tansu::start_with(None, &["--authentication"]);
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let bootstrap = broker.bootstrap();
    for (mechanism, says) in [
        (
            "SCRAM-SHA-256",
            "SASL SCRAM authentication failed: broker responded with unknown-user",
        ),
        (
            "SCRAM-SHA-512",
            "SASL SCRAM authentication failed: broker responded with unknown-user",
        ),
        // Tansu offers no PLAIN: the handshake itself fails.
        ("PLAIN", "SASL PLAIN mechanism handshake failed"),
    ] {
        let config = sasl_properties(d, "s.properties", mechanism, "alice", "alice-SECRET-pw");
        let out = barrier_list(d, &bootstrap, &config, &[]);
        assert_eq!(out.code(), 1, "{mechanism}: {}", out.stderr);
        let last = out.stderr.lines().last().unwrap_or_default();
        assert!(
            last.contains(&format!(
                "authentication failed: the broker refused the SASL {mechanism} login as user \"alice\""
            )) && last.contains(says),
            "{mechanism}: {}",
            out.stderr
        );
        assert!(out.elapsed < Duration::from_secs(20), "{:?}", out.elapsed);
        assert!(!out.stderr.contains("alice-SECRET-pw"), "{}", out.stderr);
    }
}

/// Fails when `secret` (or the Basic-auth header built from it) is anywhere in the output.
fn assert_no_secret(out: &Finished, secrets: &[&str], what: &str) {
    let all = format!("{}\n{}", out.stdout_text(), out.stderr);
    for s in secrets {
        assert!(
            !all.contains(s),
            "{what}: {s:?} leaked (exit {}):\n{all}",
            out.code()
        );
    }
}

#[test]
fn sasl_and_registry_secrets_never_appear_in_verbose_logs_errors_or_json() {
    use base64::Engine as _;
    use krabka_streams::io::registry_server::{RegistryServer, RegistryServerOptions};

    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    // The SCRAM exchange runs (see the test above), with every password below.
    let broker = Tansu::start_with(None, &["--authentication"]);
    let bootstrap = broker.bootstrap();
    let sasl_secret = "sasl-SECRET-123";
    let wrong_sasl = "sasl-WRONG-SECRET-321";

    // SASL: right and wrong passwords, through the properties file and through -X, with
    // -vv, librdkafka's own debug output and JSON errors.
    for (password, extra) in [
        (sasl_secret, vec!["-vv", "-X", "debug=security,conf,broker"]),
        (wrong_sasl, vec!["-vv", "-X", "debug=security,conf,broker"]),
        (wrong_sasl, vec!["--output", "json"]),
    ] {
        let config = sasl_properties(d, "s.properties", "SCRAM-SHA-256", "alice", password);
        let out = barrier_list(d, &bootstrap, &config, &extra);
        assert_no_secret(
            &out,
            &[sasl_secret, wrong_sasl],
            "SASL via --command-config",
        );
    }
    let plain = d.join("plain.properties");
    std::fs::write(
        &plain,
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n",
    )
    .unwrap();
    let x_password = format!("sasl.password={wrong_sasl}");
    let out = barrier_list(
        d,
        &bootstrap,
        plain.to_str().unwrap(),
        &[
            "-vv",
            "-X",
            "sasl.username=alice",
            "-X",
            &x_password,
            "-X",
            "debug=all",
        ],
    );
    assert_no_secret(&out, &[wrong_sasl], "SASL via -X");
    // A malformed JAAS line is refused without echoing it.
    let broken = d.join("broken.properties");
    std::fs::write(
        &broken,
        format!("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=nonsense password=\"{wrong_sasl}\n"),
    )
    .unwrap();
    let out = barrier_list(d, &bootstrap, broken.to_str().unwrap(), &["-vv"]);
    assert_no_secret(&out, &[wrong_sasl], "malformed JAAS");

    // Registry: a wrong password (401), the right one, a token, and a password file.
    let reg_secret = "reg-SECRET-456";
    let token = "tok-SECRET-789";
    let server =
        RegistryServer::start(RegistryServerOptions::default().basic_auth("reg-user", reg_secret))
            .unwrap();
    let url = server.url();
    let basic = |p: &str| base64::engine::general_purpose::STANDARD.encode(format!("reg-user:{p}"));
    let secrets = [
        reg_secret,
        "reg-WRONG-654",
        token,
        &basic(reg_secret),
        &basic("reg-WRONG-654"),
    ];
    let password_file = d.join("registry-password");
    std::fs::write(&password_file, format!("{reg_secret}\n")).unwrap();
    type Flags<'a> = Vec<&'a str>;
    type Env<'a> = Vec<(&'a str, &'a str)>;
    let runs: Vec<(Flags, Env)> = vec![
        (
            vec!["-vv", "--schema-registry-user", "reg-user"],
            vec![("KRABKA_SCHEMA_REGISTRY_PASSWORD", "reg-WRONG-654")],
        ),
        (
            vec!["--output", "json", "--schema-registry-user", "reg-user"],
            vec![("KRABKA_SCHEMA_REGISTRY_PASSWORD", "reg-WRONG-654")],
        ),
        (
            vec!["-vv", "--schema-registry-user", "reg-user"],
            vec![("KRABKA_SCHEMA_REGISTRY_PASSWORD", reg_secret)],
        ),
        (
            vec![
                "-vv",
                "--output",
                "json",
                "--schema-registry-user",
                "reg-user",
                "--schema-registry-password-file",
                password_file.to_str().unwrap(),
            ],
            vec![],
        ),
        (
            vec!["-vv", "--output", "json"],
            vec![("KRABKA_SCHEMA_REGISTRY_TOKEN", token)],
        ),
    ];
    for (flags, env) in runs {
        let mut cmd = std::process::Command::new(crate::support::binary());
        cmd.args(["--registry", &url, "--request-timeout-ms", "2000"])
            .args(&flags)
            .args(["schema", "inspect", "subjects"])
            .env_remove("KRABKA_SCHEMA_REGISTRY_PASSWORD")
            .env_remove("KRABKA_SCHEMA_REGISTRY_TOKEN")
            .env_remove("KRABKA_OUTPUT");
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let started = std::time::Instant::now();
        let o = cmd.output().unwrap();
        let out = Finished {
            status: o.status,
            stdout: o.stdout,
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            elapsed: started.elapsed(),
        };
        assert_no_secret(&out, &secrets, &format!("registry {flags:?} {env:?}"));
    }
    // The wrong password really was sent and refused (the test exercised the error path).
    assert!(
        server.request_log().iter().any(|r| r
            .headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("authorization")
                && v.contains(&basic("reg-WRONG-654"))))
    );
}

fn leader(dir: &Path, bootstrap: &str, config: &str, args: &[&str]) -> Finished {
    let mut all = vec![
        "-b",
        bootstrap,
        "--command-config",
        config,
        "--timeout",
        "8s",
        "--request-timeout-ms",
        "3000",
        "leader",
    ];
    all.extend_from_slice(args);
    Running::start(dir, &all).wait(BOUND)
}

/// The leader's own Kafka-protocol client (not rdkafka) through the mutual-TLS front:
/// creating the coordination topic, minting the fencing token (InitProducerId), the
/// transactional lease write and the committed reads of `status` all go over TLS with
/// the CA and client certificate of `--command-config`.
#[test]
fn the_leader_coordination_client_speaks_mutual_tls_from_command_config() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let c = tls_cluster(d);
    let (role, topic) = (unique_name("role"), unique_name("coordination"));
    let ca = format!("ssl.truststore.location={}", c.pki.file("ca.pem"));
    let cert = format!("ssl.keystore.location={}", c.pki.file("client.pem"));
    let key = format!("ssl.key.location={}", c.pki.file("client.key"));
    let full = c.properties(
        d,
        "mtls.properties",
        &["security.protocol=SSL", &ca, &cert, &key],
    );
    let out = leader(
        d,
        &c.bootstrap,
        &full,
        // `leader()` names the subcommand group itself.
        &super::leader_run_args(&role, &topic, &["true"])[1..],
    );
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let out = leader(
        d,
        &c.bootstrap,
        &full,
        &[
            "status", "--role", &role, "--topic", &topic, "--output", "json",
        ],
    );
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let status: serde_json::Value = serde_json::from_str(&out.stdout_text()).unwrap();
    assert!(status["data"]["epoch"].is_object(), "{status}");

    // The broker's certificate is not trusted without the CA: exit 4 within the
    // timeout, OpenSSL's reason named.
    let no_ca = c.properties(
        d,
        "no-ca.properties",
        &["security.protocol=SSL", &cert, &key],
    );
    let out = leader(d, &c.bootstrap, &no_ca, &["list", "--topic", &topic]);
    assert_eq!(out.code(), 4, "{}", out.stderr);
    assert!(
        out.stderr.contains("TLS handshake failed"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("certificate verify failed"),
        "{}",
        out.stderr
    );
    assert!(out.elapsed < Duration::from_secs(30), "{:?}", out.elapsed);
    // Without the client certificate the front refuses the handshake.
    let no_cert = c.properties(d, "no-cert.properties", &["security.protocol=SSL", &ca]);
    let out = leader(d, &c.bootstrap, &no_cert, &["list", "--topic", &topic]);
    assert_eq!(out.code(), 4, "{}", out.stderr);
    // Under TLS 1.3 the server checks the client certificate after the client's side of
    // the handshake is done: the refusal is an alert, a hang-up or a reset (when the
    // proxy closes with our request unread) on the first read.
    assert!(
        [
            "certificate required",
            "TLS handshake failed",
            "timed out",
            "connection closed",
            "Connection reset by peer"
        ]
        .iter()
        .any(|s| out.stderr.contains(s)),
        "{}",
        out.stderr
    );
    // Plaintext against the TLS port is never mistaken for an answer.
    let plain = c.properties(d, "plain.properties", &["security.protocol=PLAINTEXT"]);
    let out = leader(d, &c.bootstrap, &plain, &["list", "--topic", &topic]);
    assert_eq!(out.code(), 4, "{}", out.stderr);
    // Settings that cannot work are usage errors before any connection.
    let jks = c.properties(
        d,
        "jks.properties",
        &["security.protocol=SSL", &ca, "ssl.truststore.type=JKS"],
    );
    let out = leader(d, &c.bootstrap, &jks, &["list", "--topic", &topic]);
    assert_eq!(out.code(), 2, "{}", out.stderr);
    let missing = c.properties(
        d,
        "missing.properties",
        &[
            "security.protocol=SSL",
            "ssl.truststore.location=/nonexistent/ca.pem",
        ],
    );
    let out = leader(d, &c.bootstrap, &missing, &["list", "--topic", &topic]);
    assert_eq!(out.code(), 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("ssl.ca.location /nonexistent/ca.pem"),
        "{}",
        out.stderr
    );
}

/// SASL in the leader's client against Tansu with `--authentication` (see the SCRAM test
/// above for why no login can succeed there; `security_sasl` has the successful ones):
/// SCRAM-SHA-256/512 run the exchange to the broker's `unknown-user` answer (exit 1,
/// mechanism and user named), Tansu hangs up on PLAIN (exit 4, said as such); a clear
/// error, never a plaintext fallback, never the password.
#[test]
fn the_leader_coordination_client_runs_sasl_scram_and_plain_from_command_config() {
    let broker = Tansu::start_with(None, &["--authentication"]);
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let bootstrap = broker.bootstrap();
    for (mechanism, says) in [
        (
            "SCRAM-SHA-256",
            "SASL SCRAM-SHA-256 login as user \"alice\" at 127.0.0.1:",
        ),
        (
            "SCRAM-SHA-512",
            "failed: SASL_AUTHENTICATION_FAILED (58): SCRAM authentication failed: unknown-user",
        ),
        // Tansu hangs up on a SaslHandshake for PLAIN.
        ("PLAIN", "does the listener offer SASL PLAIN?"),
    ] {
        let config = sasl_properties(d, "s.properties", mechanism, "alice", "lead-SECRET-pw");
        let out = leader(d, &bootstrap, &config, &["list", "--topic", "coordination"]);
        assert_ne!(out.code(), 0, "{mechanism}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{mechanism}: {}", out.stderr);
        assert!(out.elapsed < Duration::from_secs(30), "{:?}", out.elapsed);
        assert_no_secret(&out, &["lead-SECRET-pw"], mechanism);
    }
    let gssapi = d.join("gssapi.properties");
    std::fs::write(
        &gssapi,
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\n",
    )
    .unwrap();
    let out = leader(
        d,
        &bootstrap,
        gssapi.to_str().unwrap(),
        &["list", "--topic", "coordination"],
    );
    assert_eq!(out.code(), 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("sasl.mechanism=GSSAPI is not supported"),
        "{}",
        out.stderr
    );
}

/// A mutual-TLS listener and no client certificate: under TLS 1.3 the refusal is an
/// alert after the client's side of the handshake, which librdkafka reports as a
/// transport failure. `tail` and an online `run` still end at once (well within the
/// 20 s `--timeout`) with exit 4 and a last line saying the broker requires a client
/// certificate and which `--command-config` keys give one.
#[test]
fn a_listener_that_requires_a_client_certificate_fails_tail_and_run_at_once_with_exit_4() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let c = tls_cluster(d);
    let topic = c.topic_with(1);
    let ca = format!("ssl.ca.location={}", c.pki.file("ca.pem"));
    let no_cert = c.properties(
        d,
        "no-client-cert.properties",
        &["security.protocol=SSL", &ca],
    );
    let topology = d.join("copy.yaml");
    std::fs::write(
        &topology,
        format!(
            "version: 1\nsettings:\n  consumer_group: {}\nnodes:\n  - source: lines\n    topics: [{topic}]\n    value: string\n  - pass_through: copy\n    parent: lines\n    topic: {}\n",
            unique_name("cg"),
            unique_name("out"),
        ),
    )
    .unwrap();
    let commands: [(&str, Vec<&str>); 2] = [
        ("tail", vec!["tail", &topic, "-e", "--format", "ndjson"]),
        ("run", vec!["run", topology.to_str().unwrap()]),
    ];
    for (what, args) in commands {
        let mut all = vec![
            "-b",
            &c.bootstrap,
            "--command-config",
            &no_cert,
            "--timeout",
            "20s",
            "--request-timeout-ms",
            "3000",
        ];
        all.extend_from_slice(&args);
        let out = Running::start(d, &all).wait(BOUND);
        assert_eq!(out.code(), 4, "{what}: {}", out.stderr);
        let last = out.stderr.lines().last().unwrap_or_default();
        assert!(
            last.contains("the broker requires a client certificate")
                && last.contains("ssl.certificate.location")
                && last.contains("ssl.key.location"),
            "{what}: {}",
            out.stderr
        );
        assert!(
            out.elapsed < Duration::from_secs(8),
            "{what}: took {:?}",
            out.elapsed
        );
    }
}
