//! One TCP connection to one broker speaking the Kafka protocol with the
//! `kafka-protocol` crate: size-prefixed frames, request headers with
//! correlation ids, ApiVersions negotiation on connect, and per-request
//! socket timeouts; TLS and SASL (PLAIN, SCRAM) as `security` configures them.
//!
//! Used for the coordination requests rdkafka does not expose (InitProducerId
//! results, DescribeTransactions) and, for one consistent client, for every
//! other coordination request too.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Message, StrBytes};

use super::error::{SASL_AUTHENTICATION_FAILED, WireError};
use super::security::{SaslClient, Stream, WireSecurity};

/// A request this client sends, with its API key and response type. (The
/// crate's own `Request` trait needs request decoding, a broker-side feature.)
pub trait Call: Encodable + HeaderVersion + Message {
    const KEY: i16;
    type Response: Decodable + HeaderVersion;
}

macro_rules! calls {
    ($($key:ident: $request:ident => $response:ident,)*) => {
        $(impl Call for $request {
            const KEY: i16 = ApiKey::$key as i16;
            type Response = $response;
        })*
    };
}

calls! {
    ApiVersions: ApiVersionsRequest => ApiVersionsResponse,
    Metadata: MetadataRequest => MetadataResponse,
    FindCoordinator: FindCoordinatorRequest => FindCoordinatorResponse,
    InitProducerId: InitProducerIdRequest => InitProducerIdResponse,
    AddPartitionsToTxn: AddPartitionsToTxnRequest => AddPartitionsToTxnResponse,
    Produce: ProduceRequest => ProduceResponse,
    EndTxn: EndTxnRequest => EndTxnResponse,
    Fetch: FetchRequest => FetchResponse,
    DescribeTransactions: DescribeTransactionsRequest => DescribeTransactionsResponse,
    CreateTopics: CreateTopicsRequest => CreateTopicsResponse,
    SaslHandshake: SaslHandshakeRequest => SaslHandshakeResponse,
    SaslAuthenticate: SaslAuthenticateRequest => SaslAuthenticateResponse,
}

/// Largest response frame accepted (a fetch of one coordination partition is far smaller).
const MAX_FRAME: usize = 64 << 20;

/// A connected broker and the API versions it supports.
pub struct BrokerConnection {
    stream: Stream,
    address: String,
    client_id: String,
    correlation_id: i32,
    versions: HashMap<i16, (i16, i16)>,
}

impl BrokerConnection {
    /// Connects to `address` (`host:port`), secures the connection as `security`
    /// says (TLS handshake, then ApiVersions, then SASL), and keeps the API versions.
    pub fn connect(
        address: &str,
        client_id: &str,
        timeout: Duration,
        security: &WireSecurity,
    ) -> Result<Self, WireError> {
        crate::io::remote_contact::note();
        let addrs = address
            .to_socket_addrs()
            .map_err(|e| WireError::io(format!("resolve {address}: {e}")))?;
        let mut last = None;
        let mut stream = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let stream = stream.ok_or_else(|| {
            WireError::io(match last {
                Some(e) => format!("connect to {address}: {e}"),
                None => format!("connect to {address}: no address"),
            })
        })?;
        let _ = stream.set_nodelay(true);
        let timeout = timeout.max(Duration::from_millis(1));
        let _ = stream.set_read_timeout(Some(timeout));
        let _ = stream.set_write_timeout(Some(timeout));
        // A refused TLS handshake is an unreachable broker, as in librdkafka, but one
        // that retrying cannot fix: reported at once with OpenSSL's reason.
        let host = address.rsplit_once(':').map_or(address, |(h, _)| h);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let stream = security.wrap(stream, host).map_err(|(refused, e)| {
            let message = format!("connect to {address}: {e}");
            if refused {
                WireError::Tls(message)
            } else {
                WireError::io(message)
            }
        })?;
        let mut conn = BrokerConnection {
            stream,
            address: address.to_string(),
            client_id: client_id.to_string(),
            correlation_id: 0,
            versions: HashMap::new(),
        };
        conn.negotiate(timeout)?;
        if let Some(sasl) = &security.sasl {
            conn.authenticate(SaslClient::new(sasl.clone()), timeout)?;
        }
        Ok(conn)
    }

