//! TLS and SASL for the coordination client, from the same librdkafka-named settings
//! the rdkafka paths use (`--command-config` translated by `io::kafka::settings`):
//! `security.protocol` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), `ssl.ca.location`,
//! `ssl.certificate.location`, `ssl.key.location`, `ssl.key.password`,
//! `ssl.endpoint.identification.algorithm` (`https`, the default, checks the broker's
//! name or IP against its certificate; `none` does not), `sasl.mechanisms` (PLAIN,
//! SCRAM-SHA-256, SCRAM-SHA-512), `sasl.username`, `sasl.password`.
//!
//! TLS is OpenSSL (already linked for librdkafka and the registry client). SASL runs
//! after ApiVersions as Kafka's SaslHandshake v1 + SaslAuthenticate exchange; SCRAM
//! follows RFC 5802 without channel binding (`n,,`), as Kafka and librdkafka do.
//! Passwords never appear in `Debug` output or error messages.

use std::fmt;
use std::net::TcpStream;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use openssl::hash::MessageDigest;
use openssl::pkey::PKey;
use openssl::sign::Signer;
use openssl::ssl::{ErrorCode, HandshakeError, SslConnector, SslFiletype, SslMethod, SslStream};

/// A SASL mechanism the coordination client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    Plain,
    ScramSha256,
    ScramSha512,
}

impl Mechanism {
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }

    fn digest(self) -> MessageDigest {
        match self {
            Mechanism::ScramSha512 => MessageDigest::sha512(),
            _ => MessageDigest::sha256(),
        }
    }
}

/// SASL credentials.
#[derive(Clone)]
pub struct SaslSettings {
    pub mechanism: Mechanism,
    pub username: String,
    pub password: String,
}

impl fmt::Debug for SaslSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaslSettings")
            .field("mechanism", &self.mechanism)
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// How the coordination client secures its connections.
#[derive(Clone, Default)]
pub struct WireSecurity {
    tls: Option<(SslConnector, bool)>,
    pub sasl: Option<SaslSettings>,
}

impl fmt::Debug for WireSecurity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WireSecurity")
            .field("tls", &self.tls.is_some())
            .field("sasl", &self.sasl)
            .finish()
    }
}

/// Settings that cannot work; the message names the key (never a secret value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityConfigError(pub String);

impl fmt::Display for SecurityConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SecurityConfigError {}

fn config_error(message: impl Into<String>) -> SecurityConfigError {
    SecurityConfigError(message.into())
}

impl WireSecurity {
    /// Plain TCP, no authentication.
    pub fn plaintext() -> Self {
        WireSecurity::default()
    }

    pub fn uses_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// From librdkafka-named settings (`get(key)`).
    pub fn from_settings<'a>(
        get: impl Fn(&str) -> Option<&'a str>,
    ) -> Result<Self, SecurityConfigError> {
        let protocol = get("security.protocol")
            .unwrap_or("plaintext")
            .to_ascii_lowercase();
        let (tls, sasl) = match protocol.as_str() {
            "plaintext" => (false, false),
            "ssl" => (true, false),
            "sasl_plaintext" => (false, true),
            "sasl_ssl" => (true, true),
            other => {
                return Err(config_error(format!(
                    "security.protocol={other} is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"
                )));
            }
        };
        let tls = if tls {
            Some(tls_connector(&get)?)
        } else {
            None
        };
        let sasl = if sasl {
            Some(sasl_settings(&get)?)
        } else {
            None
        };
        Ok(WireSecurity { tls, sasl })
    }

    /// Wraps a connected socket in TLS when configured. `host` is checked against the
    /// broker's certificate unless `ssl.endpoint.identification.algorithm=none`.
    /// A refused handshake (certificate, alert, protocol) is `Err((true, …))`: retrying
    /// cannot help; a timeout or a dropped connection is `Err((false, …))`.
    pub fn wrap(&self, stream: TcpStream, host: &str) -> Result<Stream, (bool, String)> {
        let Some((connector, verify_host)) = &self.tls else {
            return Ok(Stream::Plain(stream));
        };
        let config = connector
            .configure()
            .map_err(|e| (true, format!("TLS setup: {e}")))?
            .verify_hostname(*verify_host);
        config
            .connect(host, stream)
            .map(|s| Stream::Tls(Box::new(s)))
            .map_err(|e| match e {
                HandshakeError::WouldBlock(_) => (false, "TLS handshake timed out".to_string()),
                HandshakeError::Failure(mid) if mid.error().code() == ErrorCode::SSL => {
                    (true, format!("TLS handshake failed: {}", mid.error()))
                }
                other => (false, format!("TLS handshake failed: {other}")),
            })
    }
}

