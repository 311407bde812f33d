//! A SASL-terminating front on 127.0.0.1 for a plaintext Kafka broker, the way
//! `tls_proxy` terminates TLS. Tansu 0.6.0 runs a real SCRAM exchange with
//! `--authentication`, but no login can succeed there: its storage engines (memory,
//! s3) accept `AlterUserScramCredentials` and keep nothing (`tansu user create`
//! answers success, no object is written to the bucket, and the next login is
//! `unknown-user`), and it hangs up on PLAIN. So a successful login is shown here.
//!
//! Per connection: ApiVersions goes to the broker and its answer back; SaslHandshake
//! (v0/v1) and SaslAuthenticate (v0–v2) are answered here — PLAIN, SCRAM-SHA-256 and
//! SCRAM-SHA-512 (RFC 5802 server side: salted password, proof check, server
//! signature) against a fixed user table, refusals worded as Kafka words them
//! (SASL_AUTHENTICATION_FAILED, 58); after a successful login the connection is relayed
//! to the broker byte for byte. Any other request before a login closes the connection.
//! Every attempt is logged (mechanism, user, outcome), never the password.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use openssl::hash::{MessageDigest, hash};
use openssl::pkey::PKey;
use openssl::sign::Signer;

const API_VERSIONS: i16 = 18;
const SASL_HANDSHAKE: i16 = 17;
const SASL_AUTHENTICATE: i16 = 36;
const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
const SASL_AUTHENTICATION_FAILED: i16 = 58;
const MECHANISMS: [&str; 3] = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"];
const ITERATIONS: usize = 4096;

/// One login attempt as the front saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Login {
    pub mechanism: String,
    pub user: String,
    pub accepted: bool,
}

type Users = Arc<Mutex<Vec<(String, String)>>>;

pub struct SaslFront {
    listener: Option<TcpListener>,
    port: u16,
    users: Users,
    logins: Arc<Mutex<Vec<Login>>>,
    /// Client sides of the connections relayed after a login, for [`SaslFront::rotate`].
    relayed: Arc<Mutex<Vec<TcpStream>>>,
    stop: Arc<AtomicBool>,
}

