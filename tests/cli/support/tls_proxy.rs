//! A TLS-terminating front on 127.0.0.1 for a plaintext server (Tansu 0.6.0 accepts
//! `--cert` but still speaks plain TCP): OpenSSL server side, certificates from a test CA
//! made with the `openssl` CLI, and optionally a required client certificate signed by
//! that CA (mutual TLS). Each accepted connection is relayed to the backend by a thread.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use openssl::ssl::{SslAcceptor, SslFiletype, SslMethod, SslVerifyMode};

/// A CA, a server certificate for 127.0.0.1/localhost and a client certificate, as PEM
/// files `ca.pem`, `server.pem` + `server.key`, `client.pem` + `client.key` (PKCS#8).
pub struct TestPki {
    pub dir: PathBuf,
}

impl TestPki {
    pub fn create(dir: &Path) -> TestPki {
        let ossl = |args: &[&str]| {
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
        };
        ossl(&[
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
            "/CN=krabka faults CA",
        ]);
        std::fs::write(
            dir.join("san.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
        )
        .unwrap();
        for who in ["server", "client"] {
            let (key, csr, pem) = (
                format!("{who}.key"),
                format!("{who}.csr"),
                format!("{who}.pem"),
            );
            ossl(&[
                "genpkey",
                "-algorithm",
                "RSA",
                "-pkeyopt",
                "rsa_keygen_bits:2048",
                "-out",
                &key,
            ]);
            ossl(&[
                "req",
                "-new",
                "-key",
                &key,
                "-out",
                &csr,
                "-subj",
                &format!("/CN={who}"),
            ]);
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
            ossl(&args);
        }
        TestPki {
            dir: dir.to_path_buf(),
        }
    }

    pub fn file(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

/// A listening TLS front; relaying starts with [`TlsProxy::serve`]. Stops on drop.
pub struct TlsProxy {
    listener: Option<TcpListener>,
    acceptor: Arc<SslAcceptor>,
    port: u16,
    stop: Arc<AtomicBool>,
}

impl TlsProxy {
    /// Binds a free loopback port with the PKI's server certificate; `mutual` requires a
    /// client certificate signed by the CA.
    pub fn bind(pki: &TestPki, mutual: bool) -> TlsProxy {
        let mut b = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls()).unwrap();
        b.set_certificate_chain_file(pki.dir.join("server.pem"))
            .unwrap();
        b.set_private_key_file(pki.dir.join("server.key"), SslFiletype::PEM)
            .unwrap();
        b.set_ca_file(pki.dir.join("ca.pem")).unwrap();
        if mutual {
            b.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
        }
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        TlsProxy {
            listener: Some(listener),
            acceptor: Arc::new(b.build()),
            port,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Relays every accepted connection to `backend` from now on.
    pub fn serve(&mut self, backend: SocketAddr) {
        let listener = self.listener.take().expect("serve once");
        listener.set_nonblocking(true).unwrap();
        let (acceptor, stop) = (self.acceptor.clone(), self.stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let (acceptor, stop) = (acceptor.clone(), stop.clone());
                        std::thread::spawn(move || relay(&acceptor, conn, backend, &stop));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
    }
}

impl Drop for TlsProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn relay(acceptor: &SslAcceptor, conn: TcpStream, backend: SocketAddr, stop: &AtomicBool) {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
    // A failed handshake (untrusted or missing client certificate) closes the connection.
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
    let mut buf = vec![0u8; 64 * 1024];
    let idle = |e: &std::io::Error| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
    while !stop.load(Ordering::SeqCst) {
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