fn tls_connector<'a>(
    get: &impl Fn(&str) -> Option<&'a str>,
) -> Result<(SslConnector, bool), SecurityConfigError> {
    let mut builder = SslConnector::builder(SslMethod::tls_client())
        .map_err(|e| config_error(format!("TLS setup: {e}")))?;
    if let Some(ca) = get("ssl.ca.location") {
        builder
            .set_ca_file(ca)
            .map_err(|e| config_error(format!("ssl.ca.location {ca}: {e}")))?;
    }
    if let Some(cert) = get("ssl.certificate.location") {
        builder
            .set_certificate_chain_file(cert)
            .map_err(|e| config_error(format!("ssl.certificate.location {cert}: {e}")))?;
    }
    if let Some(key) = get("ssl.key.location") {
        match get("ssl.key.password") {
            Some(password) => {
                let pem = crate::io::bounded_read::read(
                    std::path::Path::new(key),
                    crate::io::bounded_read::CONFIG,
                )
                .map_err(|e| config_error(format!("ssl.key.location {key}: {e}")))?;
                let pkey = PKey::private_key_from_pem_passphrase(&pem, password.as_bytes())
                    .map_err(|_| {
                        config_error(format!(
                            "ssl.key.location {key}: cannot decrypt the key with ssl.key.password"
                        ))
                    })?;
                builder.set_private_key(&pkey)
            }
            None => builder.set_private_key_file(key, SslFiletype::PEM),
        }
        .map_err(|e| config_error(format!("ssl.key.location {key}: {e}")))?;
        builder.check_private_key().map_err(|e| {
            config_error(format!(
                "ssl.key.location {key} does not match ssl.certificate.location: {e}"
            ))
        })?;
    }
    let verify_host = !get("ssl.endpoint.identification.algorithm")
        .is_some_and(|a| a.eq_ignore_ascii_case("none") || a.is_empty());
    Ok((builder.build(), verify_host))
}

fn sasl_settings<'a>(
    get: &impl Fn(&str) -> Option<&'a str>,
) -> Result<SaslSettings, SecurityConfigError> {
    let mechanism = match get("sasl.mechanisms")
        .or_else(|| get("sasl.mechanism"))
        .unwrap_or("GSSAPI")
        .to_ascii_uppercase()
        .as_str()
    {
        "PLAIN" => Mechanism::Plain,
        "SCRAM-SHA-256" => Mechanism::ScramSha256,
        "SCRAM-SHA-512" => Mechanism::ScramSha512,
        other => {
            return Err(config_error(format!(
                "leader speaks SASL PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512; sasl.mechanism={other} is not supported"
            )));
        }
    };
    let username = get("sasl.username").ok_or_else(|| {
        config_error("SASL needs a user name (sasl.jaas.config username=… or -X sasl.username)")
    })?;
    let password = get("sasl.password").ok_or_else(|| {
        config_error("SASL needs a password (sasl.jaas.config password=… or -X sasl.password)")
    })?;
    Ok(SaslSettings {
        mechanism,
        username: username.to_string(),
        password: password.to_string(),
    })
}

/// A broker socket, plain or TLS.
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<SslStream<TcpStream>>),
}

impl Stream {
    /// The TCP socket underneath (for timeouts).
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => s.get_ref(),
        }
    }
}

impl std::io::Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl std::io::Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// The client side of one SASL exchange: `first()`, then `next(challenge)` for each
/// server message until it returns `None`.
pub struct SaslClient {
    settings: SaslSettings,
    nonce: String,
    state: ScramState,
}

enum ScramState {
    Start,
    SentFirst { client_first_bare: String },
    SentFinal { server_signature: Vec<u8> },
    Done,
}

impl SaslClient {
    pub fn new(settings: SaslSettings) -> Self {
        let mut raw = [0u8; 24];
        // A failed RNG leaves zeros; the exchange then still works but the nonce is
        // predictable, so fall back to time-based bytes rather than zeros.
        if openssl::rand::rand_bytes(&mut raw).is_err() {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos()
                .to_le_bytes();
            raw[..16].copy_from_slice(&t);
        }
        SaslClient {
            settings,
            nonce: B64.encode(raw),
            state: ScramState::Start,
        }
    }