impl SaslFront {
    /// Binds a port (so the broker can advertise it before it starts) for `users`
    /// (name, password).
    pub fn bind(users: &[(&str, &str)]) -> SaslFront {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        SaslFront {
            port: listener.local_addr().unwrap().port(),
            listener: Some(listener),
            users: Arc::new(Mutex::new(owned(users))),
            logins: Arc::default(),
            relayed: Arc::default(),
            stop: Arc::default(),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The login attempts so far.
    pub fn logins(&self) -> Vec<Login> {
        self.logins.lock().unwrap().clone()
    }

    /// Rotates the credentials: `users` replace the table, and every logged-in
    /// connection is hung up, so clients must log in again with what they hold.
    pub fn rotate(&self, users: &[(&str, &str)]) {
        *self.users.lock().unwrap() = owned(users);
        for conn in self.relayed.lock().unwrap().drain(..) {
            let _ = conn.shutdown(Shutdown::Both);
        }
    }

    pub fn serve(&mut self, backend: SocketAddr) {
        let listener = self.listener.take().expect("serve once");
        listener.set_nonblocking(true).unwrap();
        let (users, logins, relayed, stop) = (
            self.users.clone(),
            self.logins.clone(),
            self.relayed.clone(),
            self.stop.clone(),
        );
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let (users, logins, relayed) =
                            (users.clone(), logins.clone(), relayed.clone());
                        std::thread::spawn(move || {
                            let _ = conn.set_nonblocking(false);
                            let _ = front(conn, backend, &users, &logins, &relayed);
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
    }
}

impl Drop for SaslFront {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

type Io<T> = std::io::Result<T>;

fn owned(users: &[(&str, &str)]) -> Vec<(String, String)> {
    users
        .iter()
        .map(|(u, p)| (u.to_string(), p.to_string()))
        .collect()
}

fn bad(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string())
}

fn read_frame(s: &mut TcpStream) -> Io<Vec<u8>> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len)?;
    let len = i32::from_be_bytes(len);
    if !(0..=1 << 20).contains(&len) {
        return Err(bad("frame size"));
    }
    let mut body = vec![0u8; len as usize];
    s.read_exact(&mut body)?;
    Ok(body)
}

fn write_frame(s: &mut TcpStream, body: &[u8]) -> Io<()> {
    s.write_all(&(body.len() as i32).to_be_bytes())?;
    s.write_all(body)
}

/// A strict big-endian cursor over one request.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Io<&[u8]> {
        if self.0.len() < n {
            return Err(bad("short request"));
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }
    fn i16(&mut self) -> Io<i16> {
        Ok(i16::from_be_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn i32(&mut self) -> Io<i32> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn uvarint(&mut self) -> Io<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.take(1)?[0];
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(bad("varint"))
    }
    /// A non-compact string or bytes with an `i16`/`i32` length (-1 = null).
    fn sized(&mut self, len: i64) -> Io<Vec<u8>> {
        if len < 0 {
            return Ok(Vec::new());
        }
        Ok(self.take(len as usize)?.to_vec())
    }
    fn skip_tags(&mut self) -> Io<()> {
        for _ in 0..self.uvarint()? {
            self.uvarint()?;
            let n = self.uvarint()? as usize;
            self.take(n)?;
        }
        Ok(())
    }
}

fn uvarint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn front(
    mut client: TcpStream,
    backend: SocketAddr,
    users: &Mutex<Vec<(String, String)>>,
    logins: &Mutex<Vec<Login>>,
    relayed: &Mutex<Vec<TcpStream>>,
) -> Io<()> {
    client.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut broker = TcpStream::connect(backend)?;
    broker.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut mechanism: Option<&str> = None;
    let mut scram: Option<Scram> = None;
    loop {
        let request = read_frame(&mut client)?;
        let mut c = Cursor(&request);
        let (key, version, correlation) = (c.i16()?, c.i16()?, c.i32()?);
        let client_id_len = c.i16()?;
        c.sized(client_id_len.into())?;
        match key {
            API_VERSIONS => {
                write_frame(&mut broker, &request)?;
                let answer = read_frame(&mut broker)?;
                write_frame(&mut client, &answer)?;
            }
            SASL_HANDSHAKE => {
                let len = c.i16()?;
                let asked = String::from_utf8_lossy(&c.sized(len.into())?).into_owned();
                mechanism = MECHANISMS.iter().copied().find(|m| *m == asked);
                let mut body = correlation.to_be_bytes().to_vec();
                let code = if mechanism.is_some() {
                    0
                } else {
                    UNSUPPORTED_SASL_MECHANISM
                };
                body.extend_from_slice(&code.to_be_bytes());
                body.extend_from_slice(&(MECHANISMS.len() as i32).to_be_bytes());
                for m in MECHANISMS {
                    body.extend_from_slice(&(m.len() as i16).to_be_bytes());
                    body.extend_from_slice(m.as_bytes());
                }
                write_frame(&mut client, &body)?;
                if mechanism.is_none() {
                    return Ok(());
                }
            }
            SASL_AUTHENTICATE => {
                let flexible = version >= 2;
                let auth = if flexible {
                    c.skip_tags()?;
                    let n = c.uvarint()?.saturating_sub(1);
                    c.take(n as usize)?.to_vec()
                } else {
                    let n = c.i32()?;
                    c.sized(n.into())?
                };
                let Some(mech) = mechanism else {
                    return Err(bad("SaslAuthenticate before SaslHandshake"));
                };
                let users = users.lock().unwrap().clone();
                let step = if mech == "PLAIN" {
                    plain(&auth, &users)
                } else {
                    let digest = if mech == "SCRAM-SHA-512" {
                        MessageDigest::sha512()
                    } else {
                        MessageDigest::sha256()
                    };
                    match scram.take() {
                        None => scram_first(&auth, &users, digest),
                        Some(state) => state.finish(&auth),
                    }
                };
                let (reply, error, done) = match step {
                    Step::Continue(reply, state) => {
                        scram = Some(state);
                        (reply, None, false)
                    }
                    Step::Accepted(user, reply) => {
                        logins.lock().unwrap().push(Login {
                            mechanism: mech.into(),
                            user,
                            accepted: true,
                        });
                        (reply, None, true)
                    }
                    Step::Refused(user) => {
                        logins.lock().unwrap().push(Login {
                            mechanism: mech.into(),
                            user,
                            accepted: false,
                        });
                        let message = format!(
                            "Authentication failed during authentication due to invalid credentials with SASL mechanism {mech}"
                        );
                        (Vec::new(), Some(message), false)
                    }
                };
                let mut body = correlation.to_be_bytes().to_vec();
                if flexible {
                    body.push(0); // response header tags
                }
                let code = if error.is_some() {
                    SASL_AUTHENTICATION_FAILED
                } else {
                    0
                };
                body.extend_from_slice(&code.to_be_bytes());
                if flexible {
                    match &error {
                        Some(m) => {
                            uvarint(&mut body, m.len() as u64 + 1);
                            body.extend_from_slice(m.as_bytes());
                        }
                        None => body.push(0),
                    }
                    uvarint(&mut body, reply.len() as u64 + 1);
                } else {
                    match &error {
                        Some(m) => {
                            body.extend_from_slice(&(m.len() as i16).to_be_bytes());
                            body.extend_from_slice(m.as_bytes());
                        }
                        None => body.extend_from_slice(&(-1i16).to_be_bytes()),
                    }
                    body.extend_from_slice(&(reply.len() as i32).to_be_bytes());
                }
                body.extend_from_slice(&reply);
                if version >= 1 {
                    body.extend_from_slice(&0i64.to_be_bytes()); // session lifetime: none
                }
                if flexible {
                    body.push(0);
                }
                write_frame(&mut client, &body)?;
                if error.is_some() {
                    return Ok(());
                }
                if done {
                    relayed.lock().unwrap().push(client.try_clone()?);
                    return relay(client, broker);
                }
            }
            _ => return Err(bad("request before login")),
        }
    }
}

/// Copies both ways until either side closes.
fn relay(client: TcpStream, broker: TcpStream) -> Io<()> {
    client.set_read_timeout(None)?;
    broker.set_read_timeout(None)?;
    let (mut c_in, mut b_out) = (client.try_clone()?, broker.try_clone()?);
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut c_in, &mut b_out);
        let _ = b_out.shutdown(Shutdown::Both);
    });
    let (mut b_in, mut c_out) = (broker, client);
    let _ = std::io::copy(&mut b_in, &mut c_out);
    let _ = c_out.shutdown(Shutdown::Both);
    let _ = up.join();
    Ok(())
}

