//! The registry over HTTPS: a TLS front (native-tls, certificates of the shared test PKI,
//! `support::tls_proxy::TestPki`) relays to the in-repo registry server. The CA bundle and the client
//! certificate come from the PEM keys of `--command-config`.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use krabka_streams::io::registry_server::{RegistryServer, SchemaRecord};

use crate::support::tls_proxy::TestPki;

/// Accepts TLS on a free port and relays each connection to `backend`.
fn tls_front(dir: &Path, backend: std::net::SocketAddr) -> u16 {
    let cert = std::fs::read(dir.join("server.pem")).unwrap();
    let key = std::fs::read(dir.join("server.key")).unwrap();
    let identity = native_tls::Identity::from_pkcs8(&cert, &key).unwrap();
    let acceptor = Arc::new(native_tls::TlsAcceptor::new(identity).unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let acceptor = acceptor.clone();
            std::thread::spawn(move || relay(&acceptor, conn, backend));
        }
    });
    port
}

fn relay(acceptor: &native_tls::TlsAcceptor, conn: TcpStream, backend: std::net::SocketAddr) {
    let Ok(mut tls) = acceptor.accept(conn) else {
        return;
    };
    let Ok(mut plain) = TcpStream::connect(backend) else {
        return;
    };
    let _ = tls
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(5)));
    let _ = plain.set_read_timeout(Some(Duration::from_millis(5)));
    let mut buf = [0u8; 16 * 1024];
    let idle = |e: &std::io::Error| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
    for _ in 0..20_000 {
        match tls.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if plain.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
            Err(e) if idle(&e) => {}
            Err(_) => return,
        }
        match plain.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if tls.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
            Err(e) if idle(&e) => {}
            Err(_) => return,
        }
    }
}

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
    TestPki::create(dir.path());
    let server = RegistryServer::start_default().unwrap();
    server.seed("tls-value", SchemaRecord::avro("\"string\""));
    let port = tls_front(dir.path(), server.addr());
    let url = format!("https://localhost:{port}");

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
