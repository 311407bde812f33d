//! The registry over HTTPS: the shared TLS front (`support::tls_proxy`, certificates of its
//! test PKI) relays to the in-repo registry server. The CA bundle and the client
//! certificate come from the PEM keys of `--command-config`.

use std::process::Command;

use krabka_streams::io::registry_server::{RegistryServer, SchemaRecord};

use crate::support::tls_proxy::{TestPki, TlsProxy};

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_krabka-streams"))
        .args(args)
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn https_registries_are_trusted_through_the_command_config_ca_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let server = RegistryServer::start_default().unwrap();
    server.seed("tls-value", SchemaRecord::avro("\"string\""));
    let mut front = TlsProxy::bind(&pki, false);
    front.serve(server.addr());
    let url = format!("https://localhost:{}", front.port());

    // Without the CA the server certificate is not trusted: the registry is unreachable.
    let (code, _, err) = run(&[
        "--registry",
        &url,
        "--request-timeout-ms",
        "5000",
        "schema",
        "inspect",
        "subjects",
    ]);
    assert_eq!(code, 4, "{err}");

    let d = dir.path().display();
    let config = dir.path().join("client.properties");
    std::fs::write(
        &config,
        format!("ssl.truststore.location={d}/ca.pem\nssl.keystore.location={d}/client.pem\nssl.key.location={d}/client.key\n"),
    )
    .unwrap();
    let (code, out, err) = run(&[
        "--registry",
        &url,
        "--command-config",
        config.to_str().unwrap(),
        "--output",
        "json",
        "schema",
        "inspect",
        "subjects",
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["data"]["subjects"], serde_json::json!(["tls-value"]));

    // A keystore without its key is a usage error naming the file.
    std::fs::write(&config, format!("ssl.keystore.location={d}/client.pem\n")).unwrap();
    let (code, _, err) = run(&[
        "--registry",
        &url,
        "--command-config",
        config.to_str().unwrap(),
        "schema",
        "inspect",
        "subjects",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("ssl.key.location"), "{err}");
}