enum Step {
    Continue(Vec<u8>, Scram),
    Accepted(String, Vec<u8>),
    Refused(String),
}

fn password_of<'a>(users: &'a [(String, String)], user: &str) -> Option<&'a str> {
    users
        .iter()
        .find(|(u, _)| u == user)
        .map(|(_, p)| p.as_str())
}

/// `[authzid] NUL user NUL password`.
fn plain(auth: &[u8], users: &[(String, String)]) -> Step {
    let parts: Vec<&[u8]> = auth.split(|b| *b == 0).collect();
    let (user, password) = match parts.as_slice() {
        [_, user, password] => (
            String::from_utf8_lossy(user).into_owned(),
            String::from_utf8_lossy(password).into_owned(),
        ),
        _ => return Step::Refused(String::new()),
    };
    if password_of(users, &user) == Some(password.as_str()) {
        Step::Accepted(user, Vec::new())
    } else {
        Step::Refused(user)
    }
}

/// A SCRAM exchange after the server-first message.
struct Scram {
    digest: MessageDigest,
    user: String,
    nonce: String,
    client_first_bare: String,
    server_first: String,
    stored_key: Vec<u8>,
    server_key: Vec<u8>,
}

fn hmac(digest: MessageDigest, key: &[u8], data: &[u8]) -> Vec<u8> {
    let key = PKey::hmac(key).unwrap();
    let mut signer = Signer::new(digest, &key).unwrap();
    signer.update(data).unwrap();
    signer.sign_to_vec().unwrap()
}

fn attribute<'a>(message: &'a str, key: &str) -> Option<&'a str> {
    message
        .split(',')
        .find_map(|part| part.strip_prefix(key)?.strip_prefix('='))
}

fn scram_first(auth: &[u8], users: &[(String, String)], digest: MessageDigest) -> Step {
    let text = String::from_utf8_lossy(auth);
    // gs2 header ("n,," or "n,a=…,") then the bare message.
    let mut parts = text.splitn(3, ',');
    let (Some(_), Some(_), Some(bare)) = (parts.next(), parts.next(), parts.next()) else {
        return Step::Refused(String::new());
    };
    let user = attribute(bare, "n")
        .unwrap_or("")
        .replace("=2C", ",")
        .replace("=3D", "=");
    let (Some(password), Some(client_nonce)) = (password_of(users, &user), attribute(bare, "r"))
    else {
        return Step::Refused(user);
    };
    let mut raw = [0u8; 18];
    openssl::rand::rand_bytes(&mut raw).unwrap();
    let nonce = format!("{client_nonce}{}", B64.encode(raw));
    let mut salt = [0u8; 16];
    openssl::rand::rand_bytes(&mut salt).unwrap();
    let mut salted = vec![0u8; digest.size()];
    openssl::pkcs5::pbkdf2_hmac(password.as_bytes(), &salt, ITERATIONS, digest, &mut salted)
        .unwrap();
    let client_key = hmac(digest, &salted, b"Client Key");
    let server_first = format!("r={nonce},s={},i={ITERATIONS}", B64.encode(salt));
    Step::Continue(
        server_first.clone().into_bytes(),
        Scram {
            digest,
            user,
            nonce,
            client_first_bare: bare.to_string(),
            server_first,
            stored_key: hash(digest, &client_key).unwrap().to_vec(),
            server_key: hmac(digest, &salted, b"Server Key"),
        },
    )
}

impl Scram {
    fn finish(self, auth: &[u8]) -> Step {
        let text = String::from_utf8_lossy(auth);
        let Some((without_proof, proof)) = text.rsplit_once(",p=") else {
            return Step::Refused(self.user);
        };
        if attribute(without_proof, "r") != Some(self.nonce.as_str()) {
            return Step::Refused(self.user);
        }
        let Ok(proof) = B64.decode(proof) else {
            return Step::Refused(self.user);
        };
        let auth_message = format!(
            "{},{},{without_proof}",
            self.client_first_bare, self.server_first
        );
        let signature = hmac(self.digest, &self.stored_key, auth_message.as_bytes());
        if proof.len() != signature.len() {
            return Step::Refused(self.user);
        }
        let client_key: Vec<u8> = proof.iter().zip(&signature).map(|(p, s)| p ^ s).collect();
        if hash(self.digest, &client_key).unwrap().to_vec() != self.stored_key {
            return Step::Refused(self.user);
        }
        let server_signature = hmac(self.digest, &self.server_key, auth_message.as_bytes());
        Step::Accepted(
            self.user,
            format!("v={}", B64.encode(server_signature)).into_bytes(),
        )
    }
}