    #[cfg(test)]
    fn with_nonce(settings: SaslSettings, nonce: &str) -> Self {
        SaslClient {
            settings,
            nonce: nonce.to_string(),
            state: ScramState::Start,
        }
    }

    pub fn mechanism(&self) -> Mechanism {
        self.settings.mechanism
    }

    pub fn user(&self) -> &str {
        &self.settings.username
    }

    /// The first client message.
    pub fn first(&mut self) -> Vec<u8> {
        let s = &self.settings;
        if s.mechanism == Mechanism::Plain {
            self.state = ScramState::Done;
            return format!("\0{}\0{}", s.username, s.password).into_bytes();
        }
        let bare = format!("n={},r={}", scram_name(&s.username), self.nonce);
        let first = format!("n,,{bare}");
        self.state = ScramState::SentFirst {
            client_first_bare: bare,
        };
        first.into_bytes()
    }

    /// The answer to a server message; `Ok(None)` when the exchange is complete.
    pub fn next(&mut self, server: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let state = std::mem::replace(&mut self.state, ScramState::Done);
        match state {
            ScramState::Start => Err("SASL exchange out of order".to_string()),
            ScramState::Done => Ok(None),
            ScramState::SentFirst { client_first_bare } => {
                let server_first = std::str::from_utf8(server)
                    .map_err(|_| "SCRAM server-first message is not UTF-8".to_string())?;
                let (reply, server_signature) =
                    self.client_final(&client_first_bare, server_first)?;
                self.state = ScramState::SentFinal { server_signature };
                Ok(Some(reply.into_bytes()))
            }
            ScramState::SentFinal { server_signature } => {
                let text = std::str::from_utf8(server)
                    .map_err(|_| "SCRAM server-final message is not UTF-8".to_string())?;
                if let Some(e) = attribute(text, 'e') {
                    return Err(format!("SCRAM authentication failed: {e}"));
                }
                let v = attribute(text, 'v')
                    .ok_or_else(|| "SCRAM server-final message has no signature".to_string())?;
                let v = B64
                    .decode(v)
                    .map_err(|_| "SCRAM server signature is not base64".to_string())?;
                if v.len() != server_signature.len() || !openssl::memcmp::eq(&v, &server_signature)
                {
                    return Err(
                        "SCRAM server signature does not match: the broker does not know the password"
                            .to_string(),
                    );
                }
                Ok(None)
            }
        }
    }

    fn client_final(&self, bare: &str, server_first: &str) -> Result<(String, Vec<u8>), String> {
        if let Some(e) = attribute(server_first, 'e') {
            return Err(format!("SCRAM authentication failed: {e}"));
        }
        let nonce = attribute(server_first, 'r').ok_or("SCRAM server-first has no nonce")?;
        if !nonce.starts_with(&self.nonce) || nonce.len() == self.nonce.len() {
            return Err("SCRAM server nonce does not extend the client nonce".to_string());
        }
        let salt = attribute(server_first, 's')
            .and_then(|s| B64.decode(s).ok())
            .ok_or("SCRAM server-first has no valid salt")?;
        let iterations: usize = attribute(server_first, 'i')
            .and_then(|i| i.parse().ok())
            .filter(|i| (1..=1_000_000).contains(i))
            .ok_or("SCRAM server-first has no valid iteration count")?;
        let digest = self.settings.mechanism.digest();
        let mut salted = vec![0u8; digest.size()];
        openssl::pkcs5::pbkdf2_hmac(
            self.settings.password.as_bytes(),
            &salt,
            iterations,
            digest,
            &mut salted,
        )
        .map_err(|e| format!("SCRAM: {e}"))?;
        let client_key = hmac(digest, &salted, b"Client Key")?;
        let stored_key = openssl::hash::hash(digest, &client_key)
            .map_err(|e| format!("SCRAM: {e}"))?
            .to_vec();
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{bare},{server_first},{without_proof}");
        let client_signature = hmac(digest, &stored_key, auth_message.as_bytes())?;
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&client_signature)
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = hmac(digest, &salted, b"Server Key")?;
        let server_signature = hmac(digest, &server_key, auth_message.as_bytes())?;
        Ok((
            format!("{without_proof},p={}", B64.encode(proof)),
            server_signature,
        ))
    }
}