    /// SaslHandshake v1, then SaslAuthenticate rounds until the client is done.
    /// A refused mechanism or failed login is a broker answer (never retried).
    fn authenticate(&mut self, mut client: SaslClient, timeout: Duration) -> Result<(), WireError> {
        let mechanism = client.mechanism().name();
        // Mechanism and user named (never the password): which login the broker refused.
        let what = format!(
            "SASL {mechanism} login as user {:?} at {}",
            client.user(),
            self.address
        );
        let handshake =
            SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(mechanism));
        let version = self.version_for::<SaslHandshakeRequest>(1)?;
        // Some brokers hang up instead of answering a mechanism they do not offer.
        let response = self
            .exchange(&handshake, version, timeout)
            .map_err(|e| match e {
                WireError::Io(m) => WireError::io(format!(
                    "{what}: {m} (does the listener offer SASL {mechanism}?)"
                )),
                other => other,
            })?;
        if response.error_code != 0 {
            let offered: Vec<String> = response.mechanisms.iter().map(|m| m.to_string()).collect();
            return Err(WireError::broker(
                format!("{what}: handshake"),
                response.error_code,
                Some(format!("the broker offers [{}]", offered.join(", "))),
            ));
        }
        let version = self.version_for::<SaslAuthenticateRequest>(2)?;
        let mut message = Some(client.first());
        while let Some(bytes) = message {
            let request = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(bytes));
            let response = self.exchange(&request, version, timeout)?;
            if response.error_code != 0 {
                return Err(WireError::broker(
                    what.clone(),
                    response.error_code,
                    response.error_message.map(|m| m.to_string()),
                ));
            }
            message = client.next(&response.auth_bytes).map_err(|e| {
                WireError::broker(what.clone(), SASL_AUTHENTICATION_FAILED, Some(e))
            })?;
        }
        Ok(())
    }

    pub fn address(&self) -> &str {
        &self.address
    }

    fn negotiate(&mut self, timeout: Duration) -> Result<(), WireError> {
        let request = ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("krabka-streams"))
            .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")));
        // A broker that does not speak v3 answers UNSUPPORTED_VERSION (in v0
        // layout); ask again in v0, which every broker speaks.
        let response = match self.exchange(&request, 3, timeout) {
            Ok(r) if r.error_code == 0 => r,
            Ok(_) | Err(WireError::Protocol(_)) => self.exchange(&request, 0, timeout)?,
            Err(e) => return Err(e),
        };
        if response.error_code != 0 {
            return Err(WireError::broker(
                format!("ApiVersions from {}", self.address),
                response.error_code,
                None,
            ));
        }
        self.versions = response
            .api_keys
            .iter()
            .map(|k| (k.api_key, (k.min_version, k.max_version)))
            .collect();
        Ok(())
    }

    /// Whether the broker serves `key` at all.
    pub fn supports(&self, key: ApiKey) -> bool {
        self.versions.contains_key(&(key as i16))
    }

    /// The highest version of `R` both sides speak, capped at `cap`.
    pub fn version_for<R: Call>(&self, cap: i16) -> Result<i16, WireError> {
        let ours = R::VERSIONS;
        let name = api_name(R::KEY);
        let Some(&(min, max)) = self.versions.get(&R::KEY) else {
            return Err(WireError::unsupported(format!(
                "{} does not support {name}",
                self.address
            )));
        };
        let high = max.min(ours.max).min(cap);
        let low = min.max(ours.min);
        if high < low {
            return Err(WireError::unsupported(format!(
                "{} supports {name} versions {min}..{max}, this client {}..{}",
                self.address,
                ours.min,
                ours.max.min(cap)
            )));
        }
        Ok(high)
    }

    /// Sends `request` at the best common version (capped) and reads the answer.
    pub fn send<R: Call>(
        &mut self,
        request: &R,
        cap: i16,
        timeout: Duration,
    ) -> Result<(R::Response, i16), WireError> {
        let version = self.version_for::<R>(cap)?;
        Ok((self.exchange(request, version, timeout)?, version))
    }

    fn exchange<R: Call>(
        &mut self,
        request: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<R::Response, WireError> {
        let name = api_name(R::KEY);
        let timeout = timeout.max(Duration::from_millis(1));
        let _ = self.stream.tcp().set_read_timeout(Some(timeout));
        let _ = self.stream.tcp().set_write_timeout(Some(timeout));
        self.correlation_id = self.correlation_id.wrapping_add(1);
        let correlation_id = self.correlation_id;
        let header = RequestHeader::default()
            .with_request_api_key(R::KEY)
            .with_request_api_version(version)
            .with_correlation_id(correlation_id)
            .with_client_id(Some(StrBytes::from_string(self.client_id.clone())));
        let mut body = BytesMut::new();
        header
            .encode(&mut body, R::header_version(version))
            .and_then(|_| request.encode(&mut body, version))
            .map_err(|e| WireError::protocol(format!("encode {name} v{version}: {e}")))?;
        let mut frame = Vec::with_capacity(4 + body.len());
        frame.extend_from_slice(&(body.len() as i32).to_be_bytes());
        frame.extend_from_slice(&body);
        let io = |e: std::io::Error| {
            WireError::io(format!("{name} to {}: {}", self.address, describe_io(&e)))
        };
        self.stream.write_all(&frame).map_err(io)?;
        let mut size = [0u8; 4];
        self.stream.read_exact(&mut size).map_err(io)?;
        let size = i32::from_be_bytes(size);
        if size < 4 || size as usize > MAX_FRAME {
            return Err(WireError::protocol(format!(
                "{name} from {}: response frame of {size} bytes",
                self.address
            )));
        }
        let mut payload = vec![0u8; size as usize];
        self.stream.read_exact(&mut payload).map_err(io)?;
        let mut buf = Bytes::from(payload);
        let header = ResponseHeader::decode(&mut buf, R::Response::header_version(version))
            .map_err(|e| WireError::protocol(format!("decode {name} v{version} header: {e}")))?;
        if header.correlation_id != correlation_id {
            return Err(WireError::protocol(format!(
                "{name} from {}: correlation id {} instead of {correlation_id}",
                self.address, header.correlation_id
            )));
        }
        R::Response::decode(&mut buf, version)
            .map_err(|e| WireError::protocol(format!("decode {name} v{version}: {e}")))
    }
}

fn describe_io(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => "timed out".to_string(),
        std::io::ErrorKind::UnexpectedEof => "connection closed by the broker".to_string(),
        _ => e.to_string(),
    }
}

/// The protocol name of an API key, e.g. `InitProducerId`.
pub fn api_name(key: i16) -> String {
    match ApiKey::try_from(key) {
        Ok(k) => format!("{k:?}"),
        Err(()) => format!("ApiKey({key})"),
    }
}
