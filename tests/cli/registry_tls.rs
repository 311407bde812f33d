//! The registry over HTTPS: a TLS front (native-tls, certificates made by the `openssl`
//! CLI for this test) relays to the in-repo registry server. The CA bundle and the client
//! certificate come from the PEM keys of `--command-config`.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use krabka_streams::io::registry_server::{RegistryServer, SchemaRecord};

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl CLI is needed to make test certificates");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// CA, a server certificate for 127.0.0.1/localhost signed by it, and a client certificate.
fn make_certificates(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=krabka test CA",
        ],
    );
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    for who in ["server", "client"] {
        openssl(
            dir,
            &[
                "genpkey",
                "-algorithm",
                "RSA",
                "-pkeyopt",
                "rsa_keygen_bits:2048",
                "-out",
                &format!("{who}.key"),
            ],
        );
        openssl(
            dir,
            &[
                "req",
                "-new",
                "-key",
                &format!("{who}.key"),
                "-out",
                &format!("{who}.csr"),
                "-subj",
                &format!("/CN={who}"),
            ],
        );
        let csr = format!("{who}.csr");
        let pem = format!("{who}.pem");
        let mut args = vec![
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-out",
            &pem,
        ];
        if who == "server" {
            args.extend_from_slice(&["-extfile", "san.ext"]);
        }
        openssl(dir, &args);
    }
}

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
    make_certificates(dir.path());
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