fn hmac(digest: MessageDigest, key: &[u8], data: &[u8]) -> Result<Vec<u8>, String> {
    let key = PKey::hmac(key).map_err(|e| format!("SCRAM: {e}"))?;
    let mut signer = Signer::new(digest, &key).map_err(|e| format!("SCRAM: {e}"))?;
    signer.update(data).map_err(|e| format!("SCRAM: {e}"))?;
    signer.sign_to_vec().map_err(|e| format!("SCRAM: {e}"))
}

/// `,` and `=` in a SCRAM user name are escaped (RFC 5802 §5.1).
fn scram_name(name: &str) -> String {
    name.replace('=', "=3D").replace(',', "=2C")
}

/// The value of attribute `key` in a SCRAM message (`k=v,k=v`).
fn attribute(message: &str, key: char) -> Option<&str> {
    message.split(',').find_map(|part| {
        let mut chars = part.chars();
        (chars.next() == Some(key) && chars.next() == Some('=')).then(|| &part[2..])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(mechanism: Mechanism, user: &str, password: &str) -> SaslSettings {
        SaslSettings {
            mechanism,
            username: user.into(),
            password: password.into(),
        }
    }

    /// RFC 7677 §3's SCRAM-SHA-256 example, byte for byte.
    #[test]
    fn scram_sha_256_reproduces_the_rfc_7677_exchange() {
        let mut c = SaslClient::with_nonce(
            settings(Mechanism::ScramSha256, "user", "pencil"),
            "rOprNGfwEbeRWgbNEkqO",
        );
        assert_eq!(c.first(), b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let reply = c
            .next(b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
            .unwrap()
            .unwrap();
        assert_eq!(
            String::from_utf8(reply).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        assert_eq!(
            c.next(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
                .unwrap(),
            None
        );
    }

    #[test]
    fn a_wrong_server_signature_or_an_error_attribute_fails_the_exchange() {
        let mut c = SaslClient::with_nonce(settings(Mechanism::ScramSha512, "u", "p"), "abc");
        c.first();
        c.next(b"r=abcdef,s=c2FsdA==,i=4096").unwrap().unwrap();
        let e = c.next(b"v=AAAA").unwrap_err();
        assert!(e.contains("does not match"), "{e}");
        let mut c = SaslClient::with_nonce(settings(Mechanism::ScramSha256, "u", "p"), "abc");
        c.first();
        let e = c.next(b"e=unknown-user").unwrap_err();
        assert_eq!(e, "SCRAM authentication failed: unknown-user");
        let mut c = SaslClient::with_nonce(settings(Mechanism::ScramSha256, "u", "p"), "abc");
        c.first();
        let e = c.next(b"r=xyz,s=c2FsdA==,i=4096").unwrap_err();
        assert!(e.contains("nonce"), "{e}");
    }

    #[test]
    fn plain_sends_user_and_password_once_and_names_are_escaped_for_scram() {
        let mut c = SaslClient::new(settings(Mechanism::Plain, "alice", "pw"));
        assert_eq!(c.first(), b"\0alice\0pw");
        assert_eq!(c.next(b"").unwrap(), None);
        assert_eq!(scram_name("a=b,c"), "a=3Db=2Cc");
    }

    #[test]
    fn settings_pick_tls_and_sasl_and_refuse_what_cannot_work() {
        let get = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
        };
        let s = WireSecurity::from_settings(get(&[])).unwrap();
        assert!(!s.uses_tls() && s.sasl.is_none());
        let s = WireSecurity::from_settings(get(&[
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanisms", "SCRAM-SHA-512"),
            ("sasl.username", "alice"),
            ("sasl.password", "pw-SECRET"),
        ]))
        .unwrap();
        assert!(s.uses_tls());
        assert_eq!(s.sasl.as_ref().unwrap().mechanism, Mechanism::ScramSha512);
        assert!(!format!("{s:?}").contains("pw-SECRET"));
        let e = WireSecurity::from_settings(get(&[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanisms", "GSSAPI"),
        ]))
        .unwrap_err();
        assert!(
            e.0.contains("sasl.mechanism=GSSAPI is not supported"),
            "{e}"
        );
        let e = WireSecurity::from_settings(get(&[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanisms", "PLAIN"),
        ]))
        .unwrap_err();
        assert!(e.0.contains("user name"), "{e}");
        let e = WireSecurity::from_settings(get(&[
            ("security.protocol", "SSL"),
            ("ssl.ca.location", "/nonexistent/ca.pem"),
        ]))
        .unwrap_err();
        assert!(
            e.0.starts_with("ssl.ca.location /nonexistent/ca.pem"),
            "{e}"
        );
    }
}
